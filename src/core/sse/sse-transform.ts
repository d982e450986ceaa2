/**
 * @module core/sse/sse-transform
 * Server-Sent Events in and out (WHATWG HTML "Server-sent events"; MCP Streamable HTTP).
 * Field parsing uses the eventsource-parser library; this module finds event boundaries (so
 * untouched events are relayed as their own text), re-serialises the events it changes, and
 * holds at most one incomplete event at a time (never the stream).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { ByteSource } from '../edge-response'

/** One SSE event. `data` lines are joined with `\n`. */
export interface SseEvent {
  id?: string
  event?: string
  data: string
}

/** Serialises one event, `data` split into one `data:` line per line. */
export function formatEvent(ev: SseEvent): string {
  let out = ''
  if (ev.id !== undefined) out += `id: ${ev.id}\n`
  if (ev.event !== undefined) out += `event: ${ev.event}\n`
  for (const line of ev.data.split('\n')) out += `data: ${line}\n`
  return out + '\n'
}

/** Why the origin's stream stopped: it ended, it failed, it went idle, or the client cancelled. */
export type SseEndReason = 'end' | 'error' | 'timeout' | 'cancel'

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
   * resumption is not lost).
   */
  onEvent(ev: SseEvent): string | null | undefined
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
   * an origin trickling one byte a second into an event that never ends is cut here (issue 17).
   */
  eventIdleMs?: number
  /** Longest the stream may last, in ms, before it is ended with `timeout` (0: unbounded). */
  maxMs?: number
}

/** Default bound of one SSE event (16 Mi code units, the default `MAX_REPLY_BYTES`). */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024

/** Longest alternative a `watch` pattern may have: the overlap kept when an event spans chunks. */
export const MAX_WATCH_LENGTH = 64

const encoder = new TextEncoder()

/**
 * Where the splitter stands between two characters of the stream: `lineEmpty` when nothing of the
 * current line was read yet (a line end here is a blank line, which ends an event), `afterCr`
 * when the last character was a CR (an LF right after it belongs to the same line end: CRLF).
 */
interface LineState {
  lineEmpty: boolean
  afterCr: boolean
}

/**
 * The end of the first event at or after `from` in `text` (WHATWG SSE: an event ends with a blank
 * line; line ends are LF, CRLF or CR): the index just past the blank line's line end, or -1, with
 * `st` updated to the state at the end of `text`. A CR ends its line at once: an LF arriving
 * after it (even in the next chunk) is swallowed as the rest of that CRLF. O(length - from).
 */
function eventEnd(text: string, from: number, st: LineState, hasCr: boolean): number {
  if (!hasCr && !st.afterCr) {
    if (from >= text.length) return -1
    if (st.lineEmpty && text.charCodeAt(from) === 0x0a) return from + 1
    const i = text.indexOf('\n\n', from)
    if (i >= 0) return i + 2
    st.lineEmpty = text.charCodeAt(text.length - 1) === 0x0a
    return -1
  }
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (st.afterCr) {
      st.afterCr = false
      if (c === 0x0a) continue
    }
    if (c === 0x0a || c === 0x0d) {
      st.afterCr = c === 0x0d
      if (st.lineEmpty) return i + 1
      st.lineEmpty = true
    } else st.lineEmpty = false
  }
  return -1
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
 * Event boundaries are found here and only the events that `hooks.watch` selects go through
 * eventsource-parser: the library gives no raw event text, and parsing and re-serialising every
 * progress event was most of the edge's CPU on long streams (issue 7).
 * @param source the origin's body (UTF-8 bytes)
 * @returns the client's body (UTF-8 bytes)
 */
export function transformSse(source: ByteSource, hooks: SseHooks, options: SseOptions = {}): ByteSource {
  // Chunks that begin and end on a character boundary are decoded without the streaming decoder:
  // Node 20's streaming decode of a 15 kB chunk is 14 us against 1.7 us for a plain one. Both
  // keep a BOM as U+FEFF; the one at the start of the stream is dropped below (eventsource-parser
  // only recognises it as three bytes' worth of text, and the edge must read the first event).
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  const plain = new TextDecoder('utf-8', { ignoreBOM: true })
  let atStart = true
  const maxEvent = options.maxEventChars ?? MAX_EVENT_CHARS
  let tooLarge = false
  const pending: (string | Uint8Array)[] = []
  let ended = false
  // The event being received (incomplete): its text in pieces, their length, whether a watched
  // pattern was seen in it, and its last characters (a pattern may span two chunks).
  let carry: string[] = []
  let carryLength = 0
  let carryWatched = false
  let carryTail = ''
  const line: LineState = { lineEmpty: true, afterCr: false }
  // The block (one event's text) being parsed, what it held besides its event, whether it was answered.
  let block = ''
  let extras: string[] = []
  let answered = false
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      const ev: SseEvent = { data: msg.data }
      if (msg.id !== undefined) ev.id = msg.id
      if (msg.event !== undefined) ev.event = msg.event
      const replaced = hooks.onEvent(ev)
      answered = true
      // Unchanged: the block's own text, comments and retry included.
      if (replaced === undefined) return void pending.push(block)
      pending.push(...extras)
      if (replaced === null) {
        if (ev.id !== undefined) pending.push(`id: ${ev.id}\n\n`)
        return
      }
      ev.data = replaced
      pending.push(formatEvent(ev))
    },
    onRetry(ms: number) {
      extras.push(`retry: ${ms}\n\n`)
    },
    onComment(comment: string) {
      extras.push(`:${comment}\n\n`)
    },
  })
  /** One complete event's text, parsed and offered to the hooks (or relayed when they keep it). */
  const event = (text: string) => {
    block = text
    extras = []
    answered = false
    // A block ending in CR ends with a complete line end, but the parser would wait for a
    // possible LF: CR+LF is the same single line end (an LF that does follow is relayed with the
    // next block, where the parser sees a blank line and nothing to dispatch).
    parser.feed(text.charCodeAt(text.length - 1) === 0x0d ? text + '\n' : text)
    // No event in the block (comments, retry or id only): relayed as it came.
    if (!answered) pending.push(text)
  }
  // One private global copy of the pattern (its lastIndex is this stream's own state); one
  // regular-expression scan finds the first of the alternatives (4 indexOf calls over a 15 kB
  // chunk cost 21 us, the scan 6 us on Node 20).
  const watch = hooks.watch ? new RegExp(hooks.watch.source, 'g') : undefined
  // Whether the previous chunk ended with an ASCII byte (then no UTF-8 sequence spans the cut).
  let lastByteAscii = true
  /** The first place at or after `from` where the watched pattern matches (-1: none; `from` when every event is watched). */
  const nextWatched = (text: string, from: number): number => {
    if (!watch) return from
    watch.lastIndex = from
    const m = watch.exec(text)
    return m ? m.index : -1
  }
  /**
   * The stream ended inside an event (no blank line after it): the event is completed with the
   * line ends it lacks and dispatched, so an origin that forgets the last blank line still has its
   * answer read. Text holding only line ends (the LF of a CRLF) has nothing to dispatch.
   */
  const endInside = (text: string, watched: boolean) => {
    if (/^[\r\n]*$/.test(text)) return void pending.push(text)
    const completed = text + (line.lineEmpty && !line.afterCr ? '\n' : '\n\n')
    // Always offered to the hooks, watched or not (one parse at the end of a stream): an event cut
    // off by the stream's end must not reach the client as half a JSON-RPC message (issue 17).
    void watched
    event(completed)
  }
  /**
   * Splits newly received text into events. Runs of complete events without a watched pattern
   * are relayed as one slice (of the chunk's own bytes when `bytes` holds exactly `text`), the
   * others go through {@link event}; an incomplete event waits in `carry`. Every character is
   * scanned once (a large event arriving in small chunks costs its length, not its square).
   */
  const take = (text: string, final: boolean, bytes?: Uint8Array) => {
    const endsAscii = bytes?.length ? bytes[bytes.length - 1]! < 0x80 : lastByteAscii
    if (atStart && text.length > 0) {
      atStart = false
      if (text.charCodeAt(0) === 0xfeff) {
        text = text.slice(1)
        bytes = undefined
      }
    }
    // Text offsets are byte offsets when the chunk is ASCII and starts on a character boundary.
    const same = bytes !== undefined && carryLength === 0 && lastByteAscii && bytes.length === text.length
    lastByteAscii = endsAscii
    const hasCr = text.includes('\r')
    let at = 0
    if (carryLength > 0) {
      // The event in `carry` goes on in this text.
      const end = eventEnd(text, 0, line, hasCr)
      const upTo = end < 0 ? text.length : end
      const watched = carryWatched || nextWatched(carryTail + text.slice(0, upTo), 0) >= 0
      if (end < 0) {
        carry.push(text)
        carryLength += text.length
        carryWatched = watched
        carryTail = (carryTail + text).slice(-MAX_WATCH_LENGTH)
        if (carryLength > maxEvent) tooLarge = true
        if (!final) return
        text = ''
      } else {
        carry.push(text.slice(0, end))
        at = end
      }
      const whole = carry.join('')
      carry = []
      carryLength = 0
      carryWatched = false
      carryTail = ''
      if (end < 0) return endInside(whole, watched)
      if (watched) event(whole)
      else pending.push(whole)
      line.lineEmpty = true
    }
    let rawFrom = at
    let watched = nextWatched(text, at)
    const relayRaw = (to: number) => {
      if (to > rawFrom) pending.push(same ? bytes!.subarray(rawFrom, to) : text.slice(rawFrom, to))
    }
    for (;;) {
      const end = eventEnd(text, at, line, hasCr)
      if (end < 0) break
      if (watched >= 0 && watched < end) {
        relayRaw(at)
        event(text.slice(at, end))
        rawFrom = end
        watched = nextWatched(text, end)
      }
      line.lineEmpty = true
      at = end
    }
    relayRaw(at)
    if (at < text.length) {
      const rest = text.slice(at)
      if (final) return endInside(rest, watched >= 0)
      carry = [rest]
      carryLength = rest.length
      carryWatched = watched >= 0
      carryTail = rest.slice(-MAX_WATCH_LENGTH)
      if (carryLength > maxEvent) tooLarge = true
    }
  }
  // Chunks ready for the reader, in order.
  const queue: Uint8Array[] = []
  /** Queues what is pending as one chunk: relayed byte slices copied, edge text encoded. */
  const flush = () => {
    if (pending.length === 0) return
    if (pending.length === 1 && typeof pending[0] !== 'string') queue.push(pending[0]!)
    else if (pending.every((p) => typeof p === 'string')) queue.push(encoder.encode(pending.join('')))
    else {
      const parts = pending.map((p) => (typeof p === 'string' ? encoder.encode(p) : p))
      const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
      let o = 0
      for (const p of parts) {
        joined.set(p, o)
        o += p.length
      }
      queue.push(joined)
    }
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
            take(decoder.decode(), true)
            finish('end')
            break
          }
          const value = next.value
          const whole = lastByteAscii && value.length > 0 && value[value.length - 1]! < 0x80
          take(whole ? plain.decode(value) : decoder.decode(value, { stream: true }), false, value)
          if (tooLarge) {
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
      const value = queue.shift()
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

/**
 * Reads the events of an SSE body one by one (for the edge's own client session).
 * @param source UTF-8 bytes of an SSE body
 */
export async function* readSseEvents(source: ByteSource): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  const queue: SseEvent[] = []
  const parser = createParser({
    onEvent(msg) {
      queue.push({ data: msg.data, ...(msg.id !== undefined ? { id: msg.id } : {}), ...(msg.event !== undefined ? { event: msg.event } : {}) })
    },
  })
  try {
    for (;;) {
      const { value, done } = await source.read()
      if (done) {
        parser.feed('\n\n')
        yield* queue.splice(0)
        return
      }
      parser.feed(decoder.decode(value, { stream: true }))
      yield* queue.splice(0)
    }
  } finally {
    source.cancel().catch(() => undefined)
  }
}
