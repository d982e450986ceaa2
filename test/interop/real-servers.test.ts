/**
 * Real MCP servers' tool lists behind the real edge, on Node and on the Worker under Miniflare:
 *
 * - a stand-in origin per server serves that server's own `tools/list` (test/fixtures/real-servers,
 *   gathered from the npm packages by scripts/gather-real-servers.mjs); the edge learns it by its
 *   own pull, as in production;
 * - one valid call per tool of the corpus (strings of 2,000 characters; test/helpers/valid-instance.ts)
 *   is forwarded byte for byte;
 * - the realistic large calls the validation budget refused (test/helpers/real-server-calls.ts:
 *   "arguments of 11106 characters are too large for this tool's schema to be checked within the
 *   edge's validation budget") are forwarded byte for byte;
 * - `edit_file` replacing a 5 KB paragraph goes through the edge to the real
 *   @modelcontextprotocol/server-filesystem (a devDependency, spawned on stdio behind a plain
 *   message relay, in a scratch folder), which edits the file.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { serveMcp } from '../helpers/mcp-script'
import { mcpHeaders, post } from '../helpers/grading'
import { LARGE_CALLS, REAL_SERVERS, type RealServerFixture } from '../helpers/real-server-calls'
import { validInstance } from '../helpers/valid-instance'
import { startStdioRelay, type StdioRelay } from '../helpers/stdio-shared-relay'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { dialectOf, type ProtocolVersion } from '../../src/core/jsonrpc/versions'
import { CompiledValidators } from '../../src/core/validation/compiled-validators'

/** The origin name a package is served under (`/mcp/<name>`). */
const originName = (pkg: string) => pkg.replace(/^@/, '').replace(/[^A-Za-z0-9_.~-]/g, '-')
const call = (id: number | string, name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

/** A valid call per tool, checked in process first (the generator is the test's, not the edge's). */
function validCalls(f: RealServerFixture): { tool: string; args: unknown }[] {
  const compiled = new CompiledValidators(createCfworkerEngine(), 1_000, { compiles: 0 })
  const out: { tool: string; args: unknown }[] = []
  for (const t of f.tools) {
    const r = compiled.resolve({ name: t.name, inputSchema: t.inputSchema, dialect: dialectOf(t.inputSchema, (f.protocolVersion ?? '2025-06-18') as ProtocolVersion), hash: '0' })
    if (!r.validate) continue
    for (const o of [{ text: 2_000 }, { text: 2_000, requiredOnly: true }, { text: 2_000, items: 2 }]) {
      try {
        const args = validInstance(t.inputSchema, o)
        if (r.validate(args) === null) {
          out.push({ tool: t.name, args })
          break
        }
      } catch {
        // the next shape
      }
    }
  }
  return out
}

describe.each(RUNTIMES)('real MCP servers behind the edge on $name', ({ start }) => {
  const origins = new Map<string, ScriptedOrigin>()
  let edge: EdgeUnderTest
  beforeAll(async () => {
    for (const f of REAL_SERVERS) {
      const o = await startScriptedOrigin()
      serveMcp(o, { pages: [f.tools] })
      origins.set(f.package, o)
    }
    const first = origins.values().next().value!
    edge = await start({ ORIGIN_URL: first.url, ORIGINS: JSON.stringify(Object.fromEntries(REAL_SERVERS.map((f) => [originName(f.package), origins.get(f.package)!.url]))) })
  })
  afterAll(async () => {
    await edge?.close()
    await Promise.all([...origins.values()].map((o) => o.close()))
  })

  for (const c of LARGE_CALLS)
    it(`${c.package}: ${c.what} is forwarded as sent`, async () => {
      const origin = origins.get(c.package)!
      const body = call(`large-${c.tool}`, c.tool, c.args)
      const r = await post(edge, body, mcpHeaders(), originName(c.package))
      expect(JSON.parse(r.text), r.text.slice(0, 400)).toMatchObject({ id: `large-${c.tool}`, result: { content: [{ type: 'text', text: 'ok' }] } })
      expect(origin.forwarded().map((q) => q.body)).toContain(body)
    })

  it('every usable tool of the corpus gets a valid call with 2,000-character strings forwarded as sent', { timeout: 120_000 }, async () => {
    let sent = 0
    const refused: string[] = []
    for (const f of REAL_SERVERS) {
      const origin = origins.get(f.package)!
      for (const { tool, args } of validCalls(f)) {
        const body = call(`v${sent++}`, tool, args)
        const r = await post(edge, body, mcpHeaders(), originName(f.package))
        const answer = JSON.parse(r.text) as { result?: { content?: { text?: string }[] } }
        if (answer.result?.content?.[0]?.text !== 'ok' || !origin.forwarded().some((q) => q.body === body)) refused.push(`${f.package} ${tool}: ${r.text.slice(0, 300)}`)
      }
    }
    console.log(`[real-servers] ${sent} valid calls to ${REAL_SERVERS.length} servers' tools, ${sent - refused.length} forwarded`)
    expect(sent).toBeGreaterThan(300)
    expect(refused).toEqual([])
  })
})

describe.each(RUNTIMES)('the real server-filesystem behind the edge on $name', ({ start }) => {
  let scratch: string
  let relay: StdioRelay
  let edge: EdgeUnderTest
  beforeAll(async () => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'edge-fs-')))
    const bin = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
    relay = await startStdioRelay(process.execPath, [bin, scratch], { PATH: process.env.PATH ?? '', HOME: scratch }, scratch)
    edge = await start({ ORIGIN_URL: relay.url })
  })
  afterAll(async () => {
    await edge?.close()
    await relay?.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('edit_file replacing a 5 KB paragraph (an 11 KB message) is forwarded and the server edits the file', async () => {
    const c = LARGE_CALLS.find((x) => x.tool === 'edit_file')!
    const edit = (c.args.edits as { oldText: string; newText: string }[])[0]!
    const file = join(scratch, 'notes.md')
    writeFileSync(file, `# Notes\n\n${edit.oldText}\n\nThe end.\n`)
    const body = call('fs-edit', 'edit_file', { ...c.args, path: file })
    expect(body.length).toBeGreaterThan(11_000)
    const r = await post(edge, body)
    const answer = JSON.parse(r.text) as { id: string; result?: { isError?: boolean; content: { text: string }[] } }
    expect(answer.id).toBe('fs-edit')
    expect(answer.result?.isError ?? false, r.text.slice(0, 300)).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe(`# Notes\n\n${edit.newText}\n\nThe end.\n`)
    expect(relay.calls.filter((q) => q.name === 'edit_file')).toHaveLength(1)
  })
})
