/**
 * The bare Worker: the floor of every workerd scenario. Runs in the same workerd as
 * the edge Worker (scripts/bench/worker.ts routes `/bare/*` to it) and forwards each request
 * with `fetch` to `ORIGIN_BASE` + the path after `/bare`, returning the origin's reply: nothing
 * parsed, checked or logged. The binding `BARE_BODY` picks how (docs/performance.md, "The
 * floors"): `whole` (the default) reads the request body and the reply whole and sends the two
 * headers the edge forwards, as the edge Worker does with JSON; `buffer` reads the request body
 * whole and forwards every header, returning the origin's reply as a stream; `stream` is
 * `fetch(url, request)`. On the loaded machine none of the three was faster beyond noise.
 */
interface Env {
  ORIGIN_BASE: string
  BARE_BODY?: string
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = env.ORIGIN_BASE + new URL(request.url).pathname.slice('/bare'.length)
    if (env.BARE_BODY === 'stream') return fetch(url, request)
    if (env.BARE_BODY === 'buffer') return fetch(url, { method: request.method, headers: request.headers, body: await request.arrayBuffer() })
    // `whole` (the default): both bodies read whole, so the reply goes out with its length.
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: request.headers.get('accept') ?? 'application/json' },
      body: await request.text(),
    })
    return new Response(await reply.arrayBuffer(), { status: reply.status, headers: { 'content-type': reply.headers.get('content-type') ?? 'application/json' } })
  },
}
