/**
 * @module http/cors
 * CORS for the MCP endpoint on the Hono routes, built on hono's `cors` middleware with the
 * edge's one rule (src/core/request/cors-rule.ts):
 *
 * - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed
 *   origin: 204 with `Access-Control-Allow-Origin` (that origin), the methods
 *   (GET, POST, DELETE, OPTIONS), the MCP request headers plus the requested `Mcp-Param-*`
 *   names, and `Access-Control-Max-Age`. From any other origin: 403 with a JSON-RPC error and no
 *   CORS header (the browser refuses), as the POST itself would be.
 * - Other responses to an allowed origin get `Access-Control-Allow-Origin`,
 *   `Access-Control-Expose-Headers` (Mcp-Session-Id, MCP-Protocol-Version, MCP-Edge-Grade,
 *   WWW-Authenticate) and `Vary: Origin`. Requests without an `Origin` header get none of it.
 * - An `OPTIONS` that is not a preflight goes on to the route (405, as before).
 *
 * Why a fresh `cors()` for each preflight: hono's `allowHeaders` is a fixed list (or an echo of
 * whatever is asked), and `Mcp-Param-*` names differ per tool; a preflight is rare (browsers
 * cache it for `Access-Control-Max-Age`), so building the middleware there costs nothing that matters.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import type { Config } from '../core/config'
import { refusalResponse } from '../core/exchange'
import { toWebResponse } from '../core/edge-response'
import { allowedRequestHeaders, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_S, CORS_METHODS, corsOriginAllowed } from '../core/request/cors-rule'

/** The CORS middleware of the `/mcp` routes; `config` resolves the configuration of a request. */
export function mcpCors(config: (c: Context) => Config): MiddlewareHandler {
  const origin = (o: string, c: Context) => (o && corsOriginAllowed(o, config(c)) ? o : null)
  const actual = cors({ origin, exposeHeaders: [...CORS_EXPOSED_HEADERS] })
  return async (c, next) => {
    const requestOrigin = c.req.header('origin')
    if (requestOrigin === undefined) return next()
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
      if (!corsOriginAllowed(requestOrigin, config(c))) {
        return toWebResponse(refusalResponse({ kind: 'transport', status: 403, message: 'Forbidden: this Origin is not allowed' }))
      }
      const preflight = cors({
        origin,
        allowMethods: [...CORS_METHODS],
        allowHeaders: allowedRequestHeaders(c.req.header('access-control-request-headers') ?? null),
        exposeHeaders: [...CORS_EXPOSED_HEADERS],
        maxAge: CORS_MAX_AGE_S,
      })
      return preflight(c, next)
    }
    return actual(c, next)
  }
}
