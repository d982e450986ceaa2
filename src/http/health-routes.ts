/**
 * @module http/health-routes
 * `GET /healthz` (liveness: the process answers) and `GET /readyz` (readiness: every origin's MCP
 * endpoint answers `initialize` and the store is readable, src/observe/readiness.ts): 200 `{ ready: true, checks }` or
 * 503 `{ ready: false, checks }` naming what failed. docs/observability.md.
 */
import type { Context, Hono } from 'hono'
import type { EdgeDeps } from '../core/exchange'
import { readiness } from '../observe/readiness'

/** Adds the two routes to `app`. */
export function addHealthRoutes(app: Hono, getDeps: (c: Context) => EdgeDeps): void {
  app.get('/healthz', (c) => c.json({ ok: true }))
  app.get('/readyz', async (c) => {
    const report = await readiness(getDeps(c))
    return c.json(report, report.ready ? 200 : 503, { 'cache-control': 'no-store' })
  })
}
