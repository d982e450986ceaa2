/**
 * Private tool lists are bounded (docs/scope.md "Bounds"), on both runtimes (the Worker on its KV
 * namespace under Miniflare): 30 callers, each with its own Authorization, of an origin that marks
 * its list `cacheScope: "private"` leave at most MAX_PRIVATE_SCOPES (+ one sweep's slack) private
 * scopes in the store, the latest callers' ones; each caller is still validated with its own
 * list. The pin step's records follow the same bounds: the pins are the origin's (no private scope
 * has a `pins:` record), and a private scope's served snapshot (`pinserved:`) goes with the scope.
 * The TTL and the bound on the file store and on Redis, with real `mcp-edge serve`
 * processes, are in test/stores/private-scope-stores.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepEvery } from '../../src/core/validation/private-scopes'
import { expectedPrivateScope } from '../helpers/kv-effect'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { pollUntil } from '../helpers/wait'
import { pinKey } from '../../src/core/pinning/pin-store'
import { initializeReply } from '../helpers/initialize-reply'

const HEADERS = mcpHeaders()
const TOOLS = [
  { name: 'get_weather', inputSchema: { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] } },
  { name: 'get_alerts', inputSchema: { type: 'object' } },
]
const MAX = 5
const CALLERS = 30

/** Polls `check` up to `ms` until `ok`; returns its last answer. */
const eventually = <T>(ms: number, check: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => pollUntil(check, ok, { timeoutMs: ms, intervalMs: 25 })

describe.each(RUNTIMES)('private scopes bounded on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((req, res) => {
      const m = req.json as { id?: unknown; method?: string }
      if (m.method === 'initialize') return sendJson(res, initializeReply(m))
      if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: TOOLS, cacheScope: 'private' } })
      if (m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
      sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'forwarded' }] } })
    })
    edge = await start({ ORIGIN_URL: origin.url, MAX_PRIVATE_SCOPES: String(MAX), REFRESH_BUDGET_PER_MIN: '1000' })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  async function post(auth: string, body: unknown): Promise<any> {
    const res = await fetch(edge.url, { method: 'POST', headers: { ...HEADERS, authorization: auth }, body: JSON.stringify(body) })
    expect(res.status).toBe(200)
    return res.json()
  }

  const scopesIn = async (kind: string) => new Set((await edge.kvKeys!(`${kind}:default:u-`)).map((k) => k.split(':')[2]!))

  it(`${CALLERS} callers of a private list leave at most MAX_PRIVATE_SCOPES (+ one sweep) scopes in the store, the latest ones; each is validated with its own list`, async () => {
    const bound = MAX + sweepEvery(MAX)
    for (let i = 0; i < CALLERS; i++) {
      const auth = `Bearer caller-${i}`
      // A call pulls the caller's list with its Authorization; the edge stores it under the caller's scope.
      const bad = await post(auth, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { units: 'k' } } })
      expect(bad.error?.message, JSON.stringify(bad)).toContain('units')
      // A relayed list: the pin step (audit, the default) decides it in the caller's scope.
      expect((await post(auth, { jsonrpc: '2.0', id: 4, method: 'tools/list' })).result.tools).toHaveLength(2)
      expect((await scopesIn('tools')).size).toBeLessThanOrEqual(bound)
    }
    // The pins are the origin's: one record, whatever scope the lists came in; the private
    // scopes' served snapshots are bounded like their tool records.
    await eventually(
      2_000,
      async () => (await edge.kvKeys!('pins:')).length,
      (n) => n === 1
    )
    expect(await edge.kvKeys!('pins:')).toEqual([pinKey('default', 'public')])
    const served = await eventually(
      2_000,
      () => scopesIn('pinserved'),
      (m) => m.size <= bound
    )
    expect(served.size).toBeLessThanOrEqual(bound)
    expect(served.has(expectedPrivateScope('Bearer caller-0'))).toBe(false)
    const kept = await scopesIn('tools')
    expect(kept.size).toBeGreaterThanOrEqual(MAX)
    expect(kept.has(expectedPrivateScope(`Bearer caller-${CALLERS - 1}`))).toBe(true)
    expect(kept.has(expectedPrivateScope('Bearer caller-0'))).toBe(false)
    const markers = await eventually(
      2_000,
      () => scopesIn('scopes'),
      (m) => m.size <= bound
    )
    expect(markers.size).toBeLessThanOrEqual(bound)
    expect((await scopesIn('toollist')).size).toBeLessThanOrEqual(bound)
    // An evicted caller is pulled again and validated with its own list (not answered Unknown tool).
    const again = await post('Bearer caller-0', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_weather', arguments: { units: 'k' } } })
    expect(again.error?.message, JSON.stringify(again)).toContain('units')
    const ok = await post('Bearer caller-0', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_weather', arguments: { units: 'c' } } })
    expect(ok.result).toEqual({ content: [{ type: 'text', text: 'forwarded' }] })
  })
})
