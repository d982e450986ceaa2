/**
 * @module adapters/node/origin-client
 * {@link OriginClient} on Node: undici's `request` over a keep-alive pool (about 75 us of CPU per
 * call on Node 20, against about 400 us for global fetch; DESIGN.md section 9).
 */
import type { Readable } from 'node:stream'
import { Agent, request, errors } from 'undici'
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginClient, type OriginReply } from '../../core/ports'
import type { ByteSource } from '../../core/response'

/**
 * The body as a {@link ByteSource}: its async iterator, one chunk per read; cancel destroys the
 * body. No web stream: `Readable.toWeb` on Node 20 enqueues into a closed controller when the
 * client leaves in the middle of an SSE reply (that uncaught ERR_INVALID_STATE killed the
 * process, found by the benchmark), and any web stream costs about 10 us to build (issue 7).
 */
function toByteSource(body: Readable): ByteSource {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>
  return {
    read: () => it.next() as Promise<{ done: false; value: Uint8Array } | { done: true }>,
    cancel() {
      body.on('error', () => undefined) // the abort error of a body nobody reads any more
      body.destroy()
      return Promise.resolve()
    },
  }
}

/** Creates the client. `connections` bounds the pool per origin. */
export function createUndiciOriginClient(options: { connections?: number } = {}): OriginClient & { close(): Promise<void> } {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: options.connections ?? 128, pipelining: 1 })
  const client = async (req: Parameters<OriginClient>[0]): Promise<OriginReply> => {
    let res
    try {
      res = await request(req.url, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        dispatcher: agent,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
        ...(req.signal ? { signal: req.signal } : {}),
      })
    } catch (e) {
      if (e instanceof errors.HeadersTimeoutError || e instanceof errors.BodyTimeoutError) throw new OriginTimeoutError()
      throw e
    }
    const headers: Record<string, string> = {}
    const raw = res.headers
    for (const k in raw) {
      const v = raw[k]
      if (v !== undefined) headers[k] = typeof v === 'string' ? v : v.join(', ')
    }
    const body = res.body
    const max = req.maxReplyBytes
    const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : NaN
    return {
      status: res.statusCode,
      headers,
      text: async () => {
        try {
          // A declared length within the bound: undici reads exactly that many bytes.
          if (max === undefined || declared <= max) return await body.text()
          if (declared > max) throw new OriginReplyTooLargeError()
          // No length (chunked, or until close): count while reading. undici's body.text() has no bound.
          const chunks: Buffer[] = []
          let n = 0
          for await (const chunk of body as AsyncIterable<Buffer>) {
            n += chunk.length
            if (n > max) throw new OriginReplyTooLargeError()
            chunks.push(chunk)
          }
          return new TextDecoder().decode(Buffer.concat(chunks))
        } catch (e) {
          if (e instanceof OriginReplyTooLargeError) body.destroy()
          if (e instanceof errors.BodyTimeoutError) throw new OriginTimeoutError()
          throw e
        }
      },
      stream: () => toByteSource(body),
      discard: () => {
        body.dump().catch(() => undefined)
      },
    }
  }
  return Object.assign(client, { close: () => agent.close() })
}
