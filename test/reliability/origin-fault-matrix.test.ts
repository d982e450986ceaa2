/**
 * The origin fault matrix (docs/reliability.md), as one table, on the Node entry and the
 * built Worker in workerd, against a real HTTP origin on 127.0.0.1 that misbehaves on purpose:
 * refused, reset (before the headers, in a JSON body, in an SSE stream), hang, trickle (status
 * line, JSON body, SSE data, SSE comments), 5xx with and without a JSON-RPC body, HTML under 200
 * and 503, truncated JSON and SSE, an SSE stream that ends without the answer, wrong and repeated
 * ids, a result with an error; each for a single request and a 2025-03-26 batch of two.
 *
 * Each row ends in the right answer for every id (one answer per id: the D9 gateway code
 * -31001/-31002/-31003 of docs/design.md, or what the origin said) at the row's bound: a row ended
 * by a deadline (ORIGIN_TIMEOUT_MS, STREAM_IDLE_MS, STREAM_MAX_MS) not before it, a row ended by
 * STREAM_IDLE_MS before STREAM_MAX_MS (7x later, so the idle bound is the one that fired), and
 * every row under a bound that only catches a hang; afterwards every exchange
 * the origin saw is finished or its socket closed, the origin's sockets return to their count,
 * and on Node the edge process's handles (sockets, timers) return to theirs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { ADMIN_TOKEN, mcpHeaders, post, pushTools } from '../helpers/grading'
import { pollUntil } from '../helpers/wait'

const ORIGIN_TIMEOUT_MS = 500
const STREAM_IDLE_MS = 700
const STREAM_MAX_MS = 5000
/** Immediate faults (refused, reset, a status at once): no deadline applies, the code says which path ran. */
const AT_ONCE_MS = 200

/** Earliest a row may end, in ms: its deadline (less 10% for timer rounding), or 0 for a fault answered at once. */
function lowerMs(boundMs: number): number {
  return boundMs === AT_ONCE_MS ? 0 : boundMs * 0.9
}
/** The row's upper bound, in ms: an idle end comes before STREAM_MAX_MS; any other only catches a hang (10x, 10 s at least, 20 s at most). */
function upperMs(boundMs: number): number {
  return boundMs === STREAM_IDLE_MS ? STREAM_MAX_MS : Math.min(Math.max(10 * boundMs, 10_000), 20_000)
}

type Shape = 'single' | 'batch'
/** What the origin does with one forwarded request: `ids` are the request ids, `res` the raw response. */
type Fault = (ids: unknown[], res: ServerResponse, req: IncomingMessage, shape: Shape) => void

/** The expected answer of each id: a D9 code, the origin's error code, or `result`. */
type Expect = { code: number; originStatus?: number } | 'result'

interface Row {
  name: string
  /** Edge path: `down` is an origin whose port is closed. */
  origin?: 'down'
  fault: Fault
  expect: Expect
  /** The bound that applies, in ms. */
  boundMs: number
}

const result = (id: unknown) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } })
const event = (m: unknown) => `event: message\ndata: ${JSON.stringify(m)}\n\n`
const bodyFor = (ids: unknown[], shape: Shape, f: (id: unknown) => unknown = result) => JSON.stringify(shape === 'batch' ? ids.map(f) : f(ids[0]))

/**
 * Writes `text` a byte every `everyMs` until the socket closes: straight to the socket (status
 * line, or a body with a Content-Length), or through `res` (a chunked body: one chunk a byte).
 */
function trickle(socket: Socket, text: string, everyMs: number, res?: ServerResponse): void {
  let i = 0
  const t = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(t)
    if (res) res.write(text[i++]!)
    else socket.write(text[i++]!)
  }, everyMs)
  socket.once('close', () => clearInterval(t))
}

const ROWS: Row[] = [
  { name: 'refused', origin: 'down', fault: () => undefined, expect: { code: -31001 }, boundMs: AT_ONCE_MS },
  { name: 'reset before the headers', fault: (_i, _r, req) => req.socket.destroy(), expect: { code: -31001 }, boundMs: AT_ONCE_MS },
  {
    name: 'reset inside a JSON body',
    fault: (ids, res, req, shape) => {
      const text = bodyFor(ids, shape)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) })
      res.write(text.slice(0, 10))
      setTimeout(() => req.socket.destroy(), 20)
    },
    expect: { code: -31001 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'reset inside an SSE stream',
    fault: (ids, res, req) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(': started\n\n' + event(result(ids[0])).slice(0, 15))
      setTimeout(() => req.socket.destroy(), 20)
    },
    expect: { code: -31001 },
    boundMs: AT_ONCE_MS,
  },
  { name: 'hang (no status line)', fault: () => undefined, expect: { code: -31002 }, boundMs: ORIGIN_TIMEOUT_MS },
  {
    name: 'trickle of the status line',
    fault: (_i, _r, req) => trickle(req.socket, 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n', 100),
    expect: { code: -31002 },
    boundMs: ORIGIN_TIMEOUT_MS,
  },
  {
    name: 'trickle of a JSON body',
    fault: (ids, res, req, shape) => {
      const text = bodyFor(ids, shape)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) })
      res.flushHeaders()
      trickle(req.socket, text, 100)
    },
    expect: { code: -31002 },
    boundMs: ORIGIN_TIMEOUT_MS,
  },
  {
    name: 'trickle of SSE data',
    fault: (ids, res, req) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.flushHeaders()
      trickle(req.socket, event(result(ids[0])).replace(/\n\n$/, '') + ' '.repeat(1000), 150, res)
    },
    expect: { code: -31002 },
    boundMs: STREAM_IDLE_MS,
  },
  {
    name: 'trickle of an SSE comment',
    fault: (_ids, res, req) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.flushHeaders()
      trickle(req.socket, ': ' + 'z'.repeat(1000), 150, res)
    },
    expect: { code: -31002 },
    boundMs: STREAM_IDLE_MS,
  },
  {
    name: 'complete SSE comments forever',
    fault: (_ids, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const t = setInterval(() => res.write(': keep-alive\n\n'), 200)
      res.once('close', () => clearInterval(t))
    },
    expect: { code: -31002 },
    boundMs: STREAM_MAX_MS,
  },
  { name: '500 without a body', fault: (_i, res) => void res.writeHead(500).end(), expect: { code: -31001, originStatus: 500 }, boundMs: AT_ONCE_MS },
  {
    name: '500 with a JSON-RPC error, id null',
    fault: (_i, res) =>
      void res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } })),
    expect: { code: -32603 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: '503 with HTML',
    fault: (_i, res) => void res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Service Unavailable</h1>'),
    expect: { code: -31001, originStatus: 503 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'HTML under 200',
    fault: (_i, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Sign in</title>'),
    expect: { code: -31001 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'truncated JSON',
    fault: (ids, res, _req, shape) => void res.writeHead(200, { 'content-type': 'application/json' }).end(bodyFor(ids, shape).slice(0, -4)),
    expect: { code: -31001 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'truncated SSE event',
    fault: (ids, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(event(result(ids[0])).slice(0, -8)),
    expect: { code: -31001 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'SSE stream ends without the answer',
    fault: (_i, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': nothing to say\n\n'),
    expect: { code: -31003 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'wrong ids (JSON)',
    fault: (ids, res, _req, shape) =>
      void res.writeHead(200, { 'content-type': 'application/json' }).end(
        bodyFor(
          ids.map((i) => `not-${String(i)}`),
          shape
        )
      ),
    expect: { code: -31003 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'wrong ids (SSE)',
    fault: (ids, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(ids.map((i) => event(result(`not-${String(i)}`))).join('')),
    expect: { code: -31003 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'repeated ids (JSON)',
    fault: (ids, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([...ids.map(result), ...ids.map(result)])),
    expect: 'result',
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'repeated ids (SSE)',
    fault: (ids, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end([...ids, ...ids].map((i) => event(result(i))).join('')),
    expect: 'result',
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'result with error (JSON)',
    fault: (ids, res, _req, shape) =>
      void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(bodyFor(ids, shape, (id) => ({ jsonrpc: '2.0', id, result: {}, error: { code: -32000, message: 'both' } }))),
    expect: { code: -32000 },
    boundMs: AT_ONCE_MS,
  },
  {
    name: 'result with error (SSE)',
    fault: (ids, res) =>
      void res
        .writeHead(200, { 'content-type': 'text/event-stream' })
        .end(ids.map((id) => event({ jsonrpc: '2.0', id, result: {}, error: { code: -32000, message: 'both' } })).join('')),
    expect: { code: -32000 },
    boundMs: AT_ONCE_MS,
  },
]

/** The scripted misbehaving origin: answers the edge's own pulls, hands every forwarded request to the current fault. */
interface FaultOrigin {
  url: string
  fault: Fault
  /** Sockets open now. */
  sockets(): number
  /** Forwarded requests whose response has not finished and whose socket is still open. */
  openExchanges(): number
  close(): Promise<void>
}

async function startFaultOrigin(): Promise<FaultOrigin> {
  const sockets = new Set<Socket>()
  const open = new Set<ServerResponse>()
  let fault: Fault = () => undefined
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end()
      const json = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as { id?: unknown; method?: string } | { id?: unknown; method?: string }[] | null
      const first = Array.isArray(json) ? json[0] : json
      if (first?.method === 'initialize' || first?.method === 'notifications/initialized' || first?.method === 'tools/list') return void res.writeHead(202).end()
      const ids = (Array.isArray(json) ? json : [json]).map((m) => m?.id)
      open.add(res)
      const done = () => open.delete(res)
      res.once('finish', done)
      res.once('close', done)
      fault(ids, res, req, Array.isArray(json) ? 'batch' : 'single')
    })
  })
  server.keepAliveTimeout = 300
  server.on('connection', (s) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    set fault(f: Fault) {
      fault = f
    },
    get fault() {
      return fault
    },
    sockets: () => sockets.size,
    openExchanges: () => [...open].filter((r) => !r.socket?.destroyed).length,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as AddressInfo).port
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

/** True once `cond()` holds, false if it still does not after `ms`. */
const until = (cond: () => boolean, ms: number): Promise<boolean> => pollUntil(cond, Boolean, { timeoutMs: ms, intervalMs: 25 })

/** The JSON-RPC responses of an answer body (JSON or SSE), server requests and notifications left out. */
function responsesOf(text: string, contentType: string): Record<string, unknown>[] {
  let msgs: unknown[]
  if (contentType.includes('text/event-stream')) {
    msgs = text
      .split(/\r?\n\r?\n/)
      .map((b) =>
        b
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n')
      )
      .filter((d) => d !== '')
      .map((d) => JSON.parse(d) as unknown)
  } else {
    const j = JSON.parse(text) as unknown
    msgs = Array.isArray(j) ? j : [j]
  }
  return (msgs as Record<string, unknown>[]).filter((m) => !('method' in m))
}

/** The edge process's handles of one kind (Node only: the edge runs in this process). */
function handles(kind: string): number {
  return process.getActiveResourcesInfo().filter((k) => k === kind).length
}

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'free', arguments: { n: id } } })

describe.each(RUNTIMES)('origin fault matrix on $name', ({ name, start }) => {
  let origin: FaultOrigin
  let edge: EdgeUnderTest
  let baseSockets = 0
  let baseHandles = { tcp: 0, timers: 0 }
  beforeAll(async () => {
    origin = await startFaultOrigin()
    const down = await closedPort()
    edge = await start({
      ORIGIN_URL: origin.url,
      ORIGINS: JSON.stringify({ down: `http://127.0.0.1:${down}/mcp` }),
      ADMIN_TOKEN,
      ORIGIN_TIMEOUT_MS: String(ORIGIN_TIMEOUT_MS),
      STREAM_IDLE_MS: String(STREAM_IDLE_MS),
      STREAM_MAX_MS: String(STREAM_MAX_MS),
    })
    await pushTools(edge, [{ name: 'free', inputSchema: { type: 'object' } }])
    await pushTools(edge, [{ name: 'free', inputSchema: { type: 'object' } }], 'down')
    // One healthy exchange first, so the counts below include a warm connection pool.
    origin.fault = (ids, res, _req, shape) => void res.writeHead(200, { 'content-type': 'application/json' }).end(bodyFor(ids, shape))
    expect((await post(edge, JSON.stringify(call(1)))).status).toBe(200)
    await until(() => origin.sockets() === 0, 3000)
    baseSockets = origin.sockets()
    baseHandles = { tcp: handles('TCPSocketWrap'), timers: handles('Timeout') }
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  const cases = ROWS.flatMap((row) => (['single', 'batch'] as const).map((shape) => ({ ...row, shape, label: `${row.name}, ${shape}` })))

  it.each(cases)('$label', async ({ origin: path, fault, expect: want, boundMs, shape }) => {
    origin.fault = fault
    const ids = shape === 'batch' ? [11, 12] : [11]
    const body = JSON.stringify(shape === 'batch' ? ids.map(call) : call(11))
    const t0 = Date.now()
    const r = await post(edge, body, mcpHeaders(shape === 'batch' ? '2025-03-26' : '2025-06-18'), path)
    const ms = Date.now() - t0
    expect(r.status).toBe(200)
    const answers = responsesOf(r.text, r.headers.get('content-type') ?? '')
    // Exactly one answer per id, in any order.
    expect(answers.map((a) => a.id).sort()).toEqual(ids)
    for (const a of answers) {
      if (want === 'result') {
        expect(a).toHaveProperty('result')
        expect(a).not.toHaveProperty('error')
      } else {
        expect(a).not.toHaveProperty('result')
        expect((a.error as { code: number }).code).toBe(want.code)
        if (want.originStatus !== undefined) expect((a.error as { data?: { originStatus?: number } }).data?.originStatus).toBe(want.originStatus)
        if (want.code <= -31001 && want.code >= -31003) expect((a.error as { data?: { source?: string } }).data?.source).toBe('edge')
      }
    }
    expect(ms).toBeGreaterThanOrEqual(lowerMs(boundMs))
    expect(ms).toBeLessThan(upperMs(boundMs))
    // Nothing left open on the origin: every exchange it saw finished, or its socket closed.
    expect(await until(() => origin.openExchanges() === 0, 2000)).toBe(true)
  })

  it('after the matrix the origin has no more sockets than before it', async () => {
    // Kept-alive connections close after the origin's 300 ms keep-alive.
    expect(await until(() => origin.sockets() <= baseSockets, 3000)).toBe(true)
  })

  it.runIf(name === 'node')('after the matrix the edge process holds no more sockets and timers than before it', async () => {
    const ok = await until(() => handles('TCPSocketWrap') <= baseHandles.tcp && handles('Timeout') <= baseHandles.timers, 5000)
    expect({ tcp: handles('TCPSocketWrap'), timers: handles('Timeout'), ok }).toEqual({ tcp: expect.any(Number), timers: expect.any(Number), ok: true })
  })
})
