/**
 * Defects found by a hostile first-time user, each pinned by a test on both runtimes where the
 * runtime matters: catastrophic-backtracking patterns, request methods sent as notifications,
 * junk tool names, schemas crossing origin URLs, Host checks off /mcp, logged refusals, id tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge } from '../../src/adapters/node/index'
import type { LogRecord } from '../../src/core/ports'
import { MemoryKv } from '../../src/stores/memory-kv'
import { ADMIN_TOKEN, pushTools } from '../helpers/grading'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { toolPrefix } from '../../src/core/validation/tool-store'
import { initializeReply } from '../helpers/initialize-reply'

const H = mcpHeaders()
const post = (url: string, body: unknown, headers: Record<string, string> = H) =>
  fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })

/** An origin that lists `tools` and answers every call with "done". */
function answerWith(origin: ScriptedOrigin, tools: unknown[]): void {
  origin.handle((req, res) => {
    const m = req.json as { id?: unknown; method?: string } | unknown[]
    if (Array.isArray(m) || req.method !== 'POST') return void res.writeHead(202).end()
    if (m.method === 'initialize') return sendJson(res, initializeReply(m))
    if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools } })
    if (m.id === undefined) return void res.writeHead(202).end()
    sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'done' }] } })
  })
}

describe.each(RUNTIMES)('hardening on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    answerWith(origin, [{ name: 'lookup', inputSchema: { type: 'object', properties: { code: { type: 'string' } } } }])
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN, ALLOWED_HOSTS: 'localhost' })
  })
  afterAll(async () => {
    await edge.close()
    await origin.close()
  })

  it('a pattern with nested repetition is matched in linear time (the call is judged, the edge stays responsive)', async () => {
    await pushTools(edge, [{ name: 'redos', inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^([a-z0-9]+)+$' } } } }])
    origin.reset()
    const t0 = Date.now()
    const res = await post(edge.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'redos', arguments: { code: 'a'.repeat(40) + '!' } } })
    expect(res.status).toBe(200)
    expect(JSON.stringify(await res.json())).toContain('Invalid arguments for tool \\"redos\\"')
    // Backtracking on these 41 characters would take hours: the bound only catches that, never speed.
    expect(Date.now() - t0).toBeLessThan(15_000)
    expect(origin.forwarded().length).toBe(0)
    const ok = await post(edge.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'redos', arguments: { code: 'a'.repeat(40) } } })
    expect(await ok.json()).toMatchObject({ id: 2, result: { content: [{ text: 'done' }] } })
    const last = (await edge.logs({ msg: 'mcp.post', where: (r) => ((r.grades ?? []) as { id: string; grade: string }[]).some((g) => g.id === '2') }))
      .filter((l) => l.msg === 'mcp.post')
      .at(-1) as { grades: { grade: string }[] }
    expect(last.grades[0]!.grade).not.toBe('unvalidated')
    expect((await fetch(new URL('/healthz', edge.url))).status).toBe(200)
  })

  it('tools/call without an id is refused (400 -32600), never forwarded unvalidated', async () => {
    origin.reset()
    const res = await post(edge.url, { jsonrpc: '2.0', method: 'tools/call', params: { name: 'lookup', arguments: { code: 42 } } })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ id: null, error: { code: -32600 } })
    const batch = await post(
      edge.url,
      [
        { jsonrpc: '2.0', method: 'tools/call', params: { name: 'lookup', arguments: {} } },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
      ],
      { ...H, 'mcp-protocol-version': '2025-03-26' }
    )
    // One entry, for the ping only: the id-less tools/call is dropped (D15), never forwarded.
    const entries = (await batch.json()) as { id: unknown }[]
    expect(entries.map((e) => e.id)).toEqual([2])
    expect(origin.forwarded().map((r) => r.body)).toEqual(['[{"jsonrpc":"2.0","id":2,"method":"ping"}]'])
  })

  it('junk tool names make no metric series and are answered without a lookup', async () => {
    origin.reset()
    for (let i = 0; i < 20; i++) {
      const res = await post(edge.url, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: `junk${i}-` + 'N'.repeat(1000), arguments: {} } })
      expect(await res.json()).toMatchObject({ id: i, error: { code: -32602 } })
    }
    const metrics = await (await fetch(new URL('/metrics', edge.url))).text()
    expect(metrics).not.toContain('junk')
    expect(metrics).toMatch(/tool="_unknown",grade="rejected"\} 20/)
    expect(origin.received.length).toBe(0)
  })

  it('Host is checked on /metrics and /healthz too', async () => {
    // Node's fetch forbids setting Host; a raw request through the http module does not.
    const { request } = await import('node:http')
    const u = new URL('/metrics', edge.url)
    const status = await new Promise<number>((resolve, reject) => {
      request({ host: u.hostname, port: u.port, path: '/metrics', headers: { host: 'evil.example' } }, (r) => {
        r.resume()
        resolve(r.statusCode ?? 0)
      })
        .on('error', reject)
        .end()
    })
    expect(status).toBe(403)
  })

  it('a transport refusal is logged like every POST and carries MCP-Edge-Grade', async () => {
    const before = (await edge.logs()).length
    const res = await post(edge.url, '{}', { ...H, 'content-type': 'text/plain' })
    expect(res.status).toBe(415)
    expect(res.headers.get('mcp-edge-grade')).toBe('rejected=1')
    const logs = (await edge.logs({ msg: 'mcp.post', where: (l) => l.status === 415 })).slice(before)
    expect(logs.some((l) => l.msg === 'mcp.post' && l.status === 415)).toBe(true)
    const parse = await post(edge.url, '{not json')
    expect(parse.headers.get('mcp-edge-grade')).toBe('rejected=1')
  })

  it('an integer id written with an exponent is echoed as written', async () => {
    const res = await post(edge.url, '{"jsonrpc":"2.0","id":1e3,"method":"tools/call","params":{"name":"lookup","arguments":[]}}')
    expect(await res.text()).toMatch(/^\{"jsonrpc":"2.0","id":1e3,"error":\{"code":-32602/)
  })
})

describe('schemas never cross origin URLs (Node, one store outliving a restart)', () => {
  it('an edge fronting another URL under the same origin name does not use the old schemas', async () => {
    const a = await startScriptedOrigin()
    const b = await startScriptedOrigin()
    answerWith(a, [{ name: 'get_forecast', inputSchema: { type: 'object', properties: { days: { type: 'integer', maximum: 16 } } } }])
    answerWith(b, [{ name: 'get_forecast', inputSchema: { type: 'object', properties: { days: { type: 'integer', maximum: 100 } } } }])
    const kv = new MemoryKv()
    const logs: LogRecord[] = []
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_forecast', arguments: { days: 30 } } }
    const first = await startEdge({ env: { ORIGIN_URL: a.url, STORE_FILE: 'memory' }, port: 0, kv, log: (r) => logs.push(r) })
    expect(await (await post(first.url, call)).json()).toMatchObject({ error: { code: -32602 } })
    await first.close()
    expect((await kv.keys(toolPrefix('default'))).length).toBe(1)
    const second = await startEdge({ env: { ORIGIN_URL: b.url, STORE_FILE: 'memory' }, port: 0, kv, log: (r) => logs.push(r) })
    expect(await (await post(second.url, call)).json()).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } })
    await second.close()
    await a.close()
    await b.close()
  })
})
