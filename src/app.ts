/**
 * @module app
 * The standalone edge, as the Node server and the Worker serve it: the MCP routes of
 * {@link McpEdge} (src/mcp-edge.ts) at `/mcp` with CORS for browser clients, plus `/healthz`,
 * `/readyz`, `/metrics` and the admin API.
 * Holds no state of its own; the edge gives it the ports.
 *
 * Routes:
 * - `/mcp`, `/mcp/:origin` -> the edge's sub-app (POST, GET, DELETE; 405 otherwise)
 * - `GET /healthz`, `GET /readyz` (src/http/health-routes.ts), `GET /metrics` (src/http/metrics-route.ts)
 * - `/admin/*` (bearer `ADMIN_TOKEN`): the admin API sub-app (src/http/admin-api.ts, docs/admin-api.md)
 * - `GET /.well-known/oauth-protected-resource[/<path>]` with auth on: the protected resource metadata (docs/security.md)
 * Auth (AUTH_ISSUER) guards the `/mcp` routes only: `/healthz` and `/readyz` stay open for probes,
 * `/metrics` has METRICS_TOKEN and the admin API ADMIN_TOKEN.
 */
import { Hono, type Context } from 'hono'
import { edgeFault, notFound, refusalResponse, type EdgeDeps } from './core/exchange'
import { checkHostAndOrigin } from './core/request/transport-checks'
import { toWebResponse } from './core/edge-response'
import type { McpEdge } from './mcp-edge'
import { createAdminApi } from './http/admin-api'
import { mcpCors } from './http/cors'
import { metricsRoute } from './http/metrics-route'
import { addHealthRoutes } from './http/health-routes'

/** Resolves the ports for a request (once per process or isolate; `env` is the Worker env). */
export type GetDeps = (c: Context) => EdgeDeps

/** Creates the standalone app around `edge` (what `mcpEdge()` returns). */
export function createApp(edge: McpEdge): Hono {
  const getDeps: GetDeps = edge.depsFor
  const app = new Hono()

  // DNS-rebinding protection for the other routes too (/metrics names tools and origins); the
  // /mcp routes check Host and Origin themselves, with the rest of their transport checks.
  const hostCheck = async (c: Context, next: () => Promise<void>): Promise<Response | void> => {
    const refusal = checkHostAndOrigin(c.req.raw.headers, getDeps(c).config)
    if (refusal) return toWebResponse(refusalResponse(refusal))
    await next()
  }
  for (const path of ['/healthz', '/readyz', '/metrics', '/admin/*']) app.use(path, hostCheck)
  // The protected resource metadata is public and read by pages of any origin before they hold a
  // token: the Host check only (DNS rebinding), not the Origin rule.
  app.use('/.well-known/*', async (c: Context, next: () => Promise<void>): Promise<Response | void> => {
    const refusal = checkHostAndOrigin(c.req.raw.headers, { allowedHosts: getDeps(c).config.allowedHosts, allowedOrigins: ['*'] })
    if (refusal) return toWebResponse(refusalResponse(refusal))
    await next()
  })
  addHealthRoutes(app, getDeps)
  app.get('/metrics', metricsRoute(getDeps))

  // Browser clients: CORS for the allowed origins (src/http/cors.ts; the Node POST listener adds the same headers).
  for (const path of ['/mcp', '/mcp/*'])
    app.use(
      path,
      mcpCors((c) => getDeps(c).config)
    )
  app.route('/mcp', edge)
  // With auth on: the protected resource metadata (RFC 9728) at the root's well-known paths.
  app.route('/', edge.wellKnown)

  // The admin API (docs/admin-api.md): its own sub-app, off unless ADMIN_TOKEN is set.
  app.route('/admin', createAdminApi(getDeps))

  app.notFound(() => toWebResponse(notFound()))
  app.onError((err, c) => toWebResponse(edgeFault(err, () => getDeps(c))))
  return app
}
