/**
 * The `mcp-edge check` figures the README prints (each example's summary line: misleads, fails,
 * pass, info, requests) are what the command prints now: every `check` command of the README's
 * shell blocks is run as written against a fresh demo origin (127.0.0.1:3000 in the README) and,
 * for `--through`, an edge in front of it (127.0.0.1:8787), and the summary lines of the output
 * block that follows are compared with the run's.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { REPO, runCli, startServe, type ServeProcess } from '../helpers/cli-process'

const SUMMARY = /(\d+) misleads, (\d+) fail the spec, (\d+) pass, (\d+) info; (\d+) requests/g

/** Each README `check` command (continuation lines joined) with the summary lines of the output block after it. */
function examples(): { args: string[]; summaries: string[] }[] {
  const text = readFileSync(join(REPO, 'README.md'), 'utf8')
  const blocks = [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }))
  const out: { args: string[]; summaries: string[] }[] = []
  blocks.forEach((b, i) => {
    if (b.lang !== 'sh' || !b.body.includes('main.ts check')) return
    const line = b.body.replace(/\\\n\s*/g, ' ').trim()
    const words = line.split(/\s+/)
    const args = words.slice(words.indexOf('packages/cli/src/cli/main.ts') + 1)
    const next = blocks[i + 1]!
    out.push({ args, summaries: [...next.body.matchAll(SUMMARY)].map((m) => m[0]) })
  })
  return out
}

let demo: RunningOrigin
let edge: ServeProcess
beforeAll(async () => {
  demo = await startDemoOrigin({ port: 0 })
  edge = await startServe(['--origin', demo.url, '--port', '0', '--store-file', 'memory'], {})
})
afterAll(async () => {
  edge?.kill()
  await demo?.close()
})

describe("the README's mcp-edge check figures", () => {
  it('every check example prints the summary figures the README shows', async () => {
    const all = examples()
    expect(all.length).toBeGreaterThanOrEqual(3)
    for (const ex of all) {
      expect(ex.summaries.length, ex.args.join(' ')).toBeGreaterThan(0)
      const args = ex.args.map((a) => a.replace('http://127.0.0.1:3000/mcp', demo.url).replace('http://127.0.0.1:8787/mcp', edge.url))
      const run = await runCli(args, { NO_COLOR: '1', COLUMNS: '120' }, { timeoutMs: 120_000 })
      expect(run.stderr).toBe('')
      const printed = [...run.stdout.matchAll(SUMMARY)].map((m) => m[0])
      expect(printed, `mcp-edge ${ex.args.join(' ')}`).toEqual(ex.summaries)
    }
  }, 300_000)
})
