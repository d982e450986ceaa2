/**
 * The benchmark's Workers floors (scripts/bench/bare-worker.ts, docs/performance.md "The floors"),
 * the numerator of every workerd target in BENCHMARKS.md: the Workers parse floor (`BARE_BODY=parse`)
 * and the Workers validating floor (`BARE_BODY=validate`). Each must relay the origin's bytes
 * unchanged and really do its work (a floor that skipped a parse or the validation would make
 * every edge Worker ratio look worse than it is). The real bare Worker bundled as the bench
 * bundles it, in workerd under Miniflare with the routes scripts/bench/worker.ts gives it, in
 * front of a `node:http` origin in this process that answers what it is told and counts the POSTs
 * that reach it.
 */
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO } from '../helpers/repo'
import { TOOLS } from '../../scripts/bench/schemas'

const dir = mkdtempSync(join(tmpdir(), 'workers-floors-'))
/** What the origin answers next, and the POSTs it has received. */
const origin = { reply: { type: 'application/json', body: '' }, received: 0 }
let server: Server
let mf: Miniflare
let base: string

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const call = (id: number, args: Record<string, unknown> = TOOLS[1]!.valid) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: TOOLS[1]!.name, arguments: args } })

async function post(path: string, body: string): Promise<{ status: number; bytes: Buffer }> {
  const r = await mf.dispatchFetch(`${base}${path}`, { method: 'POST', headers: HEADERS, body })
  return { status: r.status, bytes: Buffer.from(await r.arrayBuffer()) }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      origin.received++
      res.writeHead(200, { 'content-type': origin.reply.type }).end(origin.reply.body)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const originBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // Bundled as scripts/bench/processes.ts bundles it for the bench.
  const script = join(dir, 'bare-worker.js')
  await build({
    entryPoints: [join(REPO, 'scripts/bench/bare-worker.ts')],
    outfile: script,
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    target: 'es2022',
    logLevel: 'warning',
  })
  const floor = (mode: 'parse' | 'validate') => ({
    name: `floor-${mode}`,
    modules: true,
    modulesRoot: dir,
    scriptPath: script,
    compatibilityDate: '2026-04-20',
    bindings: { ORIGIN_BASE: originBase, BARE_BODY: mode, PREFIX: `/floor-${mode}`, TOOLS: JSON.stringify(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema }))) },
    routes: [`127.0.0.1/floor-${mode}/*`],
  })
  mf = new Miniflare({
    workers: [{ name: 'fallback', modules: true, script: 'export default { fetch: () => new Response("no route", { status: 404 }) }' }, floor('parse'), floor('validate')],
    host: '127.0.0.1',
    port: 0,
  })
  base = (await mf.ready).origin
}, 60_000)

afterAll(async () => {
  await mf?.dispose()
  await new Promise((r) => server?.close(r))
  rmSync(dir, { recursive: true, force: true })
})

describe('the Workers parse and validating floors', () => {
  it.each(['parse', 'validate'])('%s: relays the origin reply of a valid call byte for byte', async (mode) => {
    origin.reply = { type: 'application/json', body: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"déjà vu ✓ ${'x'.repeat(5000)}"}]}}` }
    const before = origin.received
    const r = await post(`/floor-${mode}/mcp`, call(1))
    expect(r.status).toBe(200)
    expect(r.bytes.equals(Buffer.from(origin.reply.body))).toBe(true)
    expect(origin.received).toBe(before + 1)
  })

  it.each(['parse', 'validate'])('%s: parses the request: a body that is not JSON is answered 400 without the origin', async (mode) => {
    const before = origin.received
    const r = await post(`/floor-${mode}/mcp`, '{"jsonrpc":"2.0","id":1,')
    expect(r.status).toBe(400)
    expect(JSON.parse(r.bytes.toString()).error.code).toBe(-32700)
    expect(origin.received).toBe(before)
  })

  it.each(['parse', 'validate'])('%s: parses the reply: one that does not parse never reaches the client', async (mode) => {
    origin.reply = { type: 'application/json', body: '{"jsonrpc":"2.0","id":1,"result":' }
    const r = await post(`/floor-${mode}/mcp`, call(1))
    expect(r.status).toBe(502)
    expect(r.bytes.toString()).not.toContain('"result":')
  })

  it("validate: checks the arguments against the tool's schema: a failing call is answered -32602 without the origin (the parse floor forwards it)", async () => {
    origin.reply = { type: 'application/json', body: '{"jsonrpc":"2.0","id":9,"result":{}}' }
    const before = origin.received
    const r = await post('/floor-validate/mcp', call(9, TOOLS[1]!.invalid))
    expect(r.status).toBe(200)
    expect(JSON.parse(r.bytes.toString())).toMatchObject({ id: 9, error: { code: -32602 } })
    expect(origin.received).toBe(before)
    expect((await post('/floor-parse/mcp', call(9, TOOLS[1]!.invalid))).bytes.toString()).toBe(origin.reply.body)
    expect(origin.received).toBe(before + 1)
  })
})
