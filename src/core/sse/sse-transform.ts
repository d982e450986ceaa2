/**
 * @module core/sse/sse-transform
 * Server-Sent Events in and out (WHATWG HTML "Server-sent events"; MCP Streamable HTTP): the relay
 * of an origin's stream to the client. Event boundaries are found by the splitter
 * (./event-splitter.ts, which relays untouched events as their own bytes); the events it hands on
 * are parsed with the eventsource-parser library, offered to the hooks and re-serialised when they
 * change. This module owns the reading: one chunk at a time, the idle and overall bounds, and
 * the end of the stream. It holds at most one incomplete event at a time (never the stream).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { ByteSource } from '../edge-response'
import { formatEvent, type SseEndReason, type SseEvent } from './sse-event'
import { SseEventSplitter } from './event-splitter'

export { formatEvent, type SseEndReason, type SseEvent } from './sse-event'
export { MAX_EVENT_CHARS, MAX_WATCH_LENGTH } from './event-splitter'

/** Hooks of {@link transformSse}. */
export interface SseHooks {
  /**
   * What may mark an event needing a change (a pattern of literal alternatives, e.g.
   * `/"result"|"error"/`): only events whose text matches are parsed and offered to
   * {@link onEvent}; the others are relayed as the very same bytes without being parsed.
   * Absent: every event is parsed.
   */
  watch?: RegExp
  /**
   * Returns the data to send instead (same id and event name), `undefined` to keep the event as
   * it came (its raw text is relayed), or `null` to drop its data (an `id` is still sent, so
   * resumption is not lost). A promise of one of these holds the event, and every event after it,
   * until it settles (the order is kept): a tools/list answer waiting for its tool digests.
   */
  onEvent(ev: SseEvent): string | null | undefined | Promise<string | null | undefined>
  /**
   * Called exactly once when the origin's stream stops; returns events to append (ignored after
   * `cancel`, when nobody reads any more). `error` is the stream's failure for `reason: "error"`.
   */
  onEnd(reason: SseEndReason, error?: unknown): SseEvent[]
}

/** Options of {@link transformSse}. */
export interface SseOptions {
  /** Milliseconds without a byte from the origin before the stream is ended with `timeout` (0: never). */
  idleMs?: number
  /**
   * Upper bound of one event's text, in UTF-16 code units: an origin sending a longer event (or
   * one endless line) ends the stream with `onEnd("error")` instead of growing the edge's memory.
   * Default {@link MAX_EVENT_CHARS}.
   */
  maxEventChars?: number
  /**
   * Milliseconds without a complete block (an event, a comment, a `retry`) before the stream is
   * ended with `timeout` (0: never). Unlike `idleMs`, bytes that complete nothing do not count:
   * an origin trickling one byte a second into an event that never ends is cut here (docs/reliability.md).
   */
  eventIdleMs?: number
  /** Longest the stream may last, in ms, before it is ended with `timeout` (0: unbounded). */
  maxMs?: number
}

const encoder = new TextEncoder()

/**
 * The events the splitter hands on, parsed and offered to the hooks: each becomes text for the
 * client (the block's own text when the hooks keep it, a new serialisation when they change it).
 */
class EventRewriter {
  // The block (one event's text) being parsed, what it held besides its event, whether it was answered.
  private block = ''
  private extras: string[] = []
  private answered = false
  private readonly parser

  constructor(
    private readonly hooks: SseHooks,
    private readonly out: (string | Uint8Array | Promise<string>)[]
  ) {
    this.parser = createParser({
      onEvent: (msg: EventSourceMessage) => {
        const ev: SseEvent = { data: msg.data }
        if (msg.id !== undefined) ev.id = msg.id
        if (msg.event !== undefined) ev.event = msg.event
        const replaced = this.hooks.onEvent(ev)
        this.answered = true
        if (replaced instanceof Promise) {
          const block = this.block
          const extras = this.extras.join('')
          return void this.out.push(
            replaced.then(
              (r) => this.text(ev, block, extras, r),
              () => this.text(ev, block, extras, null)
            )
          )
        }
        this.out.push(this.text(ev, this.block, this.extras.join(''), replaced))
      },
      onRetry: (ms: number) => {
        this.extras.push(`retry: ${ms}\n\n`)
      },
      onComment: (comment: string) => {
        this.extras.push(`:${comment}\n\n`)
      },
    })
  }

  /** What the client gets for an event the hooks answered with `replaced` (see {@link SseHooks.onEvent}). */
  private text(ev: SseEvent, block: string, extras: string, replaced: string | null | undefined): string {
    // Unchanged: the block's own text, comments and retry included.
    if (replaced === undefined) return block
    if (replaced === null) return ev.id !== undefined ? `${extras}id: ${ev.id}\n\n` : extras
    return extras + formatEvent({ ...ev, data: replaced })
  }

  /** One complete event's text, parsed and offered to the hooks (or relayed when they keep it). */
  event(text: string): void {
    this.block = text
    this.extras = []
    this.answered = false
    // A block ending in CR ends with a complete line end, but the parser would wait for a
    // possible LF: CR+LF is the same single line end (an LF that does follow is relayed with the
    // next block, where the parser sees a blank line and nothing to dispatch).
    this.parser.feed(text.charCodeAt(text.length - 1) === 0x0d ? text + '\n' : text)
    // No event in the block (comments, retry or id only): relayed as it came.
    if (!this.answered) this.out.push(text)
  }
}

/** Pieces for the client as one chunk; a promise of it when a piece is held (see {@link SseHooks.onEvent}). */
function joinPending(pending: (string | Uint8Array | Promise<string>)[]): Uint8Array | Promise<Uint8Array> {
  if (pending.every((p) => !(p instanceof Promise))) return joinChunk(pending as (string | Uint8Array)[])
  return Promise.all(pending.map((p) => Promise.resolve(p))).then(joinChunk)
}

/** Pieces for the client as one chunk: relayed byte slices copied, edge text encoded. */
function joinChunk(pending: (string | Uint8Array)[]): Uint8Array {
  if (pending.length === 1 && typeof pending[0] !== 'string') return pending[0]!
  if (pending.every((p) => typeof p === 'string')) return encoder.encode(pending.join(''))
  const parts = pending.map((p) => (typeof p === 'string' ? encoder.encode(p) : p))
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    joined.set(p, o)
    o += p.length
  }
  return joined
}

/**
 * Re-emits an SSE stream event by event, letting `hooks` rewrite each event's data and append
 * events at the end. Events the hooks leave alone are relayed as their exact text (comments,
 * `retry`, `id:`-only blocks, CRLF and field order included); a rewritten event is serialised
 * again with its id and event name. Errors of the source end the output cleanly after
 * `onEnd("error")`; nothing is buffered beyond the event being read: each chunk read from the
 * origin is split into events and every complete one is handed to the reader before the next
 * chunk is read.
 *
 * Event boundaries are found by the splitter (./event-splitter.ts) and only the events that `hooks.watch` selects go through
 * eventsource-parser: the library gives no raw event text, and parsing and re-serialising every
 * progress event was most of the edge's CPU on long streams (measured with `npm run bench`, docs/performance.md).
 * @param source the origin's body (UTF-8 bytes)
 * @returns the client's body (UTF-8 bytes)
 */
export function transformSse(source: ByteSource, hooks: SseHooks, options: SseOptions = {}): ByteSource {
  // What the current chunk gave the client so far, in order; then the chunks ready for the reader.
  const pending: (string | Uint8Array | Promise<string>)[] = []
  const queue: (Uint8Array | Promise<Uint8Array>)[] = []
  const rewriter = new EventRewriter(hooks, pending)
  const splitter = new SseEventSplitter(
    { raw: (piece) => void pending.push(piece), event: (text) => rewriter.event(text) },
    { ...(hooks.watch ? { watch: hooks.watch } : {}), ...(options.maxEventChars !== undefined ? { maxEventChars: options.maxEventChars } : {}) }
  )
  let ended = false
  const flush = () => {
    if (pending.length === 0) return
    queue.push(joinPending(pending))
    pending.length = 0
  }
  const finish = (reason: SseEndReason, error?: unknown) => {
    if (ended) return
    ended = true
    flush()
    const tail = hooks.onEnd(reason, error)
    if (tail.length) queue.push(encoder.encode(tail.map(formatEvent).join('')))
  }
  const idleMs = options.idleMs ?? 0
  const eventIdleMs = options.eventIdleMs ?? 0
  const startedAt = Date.now()
  const endBy = options.maxMs ? startedAt + options.maxMs : Infinity
  // When the last complete block went out (for eventIdleMs).
  let lastBlockAt = startedAt
  /** Milliseconds the next read may wait: the least of the byte idle, the block idle and the whole stream's bound; 0 = unbounded. */
  const waitBound = (): number => {
    const now = Date.now()
    let wait = idleMs > 0 ? idleMs : Infinity
    if (eventIdleMs > 0) wait = Math.min(wait, lastBlockAt + eventIdleMs - now)
    wait = Math.min(wait, endBy - now)
    return wait === Infinity ? 0 : Math.max(1, wait)
  }
  return {
    async read() {
      // Reads until at least one complete event (or the end) is ready: a chunk holding half an
      // event gives the reader nothing yet.
      while (queue.length === 0 && !ended) {
        let timer: ReturnType<typeof setTimeout> | undefined
        try {
          const read = source.read()
          const wait = waitBound()
          const next = wait > 0 ? await Promise.race([read, new Promise<'idle'>((r) => (timer = setTimeout(() => r('idle'), wait)))]) : await read
          if (next === 'idle') {
            source.cancel().catch(() => undefined)
            finish('timeout')
            break
          }
          if (next.done) {
            splitter.end()
            finish('end')
            break
          }
          splitter.push(next.value)
          if (splitter.tooLarge) {
            // One event past maxEventChars: what came before it is sent, then the stream ends.
            source.cancel().catch(() => undefined)
            finish('error', new Error('SSE event too large'))
            break
          }
          if (pending.length > 0) lastBlockAt = Date.now()
          flush()
        } catch (e) {
          finish('error', e)
          break
        } finally {
          clearTimeout(timer)
        }
      }
      const next = queue.shift()
      const value = next instanceof Promise ? await next : next
      return value === undefined ? { done: true } : { done: false, value }
    },
    cancel(reason) {
      if (!ended) {
        ended = true
        hooks.onEnd('cancel')
      }
      queue.length = 0
      return source.cancel(reason)
    },
  }
}
