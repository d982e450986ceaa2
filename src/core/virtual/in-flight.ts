/**
 * @module core/virtual/in-flight
 * Cancelling a routed request at an origin that holds no session for the client: a 2026-07-28
 * origin (Streamable HTTP 2026-07-28 §Cancellation: closing the request's response stream is the
 * cancellation, and no `notifications/cancelled` is expected) or a stateless 2025 one (a later
 * POST reaches a new server that does not know the id). A 2025 client cancels with
 * `notifications/cancelled` in its session with the virtual server; the edge keeps, per process,
 * the routed requests of each client session that such an origin runs, and closes the edge's
 * request to the origin that the cancellation names. The client then gets no answer for it
 * (2025 cancellation: the receiver SHOULD NOT answer a cancelled request).
 */
import { LinkSignal, type ClientSignal } from '../client-signal'
import { edgeResponse, isWholeBody, type ByteSource, type EdgeResponse } from '../edge-response'
import { toRawId, type RawId } from '../jsonrpc/jsonrpc'

/** Most routed requests kept per process (the oldest forgotten first: it can no longer be cancelled, it still runs). */
const MAX_IN_FLIGHT = 4096

/** One routed request that a client's `notifications/cancelled` may close. */
export class InFlight {
  /** Aborts the edge's request to the origin: when the client goes away, or when it cancels the request. */
  readonly signal = new LinkSignal()
  private cancelled = false
  private body: ByteSource | undefined
  private readonly onClientGone = () => this.signal.abort()
  private wakeOwner: (() => void) | undefined

  constructor(
    private readonly forget: () => void,
    private readonly client: ClientSignal | undefined
  ) {
    if (client?.aborted) this.signal.abort()
    else client?.addEventListener('abort', this.onClientGone, { once: true })
    // The closing runs as a continuation of a promise made here, in the context of the request
    // that runs the routed request: a Worker may not touch one request's I/O (its fetch, its
    // stream) from another's, and the cancellation arrives in another request.
    void new Promise<void>((r) => (this.wakeOwner = r)).then(() => this.close())
  }

  /** The client cancelled the request: the origin's request is closed (before its headers by the signal, after them by cancelling its stream). */
  cancel(): void {
    if (this.cancelled) return
    this.cancelled = true
    this.done()
    this.wakeOwner?.()
  }

  private close(): void {
    try {
      this.signal.abort()
      if (this.body) void this.body.cancel('cancelled').catch(() => undefined)
    } catch {
      // The request ended meanwhile: nothing to close.
    }
  }

  /**
   * What the client gets for the routed request: `r` as it is; for a stream, the same stream that
   * ends when the request is cancelled; once cancelled, an SSE stream with no event (no answer).
   */
  settle(r: EdgeResponse): EdgeResponse {
    if (this.cancelled) {
      if (r.body !== null && !isWholeBody(r.body)) void r.body.cancel('cancelled').catch(() => undefined)
      return edgeResponse('', 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    }
    const inner = r.body
    if (inner === null || isWholeBody(inner)) {
      this.done()
      return r
    }
    this.body = inner
    const body: ByteSource = {
      read: async () => {
        if (this.cancelled) return { done: true }
        try {
          const n = await inner.read()
          if (n.done) this.done()
          return this.cancelled ? { done: true } : n
        } catch (e) {
          this.done()
          if (this.cancelled) return { done: true }
          throw e
        }
      },
      cancel: async (reason) => {
        this.done()
        await inner.cancel(reason)
      },
    }
    return { ...r, body }
  }

  /** The request is over: it is no longer kept, and the client's signal no longer holds it. */
  done(): void {
    this.client?.removeEventListener('abort', this.onClientGone)
    this.forget()
  }
}

/** Per edge: `<session>\n<id key>` -> the routed requests under that id (a list fans one id out to several origins). */
const kept = new WeakMap<object, Map<string, Set<InFlight>>>()

function flights(owner: object): Map<string, Set<InFlight>> {
  let m = kept.get(owner)
  if (!m) kept.set(owner, (m = new Map()))
  return m
}

/**
 * Keeps a routed request of a client session until it ends.
 * @param owner the edge's ports (one map per edge)
 * @param session the client's session id with the virtual server (checked by the caller)
 * @param id the request's id as the client sent it
 * @param client the client's signal (the client going away aborts the origin request too)
 */
export function keepInFlight(owner: object, session: string, id: RawId, client: ClientSignal | undefined): InFlight {
  const m = flights(owner)
  const key = `${session}\n${id.key}`
  let set = m.get(key)
  if (!set) {
    m.set(key, (set = new Set()))
    if (m.size > MAX_IN_FLIGHT) m.delete(m.keys().next().value!)
  }
  const held = set
  const f: InFlight = new InFlight(() => {
    held.delete(f)
    if (held.size === 0 && m.get(key) === held) m.delete(key)
  }, client)
  held.add(f)
  return f
}

/**
 * Closes the routed requests a client's `notifications/cancelled` names (`params.requestId`), when
 * this process runs them for that session. @returns whether one was closed
 */
export function cancelInFlight(owner: object, session: string, requestId: unknown): boolean {
  const id = toRawId(requestId)
  if (!id) return false
  const set = kept.get(owner)?.get(`${session}\n${id.key}`)
  if (!set) return false
  for (const f of [...set]) f.cancel()
  return true
}
