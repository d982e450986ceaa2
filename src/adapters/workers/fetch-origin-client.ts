/**
 * @module adapters/workers/fetch-origin-client
 * {@link OriginClient} over the platform `fetch` (native and cheap on Workers). Runtime-neutral,
 * so tests can also use it on Node.
 */
import { OriginTimeoutError, type OriginClient, type OriginReply } from '../../core/ports'

/** Creates a fetch-based origin client. */
export function createFetchOriginClient(fetchImpl: typeof fetch = (...a) => fetch(...a)): OriginClient {
  return async (req): Promise<OriginReply> => {
    const controller = new AbortController()
    let timedOut = false
    const timer = req.timeoutMs > 0 ? setTimeout(() => ((timedOut = true), controller.abort()), req.timeoutMs) : undefined
    let res: Response
    try {
      res = await fetchImpl(req.url, { method: req.method, headers: req.headers, body: req.body ?? null, signal: controller.signal })
    } catch (e) {
      clearTimeout(timer)
      if (timedOut) throw new OriginTimeoutError()
      throw e
    }
    const headers: Record<string, string> = {}
    res.headers.forEach((v, k) => (headers[k] = v))
    const ct = headers['content-type'] ?? ''
    // An SSE body may legitimately stay open past the timeout: only the headers are timed.
    if (ct.includes('text/event-stream')) clearTimeout(timer)
    return {
      status: res.status,
      headers,
      text: async () => {
        try {
          return await res.text()
        } catch (e) {
          if (timedOut) throw new OriginTimeoutError()
          throw e
        } finally {
          clearTimeout(timer)
        }
      },
      stream: () => res.body,
      discard: () => {
        clearTimeout(timer)
        res.body?.cancel().catch(() => undefined)
      },
    }
  }
}
