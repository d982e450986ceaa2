/**
 * The bare Worker (issue 18): the floor of every workerd scenario. Runs in the same workerd as
 * the edge Worker (scripts/bench/worker.ts routes `/bare/*` to it) and forwards each request
 * with `fetch` to `ORIGIN_BASE` + the path after `/bare`, returning the origin's reply as it is:
 * nothing read, parsed, checked or logged.
 */
interface Env {
  ORIGIN_BASE: string
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url)
    return fetch(env.ORIGIN_BASE + url.pathname.slice('/bare'.length), request)
  },
}
