/**
 * @module core/request/cors-rule
 * Browser clients (CORS, Fetch standard): which `Origin` may read the edge's answers, which
 * request headers a preflight admits, which response headers a page may read. One rule for both
 * HTTP paths: hono's `cors` middleware on the Hono routes (src/http/cors.ts) and the Node
 * entry's direct `POST /mcp` listener (src/adapters/node/post-listener.ts), which adds
 * {@link corsResponseHeaders} itself. Pure.
 *
 * The origin rule is the one of the 403 check ({@link originAllowed}: `ALLOWED_ORIGINS` and
 * loopback origins), so a page that may send a request may also read its answer, and one that
 * may not gets 403 and no `Access-Control-Allow-Origin`. No `Access-Control-Allow-Credentials`:
 * MCP clients send `Authorization` as a header, which needs no credentials mode.
 */
import type { Config } from '../config'
import { originAllowed } from './transport-checks'

/** Methods of the MCP endpoint (Streamable HTTP: POST messages, GET stream, DELETE session). */
export const CORS_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'] as const

/**
 * Request headers an MCP client sends (MCP Streamable HTTP, 2025-03-26 to 2026-07-28): the
 * standard ones, the session and version headers, `Last-Event-ID` for resumption, and the
 * 2026-07-28 `Mcp-Method` / `Mcp-Name`. `Mcp-Param-<name>` headers are per tool: see
 * {@link allowedRequestHeaders}.
 */
export const CORS_REQUEST_HEADERS = ['Content-Type', 'Accept', 'Authorization', 'Mcp-Session-Id', 'MCP-Protocol-Version', 'Last-Event-ID', 'Mcp-Method', 'Mcp-Name'] as const

/** Response headers a page may read: the session id, the version, the edge's grade table, the auth challenge, and a rate limit's wait (429 `Retry-After`). */
export const CORS_EXPOSED_HEADERS = ['Mcp-Session-Id', 'MCP-Protocol-Version', 'MCP-Edge-Grade', 'WWW-Authenticate', 'Retry-After'] as const

/** Seconds a browser may cache a preflight answer (Chromium caps it at 7200). */
export const CORS_MAX_AGE_S = 600

/** A 2026-07-28 `Mcp-Param-<name>` header name: the names `x-mcp-header` can declare (header token characters). */
const PARAM_HEADER = /^mcp-param-[a-z0-9!#$%&'*+.^_`|~-]+$/i

/** True when `origin` (an `Origin` request header value) may read the edge's answers. */
export function corsOriginAllowed(origin: string, config: Pick<Config, 'allowedOrigins'>): boolean {
  return originAllowed(origin, config.allowedOrigins)
}

/**
 * The request headers a preflight admits: {@link CORS_REQUEST_HEADERS} plus each name of the
 * preflight's `Access-Control-Request-Headers` that is an `Mcp-Param-*` header (at most 64;
 * the names are per tool, so they cannot be listed ahead). Other requested names are left out,
 * and the browser then refuses the request.
 * @param requested the `Access-Control-Request-Headers` value, or null
 */
export function allowedRequestHeaders(requested: string | null): string[] {
  const out: string[] = [...CORS_REQUEST_HEADERS]
  if (!requested) return out
  for (const raw of requested.split(',').slice(0, 256)) {
    const name = raw.trim()
    if (PARAM_HEADER.test(name) && out.length < CORS_REQUEST_HEADERS.length + 64) out.push(name.toLowerCase())
  }
  return out
}

/**
 * The CORS headers of an actual (non-preflight) response, lower-case names, for a request with
 * `origin`: `access-control-allow-origin` (the origin itself), `access-control-expose-headers`
 * and `vary: Origin`. Null when there is no Origin header or it is not allowed (no CORS headers).
 */
export function corsResponseHeaders(origin: string | null, config: Pick<Config, 'allowedOrigins'>): Record<string, string> | null {
  if (origin === null || !corsOriginAllowed(origin, config)) return null
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '), vary: 'Origin' }
}
