/**
 * @module core/sse/sse-watch
 * Watches an SSE stream without changing it (WHATWG HTML "Server-sent events"): every chunk the
 * origin sends is relayed as the same bytes, and a decoded copy is fed to eventsource-parser so a
 * caller can react to events (the edge: `notifications/tools/list_changed` on the standalone GET
 * stream). Unlike `transformSse` (sse-transform.ts), nothing is re-serialised, so the client sees exactly
 * the origin's bytes (comments, CRLF, field order, `id:`-only blocks included). Unlike a `tee()`,
 * there is one reader: back-pressure from the client reaches the origin and nothing queues up.
 */
import { createParser } from 'eventsource-parser'
import type { ByteSource } from '../edge-response'
import type { SseEvent } from './sse-transform'

/**
 * Upper bound of text the watcher holds for one incomplete event, in UTF-16 code units. Beyond
 * it the watcher's parser is reset (the relayed bytes are unaffected; only that event goes
 * unwatched), so an origin sending one endless line cannot grow the edge's memory.
 */
export const MAX_WATCHED_EVENT = 1024 * 1024

/**
 * Relays `source` unchanged and calls `onEvent` for each complete event, before the chunk that
 * completes it is passed on. `onEvent` must not throw (errors are swallowed: watching never
 * breaks the stream). Cancelling the result cancels `source`.
 * @param source UTF-8 bytes of an SSE body
 * @returns the same bytes, chunk for chunk
 */
export function watchSse(source: ByteSource, onEvent: (ev: SseEvent) => void): ByteSource {
  const decoder = new TextDecoder()
  let held = 0
  const parser = createParser({
    onEvent(msg) {
      held = 0
      try {
        onEvent({ data: msg.data, ...(msg.id !== undefined ? { id: msg.id } : {}), ...(msg.event !== undefined ? { event: msg.event } : {}) })
      } catch {
        // the relay goes on
      }
    },
  })
  return {
    async read() {
      const r = await source.read()
      if (r.done) return r
      const text = decoder.decode(r.value, { stream: true })
      held += text.length
      try {
        parser.feed(text)
      } catch {
        parser.reset()
      }
      if (held > MAX_WATCHED_EVENT) {
        parser.reset()
        held = 0
      }
      return r
    },
    cancel: (reason) => source.cancel(reason),
  }
}
