/**
 * The official MCP conformance suite at the frozen requirements of 2026-07-28
 * (@modelcontextprotocol/conformance 0.2.0-alpha, the devDependency `conformance-next`:
 * `conformance server --requirements 2026-07-28`, 37 scored server scenarios plus the ones it runs
 * unscored) against the demo origin with its 2026-07-28 fixtures (packages/cli/demo/fixtures-2026.ts): directly,
 * through the edge on Node, and through the Worker bundle in workerd under Miniflare. The three runs
 * go at once; a target with failures runs once more on its own (a loaded 2-core machine). Every
 * scored scenario must pass on every target, every scenario (scored or not) must get the same
 * verdict on all three, and the pending SEP-2243 header/body validation scenarios must pass
 * through the edge.
 *
 * The suite needs Node >= 22 (it imports `fs.globSync` at start-up). On an older Node the suite
 * runs under a Node 22 binary when one is installed where .ci/run puts it
 * (`$NODE22_PREFIX/node_modules/node/bin/node`, default /tmp/node22), else these tests are skipped
 * and say why. The 0.1.16 suite (test/conformance/conformance.test.ts) runs on every Node.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startNodeEdge, startWorkerEdge, type EdgeUnderTest } from '../helpers/runtimes'

const REPO = resolve(import.meta.dirname, '../..')
const SUITE = join(REPO, 'node_modules/conformance-next/dist/index.js')
const REQUIREMENTS = join(REPO, 'node_modules/conformance-next/requirements/2026-07-28.yaml')
const TARGETS = ['direct', 'node-edge', 'workerd'] as const
type Target = (typeof TARGETS)[number]
/** SEP-2243 header/body validation, pending upstream (unscored), which the edge itself enforces. */
const SEP_2243 = ['http-header-validation', 'http-custom-header-server-validation']

/** A Node >= 22 binary for the suite: this one, else the one .ci/run installs; null when none. */
function node22(): string | null {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath
  const bin = join(process.env.NODE22_PREFIX ?? '/tmp/node22', 'node_modules/node/bin/node')
  return existsSync(bin) ? bin : null
}
const NODE = node22()
const SKIP_REASON = `skipped: conformance 0.2.0-alpha needs Node >= 22 (this is ${process.version}) and no Node 22 binary was found at ${join(process.env.NODE22_PREFIX ?? '/tmp/node22', 'node_modules/node/bin/node')} (.ci/run installs it there; or set NODE22_PREFIX)`

/** The server scenarios the 2026-07-28 requirement set scores, and the ones it runs unscored. */
function requirementSet(): { scored: string[]; unscored: string[] } {
  const text = readFileSync(REQUIREMENTS, 'utf8')
  const section = (name: string) =>
    (new RegExp(`^${name}:\\n((?:  - .*\\n)+)`, 'm').exec(text)?.[1] ?? '')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/^ {2}- /, '').trim())
  const unscored = [...text.matchAll(/- scenario: (\S+)\n\s+leg: server/g)].map((m) => m[1]!)
  return { scored: section('server'), unscored }
}

interface Run {
  target: Target
  exitCode: number | null
  /** scenario -> PASS (no FAILURE check) or FAIL, from the suite's checks.json files */
  verdicts: Record<string, 'PASS' | 'FAIL'>
  /** failing check ids per scenario, for the messages */
  failures: Record<string, string[]>
  output: string
}

/** Runs `conformance server --requirements 2026-07-28` against `url` and reads every checks.json. */
async function runSuite(node: string, target: Target, url: string): Promise<Run> {
  const out = mkdtempSync(join(tmpdir(), `conf2026-${target}-`))
  try {
    const child = spawn(node, [SUITE, 'server', '--url', url, '--requirements', '2026-07-28', '-o', out], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    // The suite's own per-scenario timeout is 30 s; a hung run is killed here rather than by vitest.
    const killer = setTimeout(() => child.kill('SIGKILL'), 240_000)
    const exitCode = await new Promise<number | null>((r) => child.once('close', (code) => r(code)))
    clearTimeout(killer)
    const verdicts: Record<string, 'PASS' | 'FAIL'> = {}
    const failures: Record<string, string[]> = {}
    for (const dir of readdirSync(out)) {
      const file = join(out, dir, 'checks.json')
      if (!existsSync(file)) continue
      const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '')
      const checks = JSON.parse(readFileSync(file, 'utf8')) as { id: string; status: string }[]
      const failed = checks.filter((c) => c.status === 'FAILURE').map((c) => c.id)
      verdicts[scenario] = failed.length === 0 ? 'PASS' : 'FAIL'
      failures[scenario] = failed
    }
    return { target, exitCode, verdicts, failures, output }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

const count = (r: Run, names: string[], v: 'PASS' | 'FAIL') => names.filter((n) => r.verdicts[n] === v).length

describe.skipIf(NODE === null)('conformance 2026-07-28 requirements (0.2.0-alpha): direct, through the edge on Node, and on workerd', () => {
  let origin: RunningOrigin
  let nodeEdge: EdgeUnderTest
  let worker: EdgeUnderTest
  const runs = {} as Record<Target, Run>
  const { scored, unscored } = requirementSet()

  beforeAll(async () => {
    origin = await startDemoOrigin({ fixtures: true, modern: true })
    ;[nodeEdge, worker] = await Promise.all([startNodeEdge({ ORIGIN_URL: origin.url }), startWorkerEdge({ ORIGIN_URL: origin.url })])
    const urls: Record<Target, string> = { direct: origin.url, 'node-edge': nodeEdge.url, workerd: worker.url }
    const done = await Promise.all(TARGETS.map((t) => runSuite(NODE!, t, urls[t])))
    for (const [i, r] of done.entries()) {
      if (scored.every((s) => r.verdicts[s] === 'PASS')) continue
      console.log(`conformance 2026-07-28 ${r.target}: failures on the first run, running it again alone\n${r.output.slice(-3000)}`)
      done[i] = await runSuite(NODE!, r.target, urls[r.target])
    }
    for (const r of done) {
      runs[r.target] = r
      const all = Object.keys(r.verdicts)
      console.log(
        `conformance 2026-07-28 ${r.target.padEnd(9)} (node ${NODE === process.execPath ? process.version : NODE}): scored ${count(r, scored, 'PASS')} passed, ${count(r, scored, 'FAIL')} failed, ${scored.length - count(r, scored, 'PASS') - count(r, scored, 'FAIL')} not run; unscored ${count(r, unscored, 'PASS')} passed, ${count(r, unscored, 'FAIL')} failed; ${all.length} scenarios`
      )
    }
  }, 600_000)

  afterAll(async () => {
    await Promise.all([nodeEdge?.close(), worker?.close()])
    await origin?.close()
  })

  it('the requirement set is the frozen one: 37 scored server scenarios', () => {
    expect(scored).toHaveLength(37)
    expect(scored).toEqual(expect.arrayContaining(['server-stateless', 'caching', 'sep-2164-resource-not-found']))
    expect(scored.filter((s) => s.startsWith('input-required-result-'))).toHaveLength(14)
    expect(unscored).toEqual(expect.arrayContaining(SEP_2243))
  })

  it.each(TARGETS)('every scored scenario passes on %s, and the suite exits 0', (t) => {
    const r = runs[t]
    const failing = Object.fromEntries(scored.filter((s) => r.verdicts[s] !== 'PASS').map((s) => [s, r.failures[s] ?? 'not run']))
    expect(failing, r.output.slice(-3000)).toEqual({})
    expect(r.exitCode).toBe(0)
  })

  it('every scenario, scored or not, gets the same verdict direct, through the Node edge and through workerd', () => {
    expect(Object.keys(runs.direct.verdicts).length).toBe(scored.length + unscored.length)
    expect(runs['node-edge'].verdicts).toEqual(runs.direct.verdicts)
    expect(runs.workerd.verdicts).toEqual(runs.direct.verdicts)
  })

  it('the pending SEP-2243 header/body validation scenarios pass through the edge', () => {
    for (const t of ['node-edge', 'workerd'] as const) for (const s of SEP_2243) expect(runs[t].verdicts[s], `${t} ${s}: ${String(runs[t].failures[s])}`).toBe('PASS')
  })
})

if (NODE === null)
  describe('conformance 2026-07-28 requirements (0.2.0-alpha)', () => {
    it.skip(SKIP_REASON, () => {})
  })
