/**
 * The in-isolate loop of scripts/bench/worker-profile.ts (`--loop`): a Worker whose module graph
 * holds the edge Worker's bundle (`./edge.js`) and the bare Worker (`./bare.js`) side by side, and
 * that answers `POST /loop/<edge|bare>/<n><path>` by calling that Worker's own `fetch` `n` times
 * in a row with the request's headers and body (`<path>`: `/mcp[/<name>]` for the edge, the origin
 * path for the bare Worker), reading each answer whole. Every call still makes its real
 * subrequest to the bench origin; what is gone is the client's HTTP connection, so CPU per call
 * (workerd's, over `n` calls) barely moves with what else the machine runs, where the
 * end-to-end figures of a loaded 2-core machine moved by ±300 µs from run to run.
 * With the var `BENCH_LOOP_ORIGIN=memory` the origin is answered inside the isolate: the first
 * call to each origin URL is made for real and its reply kept (status, headers, bytes); every
 * later `fetch` to `BENCH_ORIGIN_BASE` gets a fresh `Response` of those bytes, for both Workers.
 * What is left is the JavaScript and the web API calls of each Worker, which a loop of compute
 * measures to a few µs where any subrequest's I/O stack moved the figures by far more.
 * Any other request goes to the edge as is.
 */
// @ts-expect-error: resolved by workerd at run time (worker-profile.ts lays out the modules).
import edge from './edge.js'
import bare from './bare-worker'

interface Env {
  BENCH_ORIGIN_BASE: string
  [name: string]: unknown
}

type Fetcher = { fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> | Response }

interface Kept {
  status: number
  headers: [string, string][]
  body: Uint8Array
}

const realFetch = globalThis.fetch
const kept = new Map<string, Promise<Kept>>()

/** `fetch` with the origin's replies kept (BENCH_LOOP_ORIGIN=memory): see the module comment. */
function memoryFetch(originBase: string): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    if (!url.startsWith(originBase)) return realFetch(input, init)
    let reply = kept.get(url)
    if (!reply) {
      reply = realFetch(input, init).then(async (res) => ({ status: res.status, headers: [...res.headers], body: new Uint8Array(await res.arrayBuffer()) }))
      kept.set(url, reply)
    }
    return reply.then((r) => new Response(r.body as Uint8Array<ArrayBuffer>, { status: r.status, headers: r.headers }))
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: unknown): Promise<Response> {
    const path = new URL(request.url).pathname
    const m = /^\/loop\/(edge|bare)\/(\d+)(\/.*)$/.exec(path)
    if (!m) return (edge as Fetcher).fetch(request, env, ctx)
    const [, which, count, rest] = m
    if (env.BENCH_LOOP_ORIGIN === 'memory' && globalThis.fetch === realFetch) globalThis.fetch = memoryFetch(env.BENCH_ORIGIN_BASE)
    const n = Number(count)
    const body = await request.text()
    const headers: Record<string, string> = {}
    request.headers.forEach((v, k) => (headers[k] = v))
    const url = which === 'edge' ? `http://127.0.0.1${rest}` : `http://127.0.0.1/bare${rest}`
    const bareEnv = { ORIGIN_BASE: env.BENCH_ORIGIN_BASE, BARE_BODY: 'whole' }
    let bytes = 0
    let status = 0
    for (let i = 0; i < n; i++) {
      const req = new Request(url, { method: 'POST', headers, body })
      const res = which === 'edge' ? await (edge as Fetcher).fetch(req, env, ctx) : await bare.fetch(req, bareEnv)
      status = res.status
      bytes += (await res.arrayBuffer()).byteLength
    }
    return new Response(JSON.stringify({ n, status, bytes }), { headers: { 'content-type': 'application/json' } })
  },
}
