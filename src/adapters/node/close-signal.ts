/**
 * @module adapters/node/close-signal
 * The client-gone signal of a Node response, apart from the listener (post-listener.ts) so the
 * package's Node build (node-edge.ts) gets it without loading @hono/node-server.
 */
import type { ServerResponse } from 'node:http'
import { LinkSignal } from '../../core/client-signal'

/**
 * The client-gone signal on Node (both routes): fires when the response's socket closes before
 * the response finished, and aborts the origin call. Built on the response's `close` event with a
 * plain listener list ({@link LinkSignal}), not on a web `request.signal`, whose AbortController
 * costs tens of microseconds per POST on Node 20 once listeners are attached (measured in a CPU profile of the
 * forwarded path; docs/performance.md).
 */
export function responseCloseSignal(res: ServerResponse): LinkSignal {
  const signal = new LinkSignal()
  res.once('close', () => {
    if (!res.writableFinished) signal.abort()
  })
  return signal
}
