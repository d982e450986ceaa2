/**
 * @module sse
 * Server-Sent Events in and out (WHATWG HTML "Server-sent events"; MCP Streamable HTTP).
 * Parsing uses the eventsource-parser library; this module only re-serialises events and wires
 * the parser into a TransformStream that holds at most one event at a time (never the stream).
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
   * Returns the data to send instead (same id and event name), `undefined` to keep the event as
   * it came, or `null` to drop its data (an `id` is still sent, so resumption is not lost).
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
 * Re-emits an SSE stream event by event, letting `hooks` rewrite each event's data and append
 * events at the end. Comments and `retry` fields pass through in order. Errors of the source end
 * the output cleanly after `onEnd("error")`; nothing is buffered beyond the event being parsed:
 * each chunk read from the origin is parsed and every complete event in it is enqueued before
 * the next chunk is read.
 * @param source the origin's body (UTF-8 bytes)
 * @returns the client's body (UTF-8 bytes)
 */
export function transformSse(source: ReadableStream<Uint8Array>, hooks: SseHooks, options: SseOptions = {}): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder()
  let out: ReadableStreamDefaultController<Uint8Array>
  const pending: string[] = []
  let ended = false
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      const ev: SseEvent = { data: msg.data }
      if (msg.id !== undefined) ev.id = msg.id
      if (msg.event !== undefined) ev.event = msg.event
      const replaced = hooks.onEvent(ev)
      if (replaced === null) {
        if (ev.id !== undefined) pending.push(`id: ${ev.id}\n\n`)
        return
      }
      if (replaced !== undefined) ev.data = replaced
      pending.push(formatEvent(ev))
    },
    onRetry(ms: number) {
      pending.push(`retry: ${ms}\n\n`)
    },
    onComment(comment: string) {
      pending.push(`:${comment}\n\n`)
    },
  })
  const reader = source.getReader()
  const flush = () => {
    if (pending.length) {
      out.enqueue(encoder.encode(pending.join('')))
      pending.length = 0
    }
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
            parser.feed(decoder.decode())
            parser.feed('\n\n')
            finish('end')
            return
          }
          parser.feed(decoder.decode(value, { stream: true }))
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
