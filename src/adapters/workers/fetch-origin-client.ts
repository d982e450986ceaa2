/**
 * @module adapters/workers/fetch-origin-client
 * {@link OriginClient} over the platform `fetch` (native and cheap on Workers). Runtime-neutral,
 * so tests can also use it on Node.
 */
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginClient, type OriginReply } from '../../core/ports'

/**
 * Reads a body's bytes, at most `max` bytes (fetch's `arrayBuffer()` has no bound); beyond it the
 * body is cancelled and {@link OriginReplyTooLargeError} thrown.
 */
async function boundedBytes(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0)
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let n = 0
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    n += value.byteLength
    if (n > max) {
      reader.cancel().catch(() => undefined)
      throw new OriginReplyTooLargeError()
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const all = new Uint8Array(n)
  let at = 0
  for (const c of chunks) {
    all.set(c, at)
    at += c.byteLength
  }
  return all
}

/** Creates a fetch-based origin client. */
export function createFetchOriginClient(fetchImpl: typeof fetch = (...a) => fetch(...a)): OriginClient {
  return async (req): Promise<OriginReply> => {
    const controller = new AbortController()
    let timedOut = false
    const timer = req.timeoutMs > 0 ? setTimeout(() => ((timedOut = true), controller.abort()), req.timeoutMs) : undefined
    // The caller's signal (client gone) aborts the same request as the timeout.
    const onAbort = () => controller.abort()
    if (req.signal?.aborted) controller.abort()
    else req.signal?.addEventListener('abort', onAbort, { once: true })
    let res: Response
    try {
      res = await fetchImpl(req.url, { method: req.method, headers: req.headers, body: req.body ?? null, signal: controller.signal })
    } catch (e) {
      clearTimeout(timer)
      req.signal?.removeEventListener('abort', onAbort)
      if (timedOut) throw new OriginTimeoutError()
      throw e
    }
    const headers: Record<string, string> = {}
    res.headers.forEach((v, k) => (headers[k] = v))
    const ct = headers['content-type'] ?? ''
    // An SSE body may legitimately stay open past the timeout: only the headers are timed.
    if (ct.includes('text/event-stream')) clearTimeout(timer)
    const max = req.maxReplyBytes
    const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : NaN
    const bytes = async (): Promise<Uint8Array> => {
      try {
        if (max === undefined) return new Uint8Array(await res.arrayBuffer())
        // A declared length beyond the bound is refused unread. Otherwise the bytes are counted
        // as read: fetch may decode a compressed body, so a declared length does not bound it.
        if (declared > max) {
          res.body?.cancel().catch(() => undefined)
          throw new OriginReplyTooLargeError()
        }
        return await boundedBytes(res.body, max)
      } catch (e) {
        if (timedOut) throw new OriginTimeoutError()
        throw e
      } finally {
        clearTimeout(timer)
        req.signal?.removeEventListener('abort', onAbort)
      }
    }
    return {
      status: res.status,
      headers,
      bytes,
      // UTF-8 with a leading BOM dropped and bad sequences replaced, as fetch's text() decodes.
      text: async () => new TextDecoder().decode(await bytes()),
      stream: () => res.body?.getReader() ?? null,
      discard: () => {
        clearTimeout(timer)
        req.signal?.removeEventListener('abort', onAbort)
        res.body?.cancel().catch(() => undefined)
      },
    }
  }
}
