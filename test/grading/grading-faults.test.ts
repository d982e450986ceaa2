/**
 * Grading under origin faults (docs/grading.md, docs/design.md D9): connection refused, timeout (ORIGIN_TIMEOUT_MS), non-2xx
 * with an HTML, empty or non-JSON-RPC body, a 2xx that is not JSON-RPC, an SSE stream that ends,
 * breaks or goes quiet before every id was answered. Every forwarded id gets a gateway error with
 * the right code, HTTP 200, never the origin's body text, and the client is never left waiting.
 * Run on Node and on the built Worker in workerd, against real HTTP origins.
 */
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from '../helpers/scripted-origin'
import { ADMIN_TOKEN, gradesOf, mcpHeaders, nextLog, post, postLogs, pushTools } from '../helpers/grading'

const TIMEOUT_MS = 600
/** A bound that only catches a hang (about 16x the timeout): never a speed assertion. */
const HANG_MS = 10_000

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as AddressInfo).port
  await new Promise<void>((r) => srv.close(() => r()))
  return port
}

const gw = (id: string, code: number, originStatus?: number) => {
  const message =
    code === -31002
      ? 'Origin timeout: the tool server did not answer in time'
      : code === -31003
        ? 'Origin never answered this request'
        : 'Origin unavailable or sent an invalid response'
  return `{"jsonrpc":"2.0","id":${id},"error":{"code":${code},"message":"${message}","data":{"source":"edge"${originStatus !== undefined ? `,"originStatus":${originStatus}` : ''}}}}`
}
const req = (id: number, method = 'resources/list') => `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`
const call = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"slow_tool","arguments":{}}}`
const sseHead = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })

interface FaultRow {
  name: string
  path?: string
  version?: string
  request: string
  handler?: (r: ReceivedRequest, res: ServerResponse) => void
  status: number
  contentType: string
  body: string
  grades: { id: string; grade: string; code?: number }[]
  /** Upper bound for the whole exchange, in ms (the client is never left waiting): it only catches a hang. */
  within: number
  /** A row ended by ORIGIN_TIMEOUT_MS: the exchange takes at least this long (the deadline, not an early cut). */
  notBefore?: number
}

const ROWS: FaultRow[] = [
  {
    name: 'connection refused: -31001 for a single request',
    path: 'dead',
    request: req(1),
    status: 200,
    contentType: 'application/json',
    body: gw('1', -31001),
    grades: [{ id: '1', grade: 'origin_error', code: -31001 }],
    within: HANG_MS,
  },
  {
    name: 'connection refused: -31001 for every id of a batch',
    path: 'dead',
    version: '2025-03-26',
    request: `[${req(1)},${req(2, 'prompts/list')}]`,
    status: 200,
    contentType: 'application/json',
    body: `[${gw('1', -31001)},${gw('2', -31001)}]`,
    grades: [
      { id: '1', grade: 'origin_error', code: -31001 },
      { id: '2', grade: 'origin_error', code: -31001 },
    ],
    within: HANG_MS,
  },
  {
    name: 'timeout before the headers: -31002 after ORIGIN_TIMEOUT_MS',
    request: call(3),
    handler: () => undefined, // never answers
    status: 200,
    contentType: 'application/json',
    body: gw('3', -31002),
    grades: [{ id: '3', grade: 'origin_error', code: -31002 }],
    notBefore: TIMEOUT_MS,
    within: HANG_MS,
  },
  {
    name: 'timeout in the middle of a JSON body: -31002',
    request: call(4),
    handler: (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"jsonrpc":"2.0","id":4,"res')
    },
    status: 200,
    contentType: 'application/json',
    body: gw('4', -31002),
    grades: [{ id: '4', grade: 'origin_error', code: -31002 }],
    notBefore: TIMEOUT_MS,
    within: HANG_MS,
  },
  {
    name: '502 with an HTML body: -31001 with originStatus, the page never relayed',
    request: call(5),
    handler: (_r, res) => void res.writeHead(502, { 'content-type': 'text/html' }).end('<html><h1>CANARY_502 Bad Gateway</h1></html>'),
    status: 200,
    contentType: 'application/json',
    body: gw('5', -31001, 502),
    grades: [{ id: '5', grade: 'origin_error', code: -31001 }],
    within: HANG_MS,
  },
  {
    name: '500 with an empty body: -31001 with originStatus',
    request: call(6),
    handler: (_r, res) => void res.writeHead(500).end(),
    status: 200,
    contentType: 'application/json',
    body: gw('6', -31001, 500),
    grades: [{ id: '6', grade: 'origin_error', code: -31001 }],
    within: HANG_MS,
  },
  {
    name: '503 with JSON that is not JSON-RPC: -31001 with originStatus',
    request: call(7),
    handler: (_r, res) => void res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"CANARY_overloaded","stack":"at x (y.js:1)"}'),
    status: 200,
    contentType: 'application/json',
    body: gw('7', -31001, 503),
    grades: [{ id: '7', grade: 'origin_error', code: -31001 }],
    within: HANG_MS,
  },
  {
    name: '200 with a body that is not JSON-RPC (a bare result): -31001',
    request: call(8),
    handler: (_r, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"content":[{"type":"text","text":"CANARY_bare"}]}'),
    status: 200,
    contentType: 'application/json',
    body: gw('8', -31001),
    grades: [{ id: '8', grade: 'origin_error', code: -31001 }],
    within: HANG_MS,
  },
  {
    name: 'SSE stream that ends before the second id: the first relayed, -31003 for the second',
    version: '2025-03-26',
    request: `[${call(9)},${call(10)}]`,
    handler: (_r, res) => {
      sseHead(res)
      res.end('event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{"content":[]}}\n\n')
    },
    status: 200,
    contentType: 'text/event-stream',
    body: `event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{"content":[]}}\n\ndata: ${gw('10', -31003)}\n\n`,
    grades: [
      { id: '9', grade: 'ok' },
      { id: '10', grade: 'missing', code: -31003 },
    ],
    within: HANG_MS,
  },
  {
    name: 'SSE stream that ends with only a notification: -31003',
    request: call(11),
    handler: (_r, res) => {
      sseHead(res)
      res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n')
    },
    status: 200,
    contentType: 'text/event-stream',
    body: `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\ndata: ${gw('11', -31003)}\n\n`,
    grades: [{ id: '11', grade: 'missing', code: -31003 }],
    within: HANG_MS,
  },
  {
    name: 'SSE stream that goes quiet: -31002 after ORIGIN_TIMEOUT_MS without a byte',
    request: call(12),
    handler: (_r, res) => {
      sseHead(res)
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n')
    },
    status: 200,
    contentType: 'text/event-stream',
    body: `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\ndata: ${gw('12', -31002)}\n\n`,
    grades: [{ id: '12', grade: 'origin_error', code: -31002 }],
    notBefore: TIMEOUT_MS,
    within: HANG_MS,
  },
  {
    name: 'SSE stream whose connection breaks: -31001',
    request: call(13),
    handler: (_r, res) => {
      sseHead(res)
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n', () => {
        setTimeout(() => res.socket?.destroy(), 50)
      })
    },
    status: 200,
    contentType: 'text/event-stream',
    body: `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\ndata: ${gw('13', -31001)}\n\n`,
    grades: [{ id: '13', grade: 'origin_error', code: -31001 }],
    within: HANG_MS,
  },
  {
    name: 'a 204 labelled text/event-stream has no body: -31003 as JSON, no stream',
    request: call(14),
    handler: (_r, res) => {
      res.writeHead(204, { 'content-type': 'text/event-stream' })
      res.end()
    },
    status: 200,
    contentType: 'application/json',
    body: gw('14', -31003),
    grades: [{ id: '14', grade: 'missing', code: -31003 }],
    within: HANG_MS,
  },
  {
    name: 'a JSON reply dripping a byte at a time: -31002 at ORIGIN_TIMEOUT_MS, not after the drip ends',
    request: call(15),
    handler: (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const tick = setInterval(() => res.write(' '), 100)
      res.on('close', () => clearInterval(tick))
    },
    status: 200,
    contentType: 'application/json',
    body: gw('15', -31002),
    grades: [{ id: '15', grade: 'origin_error', code: -31002 }],
    notBefore: TIMEOUT_MS,
    within: HANG_MS,
  },
]

describe.each(RUNTIMES)('origin faults on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    const dead = `http://127.0.0.1:${await closedPort()}/mcp`
    edge = await start({ ORIGIN_URL: origin.url, ORIGINS: JSON.stringify({ dead }), ORIGIN_TIMEOUT_MS: String(TIMEOUT_MS), ADMIN_TOKEN })
    await pushTools(edge, [{ name: 'slow_tool', inputSchema: { type: 'object' } }])
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it.each(ROWS)('$name', async (row) => {
    if (row.handler) origin.handle(row.handler)
    const before = (await postLogs(edge)).length
    const t0 = Date.now()
    const got = await post(edge, row.request, mcpHeaders(row.version), row.path)
    const elapsed = Date.now() - t0
    expect(got.text).toBe(row.body)
    expect(got.status).toBe(row.status)
    expect(got.headers.get('content-type')).toBe(row.contentType)
    expect(got.text).not.toContain('CANARY')
    expect(elapsed).toBeGreaterThanOrEqual((row.notBefore ?? 0) * 0.9)
    expect(elapsed).toBeLessThan(row.within)
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual(row.grades)
  })

  it('a 2026-07-28 subscriptions/listen stream is not cut by ORIGIN_TIMEOUT_MS (vector 141)', async () => {
    const ack =
      '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":1083}}}'
    const changed = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1083}}}'
    origin.handle((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' })
      res.write(`event: message\ndata: ${ack}\n\n`)
      setTimeout(() => res.write(`event: message\ndata: ${changed}\n\n`), TIMEOUT_MS * 2)
    })
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1083,
      method: 'subscriptions/listen',
      params: {
        notifications: { toolsListChanged: true },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'ExampleClient', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    })
    const controller = new AbortController()
    const t0 = Date.now()
    const res = await fetch(edge.url, { method: 'POST', headers: mcpHeaders('2026-07-28', { 'mcp-method': 'subscriptions/listen' }), body, signal: controller.signal })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    expect(res.headers.get('x-accel-buffering')).toBe('no')
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes('list_changed')) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    controller.abort()
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMEOUT_MS * 2)
    expect(text).toBe(`event: message\ndata: ${ack}\n\nevent: message\ndata: ${changed}\n\n`)
  })

  it('a notification to an unreachable origin is answered 502 with -31001 and id null', async () => {
    const before = (await postLogs(edge)).length
    const got = await post(edge, '{"jsonrpc":"2.0","method":"notifications/initialized"}', mcpHeaders(), 'dead')
    expect(got.status).toBe(502)
    expect(got.text).toBe(gw('null', -31001))
    expect(gradesOf(await nextLog(edge, before))).toEqual([{ id: 'null', grade: 'origin_error', code: -31001 }])
  })
})
