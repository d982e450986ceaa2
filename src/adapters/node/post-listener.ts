/**
 * @module adapters/node/post-listener
 * The standalone Node server's request listener, and how it relates to the Hono app: it sits in
 * front of the app and hands every request to it through @hono/node-server, except `POST <base>`
 * and `POST <base>/<name>`, which it carries itself to the same front door the app's POST route
 * calls ({@link servePost}, src/core/front-door.ts: path rule, length rule, admission, pipeline).
 * The answers ({@link EdgeResponse}) are written back at the end of the event loop's turn,
 * together with the other answers of that turn ({@link WriteBatch}). So the listener owns no
 * rule: it only decides which requests skip Hono, and a request that skips Hono gets the answer
 * the app's route would give.
 *
 * Why skip Hono for the hot path: @hono/node-server wraps every request in a web `Request`, Hono
 * adds a Context, and the answer goes back through a web `Response`; for a gateway whose own work
 * per call is a few tens of microseconds that plumbing was the largest single cost (about 25 us
 * of CPU per POST on Node 20 in `npm run bench` A/B runs, docs/performance.md). The test suite runs every
 * runtime test through this listener, and test/package/middleware.test.ts runs them through the Hono route.
 *
 * It also skips the middleware of any app it fronts, so it is the standalone server's (startEdge)
 * and an opt-in for a host app: a host that mounts `mcpEdge()` in its own Hono app and serves it
 * with @hono/node-server's `serve` keeps every request on Hono (docs/library.md, "The Node fast path").
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import type { Hono } from 'hono'
import type { EdgeDeps } from '../../core/exchange'
import { originNameOf, servePost } from '../../core/front-door'
import { isWholeBody, type EdgeResponse, type RequestHeaders } from '../../core/edge-response'
import type { McpEdge } from '../../mcp-edge'
import { responseCloseSignal } from './close-signal'
import { corsResponseHeaders } from '../../core/request/cors-rule'

/** `r` with `extra` headers added (the response owns its header record, EdgeResponse). */
function withHeaders(r: EdgeResponse, extra: Record<string, string>): EdgeResponse {
  for (const k in extra) r.headers[k] = extra[k]!
  return r
}

/**
 * `IncomingMessage.headers` seen as {@link RequestHeaders}. Only used when no header name repeats
 * (see {@link hasRepeatedHeader}): then Node's header record holds each value exactly as a web
 * `Headers` would.
 */
class NodeRequestHeaders implements RequestHeaders {
  constructor(private readonly h: IncomingMessage['headers']) {}
  get(name: string): string | null {
    const v = this.h[name] ?? this.h[name.toLowerCase()]
    return typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : null
  }
  forEach(fn: (value: string, name: string) => void): void {
    for (const name in this.h) {
      const v = this.get(name)
      if (v !== null) fn(v, name)
    }
  }
}

/**
 * True when a header name occurs twice. Node keeps only the first of a repeated Content-Type,
 * Authorization, Host, ... where a web `Headers` joins them; such requests take the Hono route so
 * both routes see the same values.
 */
function hasRepeatedHeader(req: IncomingMessage): boolean {
  let n = 0
  for (const _ in req.headers) n++
  return n * 2 !== req.rawHeaders.length
}

// The client-gone signal lives in close-signal.ts (the package's Node build uses it without @hono/node-server).
export { responseCloseSignal }

/** What {@link readSoon} gives when the read has not settled yet. */
const NOT_YET = Symbol('not yet')

/**
 * The read's result if it settles before the event loop's next check phase (chunks already
 * received and passed through the streams' promise chains), else {@link NOT_YET}. Waits for no
 * timer: at most one turn of the loop.
 */
function readSoon<T>(read: Promise<T>): Promise<T | typeof NOT_YET> {
  return new Promise((resolve, reject) => {
    const later = setImmediate(resolve, NOT_YET)
    read.then(
      (v) => {
        clearImmediate(later)
        resolve(v)
      },
      (e: unknown) => {
        clearImmediate(later)
        reject(e)
      }
    )
  })
}

/**
 * A byte body longer than this is written in pieces of this size, each after the socket drained:
 * the 14 MB answer to a batch of 100 tool lists, handed to the socket at once, was copied into it
 * in one go while every other client waited (docs/reliability.md).
 */
const WRITE_SLICE_BYTES = 1024 * 1024

/** Resolves when `res` can take more bytes (`drain`) or has closed, whichever comes first. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const go = () => {
      res.off('drain', go)
      res.off('close', go)
      resolve()
    }
    res.on('drain', go)
    res.on('close', go)
  })
}

/** Writes `body` to `res` in {@link WRITE_SLICE_BYTES} pieces, each after the socket drained; stops when the client goes away. */
async function writeInSlices(body: Uint8Array, res: ServerResponse): Promise<void> {
  let closed = false
  const onClose = () => (closed = true)
  res.once('close', onClose)
  try {
    for (let at = 0; at < body.length && !closed; at += WRITE_SLICE_BYTES) {
      const end = at + WRITE_SLICE_BYTES
      if (end >= body.length) {
        res.end(body.subarray(at))
        return
      }
      if (!res.write(body.subarray(at, end))) await drained(res)
    }
  } finally {
    res.off('close', onClose)
  }
}

/** Chunks longer than this together are written without waiting for more (bytes). */
const HOLD_BYTES = 64 * 1024

/**
 * Writes an {@link EdgeResponse}. Text bodies get a Content-Length. Streams are never held back
 * waiting for the origin: what the stream already has is written as soon as a read would have to
 * wait, headers included (so a listening client sees its headers before the first event); when
 * the whole stream is there at once it goes out with a Content-Length in one write, as
 * @hono/node-server does. Writing waits for `drain` when the socket is full; the stream is
 * cancelled when the client goes away.
 *
 * Why not one write per chunk: every write is a syscall (the headers a separate one when
 * flushed), and a relayed SSE reply of 100 events paid three of them where the bare proxy paid
 * one (measured with `npm run bench`, docs/performance.md).
 */
export async function writeEdgeResponse(r: EdgeResponse, res: ServerResponse): Promise<void> {
  const { body } = r
  if (isWholeBody(body)) {
    // The response owns its header record (EdgeResponse): completed in place, not copied.
    r.headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length)
    res.writeHead(r.status, r.headers)
    if (typeof body !== 'string' && body.length > WRITE_SLICE_BYTES) return writeInSlices(body, res)
    res.end(body)
    return
  }
  if (body === null) {
    res.writeHead(r.status, r.headers)
    res.end()
    return
  }
  let gone = false
  const onClose = () => {
    if (res.writableFinished) return
    gone = true
    body.cancel().catch(() => undefined)
  }
  res.once('close', onClose)
  // Chunks read but not written yet, and their length in bytes.
  const held: Uint8Array[] = []
  let heldBytes = 0
  /** Writes the held chunks (with the headers, the first time); `end` ends the response. Returns false when the socket is full. */
  const send = (end: boolean): boolean => {
    if (!res.headersSent) {
      // No Content-Length on a status that has no body (RFC 9110 section 8.6).
      if (end && r.status >= 200 && r.status !== 204 && r.status !== 304) r.headers['content-length'] = String(heldBytes)
      res.writeHead(r.status, r.headers)
      if (!end && heldBytes === 0) res.flushHeaders()
    }
    const chunk = held.length === 1 ? held[0] : held.length > 1 ? Buffer.concat(held, heldBytes) : undefined
    held.length = 0
    heldBytes = 0
    if (end) {
      res.end(chunk)
      return true
    }
    return chunk === undefined || res.write(chunk)
  }
  try {
    for (;;) {
      const read = body.read()
      let next = await readSoon(read)
      if (next === NOT_YET) {
        if (!send(false)) await drained(res)
        next = await read
      }
      if (gone) break
      if (next.done) {
        send(true)
        break
      }
      held.push(next.value)
      heldBytes += next.value.length
      if (heldBytes >= HOLD_BYTES && !send(false)) await drained(res)
    }
  } catch {
    // The stream failed: all that is left is to cut the connection.
    res.destroy()
  } finally {
    res.off('close', onClose)
  }
}

/**
 * Answers ready during one turn of the event loop, written together in its check phase
 * (`setImmediate`) instead of one by one as each is decided.
 *
 * Why: under load one poll phase hands the listener the requests of many connections at once
 * (about 30 per turn with 32 connections at 8,000 req/s). Written as decided, every answer's
 * `writev` (with the loopback delivery and the wake-up of the reader it does in the kernel)
 * falls between two requests' JavaScript, and both ran cold: in A/B runs of the benchmark's
 * processes (cpu-prof) the write syscall cost 21 us per rejected call against 8 us when nothing
 * else ran between writes.
 * Deciding all answers first and then writing them all cut a rejected call from 77 to 46 us of
 * CPU at 8,000 req/s and raised its saturated rate from 12,800 to 21,500 req/s (measured with `npm run bench`, docs/performance.md). An
 * answer waits for the rest of that turn's requests and for immediates queued before the first
 * answer of the turn (so slow deferred work, like the tiered engine's compile, goes on a timer
 * instead); an idle edge writes after one loop hop.
 */
export class WriteBatch {
  private pending: { r: EdgeResponse; res: ServerResponse }[] = []

  /** Queues `r` for `res`; the first answer of a turn schedules the flush. */
  add(r: EdgeResponse, res: ServerResponse): void {
    if (this.pending.push({ r, res }) === 1) setImmediate(this.flush)
  }

  private readonly flush = (): void => {
    const batch = this.pending
    this.pending = []
    for (const { r, res } of batch) {
      // One failing answer must not keep the rest of the batch from its clients.
      try {
        // The client went away while its answer waited (its socket may have died in this very
        // turn, before `res` heard of it): nothing to write, the stream is released.
        if (res.destroyed || res.socket?.destroyed === true) {
          if (r.body !== null && !isWholeBody(r.body)) r.body.cancel().catch(() => undefined)
          continue
        }
        writeEdgeResponse(r, res).catch(() => res.destroy())
      } catch {
        res.destroy()
      }
    }
  }
}

/**
 * Reads a request body for the front door: resolves when it has all arrived, or null as soon as it
 * passes `maxBytes` (then the rest is discarded as it comes; the answer is 413).
 */
function readNodeBody(req: IncomingMessage, maxBytes: number | undefined): Promise<Uint8Array | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let bytes = 0
    const onData = (c: Buffer) => {
      if (maxBytes !== undefined && (bytes += c.length) > maxBytes) {
        req.off('data', onData)
        req.resume()
        resolve(null)
        return
      }
      chunks.push(c)
    }
    req.on('data', onData)
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
  })
}

/**
 * The standalone server's listener: the direct path for `POST <base>[/<name>]` in front of `app`.
 * @param app the Hono app for every other request (it mounts `edge` at `base`)
 * @param edge the edge whose front door the direct path calls (what `mcpEdge()` returns)
 * @param base where `app` mounts `edge`, e.g. `/mcp`
 */
export function createNodeListener(app: Hono, edge: McpEdge, base: string): RequestListener {
  const fallback = getRequestListener(app.fetch)
  const answers = new WriteBatch()
  let deps: EdgeDeps | undefined = edge.deps
  return (req, res) => {
    // Repeated header names take the Hono route, where web Headers join them (hasRepeatedHeader).
    const name = req.method === 'POST' && deps !== undefined ? originNameOf(req.url ?? '', base) : null
    if (name === null || hasRepeatedHeader(req)) {
      void fallback(req, res)
      // Options given as a function of env are built on the app's first request.
      deps ??= edge.deps
      return
    }
    const headers = new NodeRequestHeaders(req.headers)
    // Browser clients: the CORS headers of the Hono routes (src/core/request/cors-rule.ts), added to every answer.
    const cors = req.headers.origin === undefined ? null : corsResponseHeaders(headers.get('origin'), deps!.config)
    servePost(deps!, {
      originName: name,
      headers,
      readBody: (maxBytes) => readNodeBody(req, maxBytes),
      clientSignal: () => responseCloseSignal(res),
    })
      .then((r) => answers.add(cors ? withHeaders(r, cors) : r, res))
      .catch(() => res.destroy())
  }
}
