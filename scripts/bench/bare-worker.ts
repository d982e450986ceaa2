/**
 * The bare Worker: the floors of the workerd scenarios. Runs in the same workerd as the edge
 * Worker (scripts/bench/worker.ts routes `/bare/*`, `/floor-parse/*` and `/floor-validate/*` to
 * one instance of it each) and forwards each request with `fetch` to `ORIGIN_BASE` + the path
 * after `PREFIX` (default `/bare`), returning the origin's reply. The binding `BARE_BODY` picks
 * how (docs/performance.md, "The floors"):
 * - `whole` (the default, context): reads the request body and the reply whole and sends the two
 *   headers the edge forwards, as the edge Worker does with JSON; nothing parsed, checked or logged;
 * - `buffer` reads the request body whole and forwards every header, returning the origin's reply
 *   as a stream; `stream` is `fetch(url, request)` (context; on the loaded machine none of the
 *   three was faster beyond noise);
 * - `parse`, the Workers parse floor: the request's bytes and the reply's bytes are each decoded
 *   (UTF-8) and `JSON.parse`d, as a Worker grading replies must, and the same bytes relayed; a
 *   request that does not parse is answered 400 without the origin, a reply that does not parse 502;
 * - `validate`, the Workers validating floor: `parse`, plus the arguments of every `tools/call`
 *   validated with @cfworker/json-schema against the tool's schema (the binding `TOOLS`, a JSON
 *   array of MCP tool entries; each schema's `Validator` built once per isolate, on first use). A
 *   call whose arguments fail is answered -32602 without the origin (the bench sends no mixed batch).
 */
import { Validator } from '@cfworker/json-schema'

interface Env {
  ORIGIN_BASE: string
  BARE_BODY?: string
  PREFIX?: string
  TOOLS?: string
}

const utf8 = new TextDecoder()
/** `validate`: the tools' validators of this isolate, built from the `TOOLS` binding on first use. */
let validators: Map<string, Validator> | undefined

function validatorsOf(env: Env): Map<string, Validator> {
  if (validators) return validators
  validators = new Map()
  for (const t of JSON.parse(env.TOOLS ?? '[]') as { name: string; inputSchema: object }[]) validators.set(t.name, new Validator(t.inputSchema, '2020-12'))
  return validators
}

/** The ids of the `tools/call`s of `msg` whose arguments fail their tool's schema. */
function failingIds(msg: unknown, env: Env): unknown[] {
  const out: unknown[] = []
  const all = validatorsOf(env)
  for (const m of Array.isArray(msg) ? msg : [msg]) {
    if (m === null || typeof m !== 'object' || (m as { method?: unknown }).method !== 'tools/call') continue
    const params = (m as { params?: { name?: unknown; arguments?: unknown } }).params
    const v = typeof params?.name === 'string' ? all.get(params.name) : undefined
    if (v && !v.validate(params?.arguments ?? {}).valid) out.push((m as { id?: unknown }).id ?? null)
  }
  return out
}

const json = (body: string | ArrayBuffer, status = 200) => new Response(body, { status, headers: { 'content-type': 'application/json' } })

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = env.ORIGIN_BASE + new URL(request.url).pathname.slice((env.PREFIX ?? '/bare').length)
    if (env.BARE_BODY === 'stream') return fetch(url, request)
    if (env.BARE_BODY === 'buffer') return fetch(url, { method: request.method, headers: request.headers, body: await request.arrayBuffer() })
    const headers = { 'content-type': 'application/json', accept: request.headers.get('accept') ?? 'application/json' }
    if (env.BARE_BODY === 'parse' || env.BARE_BODY === 'validate') {
      const body = await request.arrayBuffer()
      let msg: unknown
      try {
        msg = JSON.parse(utf8.decode(body))
      } catch {
        return json('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', 400)
      }
      if (env.BARE_BODY === 'validate') {
        const failing = failingIds(msg, env)
        if (failing.length > 0) {
          const errors = failing.map((id) => ({ jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid arguments' } }))
          return json(JSON.stringify(Array.isArray(msg) ? errors : errors[0]))
        }
      }
      const reply = await fetch(url, { method: 'POST', headers, body })
      const bytes = await reply.arrayBuffer()
      try {
        JSON.parse(utf8.decode(bytes))
      } catch {
        return json('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Origin reply does not parse"}}', 502)
      }
      return new Response(bytes, { status: reply.status, headers: { 'content-type': reply.headers.get('content-type') ?? 'application/json' } })
    }
    // `whole` (the default): both bodies read whole, so the reply goes out with its length.
    const reply = await fetch(url, { method: 'POST', headers, body: await request.text() })
    return new Response(await reply.arrayBuffer(), { status: reply.status, headers: { 'content-type': reply.headers.get('content-type') ?? 'application/json' } })
  },
}
