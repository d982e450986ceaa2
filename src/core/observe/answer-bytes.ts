/**
 * @module core/observe/answer-bytes
 * The byte and stream figures of one answer, for the metrics port ({@link EdgeMetrics}):
 * request and answer bytes per origin, and the SSE streams open to clients. Both HTTP paths (the
 * Hono routes and the Node POST listener) pass their answers through {@link observeAnswer}.
 * Pure: wraps a {@link ByteSource} without reading ahead.
 */
import type { EdgeMetrics } from '../ports'
import type { ByteSource, EdgeResponse } from '../edge-response'

/** UTF-8 length of a string in bytes, without encoding it. */
export function utf8Length(s: string): number {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) n += 1
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      // A surrogate pair: 4 bytes for 2 UTF-16 units.
      n += 2
      i++
    } else n += 2
  }
  return n
}

/**
 * Counts an answer for `origin`: `requestBytes` in, the body out (a text at once, a stream as it
 * is read), and an SSE stream as open until it ends or is cancelled.
 * @param requestBytes the POST body's length in bytes (0 for GET/DELETE)
 * @returns the same response; a stream body is replaced by a counting wrapper
 */
export function observeAnswer(metrics: EdgeMetrics, origin: string, requestBytes: number, r: EdgeResponse): EdgeResponse {
  if (requestBytes > 0) metrics.countBytes(origin, 'in', requestBytes)
  const body = r.body
  if (typeof body === 'string') {
    metrics.countBytes(origin, 'out', utf8Length(body))
    return r
  }
  if (body === null) return r
  const sse = (r.headers['content-type'] ?? '').includes('text/event-stream')
  r.body = countingSource(body, metrics, origin, sse)
  return r
}

function countingSource(source: ByteSource, metrics: EdgeMetrics, origin: string, sse: boolean): ByteSource {
  let open = sse
  if (sse) metrics.streamOpen(origin, 1)
  const end = () => {
    if (!open) return
    open = false
    metrics.streamOpen(origin, -1)
  }
  return {
    async read() {
      try {
        const r = await source.read()
        if (r.done) end()
        else metrics.countBytes(origin, 'out', r.value.length)
        return r
      } catch (e) {
        end()
        throw e
      }
    },
    cancel(reason) {
      end()
      return source.cancel(reason)
    },
  }
}
