/**
 * @module adapters/node/origin-client
 * {@link OriginClient} on Node: undici over a keep-alive pool (docs/design.md §9). Global
 * `fetch` costs about 400 us of CPU per call on Node 20, undici's `request` about 40 us in this
 * process, and undici's `dispatch` with the handler below about 22 us (measured with 16
 * calls in flight against the benchmark's origin). `request` wraps every reply in a Node
 * `Readable` and an async resource, and its `body.text()` in a consumer; the edge reads a JSON
 * reply whole and an SSE reply chunk by chunk, so the handler keeps the chunks itself and hands
 * them over as text or as a {@link ByteSource}.
 */
import { Agent, errors, type Dispatcher } from 'undici'
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginClient, type OriginReply, type OriginRequest } from '../../core/ports'
import type { ByteSource } from '../../core/edge-response'
import { EdgeError } from '../../core/errors'

/** Bytes held for a reader that has not read them yet (an SSE reply) before the origin is paused. */
const HOLD_BYTES = 64 * 1024
/** A discarded body is read and dropped up to this many bytes (the connection stays reusable), then the request is aborted; undici's `body.dump()` default. */
const DISCARD_BYTES = 128 * 1024
/** UTF-8 with a leading BOM dropped and bad sequences replaced, as undici's `body.text()` decodes. */
const utf8 = new TextDecoder()

/** The abort reason when the edge stops reading (cancelled stream, discarded or oversized body). */
class ReadStopped extends EdgeError {
  override readonly name = 'ReadStopped'
  override readonly code = 'EDGE_ERR_ORIGIN_READ_STOPPED'
}

/** undici's timeouts as the core's {@link OriginTimeoutError}; other errors as they are. */
function originError(e: unknown): unknown {
  return e instanceof errors.HeadersTimeoutError || e instanceof errors.BodyTimeoutError ? new OriginTimeoutError() : e
}

/**
 * One request to the origin, as an undici dispatch handler (undici 7's controller API). The
 * reply's head settles the promise given to the caller; body chunks are kept until the caller
 * reads them as text (all of them, within `maxReplyBytes`), as a stream (the origin is paused
 * while more than {@link HOLD_BYTES} wait), or discards them.
 */
class OriginCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  private readonly chunks: Buffer[] = []
  /** Bytes in `chunks`. */
  private held = 0
  /** Bytes received in all. */
  private received = 0
  private ended = false
  private failure: unknown = undefined
  private mode: 'unread' | 'text' | 'stream' | 'discard' = 'unread'
  /** Whoever waits for the next chunk, the end or a failure. */
  private waiters: (() => void)[] = []
  private started = false
  /** The `ORIGIN_TIMEOUT_MS` deadline: until the headers, and through a body read as text. */
  private deadline: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly req: OriginRequest,
    private readonly resolve: (reply: OriginReply) => void,
    private readonly reject: (e: unknown) => void,
    /** The client's state: once `expired`, a failure of this call is {@link OriginTimeoutError} (see `expire()`). */
    private readonly client: { expired: boolean } = { expired: false }
  ) {}

  /**
   * Starts the deadline: a request still waiting for its headers, or for the rest of a body read
   * as text, after `ms` is aborted with {@link OriginTimeoutError}, also while it is queued for a
   * connection. (undici's own headersTimeout/bodyTimeout stay as the idle bounds: they start only
   * once a connection is given, reset on every chunk, and fire on a timer of about 1 s grain.)
   */
  startDeadline(ms: number): void {
    if (ms > 0) this.deadline = setTimeout(() => this.abort(new OriginTimeoutError()), ms)
  }

  private stopDeadline(): void {
    if (this.deadline !== undefined) clearTimeout(this.deadline)
    this.deadline = undefined
  }

  /** Stops the request (the client went away, the deadline passed, or the edge stopped reading). */
  abort(reason: Error): void {
    if (this.ended || this.failure !== undefined) return
    if (this.controller) return void this.controller.abort(reason)
    // Still queued for a connection: the caller gets its answer now; onRequestStart aborts it.
    this.failure = reason
    this.stopDeadline()
    this.reject(originError(reason))
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.failure !== undefined) controller.abort(this.failure as Error)
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, raw: Record<string, string | string[] | undefined>): void {
    // Informational (103 Early Hints): the reply follows. (undici itself refuses a 100 Continue
    // to a request that did not ask for one, as a SocketError: -31001.)
    if (statusCode < 200) return
    this.started = true
    const headers: Record<string, string> = {}
    for (const k in raw) {
      const v = raw[k]
      if (v !== undefined) headers[k] = typeof v === 'string' ? v : v.join(', ')
    }
    const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : NaN
    // No body by definition (RFC 9110 section 6.4.1), as fetch gives `body: null` for them.
    const bodiless = statusCode === 204 || statusCode === 205 || statusCode === 304
    this.resolve({
      status: statusCode,
      headers,
      text: async () => utf8.decode(await this.bytes(declared)),
      bytes: () => this.bytes(declared),
      stream: () => (bodiless ? (this.discard(declared), null) : this.stream()),
      discard: () => this.discard(declared),
    })
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length
    if (this.mode === 'discard') {
      if (this.received > DISCARD_BYTES) controller.abort(new ReadStopped())
      return
    }
    const max = this.req.maxReplyBytes
    if (this.mode === 'text' && max !== undefined && this.received > max) {
      controller.abort(new OriginReplyTooLargeError())
      return
    }
    this.chunks.push(chunk)
    this.held += chunk.length
    if (this.mode !== 'text' && this.held > HOLD_BYTES) controller.pause()
    this.wake()
  }

  onResponseEnd(): void {
    this.ended = true
    this.stopDeadline()
    this.wake()
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    this.stopDeadline()
    // The graceful stop's bound passed (expire() destroyed the pools): the call ends as a timeout.
    if (this.client.expired) error = new OriginTimeoutError()
    const first = this.failure === undefined
    this.failure = error
    if (!this.started) {
      if (first) this.reject(originError(error))
    } else this.wake()
  }

  /** Wakes every waiting reader. */
  private wake(): void {
    if (this.waiters.length === 0) return
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w()
  }

  /** Resolves at the next chunk, the end or a failure. */
  private next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private async bytes(declared: number): Promise<Uint8Array> {
    this.mode = 'text'
    const max = this.req.maxReplyBytes
    if (max !== undefined && (declared > max || this.received > max)) {
      this.abort(new OriginReplyTooLargeError())
      throw new OriginReplyTooLargeError()
    }
    this.controller?.resume()
    while (!this.ended && this.failure === undefined) await this.next()
    if (this.failure !== undefined) throw originError(this.failure)
    const chunks = this.chunks.splice(0)
    return chunks.length === 1 ? chunks[0]! : concatInSlices(chunks, this.held)
  }

  private stream(): ByteSource {
    this.mode = 'stream'
    // An SSE body may stay open past the deadline: its silence is bounded by the idle timeouts.
    this.stopDeadline()
    // After cancel, reads (also one already waiting) end the stream, as a web stream's do.
    let cancelled = false
    return {
      read: async () => {
        while (this.chunks.length === 0 && !this.ended && this.failure === undefined && !cancelled) await this.next()
        if (cancelled) return { done: true }
        const value = this.chunks.shift()
        if (value !== undefined) {
          this.held -= value.length
          if (this.held <= HOLD_BYTES && this.controller?.paused) this.controller.resume()
          return { done: false, value }
        }
        if (this.failure !== undefined) throw originError(this.failure)
        return { done: true }
      },
      cancel: () => {
        cancelled = true
        this.abort(new ReadStopped())
        this.chunks.length = 0
        this.held = 0
        return Promise.resolve()
      },
    }
  }

  private discard(declared: number): void {
    this.mode = 'discard'
    this.stopDeadline()
    this.chunks.length = 0
    this.held = 0
    if (this.received > DISCARD_BYTES || declared > DISCARD_BYTES) this.abort(new ReadStopped())
    else this.controller?.resume()
  }
}

/** Origin and path of a URL, remembered per URL (an edge talks to a handful of origins). */
const targets = new Map<string, { origin: string; path: string }>()
function target(url: string): { origin: string; path: string } {
  let t = targets.get(url)
  if (!t) {
    const u = new URL(url)
    t = { origin: u.origin, path: u.pathname + u.search }
    if (targets.size >= 256) targets.clear()
    targets.set(url, t)
  }
  return t
}

/**
 * Creates the client. `connections` bounds each pool per origin. GET requests (standalone SSE
 * streams, open as long as a session lives) have a pool of their own, so sessions holding their
 * streams never leave POSTs queued for a connection.
 * `expire()` (the graceful stop's bound, graceful-stop.ts) aborts every request in flight with
 * {@link OriginTimeoutError}: a call waiting for its reply, or a reply still streaming, ends as
 * if `ORIGIN_TIMEOUT_MS` had passed, so each open id gets -31002 (D9). It destroys both pools
 * (undici fails every queued and running request of a destroyed pool); the client is not used
 * after it.
 *
 * Why no set of live calls for it: adding and deleting every call in a `Set` made the young
 * generation's scavenges promote about 1.8 MB per two scavenges in most runs (a promotion cascade,
 * `--trace-gc-nvp`), and a forwarded call cost 57-62 us of CPU in process instead of 46-50 us
 * (in-process forwarding harness, 16 calls in flight, 4 runs each; an A/B of the two origin clients).
 */
export function createUndiciOriginClient(options: { connections?: number } = {}): OriginClient & { close(): Promise<void>; expire(): void } {
  const pool = () => new Agent({ keepAliveTimeout: 10_000, connections: options.connections ?? 128, pipelining: 1 })
  const agent = pool()
  const streams = pool()
  const state = { expired: false }
  /** The pools' destruction once expire() ran; close() then waits for it instead of closing them. */
  let destroyed: Promise<unknown> | undefined
  const client = (req: OriginRequest): Promise<OriginReply> =>
    new Promise<OriginReply>((resolve, reject) => {
      const { origin, path } = target(req.url)
      const call = new OriginCall(req, resolve, reject, state)
      call.startDeadline(req.timeoutMs)
      const signal = req.signal
      if (signal) {
        const onAbort = () => call.abort(new errors.RequestAbortedError())
        if (signal.aborted) onAbort()
        else signal.addEventListener('abort', onAbort, { once: true })
      }
      ;(req.method === 'GET' ? streams : agent).dispatch(
        {
          origin,
          path,
          method: req.method as Dispatcher.HttpMethod,
          headers: req.headers,
          body: req.body ?? null,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.bodyTimeoutMs ?? req.timeoutMs,
        },
        call
      )
    })
  const expire = () => {
    state.expired = true
    const reason = new OriginTimeoutError()
    destroyed ??= Promise.all([agent.destroy(reason), streams.destroy(reason)]).catch(() => undefined)
  }
  const close = () => destroyed ?? Promise.all([agent.close(), streams.close()])
  return Object.assign(client, { close: () => close().then(() => undefined), expire })
}

/** Bytes copied between two yields by {@link concatInSlices}. */
const CONCAT_SLICE_BYTES = 1024 * 1024

/**
 * `Buffer.concat`, yielding to the event loop after each MiB copied: the copy of a 14 MB reply
 * (a batch of 100 tool lists) in one go held every other client (docs/reliability.md).
 */
async function concatInSlices(chunks: Buffer[], total: number): Promise<Buffer> {
  if (total <= CONCAT_SLICE_BYTES) return Buffer.concat(chunks, total)
  const out = Buffer.allocUnsafe(total)
  let at = 0
  let since = 0
  for (const c of chunks) {
    c.copy(out, at)
    at += c.length
    since += c.length
    if (since >= CONCAT_SLICE_BYTES) {
      since = 0
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  return out
}
