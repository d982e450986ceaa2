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
import { DEFAULT_VERSION, isKnownVersion } from './core/protocol/versions'
import { ErrorCode, isObject, NULL_ID } from './core/protocol/jsonrpc'
import { edgeFault, errorResponse, notFound, refusalResponse, type EdgeDeps } from './core/grading/exchange'
import { handlePassThrough } from './core/forwarding/forward'
import { admitPost, handlePost, originTarget, payloadTooLarge } from './core/pipeline'
import { checkHostAndOrigin } from './core/request/transport-checks'
import { toWebResponse } from './core/edge-response'
import type { ClientSignal } from './core/client-signal'

/** Resolves the ports for a request (once per process or isolate; `env` is the Worker env). */
export type GetDeps = (c: Context) => EdgeDeps

function noOrigin(): Response {
  return toWebResponse(errorResponse(404, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'No origin is configured for this path' }))
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
    if (refusal) return toWebResponse(refusalResponse(refusal))
    await next()
  }
  for (const path of ['/healthz', '/metrics', '/admin/*']) app.use(path, hostCheck)
  app.get('/healthz', (c) => c.json({ ok: true }))
  app.get('/metrics', (c) => c.text(getDeps(c).metrics.render(), 200, { 'content-type': 'text/plain; version=0.0.4' }))

  const post = async (c: Context) => {
    const deps = getDeps(c)
    const t = originTarget(deps.config, c.req.param('origin'))
    if (!t) return noOrigin()
    // With a Content-Length (and no Transfer-Encoding) the size is known before reading, so the
    // body is read directly: hono's bodyLimit reads `c.req.raw.body` first, which makes
    // @hono/node-server build a full web Request with a stream body for every POST. Same check
    // as bodyLimit's own.
    const length = c.req.header('content-length')
    const known = length !== undefined && /^\d+$/.test(length) && !c.req.header('transfer-encoding')
    // Transport refusals are answered before the body is read, and logged like every POST.
    const refusal = admitPost(c.req.raw.headers, t, deps, known ? Number(length) : undefined)
    if (refusal) return toWebResponse(refusal)
    // The signal fires when the client goes away: a forwarded request's origin call is aborted with it.
    if (known) return toWebResponse(await handlePost(new Uint8Array(await c.req.arrayBuffer()), c.req.raw.headers, t, deps, clientSignal(c)))
    const limit = bodyLimit({ maxSize: deps.config.maxBodyBytes, onError: () => toWebResponse(payloadTooLarge(t, deps)) })
    let response: Response | undefined
    const limited = await limit(c, async () => {
      const body = new Uint8Array(await c.req.arrayBuffer())
      response = toWebResponse(await handlePost(body, c.req.raw.headers, t, deps, clientSignal(c)))
    })
    return response ?? (limited as Response)
  }
  const notAllowed = () => toWebResponse(errorResponse(405, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Method Not Allowed: use POST, GET or DELETE' }, { allow: 'GET, POST, DELETE' }))
  const passThrough = (method: 'GET' | 'DELETE') => async (c: Context) => {
    // Hono routes HEAD to the GET handler; a HEAD would open the origin's standalone stream for
    // a response that has no body, and nothing would ever close it.
    if (c.req.method === 'HEAD') return notAllowed()
    const deps = getDeps(c)
    const t = originTarget(deps.config, c.req.param('origin'))
    if (!t) return noOrigin()
    const refusal = checkHostAndOrigin(c.req.raw.headers, deps.config)
    if (refusal) return toWebResponse(refusalResponse(refusal))
    return toWebResponse(await handlePassThrough(method, c.req.raw.headers, t, deps))
  }
  for (const path of ['/mcp', '/mcp/:origin']) {
    app.post(path, post)
    app.get(path, passThrough('GET'))
    app.delete(path, passThrough('DELETE'))
    app.all(path, notAllowed)
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

  app.notFound(() => toWebResponse(notFound()))
  app.onError((err, c) => toWebResponse(edgeFault(err, () => getDeps(c))))
  return app
}
