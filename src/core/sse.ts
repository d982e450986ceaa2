/**
 * @module sse
 * Server-Sent Events in and out (WHATWG HTML "Server-sent events"; MCP Streamable HTTP).
 * Field parsing uses the eventsource-parser library; this module finds event boundaries (so
 * untouched events are relayed as their own text), re-serialises the events it changes, and
 * holds at most one incomplete event at a time (never the stream).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'

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
}

const encoder = new TextEncoder()

/**
 * The end of the first event in `text` at or after `from` (an event start): the index just past
 * the blank line that ends it, or -1 when no complete event is there yet. Line ends are LF, CRLF
 * or CR (WHATWG SSE); a CR at the very end is undecided (it may be half of a CRLF) unless the
 * stream ended (`atEnd`).
 * `searchFrom` skips text already known to hold no boundary (LF-only text).
 */
function eventEnd(text: string, from: number, hasCr: boolean, searchFrom: number, atEnd: boolean): number {
  if (!hasCr) {
    if (text.charCodeAt(from) === 0x0a) return from + 1 // a blank line right at the start
    const i = text.indexOf('\n\n', Math.max(from, searchFrom))
    return i < 0 ? -1 : i + 2
  }
  let lineStart = from
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== 0x0a && c !== 0x0d) continue
    let next = i + 1
    if (c === 0x0d) {
      if (next === text.length && !atEnd) return -1
      if (text.charCodeAt(next) === 0x0a) next++
    }
    if (i === lineStart) return next
    lineStart = next
    i = next - 1
  }
  return -1
}

/**
 * Re-emits an SSE stream event by event, letting `hooks` rewrite each event's data and append
 * events at the end. Events the hooks leave alone are relayed as their exact text (comments,
 * `retry`, `id:`-only blocks, CRLF and field order included); a rewritten event is serialised
 * again with its id and event name. Errors of the source end the output cleanly after
 * `onEnd("error")`; nothing is buffered beyond the event being read: each chunk read from the
 * origin is split into events and every complete one is enqueued before the next chunk is read.
 *
 * Event boundaries are found here and only the events that `hooks.mayChange` selects go through
 * eventsource-parser: the library gives no raw event text, and parsing and re-serialising every
 * progress event was most of the edge's CPU on long streams (issue 7).
 * @param source the origin's body (UTF-8 bytes)
 * @returns the client's body (UTF-8 bytes)
 */
export function transformSse(source: ReadableStream<Uint8Array>, hooks: SseHooks, options: SseOptions = {}): ReadableStream<Uint8Array> {
  // A BOM is kept as text (and so relayed as bytes; the client's parser drops it). Chunks that
  // begin and end on a character boundary are decoded without the streaming decoder: Node 20's
  // streaming decode of a 15 kB chunk is 14 us against 1.7 us for a plain one.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  const plain = new TextDecoder('utf-8', { ignoreBOM: true })
  let out: ReadableStreamDefaultController<Uint8Array>
  const pending: (string | Uint8Array)[] = []
  let ended = false
  // Text of the event being received (incomplete).
  let carry = ''
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
    // A block ending in CR ends with a complete line end (eventEnd saw what follows), but the
    // parser would wait for a possible LF: CR+LF is the same single line end.
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
   * Splits the text received so far into complete events: runs of events without a watched
   * substring are relayed as one slice (of the chunk's own bytes when `bytes` holds exactly
   * `text`), the others go through {@link event}; the incomplete rest waits in `carry`.
   */
  const take = (text: string, final: boolean, bytes?: Uint8Array) => {
    // The carry holds no boundary: in LF-only text the search resumes near its end (an event
    // arriving in many small chunks is not scanned again from its start each time).
    const searchFrom = Math.max(0, carry.length - 1)
    const all = carry ? carry + text : text
    // Text offsets are byte offsets when the chunk is ASCII and starts on a character boundary.
    const same = bytes !== undefined && !carry && lastByteAscii && bytes.length === text.length
    if (bytes?.length) lastByteAscii = bytes[bytes.length - 1]! < 0x80
    const hasCr = all.includes('\r')
    let at = 0
    let rawFrom = 0
    let watched = nextWatched(all, 0)
    const relayRaw = (to: number) => {
      if (to > rawFrom) pending.push(same ? bytes!.subarray(rawFrom, to) : all.slice(rawFrom, to))
    }
    for (;;) {
      const end = eventEnd(all, at, hasCr, at === 0 ? searchFrom : at, final)
      if (end < 0) break
      if (watched >= 0 && watched < end) {
        relayRaw(at)
        event(all.slice(at, end))
        rawFrom = end
        watched = nextWatched(all, end)
      }
      at = end
    }
    relayRaw(at)
    carry = all.slice(at)
    if (final && carry) {
      // The stream ended inside an event: it is dispatched as if a blank line followed.
      const rest = carry + '\n\n'
      carry = ''
      if (nextWatched(rest, 0) >= 0) event(rest)
      else pending.push(rest)
    }
  }
  const reader = source.getReader()
  /** Sends what is pending as one chunk: relayed byte slices copied, edge text encoded. */
  const flush = () => {
    if (pending.length === 0) return
    if (pending.length === 1 && typeof pending[0] !== 'string') out.enqueue(pending[0]!)
    else if (pending.every((p) => typeof p === 'string')) out.enqueue(encoder.encode(pending.join('')))
    else {
      const parts = pending.map((p) => (typeof p === 'string' ? encoder.encode(p) : p))
      const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
      let o = 0
      for (const p of parts) {
        joined.set(p, o)
        o += p.length
      }
      out.enqueue(joined)
    }
    pending.length = 0
  }
  const finish = (reason: SseEndReason, error?: unknown) => {
    if (ended) return
    ended = true
    flush()
    const tail = hooks.onEnd(reason, error)
    if (tail.length) out.enqueue(encoder.encode(tail.map(formatEvent).join('')))
    out.close()
  }
  const idleMs = options.idleMs ?? 0
  return new ReadableStream<Uint8Array>({
    start(c) {
      out = c
    },
    async pull() {
      // Reads until at least one complete event (or the end) was enqueued: a pull that enqueues
      // nothing is not called again by the stream, so a chunk holding half an event must not end it.
      while (!ended) {
        let timer: ReturnType<typeof setTimeout> | undefined
        try {
          const read = reader.read()
          const next = idleMs > 0 ? await Promise.race([read, new Promise<'idle'>((r) => (timer = setTimeout(() => r('idle'), idleMs)))]) : await read
          if (next === 'idle') {
            reader.cancel().catch(() => undefined)
            finish('timeout')
            return
          }
          const { value, done } = next
          if (done) {
            take(decoder.decode(), true)
            finish('end')
            return
          }
          const whole = lastByteAscii && value.length > 0 && value[value.length - 1]! < 0x80
          take(whole ? plain.decode(value) : decoder.decode(value, { stream: true }), false, value)
          if (pending.length) {
            flush()
            return
          }
        } catch (e) {
          finish('error', e)
          return
        } finally {
          clearTimeout(timer)
        }
      }
    },
    cancel(reason) {
      if (!ended) {
        ended = true
        hooks.onEnd('cancel')
      }
      return reader.cancel(reason)
    },
  })
}

/**
 * Reads the events of an SSE body one by one (for the edge's own client session).
 * @param source UTF-8 bytes of an SSE body
 */
export async function* readSseEvents(source: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  const queue: SseEvent[] = []
  const parser = createParser({
    onEvent(msg) {
      queue.push({ data: msg.data, ...(msg.id !== undefined ? { id: msg.id } : {}), ...(msg.event !== undefined ? { event: msg.event } : {}) })
    },
  })
  const reader = source.getReader()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) {
        parser.feed('\n\n')
        yield* queue.splice(0)
        return
      }
      parser.feed(decoder.decode(value, { stream: true }))
      yield* queue.splice(0)
    }
  } finally {
    reader.cancel().catch(() => undefined)
  }
}
