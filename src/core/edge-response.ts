/**
 * @module core/edge-response
 * What the core answers with: the parts of one HTTP response, as plain data. The Hono app turns
 * them into a web `Response` (`toWebResponse`); the Node entry writes them straight to
 * `node:http`'s `ServerResponse` without building web objects at all (src/adapters/node/
 * post-listener.ts: about 25 us of CPU per POST on Node 20, docs/performance.md).
 */

/**
 * One HTTP response of the edge.
 * - `status`: the HTTP status code
 * - `headers`: lower-case names; owned by this response (callers may change it before writing)
 * - `body`: a complete text (UTF-8 on the wire), complete bytes (an origin's JSON reply relayed
 *   unchanged, or a text once counted, core/observe/answer-bytes.ts), a {@link ByteSource} (SSE
 *   relays, pass-through), or none
 */
export interface EdgeResponse {
  status: number
  headers: Record<string, string>
  body: string | Uint8Array | ByteSource | null
}

/** True when `body` is a whole body (text or bytes), false for a stream or none. */
export function isWholeBody(body: EdgeResponse['body']): body is string | Uint8Array {
  return typeof body === 'string' || body instanceof Uint8Array
}

/**
 * A byte stream read by pulling, one chunk per `read()` (never two reads at once): the shape of
 * a `ReadableStreamDefaultReader`, which is one (Workers), and of the Node origin client's body. The
 * core streams through these instead of web `ReadableStream`s because on Node 20 each web stream
 * costs about 10 us to build plus a promise chain per chunk, and an SSE relay built two of them
 * per reply (measured with `npm run bench`, docs/performance.md); the web stream is made only where a web `Response` is ({@link toWebResponse}).
 * `cancel` stops the source (the client went away); a pending `read` then settles done or rejects.
 */
export interface ByteSource {
  read(): Promise<{ done: false; value: Uint8Array } | { done: true; value?: unknown }>
  cancel(reason?: unknown): Promise<void>
}

/** The web stream for a {@link ByteSource}: pulled one chunk at a time (nothing read ahead); cancelling it cancels the source. */
export function toReadableStream(source: ByteSource): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        const r = await source.read()
        if (r.done) c.close()
        else c.enqueue(r.value)
      },
      cancel: (reason) => source.cancel(reason),
    },
    { highWaterMark: 0 }
  )
}

/** Builds an {@link EdgeResponse}; `headers` is taken as is (pass a fresh object). */
export function edgeResponse(body: EdgeResponse['body'], status: number, headers: Record<string, string> = {}): EdgeResponse {
  return { status, headers, body }
}

/** The web `Response` for an {@link EdgeResponse} (Workers, and the Hono routes on Node). */
export function toWebResponse(r: EdgeResponse): Response {
  const b = r.body
  const body = b === null || typeof b === 'string' ? b : b instanceof Uint8Array ? (b as Uint8Array<ArrayBuffer>) : toReadableStream(b)
  return new Response(body, { status: r.status, headers: r.headers })
}

/**
 * The request headers the core reads: web `Headers` satisfy it, and so does the Node entry's view
 * of `IncomingMessage.headers`. `get` takes a lower-case name and returns null when absent.
 */
export interface RequestHeaders {
  get(name: string): string | null
  forEach(fn: (value: string, name: string) => void): void
}
