/**
 * Tool schemas in KV on both runtimes (Node entry, built Worker in workerd): learning from
 * `tools/list` replies that pass through, the edge's own pull (initialize + every page + DELETE),
 * single-flight refresh (D7), TTL expiry (SCHEMA_TTL_S and the origin's `ttlMs`),
 * `notifications/tools/list_changed`, operator pushes, and the fail-open / reject policies (D8,
 * D16). Each origin is a real HTTP server on 127.0.0.1 scripted by the test (helpers/mcp-script).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, countMethod, eventually, rpc, serveMcp, toolCalls } from '../helpers/mcp-script'
import { toolKey, toolListKey } from '../../src/core/validation/tool-store'

const WEATHER = {
  name: 'get_weather',
  inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city'], additionalProperties: false },
}
const tool = (name: string, inputSchema: unknown, extra: Record<string, unknown> = {}) => ({ name, inputSchema, ...extra })
const numberArg = (name: string) => tool(name, { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] })
const stringArg = (name: string) => tool(name, { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] })

type Grade = { id: string; tool?: string; grade: string; code?: number; outputSchema?: string }
async function grades(edge: EdgeUnderTest): Promise<Grade[]> {
  return (await edge.logs()).filter((l) => l.msg === 'mcp.post').flatMap((l) => l.grades as Grade[])
}
const isRejected = (r: { json: any }) => r.json?.result?.isError === true && /Invalid arguments/.test(r.json.result.content[0].text)
const isForwardedOk = (r: { json: any }) => r.json?.result?.content?.[0]?.text === 'ok' && r.json.result.isError === undefined

describe.each(RUNTIMES)('tool schemas in KV on $name', ({ start }) => {
  const names = ['learn', 'pages', 'flight', 'changed', 'open', 'down', 'push', 'ttl', 'hint', 'reject', 'rejectdown'] as const
  const origins = {} as Record<(typeof names)[number], ScriptedOrigin>
  let edge: EdgeUnderTest
  let ttlEdge: EdgeUnderTest
  let rejectEdge: EdgeUnderTest
  const url = (e: EdgeUnderTest, name: string) => `${e.url}/${name}`

  beforeAll(async () => {
    for (const n of names) origins[n] = await startScriptedOrigin()
    const map = (ns: readonly string[]) => JSON.stringify(Object.fromEntries(ns.map((n) => [n, origins[n as (typeof names)[number]].url])))
    ;[edge, ttlEdge, rejectEdge] = await Promise.all([
      start({ ORIGINS: map(['learn', 'pages', 'flight', 'changed', 'open', 'down', 'push']), REFRESH_MIN_INTERVAL_MS: '0' }),
      start({ ORIGINS: map(['ttl', 'hint']), SCHEMA_TTL_S: '1', REFRESH_MIN_INTERVAL_MS: '0' }),
      start({ ORIGINS: map(['reject', 'rejectdown']), ON_SCHEMA_ERROR: 'reject', REFRESH_MIN_INTERVAL_MS: '0' }),
    ])
  })
  afterAll(async () => {
    await Promise.all([edge?.close(), ttlEdge?.close(), rejectEdge?.close()])
    await Promise.all(Object.values(origins).map((o) => o.close()))
  })

  it('learns schemas from every tools/list page that passes through and validates with them without pulling', async () => {
    const o = origins.learn
    serveMcp(o, { pages: [[WEATHER], [numberArg('count')]] })
    const p1 = await rpc(url(edge, 'learn'), { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
    expect(p1.json.result.nextCursor).toBe('1')
    const p2 = await rpc(url(edge, 'learn'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: '1' } })
    expect(p2.json.result.tools[0].name).toBe('count')
    // Learning runs in the background (deps.defer): the KV records appear shortly after the replies.
    const stored = await eventually(() => edge.kvGet(toolKey('learn', 'public', 'count')))
    expect(JSON.parse(stored)).toMatchObject({ name: 'count', dialect: '2020-12', inputSchema: numberArg('count').inputSchema })
    expect(JSON.parse((await edge.kvGet(toolKey('learn', 'public', 'get_weather')))!).inputSchema).toEqual(WEATHER.inputSchema)
    const bad = await rpc(url(edge, 'learn'), call(3, 'count', { x: 'seven' }))
    expect(isRejected(bad)).toBe(true)
    const good = await rpc(url(edge, 'learn'), call(4, 'get_weather', { city: 'Oslo', days: 2 }))
    expect(isForwardedOk(good)).toBe(true)
    // Only the client's two tools/list reached the origin: the edge never pulled.
    expect(countMethod(o, 'tools/list')).toBe(2)
    expect(countMethod(o, 'initialize')).toBe(0)
    expect(toolCalls(o)).toEqual([{ name: 'get_weather', arguments: { city: 'Oslo', days: 2 } }])
  })

  it('pulls the whole list with its own session (initialize, every page, DELETE) for a tool it does not know', async () => {
    const o = origins.pages
    serveMcp(o, { pages: [[numberArg('a')], [numberArg('b')], [numberArg('c')]] })
    const bad = await rpc(url(edge, 'pages'), call(1, 'c', { x: 1.5 }))
    expect(isRejected(bad)).toBe(true)
    expect(countMethod(o, 'initialize')).toBe(1)
    expect(countMethod(o, 'notifications/initialized')).toBe(1)
    expect(o.received.filter((r) => (r.json as { method?: string })?.method === 'tools/list').map((r) => (r.json as { params: { cursor?: string } }).params.cursor)).toEqual([
      undefined,
      '1',
      '2',
    ])
    await eventually(() => o.received.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === 'sess-1'))
    const list = JSON.parse((await edge.kvGet(toolListKey('pages', 'public')))!)
    expect(list.names).toEqual(['a', 'b', 'c'])
    for (const n of ['a', 'b']) expect(isForwardedOk(await rpc(url(edge, 'pages'), call(n, n, { x: 2 })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(3)
  })

  it('single-flight: 25 concurrent calls to a new tool cause one pull at the origin', async () => {
    const o = origins.flight
    serveMcp(o, { pages: [[stringArg('fresh')]] })
    const replies = await Promise.all(Array.from({ length: 25 }, (_, i) => rpc(url(edge, 'flight'), call(i, 'fresh', i % 2 ? { x: 'ok' } : { x: 42 }))))
    expect(countMethod(o, 'initialize')).toBe(1)
    expect(countMethod(o, 'tools/list')).toBe(1)
    expect(replies.filter(isRejected)).toHaveLength(13)
    expect(replies.filter(isForwardedOk)).toHaveLength(12)
    expect(toolCalls(o)).toHaveLength(12)
  })

  it('an unknown tool is refused with -32602 after one refresh; a tool added later is found by the next refresh', async () => {
    const o = origins.flight
    const before = countMethod(o, 'tools/list')
    const unknown = await rpc(url(edge, 'flight'), call(100, 'later', { x: 'a' }))
    expect(unknown.json.error).toMatchObject({ code: -32602 })
    expect(unknown.json.error.message).toContain('Unknown tool')
    expect(countMethod(o, 'tools/list')).toBe(before + 1)
    serveMcp(o, { pages: [[stringArg('fresh'), stringArg('later')]] })
    expect(isForwardedOk(await rpc(url(edge, 'flight'), call(101, 'later', { x: 'a' })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(before + 2)
  })

  it('notifications/tools/list_changed in an SSE reply invalidates: the next call validates against the new schema', async () => {
    const o = origins.changed
    const script = serveMcp(o, { pages: [[numberArg('flip'), numberArg('other')]] })
    expect(isRejected(await rpc(url(edge, 'changed'), call(1, 'flip', { x: 'text' })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(1)
    // The origin changes the tool, and says so inside the SSE reply to a call of another tool.
    script.pages = [[stringArg('flip'), numberArg('other')]]
    script.call = (_name, _args, id, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`)
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } })}\n\n`)
      return undefined
    }
    const sse = await fetch(url(edge, 'changed'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify(call(2, 'other', { x: 1 })),
    })
    const sseText = await sse.text()
    expect(sseText).toContain('notifications/tools/list_changed')
    script.call = undefined
    const now = await rpc(url(edge, 'changed'), call(3, 'flip', { x: 'text' }))
    expect(isForwardedOk(now)).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(2)
  })

  it('an operator push (KV record written directly) is used for validation', async () => {
    const o = origins.push
    serveMcp(o, { pages: [[]] })
    await edge.kvPut(toolKey('push', 'public', 'pushed'), JSON.stringify({ name: 'pushed', inputSchema: { type: 'object', properties: { n: { type: 'integer', maximum: 3 } } } }))
    const bad = await rpc(url(edge, 'push'), call(1, 'pushed', { n: 4 }))
    expect(isRejected(bad)).toBe(true)
    expect(bad.json.result.content[0].text).toContain('n: must be <= 3')
    expect(isForwardedOk(await rpc(url(edge, 'push'), call(2, 'pushed', { n: 3 })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(0)
  })

  it('fail-open (D8): an unusable schema (remote $ref, unsupported dialect, $dynamicRef) forwards the call graded unvalidated', async () => {
    const o = origins.open
    serveMcp(o, {
      pages: [
        [
          tool('remote', { type: 'object', properties: { loc: { $ref: 'https://schemas.example/location.json' } }, required: ['loc'] }),
          tool('old', { $schema: 'http://json-schema.org/draft-03/schema#', type: 'object', properties: { q: { type: 'string' } } }),
          tool('dyn', {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            $dynamicAnchor: 'node',
            type: 'object',
            properties: { kids: { type: 'array', items: { $dynamicRef: '#node' } } },
          }),
        ],
      ],
    })
    for (const [i, name] of ['remote', 'old', 'dyn'].entries()) {
      const r = await rpc(url(edge, 'open'), call(`o${i}`, name, { loc: 5, q: 5, kids: 'x' }))
      expect(isForwardedOk(r), name).toBe(true)
    }
    expect(toolCalls(o).map((c) => c.name)).toEqual(['remote', 'old', 'dyn'])
    const rows = await eventually(async () => {
      const g = (await grades(edge)).filter((x) => ['remote', 'old', 'dyn'].includes(x.tool ?? ''))
      return g.length === 3 ? g : null
    })
    expect(rows.map((r) => r.grade)).toEqual(['unvalidated', 'unvalidated', 'unvalidated'])
  })

  it('D16: when the pull fails (origin answers 500) the call is forwarded unvalidated', async () => {
    const o = origins.down
    serveMcp(o, { pages: [[numberArg('t')]], failPull: true })
    const r = await rpc(url(edge, 'down'), call('d1', 't', { x: 'not-a-number' }))
    expect(isForwardedOk(r)).toBe(true)
    expect(toolCalls(o)).toHaveLength(1)
    const g = await eventually(async () => (await grades(edge)).find((x) => x.id === '"d1"'))
    expect(g.grade).toBe('unvalidated')
  })

  it('ON_SCHEMA_ERROR=reject answers -32603 naming the tool and the problem, never the schema, and forwards nothing', async () => {
    const o = origins.reject
    serveMcp(o, {
      pages: [
        [
          tool('remote', { type: 'object', properties: { loc: { $ref: 'https://schemas.example/secret-location-schema.json' } } }),
          tool('old', { $schema: 'http://json-schema.org/draft-03/schema#', type: 'object' }),
          numberArg('fine'),
        ],
      ],
    })
    const a = await rpc(url(rejectEdge, 'reject'), call(1, 'remote', { loc: 'x' }))
    expect(a.json.error).toMatchObject({ code: -32603, data: { source: 'edge', tool: 'remote' } })
    expect(a.json.error.message).toContain('Cannot validate tool "remote"')
    expect(a.json.error.message).toContain('$ref')
    expect(a.text).not.toContain('schemas.example')
    const b = await rpc(url(rejectEdge, 'reject'), call(2, 'old', {}))
    expect(b.json.error.code).toBe(-32603)
    expect(b.json.error.message).toContain('dialect')
    expect(isForwardedOk(await rpc(url(rejectEdge, 'reject'), call(3, 'fine', { x: 1 })))).toBe(true)
    expect(toolCalls(o).map((c) => c.name)).toEqual(['fine'])
  })

  it('ON_SCHEMA_ERROR=reject also refuses (-32603) when the pull fails, instead of forwarding', async () => {
    const o = origins.rejectdown
    serveMcp(o, { pages: [[numberArg('t')]], failPull: true })
    const r = await rpc(url(rejectEdge, 'rejectdown'), call('rd', 't', { x: 1 }))
    expect(r.json.error).toMatchObject({ code: -32603, data: { source: 'edge', tool: 't' } })
    expect(r.json.error.message).toBe('Cannot validate tool "t": its schema could not be fetched from the tool server.')
    expect(r.text).not.toContain('internal failure')
    expect(toolCalls(o)).toEqual([])
  })

  it('TTL expiry (SCHEMA_TTL_S=1): a schema is re-pulled once it is older than the TTL', async () => {
    const o = origins.ttl
    const script = serveMcp(o, { pages: [[numberArg('ttl_tool')]] })
    expect(isRejected(await rpc(url(ttlEdge, 'ttl'), call(1, 'ttl_tool', { x: 'a' })))).toBe(true)
    script.pages = [[stringArg('ttl_tool')]]
    // Still fresh: the old schema applies, no new pull.
    expect(isRejected(await rpc(url(ttlEdge, 'ttl'), call(2, 'ttl_tool', { x: 'a' })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(1)
    await new Promise((r) => setTimeout(r, 1200))
    expect(isForwardedOk(await rpc(url(ttlEdge, 'ttl'), call(3, 'ttl_tool', { x: 'a' })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(2)
  })

  it("the origin's ttlMs hint wins over SCHEMA_TTL_S", async () => {
    const o = origins.hint
    // ttlMs 5000 > SCHEMA_TTL_S=1: still fresh after 1.2 s.
    const script = serveMcp(o, { pages: [[numberArg('hinted')]], ttlMs: 5000 })
    expect(isRejected(await rpc(url(ttlEdge, 'hint'), call(1, 'hinted', { x: 'a' })))).toBe(true)
    script.pages = [[stringArg('hinted')]]
    await new Promise((r) => setTimeout(r, 1200))
    expect(isRejected(await rpc(url(ttlEdge, 'hint'), call(2, 'hinted', { x: 'a' })))).toBe(true)
    expect(countMethod(o, 'tools/list')).toBe(1)
    expect(JSON.parse((await ttlEdge.kvGet(toolKey('hint', 'public', 'hinted')))!).ttlMs).toBe(5000)
  })
})
