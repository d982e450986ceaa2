/**
 * The three high-severity defects a hostile probe found (docs/reliability.md), each with its reproducer, on
 * the Node entry and the built Worker in workerd, against a real scripted HTTP origin:
 * 1. deep nesting: a body of `[` x 750,000 then `]` x 750,000 (1.5 MB, under the 4 MiB limit) sent
 *    to a warm edge is refused at once with -32700 (MAX_JSON_DEPTH, default 64) and does not hold
 *    up another client's call; an origin reply nested past the bound is not parsed (-31001);
 * 2. the edge's own tools/list pull has an overall deadline (TOOL_LIST_TIMEOUT_MS): an origin that
 *    answers tools/list as an SSE stream writing one byte a second no longer hangs the calls
 *    waiting for the pull; they are forwarded unvalidated (D16) once the deadline passes;
 * 3. refresh amplification: calls to unknown tools, each with a new Authorization value, make at
 *    most REFRESH_BUDGET_PER_MIN pulls of the origin; a client-side
 *    `notifications/tools/list_changed` does not reset the refresh rate limit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { nestsDeeperThan } from '../../src/core/jsonrpc/json-scan'
import { loadConfig } from '../../src/core/config'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, sendJson, type ScriptedOrigin } from '../helpers/scripted-origin'
import { countMethod, serveMcp } from '../helpers/mcp-script'
import { ADMIN_TOKEN, mcpHeaders, post, pushTools } from '../helpers/grading'
import { initializeReply } from '../helpers/initialize-reply'

const call = (id: number, name: string, args: unknown = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

describe('nestsDeeperThan (the linear nesting bound)', () => {
  it('counts arrays and objects, not brackets inside strings or after escaped quotes', () => {
    expect(nestsDeeperThan(nested(64), 64)).toBe(false)
    expect(nestsDeeperThan(nested(65), 64)).toBe(true)
    expect(nestsDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false)
    expect(nestsDeeperThan('{"a":{"b":[1]}}', 2)).toBe(true)
    expect(nestsDeeperThan(`{"s":"${'['.repeat(500)}"}`, 1)).toBe(false)
    expect(nestsDeeperThan(`{"s":"\\"${'['.repeat(500)}"}`, 1)).toBe(false)
    expect(nestsDeeperThan(`{"s":"\\\\"}${'['.repeat(5)}`, 3)).toBe(true)
  })
  it('MAX_JSON_DEPTH defaults to 64 and is configurable', () => {
    expect(loadConfig({}).maxJsonDepth).toBe(64)
    expect(loadConfig({ MAX_JSON_DEPTH: '200' }).maxJsonDepth).toBe(200)
    expect(() => loadConfig({ MAX_JSON_DEPTH: '0' })).toThrow(/MAX_JSON_DEPTH/)
  })
})

describe.each(RUNTIMES)('abuse regressions on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({
      ORIGIN_URL: origin.url,
      ADMIN_TOKEN,
      REFRESH_MIN_INTERVAL_MS: '60000',
      REFRESH_BUDGET_PER_MIN: '5',
      TOOL_LIST_TIMEOUT_MS: '1500',
      ORIGIN_TIMEOUT_MS: '20000',
    })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })
  beforeEach(() => origin.reset())

  it('refuses a 1.5 MB body of nested brackets at once with -32700, while another call is answered', async () => {
    serveMcp(origin, { pages: [[{ name: 'echo', inputSchema: { type: 'object' } }]] })
    await pushTools(edge, [{ name: 'echo', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }])
    // Warm the edge first: the slow case was an edge whose scan the JIT had optimised.
    for (let i = 0; i < 50; i++) expect((await post(edge, call(i, 'echo', { n: i }))).status).toBe(200)
    const t0 = Date.now()
    const deep = post(edge, nested(750_000))
    const other = post(edge, call(99, 'echo', { n: 'not an integer' }))
    const [d, o] = await Promise.all([deep, other])
    expect(Date.now() - t0).toBeLessThan(5_000)
    expect(d.status).toBe(400)
    const body = JSON.parse(d.text)
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
    expect(body.error.message).toContain('deeper than 64 levels')
    expect(JSON.parse(o.text)).toMatchObject({ id: 99, error: { code: -32602 } })
  })

  it('accepts arguments nested up to the bound and refuses one level more', async () => {
    await pushTools(edge, [{ name: 'free', inputSchema: { type: 'object' } }])
    // The message, params and arguments take 3 levels: 61 more fit in 64.
    const fits = await post(edge, call(1, 'free', { a: JSON.parse(nested(61)) }))
    expect(JSON.parse(fits.text)).toMatchObject({ id: 1, result: {} })
    const deeper = await post(edge, call(2, 'free', { a: JSON.parse(nested(62)) }))
    expect(deeper.status).toBe(400)
    expect(JSON.parse(deeper.text)).toMatchObject({ id: null, error: { code: -32700 } })
  })

  it('does not parse an origin reply nested past the bound: the id gets -31001', async () => {
    await pushTools(edge, [{ name: 'deep_reply', inputSchema: { type: 'object' } }])
    origin.handle((req, res) => {
      const id = (req.json as { id?: number }).id
      sendJson(res, `{"jsonrpc":"2.0","id":${id},"result":{"content":[],"structuredContent":{"x":${nested(200_000)}}}}`)
    })
    const r = await post(edge, call(7, 'deep_reply'))
    expect(r.status).toBe(200)
    expect(JSON.parse(r.text)).toMatchObject({ id: 7, error: { code: -31001, data: { source: 'edge' } } })
  })

  it('reads a JSON text item nested past the bound as prose: relayed untouched, never parsed for a hidden failure', async () => {
    await pushTools(edge, [{ name: 'deep_text', inputSchema: { type: 'object' } }])
    // A fetch tool can return any page's body: 1.5 MB of nested brackets behind a failure flag.
    const deepText = `{"success":false,"x":${nested(750_000)}}`
    origin.handle((req, res) => {
      const id = (req.json as { id?: number }).id
      const text = id === 8 ? deepText : '{"success":false}'
      sendJson(res, JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } }))
    })
    const [deep, shallow] = await Promise.all([post(edge, call(8, 'deep_text')), post(edge, call(9, 'deep_text'))])
    const d = JSON.parse(deep.text) as { id: number; result: { isError?: boolean; content: { text: string }[] } }
    expect(d.id).toBe(8)
    expect(d.result.isError).toBeUndefined()
    expect(d.result.content[0]!.text).toBe(deepText)
    expect(deep.headers.get('mcp-edge-grade')).toBe('ok=1')
    // The same flag in a text of ordinary depth is still a hidden failure.
    expect(JSON.parse(shallow.text)).toMatchObject({ id: 9, result: { isError: true } })
  })

  it('a tools/list pull answered by an SSE stream trickling a byte a second ends at TOOL_LIST_TIMEOUT_MS; the waiting calls are answered', async () => {
    const open: import('node:http').ServerResponse[] = []
    origin.handle((req, res) => {
      const m = req.json as { id?: number; method?: string } | undefined
      if (req.method === 'DELETE') return void res.writeHead(200).end()
      if (m?.method === 'initialize') return sendJson(res, initializeReply(m, { serverInfo: { name: 't', version: '1' } }))
      if (m?.method === 'notifications/initialized') return void res.writeHead(202).end()
      if (m?.method === 'tools/list') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        open.push(res)
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(':')), 1000)
        res.on('close', () => clearInterval(timer))
        return
      }
      if (m?.method === 'tools/call') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'origin answered' }] } })
      res.writeHead(202).end()
    })
    const t0 = Date.now()
    // An unknown tool needs a pull (D7); ten callers wait behind the same single-flight pull.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(edge, call(100 + i, 'unknown_slow'), mcpHeaders('2025-06-18', { authorization: 'Bearer same' }))))
    const took = Date.now() - t0
    expect(took).toBeLessThan(6_000)
    expect(took).toBeGreaterThanOrEqual(1_400)
    for (const [i, a] of answers.entries()) expect(JSON.parse(a.text)).toMatchObject({ id: 100 + i, result: { content: [{ text: 'origin answered' }] } })
    expect(countMethod(origin, 'tools/list')).toBe(1)
    for (const res of open) res.destroy()
  })

  it('calls with a new Authorization each make at most REFRESH_BUDGET_PER_MIN pulls', async () => {
    serveMcp(origin, { pages: [[{ name: 'known', inputSchema: { type: 'object' } }]] })
    const answers: string[] = []
    for (let i = 0; i < 40; i++) {
      const r = await post(edge, call(i, `nope_${i}`), mcpHeaders('2025-06-18', { authorization: `Bearer random-${i}-${Math.random()}` }))
      answers.push(r.text)
    }
    // Every call is answered: refused as unknown after a pull, or forwarded once the budget is spent (D16).
    expect(answers.every((t) => JSON.parse(t).id !== undefined)).toBe(true)
    expect(countMethod(origin, 'tools/list')).toBeLessThanOrEqual(5)
    expect(countMethod(origin, 'initialize')).toBeLessThanOrEqual(5)
  })

  it("a client's notifications/tools/list_changed is forwarded but does not reset the refresh rate limit", async () => {
    const other = await startScriptedOrigin()
    const e2 = await start({ ORIGIN_URL: other.url, REFRESH_MIN_INTERVAL_MS: '60000' })
    try {
      serveMcp(other, { pages: [[{ name: 'known', inputSchema: { type: 'object' } }]] })
      const h = mcpHeaders('2025-06-18', { authorization: 'Bearer caller' })
      await post(e2, call(1, 'unknown_a'), h)
      expect(countMethod(other, 'tools/list')).toBe(1)
      for (let i = 0; i < 5; i++) {
        const n = await post(e2, '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}', h)
        expect(n.status).toBe(202)
        await post(e2, call(10 + i, `unknown_${i}`), h)
      }
      expect(countMethod(other, 'notifications/tools/list_changed')).toBe(5)
      expect(countMethod(other, 'tools/list')).toBe(1)
    } finally {
      await e2.close()
      await other.close()
    }
  })
})
