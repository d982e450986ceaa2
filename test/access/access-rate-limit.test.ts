/**
 * RATE_LIMIT end to end with a real SDK MCP server as the origin: per caller and per tool on both
 * runtimes (Node: the in-memory limiter; the built Worker in workerd: the Workers Rate Limiting
 * bindings RATE_LIMITER_<limit>_PER_<period>S under Miniflare), a single request over the limit
 * answered 429 with Retry-After and a JSON-RPC error naming the budget, a batch answered per id
 * with only the allowed elements forwarded; then two Node edges sharing one budget through a real
 * redis-server, and a Redis outage that lets calls through (fail open) instead of failing them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { mcpHeaders } from '../helpers/mcp'
import { startAccessOrigin, type AccessOrigin } from '../helpers/access-origin'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { requireRedisServer, startRedisServer, type RedisServer } from '../helpers/redis-server'
import type { LogRecord } from '../../src/core/ports'
import { waitFor } from '../helpers/wait'

const TOOLS = ['get_weather', 'get_time', 'search']

interface Answer {
  status: number
  headers: Headers
  text: string
  json: Record<string, unknown> & { id?: number; error?: { code: number; message: string; data?: Record<string, unknown> } }
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as Answer['json'] }
}

const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { q: 'secret argument value' } } })
const as = (token: string, extra: Record<string, string> = {}, version?: string) => mcpHeaders(version, { authorization: `Bearer ${token}`, ...extra })

/** The exact text of a refusal by a budget. */
function refusalText(what: string, budget: string, retryAfterS: number): string {
  return `Rate limit exceeded: this edge allows ${what} (RATE_LIMIT budget ${budget}), and this caller has used it up. Retry after ${retryAfterS} s; to send more, spread the requests out, or ask the operator to raise RATE_LIMIT.`
}

describe.each(RUNTIMES)('rate limits on $name', ({ name, start }) => {
  let origin: AccessOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startAccessOrigin({ tools: TOOLS, json: true, pageSize: 10 })
    edge = await start(
      { ORIGIN_URL: origin.url, RATE_LIMIT: '3/min,get_*=2/min' },
      { ratelimits: { RATE_LIMITER_3_PER_60S: { simple: { limit: 3, period: 60 } }, RATE_LIMITER_2_PER_60S: { simple: { limit: 2, period: 60 } } } }
    )
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('per caller and per tool: 429 with Retry-After and a JSON-RPC error naming the budget; another caller is not affected', async () => {
    expect((await post(edge.url, call(1, 'get_weather'), as('alice-token'))).status).toBe(200)
    expect((await post(edge.url, call(2, 'get_weather'), as('alice-token'))).status).toBe(200)
    const byTool = await post(edge.url, call(3, 'get_weather'), as('alice-token', { 'x-request-id': 'rate-1' }))
    expect(byTool.status).toBe(429)
    const retry = Number(byTool.headers.get('retry-after'))
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true)
    if (name === 'worker') expect(retry).toBe(60) // the binding's period: it does not say the time left
    expect(byTool.json).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -31004,
        message: refusalText('2 calls per minute from one caller to tools matching "get_*"', 'get_*=2/min', retry),
        data: { source: 'edge', reason: 'rate_limited', budget: 'get_*=2/min', retryAfterS: retry },
      },
    })
    // The caller budget was charged by the refused call too (earlier charges stay): the 4th request of the minute is refused by it.
    const byCaller = await post(edge.url, call(4, 'search'), as('alice-token'))
    expect(byCaller.status).toBe(429)
    expect(byCaller.json.error!.message).toBe(refusalText('3 requests per minute from one caller', '3/min', Number(byCaller.headers.get('retry-after'))))
    // Another caller has budgets of its own.
    const bob = await post(edge.url, call(5, 'get_weather'), as('bob-token'))
    expect(bob.status).toBe(200)
    expect(origin.calls.filter((t) => t === 'get_weather')).toHaveLength(3)
    const logs = await edge.logs({ msg: 'mcp.denied', where: (r) => r.rid === 'rate-1' })
    const line = logs.find((r) => r.msg === 'mcp.denied' && r.rid === 'rate-1')!
    expect(line).toMatchObject({ level: 'warn', reason: 'rate_limited', id: '3', method: 'tools/call', tool: 'get_weather', budget: 'get_*=2/min', retryAfterS: retry })
    expect(JSON.stringify(line)).not.toMatch(/alice-token|secret argument value/)
  })

  it('a batch: each refused element gets its own error, the allowed ones still go through, nothing is forwarded for the refused', async () => {
    const before = origin.calls.length
    const a = await fetch(edge.url, {
      method: 'POST',
      headers: as('carol-token', {}, '2025-03-26'),
      body: JSON.stringify([call(1, 'search'), call(2, 'search'), call(3, 'search'), call(4, 'search')]),
    })
    expect(a.status).toBe(200)
    const msgs = (await a.json()) as Answer['json'][]
    expect(msgs).toHaveLength(4)
    const refused = msgs.filter((m) => m.error)
    expect(refused).toHaveLength(1)
    expect(refused[0]!.error).toMatchObject({ code: -31004, data: { reason: 'rate_limited', budget: '3/min' } })
    expect(refused[0]!.error!.message).toMatch(/^Rate limit exceeded: this edge allows 3 requests per minute from one caller \(RATE_LIMIT budget 3\/min\)/)
    expect(msgs.filter((m) => 'result' in m)).toHaveLength(3)
    expect(origin.calls.slice(before)).toEqual(['search', 'search', 'search'])
  })

  it('every JSON-RPC request counts against the caller budget (tools/list too)', async () => {
    const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' })
    const statuses: number[] = []
    for (let i = 1; i <= 4; i++) statuses.push((await post(edge.url, list(i), as('gina-token'))).status)
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  it('notifications and responses count too: over the budget they get 429 with id null and Retry-After, and never reach the origin', async () => {
    const sent = () => origin.requests
    const note = { jsonrpc: '2.0', method: 'notifications/initialized' }
    const raw = (body: unknown, headers = as('hank-token', { 'x-request-id': 'note-1' })) => fetch(edge.url, { method: 'POST', headers, body: JSON.stringify(body) })
    for (let i = 0; i < 3; i++) expect((await raw(note)).status).toBe(202)
    const before = sent()
    const over = await raw(note)
    expect(over.status).toBe(429)
    const retry = Number(over.headers.get('retry-after'))
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true)
    expect(await over.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -31004,
        message: refusalText('3 requests per minute from one caller', '3/min', retry),
        data: { source: 'edge', reason: 'rate_limited', budget: '3/min', retryAfterS: retry },
      },
    })
    // A response to a request of the origin (sampling, elicitation) is charged and refused the same way.
    const response = await raw({ jsonrpc: '2.0', id: 'srv-1', result: {} })
    expect(response.status).toBe(429)
    expect(((await response.json()) as { id: unknown }).id).toBeNull()
    // A method without an id is a notification: charged as one.
    expect((await raw({ jsonrpc: '2.0', method: 'foobar', params: { payload: 'x'.repeat(1000) } })).status).toBe(429)
    // A 2025-03-26 batch of notifications only: refused as a whole, nothing forwarded.
    const batch = await raw([note, note], as('hank-token', {}, '2025-03-26'))
    expect(batch.status).toBe(429)
    expect(((await batch.json()) as { id: unknown; error: { code: number } }).error.code).toBe(-31004)
    expect(sent()).toBe(before)
    // The charge is per caller: another one still gets 202.
    expect((await raw(note, as('ivan-token'))).status).toBe(202)
  })

  it('counts each refusal on mcp_edge_denials_total{reason="rate_limited"}', async () => {
    const text = await (await fetch(new URL('/metrics', edge.url))).text()
    // 4 requests (2 calls, a batch element, a tools/list), 3 notifications and responses, 2 notifications of a batch.
    expect(/^mcp_edge_denials_total\{reason="rate_limited"\} (\d+)/m.exec(text)?.[1]).toBe('9')
  })

  it('a call the edge refuses after the charge (an unknown tool) has been counted: security.md, what a refusal costs', async () => {
    const searches = origin.calls.filter((t) => t === 'search').length
    for (let id = 1; id <= 3; id++) {
      const r = await post(edge.url, call(id, 'no_such_tool'), as('dora-token'))
      expect(r.status).toBe(200)
      expect(r.json.error?.code).toBe(-32602) // the unknown-tool answer, not a rate limit
    }
    const fourth = await post(edge.url, call(4, 'search'), as('dora-token'))
    expect(fourth.status).toBe(429)
    expect(fourth.json.error!.message).toContain('(RATE_LIMIT budget 3/min)')
    expect(origin.calls.filter((t) => t === 'search')).toHaveLength(searches)
  })
})

describe('two Node edges sharing one budget through redis-server', () => {
  let redis: RedisServer
  let origin: AccessOrigin
  const edges: RunningEdge[] = []
  const logs: LogRecord[] = []
  beforeAll(async () => {
    requireRedisServer()
    redis = await startRedisServer()
    origin = await startAccessOrigin({ tools: TOOLS, json: true, pageSize: 10 })
    for (let i = 0; i < 2; i++)
      edges.push(await startEdge({ env: { ORIGIN_URL: origin.url, STORE_URL: redis.url, STORE_PREFIX: 'rl-test:', RATE_LIMIT: '3/min' }, port: 0, log: (r) => logs.push(r) }))
  })
  afterAll(async () => {
    for (const e of edges) await e.close()
    await origin?.close()
    await redis?.stop()
  })

  it('three calls of one caller pass over both edges, the fourth is refused on either; another caller goes on', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await post(edges[i % 2]!.url, call(i + 1, 'search'), as('dana-token'))).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    const fifth = await post(edges[0]!.url, call(5, 'search'), as('dana-token'))
    expect(fifth.status).toBe(429)
    expect(fifth.json.error!.message).toBe(refusalText('3 requests per minute from one caller', '3/min', Number(fifth.headers.get('retry-after'))))
    expect((await post(edges[1]!.url, call(6, 'search'), as('erin-token'))).status).toBe(200)
  })

  it('Redis down: calls go on uncounted (fail open), never a 500, and the outage is logged', async () => {
    await redis.stop()
    const a = await post(edges[0]!.url, call(7, 'search'), as('frank-token'))
    expect(a.status).toBe(200)
    expect(a.json).toMatchObject({ id: 7, result: { content: [{ text: 'search ok' }] } })
    const line = await waitFor(() => logs.find((r) => r.msg === 'access.rate_limit_unavailable') ?? null, { what: 'the rate limiter outage line' })
    expect(line).toMatchObject({ level: 'warn', text: 'the rate limiter could not be asked; requests go on uncounted (fail open) until it answers again' })
    // A caller already over the limit is not refused while nothing can count.
    expect((await post(edges[1]!.url, call(8, 'search'), as('dana-token'))).status).toBe(200)
  })
})
