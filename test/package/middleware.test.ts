/**
 * `mcpEdge()` as Hono middleware (src/mcp-edge.ts) against the standalone edge: the same requests
 * to the standalone Node server (direct node:http path), to the edge mounted in a host Hono app on
 * @hono/node-server (every POST through Hono and the host's middleware) and to the built Worker in
 * workerd give the same status, grade header and body bytes. Then mounting at a path of the
 * host's choice, and the typed options.
 */
import { Readable } from 'node:stream'
import { Hono } from 'hono'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mcpEdge } from '../../src/adapters/node/node-edge'
import { ConfigError } from '../../src/core/config'
import { TextMetrics } from '../../src/observe/text-metrics'
import { DEMO_TOOLS } from '../../packages/cli/demo/origin'
import { hostMiddlewareSeen, startMiddlewareEdge, startNodeEdge, startWorkerEdge, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { POST_HEADERS } from '../helpers/mcp'
import { initializeReply } from '../helpers/initialize-reply'

const HIDDEN_FAILURE = { content: [{ type: 'text', text: '{"success":false,"error":"relation users does not exist"}' }] }

/** A deterministic origin: the demo tools, `run_query` hides its failure, every other call succeeds. */
function scriptOrigin(origin: ScriptedOrigin): void {
  origin.handle((req, res) => {
    const m = req.json as { id?: unknown; method?: string; params?: { name?: string } } | undefined
    if (!m || m.id === undefined) return void res.writeHead(202).end()
    if (m.method === 'initialize') return sendJson(res, initializeReply(m, { serverInfo: { name: 'scripted', version: '1' } }))
    if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: DEMO_TOOLS } })
    if (m.params?.name === 'run_query') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: HIDDEN_FAILURE })
    sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } })
  })
}

interface Answer {
  status: number
  type: string | undefined
  grade: string | undefined
  allow: string | undefined
  body: string
}

/** Sends one request (undici); with `chunked` the parts are sent one by one as a chunked body, with no Content-Length. */
async function send(url: string, method: string, headers: Record<string, string>, body: string | string[] = '', chunked = false): Promise<Answer> {
  const parts = typeof body === 'string' ? [body] : body
  async function* pieces() {
    for (const p of parts) {
      yield Buffer.from(p)
      await new Promise((r) => setTimeout(r, 5))
    }
  }
  const res = await request(url, { method: method as 'POST', headers, body: method === 'GET' ? undefined : chunked ? Readable.from(pieces()) : parts.join('') })
  const h = (name: string) => {
    const x = res.headers[name]
    return Array.isArray(x) ? x.join(', ') : x
  }
  return { status: res.statusCode, type: h('content-type'), grade: h('mcp-edge-grade'), allow: h('allow'), body: await res.body.text() }
}

const JSON_POST = POST_HEADERS
// A fixed X-Request-Id: the edge's classification of the isError results it makes carries it (correlationId), so the three answers compare byte for byte.
const v = (version: string) => ({ ...JSON_POST, 'mcp-protocol-version': version, 'x-request-id': 'same-answers' })
const call = (id: number, name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
const big = call(9, 'echo', { text: 'x'.repeat(3000) })

/** The requests compared, by name: [path below the edge URL, method, headers, body, chunked]. */
const REQUESTS: [string, string, string, Record<string, string>, string | string[], boolean?][] = [
  ['parse error', '', 'POST', v('2025-06-18'), '{"jsonrpc":"2.0",'],
  ['no method', '', 'POST', v('2025-06-18'), '{"jsonrpc":"2.0","id":1}'],
  ['invalid arguments, 2025-06-18 (-32602)', '', 'POST', v('2025-06-18'), call(2, 'get_forecast', { city: 'Paris', days: 30 })],
  ['invalid arguments, 2025-11-25 (isError result)', '', 'POST', v('2025-11-25'), call(3, 'get_forecast', { city: 'Paris', days: 30 })],
  ['valid call, forwarded', '', 'POST', v('2025-06-18'), call(4, 'get_forecast', { city: 'Paris', days: 3 })],
  ['hidden failure gets isError', '', 'POST', v('2025-06-18'), call(5, 'run_query', { query: 'select 1' })],
  ['2025-03-26 batch, one valid one invalid', '', 'POST', JSON_POST, `[${call(6, 'get_forecast', { city: 'Oslo' })},${call(7, 'get_forecast', { units: 'k' })}]`],
  ['chunked body, valid', '', 'POST', v('2025-06-18'), [call(8, 'get_forecast', { city: 'Rome' }).slice(0, 20), call(8, 'get_forecast', { city: 'Rome' }).slice(20)], true],
  ['chunked body past MAX_BODY_BYTES (413)', '', 'POST', v('2025-06-18'), [big.slice(0, 1500), big.slice(1500)], true],
  ['declared body past MAX_BODY_BYTES (413)', '', 'POST', v('2025-06-18'), big],
  ['wrong Content-Type (415)', '', 'POST', { ...v('2025-06-18'), 'content-type': 'text/plain' }, call(10, 'echo', { text: 'a' })],
  ['unknown origin name (404)', '/nowhere', 'POST', v('2025-06-18'), call(11, 'echo', { text: 'a' })],
  ['named origin, forwarded', '/named', 'POST', v('2025-06-18'), call(12, 'get_forecast', { city: 'Lima' })],
  ['GET in 2026-07-28 (405)', '', 'GET', v('2026-07-28'), ''],
  ['PUT (405)', '', 'PUT', v('2025-06-18'), '{}'],
]

describe('the same answers through the standalone edge, the Hono middleware and the Worker', () => {
  let origin: ScriptedOrigin
  const edges: EdgeUnderTest[] = []
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    scriptOrigin(origin)
    const vars = { ORIGIN_URL: origin.url, ORIGINS: JSON.stringify({ named: origin.url }), MAX_BODY_BYTES: '2048' }
    edges.push(await startNodeEdge(vars), await startMiddlewareEdge(vars), await startWorkerEdge(vars))
  })
  afterAll(async () => {
    await Promise.all(edges.map((e) => e.close()))
    await origin?.close()
  })

  for (const [label, path, method, headers, body, chunked] of REQUESTS) {
    it(label, async () => {
      const [standalone, middleware, worker] = await Promise.all(edges.map((e) => send(e.url + path, method, headers, body, chunked)))
      expect(middleware).toEqual(standalone)
      expect(worker).toEqual(standalone)
      expect(standalone!.body).not.toBe('')
    })
  }

  it('answers as the edge should, not only alike (spot checks)', async () => {
    const [invalid, forwarded, hidden, chunkedBig] = await Promise.all([
      send(edges[1]!.url, 'POST', v('2025-06-18'), call(20, 'get_forecast', { city: 'Paris', days: 30 })),
      send(edges[1]!.url, 'POST', v('2025-06-18'), call(21, 'get_forecast', { city: 'Paris' })),
      send(edges[1]!.url, 'POST', v('2025-06-18'), call(22, 'run_query', { query: 'select 1' })),
      send(edges[1]!.url, 'POST', v('2025-06-18'), [big.slice(0, 1500), big.slice(1500)], true),
    ])
    expect(JSON.parse(invalid.body)).toMatchObject({ id: 20, error: { code: -32602 } })
    expect(JSON.parse(forwarded.body)).toMatchObject({ id: 21, result: { content: [{ text: 'ok' }] } })
    expect(JSON.parse(hidden.body)).toMatchObject({ id: 22, result: { isError: true } })
    expect(chunkedBig.status).toBe(413)
  })

  it("runs the host app's middleware in front of every POST to the mounted edge", () => {
    expect(hostMiddlewareSeen.filter((s) => s === 'POST /mcp').length).toBeGreaterThanOrEqual(10)
    expect(hostMiddlewareSeen).toContain('POST /mcp/named')
  })
})

describe('mounted at a path of the host app', () => {
  let origin: ScriptedOrigin
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    scriptOrigin(origin)
  })
  afterAll(async () => origin?.close())

  it('serves <mount> and <mount>/<name>; the host keeps its other paths and its 404', async () => {
    const app = new Hono()
    app.get('/', (c) => c.text('host home'))
    const edge = mcpEdge({ origin: origin.url, origins: { named: origin.url }, logger: false })
    app.route('/gateway/mcp', edge)
    const post = (path: string, body: string) => app.request(path, { method: 'POST', headers: v('2025-06-18'), body })
    const invalid = await post('/gateway/mcp', call(1, 'get_forecast', { days: 0 }))
    expect(invalid.status).toBe(200)
    expect(await invalid.json()).toMatchObject({ id: 1, error: { code: -32602 } })
    const named = await post('/gateway/mcp/named', call(2, 'get_forecast', { city: 'Oslo' }))
    expect(await named.json()).toMatchObject({ id: 2, result: { content: [{ text: 'ok' }] } })
    expect(await (await app.request('/')).text()).toBe('host home')
    const elsewhere = await post('/mcp', call(3, 'echo', { text: 'a' }))
    expect(elsewhere.status).toBe(404)
    expect(await elsewhere.text()).toBe('404 Not Found') // Hono's own notFound: the host's, not the edge's
    const options = await app.request('/gateway/mcp', { method: 'OPTIONS' })
    expect(options.status).toBe(405)
    expect(options.headers.get('allow')).toBe('GET, POST, DELETE')
    await edge.close()
  })

  it('typed options win over env strings; logger and metrics are the ones given', async () => {
    const metrics = new TextMetrics()
    const lines: unknown[] = []
    const edge = mcpEdge({
      env: { ORIGIN_URL: 'http://127.0.0.1:9/mcp', INVALID_ARGS: 'rpc-error' },
      origin: origin.url,
      policies: { invalidArgs: 'tool-error' },
      logger: (r) => lines.push(r),
      metrics,
    })
    expect(edge.deps?.config).toMatchObject({ originUrl: origin.url, invalidArgs: 'tool-error' })
    const app = new Hono().route('/mcp', edge)
    const r = await app.request('/mcp', { method: 'POST', headers: v('2025-06-18'), body: call(1, 'get_forecast', { city: 'Paris', days: 99 }) })
    expect(await r.json()).toMatchObject({ id: 1, result: { isError: true } })
    // One mcp.post line; the tool-list pull before it has its own registry.refresh line (docs/observability.md).
    expect(lines.filter((l) => (l as { msg?: string }).msg === 'mcp.post')).toHaveLength(1)
    expect(lines.some((l) => (l as { msg?: string }).msg === 'registry.refresh')).toBe(true)
    expect(metrics.get('default', 'get_forecast', 'rejected')).toBe(1)
    await edge.close()
  })

  it('options given as a function of env are read on the first request, from its env', async () => {
    const edge = mcpEdge((env: { UPSTREAM: string }) => ({ origin: env.UPSTREAM, logger: false }))
    expect(edge.deps).toBeUndefined()
    const app = new Hono<{ Bindings: { UPSTREAM: string } }>().route('/mcp', edge)
    const r = await app.request('/mcp', { method: 'POST', headers: v('2025-06-18'), body: call(1, 'get_forecast', { city: 'Paris', days: 99 }) }, { UPSTREAM: origin.url })
    expect(await r.json()).toMatchObject({ id: 1, error: { code: -32602 } })
    expect(edge.deps?.config.originUrl).toBe(origin.url)
    await edge.close()
  })

  it('an unusable option is a ConfigError naming the option, its value and its variable', () => {
    expect(() => mcpEdge({ limits: { maxBodyBytes: 0 } })).toThrow(
      new ConfigError('limits.maxBodyBytes=0 (MAX_BODY_BYTES): expected an integer >= 1', 'MAX_BODY_BYTES', '0', 'an integer >= 1')
    )
    expect(() => mcpEdge({ policies: { unknownTool: 'ignore' as 'forward' } })).toThrow(/^policies\.unknownTool=ignore \(UNKNOWN_TOOL\): expected one of reject, forward$/)
    expect(() => mcpEdge({ origins: { 'a b': 'http://127.0.0.1:1/mcp' } })).toThrow(/^origins=.* \(ORIGINS\): expected origin names of letters/)
    expect(() => mcpEdge({ origins: { weather: 'ftp://x' } })).toThrow(/^origins\.weather=ftp:\/\/x \(ORIGINS\.weather\): expected an http/)
    expect(() => mcpEdge({ origin: 'http://user:secret@' })).toThrow(/^origin=http:\/\/user:\*\*\*@ \(ORIGIN_URL\): expected/)
    expect(() => mcpEdge({ env: { MAX_BATCH: 'many' } })).toThrow(/^MAX_BATCH=many: expected an integer >= 1$/)
    // A JavaScript caller's wrong type is refused by the same rule, not a TypeError from inside.
    expect(() => mcpEdge({ origin: 42 as unknown as string })).toThrow(/^origin=42 \(ORIGIN_URL\): expected an http/)
    expect(() => mcpEdge({ origins: { 'a b': 'http://user:hunter2pw@127.0.0.1:1/mcp' } })).toThrow(/user:\*\*\*@127/)
    expect(() => mcpEdge({ origins: { 'a b': 'http://user:hunter2pw@127.0.0.1:1/mcp' } })).not.toThrow(/hunter2pw/)
  })
})
