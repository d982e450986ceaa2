/**
 * @module app
 * The Hono app shared by the Node and Workers entries: routes, transport checks, body limit, and
 * the hand-off to the core pipeline. Holds no state of its own; `getDeps` gives it the ports.
 *
 * Routes:
 * - `POST /mcp`, `POST /mcp/:origin` -> {@link handlePost}
 * - `GET|DELETE /mcp[/:origin]` -> {@link handlePassThrough} (after Host/Origin checks)
 * - other methods on `/mcp` -> 405 with `Allow` and a JSON-RPC error (D13)
 * - `GET /healthz`, `GET /metrics` (Prometheus text)
 * - `PUT /admin/tools/:origin` (bearer `ADMIN_TOKEN`): push `{ tools: [...] }` into the store
 */
import { Hono, type Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { DEFAULT_VERSION, isKnownVersion } from './core/era'
import { ErrorCode, isObject, NULL_ID } from './core/jsonrpc'
import { errorResponse, Exchange, refusalResponse, type EdgeDeps, type OriginTarget } from './core/exchange'
import { handlePassThrough } from './core/forward'
import { handlePost } from './core/pipeline'
import { checkHostAndOrigin, checkPost } from './core/transport'
import type { ClientSignal } from './core/client-signal'

/** Resolves the ports for a request (once per process or isolate; `env` is the Worker env). */
export type GetDeps = (c: Context) => EdgeDeps

function target(deps: EdgeDeps, name: string | undefined): OriginTarget | null {
  if (name === undefined) return deps.config.originUrl ? { id: 'default', url: deps.config.originUrl } : null
  const url = deps.config.origins[name]
  return url ? { id: name, url } : null
}

function noOrigin(): Response {
  return errorResponse(404, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'No origin is configured for this path' })
}

/** Runtime hooks of {@link createApp}. */
export interface AppOptions {
  /**
   * The signal that fires when the client of a POST goes away (default: the request's
   * `AbortSignal`). The Node entry gives a cheaper one built on the socket's close event.
   */
  clientSignal?: (c: Context) => ClientSignal | undefined
}

/** Creates the app. */
export function createApp(getDeps: GetDeps, options: AppOptions = {}): Hono {
  const clientSignal = options.clientSignal ?? ((c: Context) => c.req.raw.signal)
  const app = new Hono()

  // DNS-rebinding protection for the other routes too (/metrics names tools and origins); the
  // /mcp routes check Host and Origin themselves, with the rest of their transport checks.
  const hostCheck = async (c: Context, next: () => Promise<void>): Promise<Response | void> => {
    const refusal = checkHostAndOrigin(c.req.raw.headers, getDeps(c).config)
    if (refusal) return refusalResponse(refusal)
    await next()
  }
  for (const path of ['/healthz', '/metrics', '/admin/*']) app.use(path, hostCheck)
  app.get('/healthz', (c) => c.json({ ok: true }))
  app.get('/metrics', (c) => c.text(getDeps(c).metrics.render(), 200, { 'content-type': 'text/plain; version=0.0.4' }))

  const post = async (c: Context) => {
    const deps = getDeps(c)
    const t = target(deps, c.req.param('origin'))
    if (!t) return noOrigin()
    // Transport refusals are answered before the body is read, and logged like every POST.
    const refusal = checkPost(c.req.raw.headers, deps.config)
    if (refusal) return new Exchange(deps, t, DEFAULT_VERSION).reject(refusal.status, NULL_ID, { code: refusal.code, message: refusal.message }, '', refusal.headers)
    const tooLarge = () => new Exchange(deps, t, DEFAULT_VERSION).reject(413, NULL_ID, { code: ErrorCode.InvalidRequest, message: `Payload Too Large: the body exceeds ${deps.config.maxBodyBytes} bytes` })
    // With a Content-Length (and no Transfer-Encoding) the size is known before reading, so the
    // body is read directly: hono's bodyLimit reads `c.req.raw.body` first, which makes
    // @hono/node-server build a full web Request with a stream body for every POST (the largest
    // single cost of the edge in `npm run bench` profiles). Same check as bodyLimit's own.
    const length = c.req.header('content-length')
    if (length !== undefined && /^\d+$/.test(length) && !c.req.header('transfer-encoding')) {
      if (Number(length) > deps.config.maxBodyBytes) return tooLarge()
      // The request's signal fires when the client goes away: a forwarded request's origin call is aborted with it.
      return handlePost(new Uint8Array(await c.req.arrayBuffer()), c.req.raw.headers, t, deps, clientSignal(c))
    }
    const limit = bodyLimit({ maxSize: deps.config.maxBodyBytes, onError: tooLarge })
    let response: Response | undefined
    const limited = await limit(c, async () => {
      const body = new Uint8Array(await c.req.arrayBuffer())
      // The request's signal fires when the client goes away: a forwarded request's origin call is aborted with it.
      response = await handlePost(body, c.req.raw.headers, t, deps, clientSignal(c))
    })
    return response ?? (limited as Response)
  }
  const passThrough = (method: 'GET' | 'DELETE') => async (c: Context) => {
    const deps = getDeps(c)
    const t = target(deps, c.req.param('origin'))
    if (!t) return noOrigin()
    const refusal = checkHostAndOrigin(c.req.raw.headers, deps.config)
    if (refusal) return refusalResponse(refusal)
    return handlePassThrough(method, c.req.raw.headers, t, deps)
  }
  for (const path of ['/mcp', '/mcp/:origin']) {
    app.post(path, post)
    app.get(path, passThrough('GET'))
    app.delete(path, passThrough('DELETE'))
    app.all(path, () => errorResponse(405, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Method Not Allowed: use POST, GET or DELETE' }, { allow: 'GET, POST, DELETE' }))
  }

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
    const names = await deps.registry.learn(origin, 'public', body.tools, era)
    return c.json({ stored: names })
  })

  app.notFound(() => errorResponse(404, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Not Found: the MCP endpoint is /mcp' }))
  app.onError((_err, c) => {
    // Never a stack trace or library text in a response (DESIGN.md section 5).
    try {
      getDeps(c).log({ msg: 'edge.error', error: String(_err instanceof Error ? _err.name : 'error') })
    } catch {
      // logging must not turn one fault into two
    }
    return errorResponse(500, NULL_ID, { code: ErrorCode.InternalError, message: 'Internal error in the edge' })
  })
  return app
}
