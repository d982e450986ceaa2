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
import { formatEvent, type SseEvent } from './sse-event'

/**
 * Upper bound of text the watcher holds for one incomplete event, in UTF-16 code units. Beyond
 * it the watcher's parser is reset (the relayed bytes are unaffected; only that event goes
 * unwatched), so an origin sending one endless line cannot grow the edge's memory.
 */
/**
 * The last event of a stream (GET, or a 2026-07-28 listen stream) whose access token expired: a named event (clients reading
 * JSON-RPC `message` events skip it) whose data says why the stream ended and what to do.
 */
export const TOKEN_EXPIRED_EVENT = {
  event: 'mcp-edge-stream-end',
  data: JSON.stringify({
    reason: 'token_expired',
    message: 'The access token this stream was opened with has expired (its exp plus the edge clock leeway); open the stream again with a new access token.',
  }),
} as const

export const MAX_WATCHED_EVENT = 1024 * 1024

/** Longest delay one timer takes (setTimeout's bound, ms). */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Relays `source` unchanged and calls `onEvent` for each complete event, before the chunk that
 * completes it is passed on. `onEvent` must not throw (errors are swallowed: watching never
 * breaks the stream). Cancelling the result cancels `source`. A failed read of `source` ends the
 * result (done) instead of failing it.
 * @param source UTF-8 bytes of an SSE body
 * @param maxMs longest the stream may last (`STREAM_MAX_MS`), in ms; 0: unbounded
 * @param end a deadline of the edge's own (ms since the epoch, such as the expiry of the token
 *   the stream was opened with) and the last event to send when it comes: past `atMs` the
 *   origin's stream is cancelled and `event` is the last thing the client reads. It always has an
 *   event name, so a client that reads JSON-RPC from `message` events skips it; when the relay
 *   stopped inside one of the origin's events, a line end first closes that event's open line
 *   and the rest is absorbed into this named event, never dispatched as a message
 * @returns the same bytes, chunk for chunk
 */
export function watchSse(source: ByteSource, onEvent: (ev: SseEvent) => void, maxMs = 0, end?: { atMs: number; event: SseEvent & { event: string } }): ByteSource {
  const decoder = new TextDecoder()
  // STREAM_MAX_MS: past it the stream ends (the origin's is cancelled); the client reconnects.
  const maxBy = maxMs > 0 ? Date.now() + maxMs : Infinity
  const endBy = end !== undefined ? Math.min(maxBy, end.atMs) : maxBy
  let held = 0
  // The relayed text ends inside a line (no CR or LF last): the final event must start on a new line.
  let midLine = false
  let ended = false
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
      if (ended) return { done: true }
      let timer: ReturnType<typeof setTimeout> | undefined
      const read = source.read()
      let r: Awaited<typeof read> | 'late'
      try {
        if (endBy === Infinity) r = await read
        else
          for (;;) {
            // A timer holds at most 2^31-1 ms (about 24.8 days; a longer delay fires at once), so a
            // far deadline (a token's exp a year away with STREAM_MAX_MS=0) is waited for in steps.
            const wait = Math.min(MAX_TIMER_MS, Math.max(1, endBy - Date.now()))
            r = await Promise.race([read, new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), wait)))]).finally(() => clearTimeout(timer))
            if (r !== 'late' || Date.now() >= endBy) break
          }
      } catch {
        // The origin's stream failed or was aborted (its connection lost, the graceful stop's
        // expiry): a stream without JSON-RPC ids has nothing to answer, so it ends after the last
        // whole chunk relayed and the client reconnects. Thrown on, the carrier wrote its own error
        // text into the stream and a stack trace on stderr (@hono/node-server).
        return { done: true }
      }
      if (r === 'late') {
        read.catch(() => undefined)
        source.cancel().catch(() => undefined)
        ended = true
        if (end !== undefined && endBy === end.atMs) return { done: false, value: new TextEncoder().encode((midLine ? '\n' : '') + formatEvent(end.event)) }
        return { done: true }
      }
      if (r.done) return r
      const text = decoder.decode(r.value, { stream: true })
      if (text.length > 0) {
        const last = text.charCodeAt(text.length - 1)
        midLine = last !== 10 && last !== 13
      }
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
