/**
 * @module transport
 * Stage 1: HTTP-level checks before any body is read (MCP Streamable HTTP "Security Warning",
 * "Sending Messages"; DESIGN.md D13, D18). Pure.
 *
 * Order: Host allow-list (403), Origin allow-list (403), Content-Type (415), Accept (406).
 * Body size (413) is enforced while reading the body, by the HTTP layer.
 */
import type { Config } from './config'
import { looksModern } from './era'
import { ErrorCode } from './jsonrpc'
import { type RequestHeaders } from './response'

/** A refusal of the whole HTTP request: status plus a JSON-RPC error with `id: null` (D13). */
export interface Refusal {
  status: number
  code: number
  message: string
  data?: unknown
  headers?: Record<string, string>
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i

/** True when `host` (a Host header value) names a loopback address. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host)
}

function originAllowed(origin: string, allowed: string[]): boolean {
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

/** Host and Origin checks shared by POST, GET and DELETE (DNS-rebinding protection). */
export function checkHostAndOrigin(headers: RequestHeaders, config: Pick<Config, 'allowedHosts' | 'allowedOrigins'>): Refusal | null {
  if (config.allowedHosts) {
    const host = headers.get('host') ?? ''
    const ok = config.allowedHosts.includes('*') || config.allowedHosts.includes(host) || (config.allowedHosts.includes('localhost') && isLoopbackHost(host))
    if (!ok) return { status: 403, code: ErrorCode.InvalidRequest, message: 'Forbidden: this Host is not allowed' }
  }
  const origin = headers.get('origin')
  if (origin !== null && !originAllowed(origin, config.allowedOrigins)) {
    return { status: 403, code: ErrorCode.InvalidRequest, message: 'Forbidden: this Origin is not allowed' }
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

/**
 * Checks a POST before its body is read.
 * @returns a refusal, or null to go on
 */
export function checkPost(headers: RequestHeaders, config: Pick<Config, 'allowedHosts' | 'allowedOrigins'>): Refusal | null {
  const hostOrOrigin = checkHostAndOrigin(headers, config)
  if (hostOrOrigin) return hostOrOrigin
  const ct = (headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (ct !== 'application/json') {
    return { status: 415, code: ErrorCode.InvalidRequest, message: 'Unsupported Media Type: Content-Type must be application/json' }
  }
  const accept = headers.get('accept') ?? ''
  // D18: a 2026-07-28 request may accept application/json alone; 2025 eras need both types.
  const version = headers.get('mcp-protocol-version')
  const modern = version !== null && looksModern(version.trim())
  const ok = modern ? accepts(accept, 'application/json') : accepts(accept, 'application/json') && accepts(accept, 'text/event-stream')
  if (!ok) {
    return {
      status: 406,
      code: ErrorCode.InvalidRequest,
      message: modern ? 'Not Acceptable: Accept must include application/json' : 'Not Acceptable: Accept must include application/json and text/event-stream',
    }
  }
  return null
}
