/**
 * @module core/request/transport-checks
 * Stage 1: HTTP-level checks before any body is read (MCP Streamable HTTP "Security Warning",
 * "Sending Messages"; docs/design.md D13, D18). Pure.
 *
 * Order: Host allow-list (403), Origin allow-list (403), Content-Type (415), Accept (406).
 * Body size (413) is enforced while reading the body, by the HTTP layer.
 */
import type { Config } from '../config'
import { looksModern } from '../jsonrpc/versions'
import { type RequestHeaders } from '../edge-response'
import type { TransportRefusal } from '../local-answer'

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i

/** True when `host` (a Host header value) names a loopback address. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host)
}

/**
 * True when a browser `Origin` value may use the edge: listed in `ALLOWED_ORIGINS` (or `*`), or a
 * loopback origin (`http(s)://localhost|127.x|[::1]`). The literal `null` origin never is. The
 * same rule decides the 403 of {@link checkHostAndOrigin} and the CORS headers (cors-rule.ts).
 */
export function originAllowed(origin: string, allowed: string[]): boolean {
  if (allowed.includes('*') || allowed.includes(origin)) return true
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false // includes the literal "null" origin (vector 76)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return isLoopbackHost(url.host) || (allowed.includes('localhost') && isLoopbackHost(url.host))
}

/**
 * Verdicts of the pure header checks below, remembered per header value: clients send the same
 * few Host and Accept values on every call, and splitting and matching them again was about 2 us
 * per POST (a CPU profile of `npm run bench`, docs/performance.md). Bounded: past `max` values the oldest is forgotten.
 */
class ValueMemo<V> {
  private readonly seen = new Map<string, V>()
  constructor(private readonly max = 256) {}
  get<A>(value: string, compute: (value: string, arg: A) => V, arg: A): V {
    let v = this.seen.get(value)
    if (v === undefined) {
      v = compute(value, arg)
      this.seen.set(value, v)
      if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string)
    }
    return v
  }
}

/**
 * The remembered verdicts of one edge instance (one configuration): Host values against its
 * `ALLOWED_HOSTS`, and what each Accept value admits. Held on the instance's deps object
 * (exchange.ts `EdgeDeps.headerMemos`); the checks give the same verdicts without one.
 */
export class HeaderMemos {
  readonly host = new ValueMemo<boolean>()
  readonly accept = new ValueMemo<number>()
}

/**
 * `host` (a Host header value) against `ALLOWED_HOSTS`: `*` any, `localhost` the loopback names,
 * else a listed name in any letter case (host names are case-insensitive, RFC 3986 §3.2.2), on any
 * port unless the entry names one (`edge.example.com` admits `edge.example.com:8787`, as a client
 * of a published port sends it; `edge.example.com:443` admits that port only).
 */
function hostAllowed(host: string, allowed: string[]): boolean {
  if (allowed.includes('*') || allowed.includes(host) || (allowed.includes('localhost') && isLoopbackHost(host))) return true
  const full = host.toLowerCase()
  const name = full.replace(/:\d+$/, '')
  return allowed.some((entry) => {
    const e = entry.toLowerCase()
    return e === full || e === name
  })
}

/**
 * Host and Origin checks shared by POST, GET and DELETE (DNS-rebinding protection).
 * @param memos the instance's remembered verdicts (the POST path passes them; same verdicts without)
 */
export function checkHostAndOrigin(headers: RequestHeaders, config: Pick<Config, 'allowedHosts' | 'allowedOrigins'>, memos?: HeaderMemos): TransportRefusal | null {
  const allowed = config.allowedHosts
  const host = headers.get('host') ?? ''
  if (allowed && !(memos ? memos.host.get(host, hostAllowed, allowed) : hostAllowed(host, allowed))) {
    return { kind: 'transport', status: 403, message: 'Forbidden: this Host is not allowed' }
  }
  const origin = headers.get('origin')
  if (origin !== null && !originAllowed(origin, config.allowedOrigins)) {
    return { kind: 'transport', status: 403, message: 'Forbidden: this Origin is not allowed' }
  }
  return null
}

function accepts(accept: string, type: 'application/json' | 'text/event-stream'): boolean {
  const major = type.split('/')[0]
  return accept
    .split(',')
    .map((p) => p.split(';')[0]!.trim().toLowerCase())
    .some((m) => m === type || m === '*/*' || m === `${major}/*`)
}

/** What an Accept value admits: 1 = application/json, 2 = text/event-stream. */
const ACCEPTS_JSON = 1
const ACCEPTS_SSE = 2

function admitted(accept: string): number {
  return (accepts(accept, 'application/json') ? ACCEPTS_JSON : 0) | (accepts(accept, 'text/event-stream') ? ACCEPTS_SSE : 0)
}

/**
 * Checks a POST before its body is read.
 * @param memos the instance's remembered verdicts ({@link HeaderMemos}), when it has them
 * @returns a refusal, or null to go on
 */
export function checkPost(headers: RequestHeaders, config: Pick<Config, 'allowedHosts' | 'allowedOrigins'>, memos?: HeaderMemos): TransportRefusal | null {
  const hostOrOrigin = checkHostAndOrigin(headers, config, memos)
  if (hostOrOrigin) return hostOrOrigin
  const type = headers.get('content-type') ?? ''
  if (type !== 'application/json' && type.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    return { kind: 'transport', status: 415, message: 'Unsupported Media Type: Content-Type must be application/json' }
  }
  const accept = headers.get('accept') ?? ''
  // D18: a 2026-07-28 request may accept application/json alone; 2025 eras need both types.
  const version = headers.get('mcp-protocol-version')
  const modern = version !== null && looksModern(version.trim())
  const admits = memos ? memos.accept.get(accept, admitted, undefined) : admitted(accept)
  const ok = modern ? (admits & ACCEPTS_JSON) !== 0 : admits === (ACCEPTS_JSON | ACCEPTS_SSE)
  if (!ok) {
    return {
      kind: 'transport',
      status: 406,
      message: modern ? 'Not Acceptable: Accept must include application/json' : 'Not Acceptable: Accept must include application/json and text/event-stream',
    }
  }
  return null
}
