/**
 * Readiness, log lines and traces (docs/observability.md).
 *
 * On both runtimes:
 * - `/readyz` is 200 with every check `ok`, 503 naming the origin when it stops, 200 again when it
 *   returns; 1,000 probes (50 at a time) reach the origin at most a handful of times (the verdict
 *   is cached for READY_CACHE_MS and computed once for concurrent probes). `/healthz` stays 200.
 * - An origin refusing connections: the POST's log line names the cause (`originError`,
 *   `originErrorText`); the response (body and headers) does not.
 * - Log lines carry `level` and `rid` (the client's X-Request-Id, else the traceparent's trace id,
 *   else a fresh one); registry events are lines of their own (a pull, a failed pull with its
 *   cause, an unusable schema).
 * On Node, in this process: OpenTelemetry spans through a real in-memory exporter
 * (@opentelemetry/sdk-trace-base): `mcp.post` under the client's traceparent, `mcp.validate`,
 * `mcp.origin`, with the MCP attributes; the origin receives the `mcp.origin` span as its parent.
 */
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { RUNTIMES, startNodeEdge, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, eventually, rpc, serveMcp, type McpScript } from '../helpers/mcp-script'
import { freePort } from '../helpers/peers-procs'
import { READY_CACHE_MS } from '../../src/observe/readiness'
import { toolKey } from '../../src/core/validation/tool-store'

const WEATHER = { name: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }

/** A plain HTTP origin on a fixed port that can be stopped and started again; counts requests. */
function restartableOrigin(port: number) {
  let server: Server | null = null
  let hits = 0
  return {
    get hits() {
      return hits
    },
    start: () =>
      new Promise<void>((resolve) => {
        server = createServer((req, res) => {
          hits++
          req.resume()
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: no session"}}')
        })
        server.listen(port, '127.0.0.1', () => resolve())
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve()
        server.closeAllConnections()
        server.close(() => resolve())
        server = null
      }),
  }
}

const ready = async (edge: EdgeUnderTest) => {
  const res = await fetch(new URL('/readyz', edge.url))
  return { status: res.status, body: (await res.json()) as { ready: boolean; checks: Record<string, string> } }
}

describe.each(RUNTIMES)('readiness on $name', ({ start }) => {
  let origin: ReturnType<typeof restartableOrigin>
  let edge: EdgeUnderTest
  beforeAll(async () => {
    const port = await freePort()
    origin = restartableOrigin(port)
    await origin.start()
    edge = await start({ ORIGIN_URL: `http://127.0.0.1:${port}/mcp` })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.stop()
  })

  it('200 while the origin answers, 503 naming it when it stops, 200 when it returns; a probe storm reaches the origin a handful of times', async () => {
    const up = await ready(edge)
    expect(up.status).toBe(200)
    expect(up.body).toEqual({ ready: true, checks: { 'origin:default': 'ok', store: 'ok' } })

    const before = origin.hits
    const stormStart = Date.now()
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(new URL('/readyz', edge.url)).then((r) => r.status)))
      expect(answers.every((s) => s === 200)).toBe(true)
    }
    // 1,000 probes: one origin request per READY_CACHE_MS at most, counted against how long the
    // storm took (a second or two on an idle machine, where that is 3 at most, longer on a busy one).
    const stormMs = Date.now() - stormStart
    expect(origin.hits - before).toBeLessThanOrEqual(Math.floor(stormMs / READY_CACHE_MS) + 3)

    await origin.stop()
    const down = await eventually(async () => {
      const r = await ready(edge)
      return r.status === 503 ? r : null
    }, READY_CACHE_MS * 3)
    expect(down.body.ready).toBe(false)
    expect(down.body.checks['origin:default']).toMatch(edge.runtime === 'node' ? /^unreachable: ECONNREFUSED/ : /^unreachable: NETWORK/)
    expect(down.body.checks.store).toBe('ok')
    expect((await fetch(new URL('/healthz', edge.url))).status).toBe(200)

    await origin.start()
    const back = await eventually(async () => {
      const r = await ready(edge)
      return r.status === 200 ? r : null
    }, READY_CACHE_MS * 3)
    expect(back.body.ready).toBe(true)
    const flips = (await edge.logs({ msg: 'edge.readiness', atLeast: 3 })).filter((l) => l.msg === 'edge.readiness').map((l) => [l.level, l.ready])
    expect(flips).toEqual([
      ['info', true],
      ['warn', false],
      ['info', true],
    ])
  })
})

describe.each(RUNTIMES)('readiness with the store down on $name', ({ start }) => {
  let origin: ReturnType<typeof restartableOrigin>
  let edge: EdgeUnderTest
  beforeAll(async () => {
    const port = await freePort()
    origin = restartableOrigin(port)
    await origin.start()
    edge = await start({ ORIGIN_URL: `http://127.0.0.1:${port}/mcp` }, { kvDown: true })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.stop()
  })
  it('503 naming the store', async () => {
    const r = await ready(edge)
    expect(r.status).toBe(503)
    expect(r.body.checks).toEqual({ 'origin:default': 'ok', store: 'unreadable: the tool schema store failed a read' })
  })
})

describe.each(RUNTIMES)('log lines on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let script: McpScript
  let edge: EdgeUnderTest
  let refusing: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    script = serveMcp(origin, { pages: [[WEATHER]] })
    edge = await start({ ORIGIN_URL: origin.url, REFRESH_MIN_INTERVAL_MS: '0' })
    // An origin that refuses connections: a port nothing listens on.
    refusing = await start({ ORIGIN_URL: `http://127.0.0.1:${await freePort()}/mcp` })
  })
  afterAll(async () => {
    await edge?.close()
    await refusing?.close()
    await origin?.close()
  })

  it('an origin refusing connections: the log line names the cause, the response does not', async () => {
    const res = await rpc(refusing.url, { jsonrpc: '2.0', id: 7, method: 'ping' })
    expect(res.json.error.code).toBe(-31001)
    for (const word of ['ECONNREFUSED', 'NETWORK', 'refused', 'connection', 'lost', '127.0.0.1']) expect(res.text).not.toContain(word)
    const headers = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n')
    for (const word of ['ECONNREFUSED', 'NETWORK', 'refused', 'lost']) expect(headers).not.toContain(word)
    const line = await eventually(async () => (await refusing.logs()).find((l) => l.msg === 'mcp.post'))
    expect(line.level).toBe('warn')
    if (refusing.runtime === 'node') expect(line).toMatchObject({ originError: 'ECONNREFUSED', originErrorText: 'connection refused by the origin' })
    else expect(line).toMatchObject({ originError: 'NETWORK', originErrorText: expect.stringMatching(/refused or reset/) })
    expect(JSON.stringify(line)).not.toContain('127.0.0.1')
  })

  it('level and rid on every POST line: X-Request-Id, else the traceparent trace id, else a fresh id', async () => {
    await rpc(edge.url, call(1, 'weather', { city: 'Oslo' }), { 'x-request-id': 'req-abc-123' })
    await rpc(edge.url, call(2, 'weather', { city: 'Oslo' }), { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })
    await rpc(edge.url, call(3, 'weather', { city: 'Oslo' }), { 'x-request-id': 'not a token <script>' })
    await rpc(edge.url, call(4, 'weather', { nope: 1 }))
    const lines = await eventually(async () => {
      const l = (await edge.logs()).filter((x) => x.msg === 'mcp.post')
      return l.length >= 4 ? l : null
    })
    const rids = lines.slice(-4).map((l) => l.rid as string)
    expect(rids[0]).toBe('req-abc-123')
    expect(rids[1]).toBe('0af7651916cd43dd8448eb211c80319c')
    expect(rids[2]).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/)
    expect(rids[3]).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/)
    expect(rids[2]).not.toBe(rids[3])
    for (const l of lines.slice(-4)) expect(l.level).toBe('info')
  })

  it('registry events are lines of their own: a pull, a failed pull with its cause, an unusable schema', async () => {
    const logs = async () => (await edge.logs()).filter((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('registry.'))
    // The first call above pulled the list.
    expect((await logs()).find((l) => l.msg === 'registry.refresh' && l.ok === true)).toMatchObject({ level: 'info', origin: 'default', scope: 'public', tools: 1 })
    script.failPull = true
    await rpc(edge.url, call(5, 'missing_tool', {}))
    script.failPull = false
    const failed = await eventually(async () => (await logs()).find((l) => l.msg === 'registry.refresh' && l.ok === false))
    expect(failed).toMatchObject({ level: 'warn', origin: 'default', cause: 'PULL', causeText: 'tool-list pull: status 500' })
    await edge.kvPut(toolKey('default', 'public', 'remote'), JSON.stringify({ name: 'remote', inputSchema: { $ref: 'https://example.com/s.json' }, dialect: '2020-12', hash: '0' }))
    await rpc(edge.url, call(6, 'remote', {}))
    const unusable = await eventually(async () => (await logs()).find((l) => l.msg === 'registry.schema_unusable'))
    expect(unusable).toMatchObject({ level: 'warn', tool: 'remote', schema: 'inputSchema' })
    expect(JSON.stringify(unusable)).not.toContain('example.com')
  })
})

describe('traces on node (OpenTelemetry, in-memory exporter)', () => {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    trace.setGlobalTracerProvider(provider)
    origin = await startScriptedOrigin()
    serveMcp(origin, { pages: [[WEATHER]] })
    edge = await startNodeEdge({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await provider.shutdown()
    trace.disable()
  })

  it('mcp.post under the client traceparent, mcp.validate and mcp.origin with MCP attributes; the origin gets mcp.origin as its parent', async () => {
    // Warm the tool list first, then trace one valid and one invalid call.
    await rpc(edge.url, call(1, 'weather', { city: 'Oslo' }))
    exporter.reset()
    origin.reset()
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const res = await rpc(edge.url, call(2, 'weather', { city: 'Paris' }), { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
    expect(res.status).toBe(200)
    await eventually(() => exporter.getFinishedSpans().length >= 3)
    const spans = exporter.getFinishedSpans()
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]))
    const post = byName['mcp.post']!
    const validate = byName['mcp.validate']!
    const originSpan = byName['mcp.origin']!
    for (const s of [post, validate, originSpan]) expect(s.spanContext().traceId).toBe(traceId)
    expect(post.parentSpanContext?.spanId).toBe('00f067aa0ba902b7')
    expect(validate.parentSpanContext?.spanId).toBe(post.spanContext().spanId)
    expect(originSpan.parentSpanContext?.spanId).toBe(post.spanContext().spanId)
    expect(post.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'weather',
      'jsonrpc.request.id': '2',
      'mcp_edge.grade': expect.stringMatching(/ok/),
      'mcp.protocol.version': '2025-11-25',
      'http.response.status_code': 200,
    })
    expect(validate.attributes).toMatchObject({ 'gen_ai.tool.name': 'weather', 'mcp_edge.verdict': 'valid' })
    expect(originSpan.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 })
    const forwarded = origin.forwarded().at(-1)!
    expect(forwarded.headers.traceparent).toBe(`00-${traceId}-${originSpan.spanContext().spanId}-01`)

    exporter.reset()
    await rpc(edge.url, call(3, 'weather', { town: 'Paris' }))
    await eventually(() => exporter.getFinishedSpans().length >= 2)
    const rejected = Object.fromEntries(exporter.getFinishedSpans().map((s) => [s.name, s]))
    expect(rejected['mcp.origin']).toBeUndefined()
    expect(rejected['mcp.validate']!.attributes).toMatchObject({ 'mcp_edge.verdict': 'rejected' })
    expect(rejected['mcp.post']!.attributes).toMatchObject({ 'mcp_edge.grade': expect.stringMatching(/rejected/) })
  })

  it('without a registered provider nothing records and the incoming traceparent is forwarded unchanged', async () => {
    trace.disable()
    exporter.reset()
    origin.reset()
    const tp = '00-11111111111111111111111111111111-2222222222222222-01'
    await rpc(edge.url, call(4, 'weather', { city: 'Rome' }), { traceparent: tp })
    expect(exporter.getFinishedSpans()).toEqual([])
    expect(origin.forwarded().at(-1)!.headers.traceparent).toBe(tp)
    trace.setGlobalTracerProvider(provider)
  })
})
