/**
 * @module adapters/workers/fetch-origin-client
 * {@link OriginClient} over the platform `fetch` (native and cheap on Workers). Runtime-neutral,
 * so tests can also use it on Node.
 */
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginClient, type OriginReply } from '../../core/ports'

/**
 * workerd's BYOB reader, with its extension `readAtLeast(min, view)`: one read fills `view` with
 * at least `min` bytes, or up to the end of the body.
 */
interface ReadAtLeastReader {
  readAtLeast(min: number, view: Uint8Array): Promise<{ done: boolean; value?: Uint8Array }>
  cancel(reason?: unknown): Promise<void>
}

/** A {@link ReadAtLeastReader} on `body`, or null where the runtime has none (not workerd, or not a byte stream). */
function readAtLeastReader(body: ReadableStream<Uint8Array>): ReadAtLeastReader | null {
  let reader: ReadableStreamBYOBReader
  try {
    reader = body.getReader({ mode: 'byob' })
  } catch {
    return null
  }
  if (typeof (reader as unknown as Partial<ReadAtLeastReader>).readAtLeast === 'function') return reader as unknown as ReadAtLeastReader
  reader.releaseLock()
  return null
}

/** Refuses a body past the bound: cancelled, {@link OriginReplyTooLargeError} thrown. */
function tooLarge(reader: { cancel(): Promise<void> }): never {
  reader.cancel().catch(() => undefined)
  throw new OriginReplyTooLargeError()
}

/**
 * Reads a body's bytes, at most `max` bytes (fetch's `arrayBuffer()` has no bound, and fetch may
 * decode a compressed body, so a declared length does not bound it); beyond it the body is
 * cancelled and {@link OriginReplyTooLargeError} thrown. Used for a body that is coded or has no
 * declared length (a declared, uncoded one is framed by its length and read with `arrayBuffer()`).
 *
 * On workerd the body is read into one buffer with `readAtLeast` (sized by `sizeHint`, the
 * declared length, and doubled as needed up to `max + 1`, one byte past the bound being enough to
 * refuse). Why not the default reader: workerd hands a fetched body over in 4 KiB chunks, a
 * promise turn each, and that loop cost 4.2-4.9 ms of CPU per 1 MB reply (257 reads) and 0.77 ms
 * per 100 KB against 1.2-1.3 ms and 0.37 ms for `arrayBuffer()`; `readAtLeast` into a buffer of
 * the declared size did as well as `arrayBuffer()` within noise, keeps the bound, and needs no
 * trust in Content-Length or Content-Encoding (scripts/bench/worker-profile.ts, docs/performance.md
 * "Workers"). Elsewhere: the default reader, chunk by chunk.
 * @param sizeHint the bytes expected (the declared length), when known
 */
async function boundedBytes(body: ReadableStream<Uint8Array> | null, max: number, sizeHint: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0)
  const fill = readAtLeastReader(body)
  if (fill) {
    let buf: Uint8Array = new Uint8Array(Math.min(max + 1, sizeHint >= 0 && sizeHint <= max ? sizeHint + 1 : 64 * 1024))
    let n = 0
    for (;;) {
      if (n === buf.length) {
        if (n > max) tooLarge(fill)
        const grown = new Uint8Array(Math.min(max + 1, buf.length * 2))
        grown.set(buf)
        buf = grown
      }
      // The view's buffer is transferred by the read and comes back as `value.buffer`.
      const { done, value } = await fill.readAtLeast(buf.length - n, buf.subarray(n))
      if (value) {
        buf = new Uint8Array(value.buffer)
        n += value.byteLength
      }
      if (done) break
    }
    if (n > max) tooLarge(fill)
    return buf.subarray(0, n)
  }
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let n = 0
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    n += value.byteLength
    if (n > max) tooLarge(reader)
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
        // A declared length beyond the bound is refused unread. A coded body, or one of no
        // declared length, has its bytes counted as read (boundedBytes says why), the declared
        // length only sizing the buffer.
        if (declared > max) {
          res.body?.cancel().catch(() => undefined)
          throw new OriginReplyTooLargeError()
        }
        if (declared >= 0 && headers['content-encoding'] === undefined) {
          // A body of declared length and no content coding: HTTP framing ends it at that length
          // (fetch decodes only a coded body), so `arrayBuffer()` reads at most `declared <= max`
          // bytes, in one call. On workerd the BYOB read of a small reply cost 15-25 µs of CPU
          // more (the reader, and a second `readAtLeast` to see the end; a 150-byte body,
          // scripts/bench/worker-primitives.ts); the length is checked again all the same.
          const whole = new Uint8Array(await res.arrayBuffer())
          if (whole.byteLength > max) throw new OriginReplyTooLargeError()
          return whole
        }
        return await boundedBytes(res.body, max, declared)
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
