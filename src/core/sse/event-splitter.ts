/**
 * @module core/sse/event-splitter
 * Finds the event boundaries of an SSE byte stream (WHATWG HTML "Server-sent events": an event
 * ends with a blank line; line ends are LF, CRLF or CR) without parsing the events' fields. Runs
 * of complete events that cannot need a change are handed on as one raw piece (the chunk's own
 * bytes when they can be), the others as one event's text each; an incomplete event is held until
 * it completes. Holds at most one incomplete event (never the stream). Pure state, no I/O.
 *
 * Written here because eventsource-parser gives no raw event text: relaying untouched events as
 * their own bytes is what keeps long streams cheap (measured with `npm run bench`, docs/performance.md).
 */

/** Longest alternative a `watch` pattern may have: the overlap kept when an event spans chunks. */
export const MAX_WATCH_LENGTH = 64

/** Default bound of one SSE event (16 Mi code units, the default `MAX_REPLY_BYTES`). */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024

/**
 * Where the splitter stands between two characters of the stream: `lineEmpty` when nothing of the
 * current line was read yet (a line end here is a blank line, which ends an event), `afterCr`
 * when the last character was a CR (an LF right after it belongs to the same line end: CRLF).
 */
export interface LineState {
  lineEmpty: boolean
  afterCr: boolean
}

/**
 * The end of the first event at or after `from` in `text`: the index just past the blank line's
 * line end, or -1, with `st` updated to the state at the end of `text`. A CR ends its line at
 * once: an LF arriving after it (even in the next chunk) is swallowed as the rest of that CRLF.
 * O(length - from).
 * @param hasCr whether `text` holds a CR at all (without one, a plain `\n\n` search is enough)
 */
export function eventEnd(text: string, from: number, st: LineState, hasCr: boolean): number {
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

/** Where the splitter's output goes, in stream order. */
export interface SplitSink {
  /** Text or bytes to relay exactly as they came (complete events nobody needs to look at, or line ends). */
  raw(piece: string | Uint8Array): void
  /** One complete event's text (ending with its blank line) that may need a change. */
  event(text: string): void
}

/** Options of {@link SseEventSplitter}. */
export interface SplitterOptions {
  /**
   * What may mark an event needing a change (a pattern of literal alternatives, each at most
   * {@link MAX_WATCH_LENGTH} characters): only events whose text matches go to `sink.event`.
   * Absent: every event does.
   */
  watch?: RegExp
  /** Upper bound of one event's text, in UTF-16 code units; past it {@link SseEventSplitter.tooLarge} is set. Default {@link MAX_EVENT_CHARS}. */
  maxEventChars?: number
}

/**
 * Splits the chunks of one SSE stream into raw pieces and events (see the module comment). Feed
 * each chunk with {@link push} and the end with {@link end}; output goes to the sink as it is found.
 */
export class SseEventSplitter {
  // Chunks that begin and end on a character boundary are decoded without the streaming decoder:
  // Node 20's streaming decode of a 15 kB chunk is 14 us against 1.7 us for a plain one. Both
  // keep a BOM as U+FEFF; the one at the start of the stream is dropped (eventsource-parser
  // only recognises it as three bytes' worth of text, and the edge must read the first event).
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  private readonly plain = new TextDecoder('utf-8', { ignoreBOM: true })
  private atStart = true
  // Whether the previous chunk ended with an ASCII byte (then no UTF-8 sequence spans the cut).
  private lastByteAscii = true
  // The event being received (incomplete): its text in pieces, their length, whether a watched
  // pattern was seen in it, and its last characters (a pattern may span two chunks).
  private carry: string[] = []
  private carryLength = 0
  private carryWatched = false
  private carryTail = ''
  private readonly line: LineState = { lineEmpty: true, afterCr: false }
  // One private global copy of the pattern (its lastIndex is this stream's own state); one
  // regular-expression scan finds the first of the alternatives (4 indexOf calls over a 15 kB
  // chunk cost 21 us, the scan 6 us on Node 20).
  private readonly watch: RegExp | undefined
  private readonly maxEvent: number
  /** Set once the event being received is longer than `maxEventChars` (the caller ends the stream). */
  tooLarge = false

  constructor(
    private readonly sink: SplitSink,
    options: SplitterOptions = {}
  ) {
    this.watch = options.watch ? new RegExp(options.watch.source, 'g') : undefined
    this.maxEvent = options.maxEventChars ?? MAX_EVENT_CHARS
  }

  /** One chunk of the stream's bytes (UTF-8; a character may be cut between two chunks). */
  push(value: Uint8Array): void {
    const whole = this.lastByteAscii && value.length > 0 && value[value.length - 1]! < 0x80
    this.take(whole ? this.plain.decode(value) : this.decoder.decode(value, { stream: true }), false, value)
  }

  /** The stream ended: what is left is handed on, an event cut off by the end as an event. */
  end(): void {
    this.take(this.decoder.decode(), true)
  }

  /** The first place at or after `from` where the watched pattern matches (-1: none; `from` when every event is watched). */
  private nextWatched(text: string, from: number): number {
    if (!this.watch) return from
    this.watch.lastIndex = from
    const m = this.watch.exec(text)
    return m ? m.index : -1
  }

  /**
   * The stream ended inside an event (no blank line after it): the event is completed with the
   * line ends it lacks and handed on as an event, watched or not (one parse at the end of a
   * stream), so an origin that forgets the last blank line still has its answer read, and an
   * event cut off by the stream's end does not reach the client as half a JSON-RPC message
   * (docs/reliability.md). Text holding only line ends (the LF of a CRLF) has nothing to dispatch.
   */
  private endInside(text: string): void {
    if (/^[\r\n]*$/.test(text)) return void this.sink.raw(text)
    this.sink.event(text + (this.line.lineEmpty && !this.line.afterCr ? '\n' : '\n\n'))
  }

  /** Holds `rest`, the start of an event, until the next chunk. */
  private hold(rest: string, watched: boolean): void {
    this.carry = [rest]
    this.carryLength = rest.length
    this.carryWatched = watched
    this.carryTail = rest.slice(-MAX_WATCH_LENGTH)
    if (this.carryLength > this.maxEvent) this.tooLarge = true
  }

  /**
   * Splits newly received text into events. Runs of complete events without a watched pattern
   * are relayed as one slice (of the chunk's own bytes when `bytes` holds exactly `text`), the
   * others go to `sink.event`; an incomplete event waits in `carry`. Every character is scanned
   * once (a large event arriving in small chunks costs its length, not its square).
   */
  private take(text: string, final: boolean, bytes?: Uint8Array): void {
    const { sink, line } = this
    const endsAscii = bytes?.length ? bytes[bytes.length - 1]! < 0x80 : this.lastByteAscii
    if (this.atStart && text.length > 0) {
      this.atStart = false
      if (text.charCodeAt(0) === 0xfeff) {
        text = text.slice(1)
        bytes = undefined
      }
    }
    // Text offsets are byte offsets when the chunk is ASCII and starts on a character boundary.
    const same = bytes !== undefined && this.carryLength === 0 && this.lastByteAscii && bytes.length === text.length
    this.lastByteAscii = endsAscii
    const hasCr = text.includes('\r')
    let at = 0
    if (this.carryLength > 0) {
      // The event in `carry` goes on in this text.
      const end = eventEnd(text, 0, line, hasCr)
      const upTo = end < 0 ? text.length : end
      const watched = this.carryWatched || this.nextWatched(this.carryTail + text.slice(0, upTo), 0) >= 0
      if (end < 0) {
        this.carry.push(text)
        this.carryLength += text.length
        this.carryWatched = watched
        this.carryTail = (this.carryTail + text).slice(-MAX_WATCH_LENGTH)
        if (this.carryLength > this.maxEvent) this.tooLarge = true
        if (!final) return
        text = ''
      } else {
        this.carry.push(text.slice(0, end))
        at = end
      }
      const whole = this.carry.join('')
      this.carry = []
      this.carryLength = 0
      this.carryWatched = false
      this.carryTail = ''
      if (end < 0) return this.endInside(whole)
      if (watched) sink.event(whole)
      else sink.raw(whole)
      line.lineEmpty = true
    }
    let rawFrom = at
    let watched = this.nextWatched(text, at)
    const relayRaw = (to: number) => {
      if (to > rawFrom) sink.raw(same ? bytes!.subarray(rawFrom, to) : text.slice(rawFrom, to))
    }
    for (;;) {
      const end = eventEnd(text, at, line, hasCr)
      if (end < 0) break
      if (watched >= 0 && watched < end) {
        relayRaw(at)
        sink.event(text.slice(at, end))
        rawFrom = end
        watched = this.nextWatched(text, end)
      }
      line.lineEmpty = true
      at = end
    }
    relayRaw(at)
    if (at < text.length) {
      const rest = text.slice(at)
      if (final) return this.endInside(rest)
      this.hold(rest, watched >= 0)
    }
  }
}
