/**
 * The Worker of scripts/bench/worker-primitives.ts: `POST /<case>/<n>` runs one of {@link CASES}
 * `n` times in a row and answers `ok`; the runner reads workerd's CPU around each request. Each
 * case is one piece of what the edge Worker does per small call (the log line, the origin timer,
 * the reply headers as a record, the reply body read), so its cost can be read apart from the
 * rest in a loop of compute, where end-to-end runs on a shared machine moved by ±100-300 µs.
 */
interface Env {
  /** The runner's loopback origin (a JSON reply of about 150 bytes with its Content-Length). */
  ORIGIN: string
}

/** A log record of the edge's shape for one graded call (`mcp.post`, one grade row). */
const RECORD = {
  level: 'info',
  msg: 'mcp.post',
  rid: '3f2a9c1e-8b7d-4e21-9a0c-5d6e7f8a9b0c',
  origin: 'default',
  era: '2025-06-18',
  status: 200,
  ms: 0,
  originMs: 0,
  grades: [{ id: '1', method: 'tools/call', tool: 'tool_10', grade: 'ok', answeredBy: 'origin', originMs: 0 }],
}
const BODY = new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }], structuredContent: { ok: true } } }))
const HEADERS = {
  'content-type': 'application/json',
  'content-length': String(BODY.length),
  date: 'Sat, 05 Dec 2026 10:00:00 GMT',
  connection: 'keep-alive',
  'keep-alive': 'timeout=60',
}

interface ReadAtLeastReader {
  readAtLeast(min: number, view: Uint8Array): Promise<{ done: boolean; value?: Uint8Array }>
}

/** The bounded read of src/adapters/workers/fetch-origin-client.ts: `readAtLeast` into a buffer of the declared size plus one. */
async function readAtLeast(res: Response, hint: number): Promise<Uint8Array> {
  const r = res.body!.getReader({ mode: 'byob' }) as unknown as ReadAtLeastReader
  let buf: Uint8Array = new Uint8Array(hint + 1)
  let n = 0
  for (;;) {
    const { done, value } = await r.readAtLeast(buf.length - n, buf.subarray(n))
    if (value) {
      buf = new Uint8Array(value.buffer)
      n += value.byteLength
    }
    if (done) break
  }
  return buf.subarray(0, n)
}

const shared = new TextDecoder()

/** The cases; `noop` is the loop itself, subtracted by the runner. */
export const CASES: Record<string, (signal: AbortSignal, env: Env) => Promise<unknown> | unknown> = {
  noop: () => undefined,
  stringify: () => JSON.stringify(RECORD),
  log: () => console.log(JSON.stringify(RECORD)),
  timer: () => {
    const c = new AbortController()
    clearTimeout(setTimeout(() => c.abort(), 30_000))
  },
  listener: (signal) => {
    const f = () => undefined
    signal.addEventListener('abort', f, { once: true })
    signal.removeEventListener('abort', f)
  },
  response: () => new Response(null, { headers: HEADERS }),
  responseHeadersRecord: () => {
    const h: Record<string, string> = {}
    new Response(null, { headers: HEADERS }).headers.forEach((v, k) => (h[k] = v))
    return h
  },
  bodyArrayBuffer: async () => new Uint8Array(await new Response(BODY, { headers: HEADERS }).arrayBuffer()),
  bodyReadAtLeast: () => readAtLeast(new Response(BODY, { headers: HEADERS }), BODY.length),
  decoderNew: () => new TextDecoder().decode(BODY),
  decoderShared: () => shared.decode(BODY),
  fetchArrayBuffer: async (_s, env) => new Uint8Array(await (await fetch(env.ORIGIN, { method: 'POST', body: '{}' })).arrayBuffer()),
  /** The origin call as the edge's client makes it (src/adapters/workers/fetch-origin-client.ts): timer, linked signal, header record. */
  fetchEdgeShape: async (signal, env) => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), 30_000)
    const onAbort = () => controller.abort()
    signal.addEventListener('abort', onAbort, { once: true })
    const res = await fetch(env.ORIGIN, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: new TextEncoder().encode('{}'),
      signal: controller.signal,
    })
    const headers: Record<string, string> = {}
    res.headers.forEach((v, k) => (headers[k] = v))
    const bytes = new Uint8Array(await res.arrayBuffer())
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
    return bytes
  },
  /** A bare fetch with only an AbortController's signal added. */
  fetchWithSignal: async (_s, env) => new Uint8Array(await (await fetch(env.ORIGIN, { method: 'POST', body: '{}', signal: new AbortController().signal })).arrayBuffer()),
  /** A bare fetch with only the edge's three request headers added. */
  fetchWithHeaders: async (_s, env) =>
    new Uint8Array(
      await (
        await fetch(env.ORIGIN, {
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        })
      ).arrayBuffer()
    ),
  fetchReadAtLeast: async (_s, env) => {
    const res = await fetch(env.ORIGIN, { method: 'POST', body: '{}' })
    return readAtLeast(res, Number(res.headers.get('content-length')))
  },
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const [, name, count] = new URL(request.url).pathname.split('/')
    const f = CASES[name ?? '']
    if (!f) return new Response('no such case', { status: 404 })
    for (let i = 0, n = Number(count); i < n; i++) await f(request.signal, env)
    return new Response('ok')
  },
}
