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

/** Hooks of {@link transformSse}. */
export interface SseHooks {
  /** Returns the data to send instead (same id and event name), or undefined to keep it. */
  onEvent(ev: SseEvent): string | undefined
  /** Called once when the origin's stream ends or fails; returns events to append. */
  onEnd(failed: boolean): SseEvent[]
}

const encoder = new TextEncoder()

/**
 * Re-emits an SSE stream event by event, letting `hooks` rewrite each event's data and append
 * events at the end. Comments and `retry` fields pass through in order. Errors of the source end
 * the output cleanly after `onEnd(true)`; nothing is buffered beyond the event being parsed.
 * @param source the origin's body (UTF-8 bytes)
 * @returns the client's body (UTF-8 bytes)
 */
export function transformSse(source: ReadableStream<Uint8Array>, hooks: SseHooks): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder()
  let out: ReadableStreamDefaultController<Uint8Array>
  const pending: string[] = []
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      const ev: SseEvent = { data: msg.data }
      if (msg.id !== undefined) ev.id = msg.id
      if (msg.event !== undefined) ev.event = msg.event
      const replaced = hooks.onEvent(ev)
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
  const finish = (failed: boolean) => {
    flush()
    const tail = hooks.onEnd(failed)
    if (tail.length) out.enqueue(encoder.encode(tail.map(formatEvent).join('')))
    out.close()
  }
  return new ReadableStream<Uint8Array>({
    start(c) {
      out = c
    },
    async pull() {
      try {
        // Read until at least one event is ready: a pull that enqueues nothing is not called again
        // (WHATWG Streams, pullAgain), so a chunk ending mid-event would stall the client forever.
        while (pending.length === 0) {
          const { value, done } = await reader.read()
          if (done) {
            parser.feed(decoder.decode())
            parser.feed('\n\n')
            finish(false)
            return
          }
          parser.feed(decoder.decode(value, { stream: true }))
        }
        flush()
      } catch {
        finish(true)
      }
    },
    cancel(reason) {
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
