/**
 * @module app
 * The standalone edge, as the Node server and the Worker serve it: the MCP routes of
 * {@link McpEdge} (src/mcp-edge.ts) at `/mcp`, plus `/healthz`, `/metrics` and the admin API.
 * Holds no state of its own; the edge gives it the ports.
 *
 * Routes:
 * - `/mcp`, `/mcp/:origin` -> the edge's sub-app (POST, GET, DELETE; 405 otherwise)
 * - `GET /healthz`, `GET /metrics` (Prometheus text)
 * - `PUT /admin/tools/:origin` (bearer `ADMIN_TOKEN`): push `{ tools: [...] }` into the store
 * - `GET /admin/tools/:origin`, `GET|DELETE /admin/tools/:origin/:tool` (bearer `ADMIN_TOKEN`): the
 *   stored records (core/validation/stored-tools.ts; `mcp-edge schemas`, docs/cli.md)
 */
import { Hono, type Context } from 'hono'
import { DEFAULT_VERSION, isKnownVersion } from './core/protocol/versions'
import { isObject } from './core/protocol/jsonrpc'
import { edgeFault, notFound, refusalResponse, type EdgeDeps } from './core/grading/exchange'
import { checkHostAndOrigin } from './core/request/transport-checks'
import { toWebResponse } from './core/edge-response'
import type { McpEdge } from './mcp-edge'
import { deleteStoredTool, getStoredTool, listStoredTools, portable, StoreCannotListError } from './core/validation/stored-tools'
import { StoreUnavailableError } from './core/validation/tool-registry'

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
  for (const path of ['/healthz', '/metrics', '/admin/*']) app.use(path, hostCheck)
  app.get('/healthz', (c) => c.json({ ok: true }))
  app.get('/metrics', (c) => c.text(getDeps(c).metrics.render(), 200, { 'content-type': 'text/plain; version=0.0.4' }))

  app.route('/mcp', edge)

  app.put('/admin/tools/:origin', async (c) => {
    const deps = getDeps(c)
    const token = deps.config.adminToken
    if (!token) return c.json({ error: 'the admin API is off (ADMIN_TOKEN is unset)' }, 404)
    if (c.req.header('authorization') !== `Bearer ${token}`) return c.json({ error: 'unauthorized' }, 401)
    let body: unknown
    try {
      body = await c.req.json()
    } catch {
      return c.json({ error: 'the body must be JSON: { "tools": [ { "name", "inputSchema" } ] }' }, 400)
    }
    if (!isObject(body) || !Array.isArray(body.tools)) return c.json({ error: 'the body must be { "tools": [ { "name", "inputSchema" } ] }' }, 400)
    const era = isKnownVersion(body.protocolVersion) ? body.protocolVersion : DEFAULT_VERSION
    const origin = c.req.param('origin')
    let names: string[]
    try {
      // Answered 200 only once every record is in the store (docs/stores.md: durable before the 200).
      names = await deps.registry.learn(origin, 'public', body.tools, era, undefined, { mustStore: true })
    } catch (e) {
      if (e instanceof StoreUnavailableError) return c.json({ error: 'the tool schema store could not be written: the push is not (or not wholly) stored, send it again' }, 503)
      throw e
    }
    return c.json({ stored: names })
  })

  /** The admin API's refusal (off: 404, wrong token: 401), or null when the bearer token is right. */
  const adminRefusal = (c: Context, deps: EdgeDeps): Response | null => {
    const token = deps.config.adminToken
    if (!token) return c.json({ error: 'the admin API is off (ADMIN_TOKEN is unset)' }, 404)
    if (c.req.header('authorization') !== `Bearer ${token}`) return c.json({ error: 'unauthorized' }, 401)
    return null
  }
  /** A store failure on an admin read or delete: 503 (no store text in the answer). */
  const storeDown = (c: Context) => c.json({ error: 'the tool schema store could not be read or written: try again' }, 503)
  app.get('/admin/tools/:origin', async (c) => {
    const deps = getDeps(c)
    const refused = adminRefusal(c, deps)
    if (refused) return refused
    try {
      const records = await listStoredTools(deps.registry.store, c.req.param('origin'))
      return c.json({ tools: records.map((r) => ({ ...portable(r), hash: r.hash, ...(r.fetchedAt !== undefined ? { fetchedAt: r.fetchedAt } : {}) })) })
    } catch (e) {
      if (e instanceof StoreCannotListError) return c.json({ error: 'this store cannot list its keys' }, 501)
      return storeDown(c)
    }
  })
  app.get('/admin/tools/:origin/:tool', async (c) => {
    const deps = getDeps(c)
    const refused = adminRefusal(c, deps)
    if (refused) return refused
    let record
    try {
      record = await getStoredTool(deps.registry.store, c.req.param('origin'), c.req.param('tool'))
    } catch {
      return storeDown(c)
    }
    if (!record) return c.json({ error: 'no stored schema for this tool' }, 404)
    return c.json({ ...portable(record), hash: record.hash, ...(record.fetchedAt !== undefined ? { fetchedAt: record.fetchedAt } : {}) })
  })
  app.delete('/admin/tools/:origin/:tool', async (c) => {
    const deps = getDeps(c)
    const refused = adminRefusal(c, deps)
    if (refused) return refused
    const origin = c.req.param('origin')
    const tool = c.req.param('tool')
    let deleted: boolean
    try {
      deleted = await deleteStoredTool(deps.registry.store, origin, tool)
    } catch {
      return storeDown(c)
    }
    // The isolate's memory copy goes too; the next call to the origin's tools refreshes its list (D7).
    deps.registry.invalidate(origin, 'public')
    return deleted ? c.json({ deleted: tool }) : c.json({ error: 'no stored schema for this tool' }, 404)
  })

  app.notFound(() => toWebResponse(notFound()))
  app.onError((err, c) => toWebResponse(edgeFault(err, () => getDeps(c))))
  return app
}
