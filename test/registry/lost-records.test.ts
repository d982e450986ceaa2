/**
 * A record the store lost or holds unreadable, of a tool the origin lists, is a miss that refreshes
 * (single flight, within the per-origin budget), not "Unknown tool": the last pull is recent, so
 * the refresh interval (REFRESH_MIN_INTERVAL_MS) would otherwise answer the call from that pull's
 * outcome, and the tool would be "unknown" until the interval ends. On both runtimes (the Worker
 * on its KV namespace under Miniflare); the Redis cases (restarted empty, a corrupt record) are in
 * test/stores/redis-lost-records.test.ts.
 *
 * VALIDATOR_CACHE_SIZE=1 keeps one tool entry in memory, so a call to the other tool reads the
 * store, as after a Redis reconnect or a change notice from another edge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { toolKey } from '../../src/core/validation/tool-store'
import { initializeReply } from '../helpers/initialize-reply'

const HEADERS = mcpHeaders()
const TOOLS = [
  { name: 'get_weather', inputSchema: { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] } },
  { name: 'other', inputSchema: { type: 'object' } },
]

describe.each(RUNTIMES)('lost or unreadable records on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((req, res) => {
      const m = req.json as { id?: unknown; method?: string }
      if (m.method === 'initialize') return sendJson(res, initializeReply(m))
      if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
      if (m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
      sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'forwarded' }] } })
    })
    edge = await start({ ORIGIN_URL: origin.url, REFRESH_MIN_INTERVAL_MS: '600000', VALIDATOR_CACHE_SIZE: '1' })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  const pulls = () => origin.received.filter((r) => (r.json as { method?: string } | undefined)?.method === 'tools/list').length

  async function call(name: string, args: Record<string, unknown>): Promise<{ error?: { code: number; message: string }; result?: unknown }> {
    const res = await fetch(edge.url, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    })
    expect(res.status).toBe(200)
    return (await res.json()) as { error?: { code: number; message: string }; result?: unknown }
  }

  it('a corrupt record of a listed tool is refreshed once and the call validated, not answered Unknown tool', async () => {
    // The first call pulls the list (both tools stored); memory keeps only `other`.
    expect((await call('other', {})).result).toBeDefined()
    expect(pulls()).toBe(1)
    await edge.kvPut(toolKey('default', 'public', 'get_weather'), '{"name": "get_weather", not json')
    const bad = await call('get_weather', { units: 'k' })
    expect(bad.error?.message, JSON.stringify(bad)).toContain('units')
    expect(bad.error?.message).not.toMatch(/Unknown tool/)
    expect(pulls()).toBe(2)
    // The pull wrote the record again.
    expect(JSON.parse((await edge.kvGet(toolKey('default', 'public', 'get_weather')))!)).toMatchObject({ name: 'get_weather', inputSchema: TOOLS[0]!.inputSchema })
  })

  it('a missing record of a listed tool is refreshed once and the call validated, not answered Unknown tool', async () => {
    expect((await call('other', {})).result).toBeDefined() // memory now holds `other`, not get_weather
    const before = pulls()
    await edge.kvDelete!(toolKey('default', 'public', 'get_weather'))
    const bad = await call('get_weather', { units: 'k' })
    expect(bad.error?.message, JSON.stringify(bad)).toContain('units')
    expect(pulls()).toBe(before + 1)
    expect((await call('get_weather', { units: 'c' })).result).toEqual({ content: [{ type: 'text', text: 'forwarded' }] })
    expect(pulls()).toBe(before + 1)
  })

  it('a tool the last pull did not list stays unknown within the interval, with no pull', async () => {
    const before = pulls()
    for (let i = 0; i < 3; i++) {
      const r = await call('not_listed', {})
      expect(r.error?.code).toBe(-32602)
      expect(r.error?.message).toMatch(/Unknown tool/)
    }
    expect(pulls()).toBe(before)
  })
})
