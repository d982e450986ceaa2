/**
 * @module http/metrics-route
 * `GET /metrics`: the metrics port's Prometheus text (docs/observability.md). With
 * `METRICS_TOKEN` set, the scrape must send `Authorization: Bearer <METRICS_TOKEN>` (hono's
 * `bearer-auth`, constant-time comparison); without it the route is open, behind the Host check
 * every non-MCP route has.
 */
import type { Context, Handler } from 'hono'
import { bearerAuth } from 'hono/bearer-auth'
import { HTTPException } from 'hono/http-exception'
import type { EdgeDeps } from '../core/exchange'

/** The handler of `GET /metrics`; `getDeps` resolves the ports of a request. */
export function metricsRoute(getDeps: (c: Context) => EdgeDeps): Handler {
  return async (c) => {
    const deps = getDeps(c)
    const token = deps.config.metricsToken
    if (token) {
      try {
        await bearerAuth({
          token,
          noAuthenticationHeader: { message: { error: 'unauthorized: send Authorization: Bearer <METRICS_TOKEN>' } },
          invalidToken: { message: { error: 'unauthorized: wrong token' } },
          invalidAuthenticationHeader: { message: { error: 'bad request: the Authorization header is not a Bearer token' } },
        })(c, async () => undefined)
      } catch (e) {
        if (e instanceof HTTPException) return e.getResponse()
        throw e
      }
    }
    return c.body(await deps.metrics.render(), 200, { 'content-type': deps.metrics.contentType })
  }
}
