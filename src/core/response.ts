/**
 * @module response
 * What the core answers with: the parts of one HTTP response, as plain data. The Hono app turns
 * them into a web `Response` (`toWebResponse`); the Node entry writes them straight to
 * `node:http`'s `ServerResponse` without building web objects at all (src/adapters/node/
 * post-listener.ts: about 25 us of CPU per POST on Node 20, issue 7).
 */

/**
 * One HTTP response of the edge.
 * - `status`: the HTTP status code
 * - `headers`: lower-case names; owned by this response (callers may change it before writing)
 * - `body`: a complete text (UTF-8 on the wire), a byte stream (SSE relays, pass-through), or none
 */
export interface EdgeResponse {
  status: number
  headers: Record<string, string>
  body: string | ReadableStream<Uint8Array> | null
}

/** Builds an {@link EdgeResponse}; `headers` is taken as is (pass a fresh object). */
export function edgeResponse(body: EdgeResponse['body'], status: number, headers: Record<string, string> = {}): EdgeResponse {
  return { status, headers, body }
}

/** The web `Response` for an {@link EdgeResponse} (Workers, and the Hono routes on Node). */
export function toWebResponse(r: EdgeResponse): Response {
  return new Response(r.body, { status: r.status, headers: r.headers })
}

/**
 * The request headers the core reads: web `Headers` satisfy it, and so does the Node entry's view
 * of `IncomingMessage.headers`. `get` takes a lower-case name and returns null when absent.
 */
export interface RequestHeaders {
  get(name: string): string | null
  forEach(fn: (value: string, name: string) => void): void
}
