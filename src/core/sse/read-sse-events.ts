/**
 * @module core/sse/read-sse-events
 * Reads an SSE body as events, for the edge's own client session with an origin
 * (forwarding/tool-list-pull.ts). Field parsing is eventsource-parser's.
 */
import { createParser } from 'eventsource-parser'
import type { ByteSource } from '../edge-response'
import type { SseEvent } from './sse-event'

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
