/**
 * @module http/health-routes
 * `GET /healthz` (liveness: the process answers) and `GET /readyz` (readiness: every origin's MCP
 * endpoint answers `initialize` and the store is readable, src/observe/readiness.ts): 200 `{ ready: true, checks }` or
 * 503 `{ ready: false, checks }` naming what failed. docs/observability.md.
 */
import type { Context, Hono } from 'hono'
import type { EdgeDeps } from '../core/exchange'
import { readiness } from '../observe/readiness'
import { virtualReadiness } from '../core/virtual/origin-sessions'

/** Adds the two routes to `app`. */
export function addHealthRoutes(app: Hono, getDeps: (c: Context) => EdgeDeps): void {
  app.get('/healthz', (c) => c.json({ ok: true }))
  app.get('/readyz', async (c) => {
    const deps = getDeps(c)
    const report = await readiness(deps)
    // Virtual servers: what their last merge left out (origins down or late, names `prefix: never`
    // dropped), read fresh at each probe; detail, not readiness (each origin has its own check).
    const body = Object.keys(deps.config.virtualServers).length ? { ...report, virtual: virtualReadiness(deps) } : report
    return c.json(body, report.ready ? 200 : 503, { 'cache-control': 'no-store' })
  })
}
