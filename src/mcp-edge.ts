/**
 * @module mcp-edge
 * `mcpEdge(options)`: the edge as a Hono sub-app that any Hono app mounts at a path of its choice
 * (`app.route('/mcp', mcpEdge({ origin }))`), on Node, Workers, Bun or Deno. The standalone Node
 * server and Worker (src/adapters/node/index.ts, src/adapters/workers/index.ts) serve this same
 * sub-app at `/mcp` inside `createApp` (src/app.ts), which adds `/healthz`, `/metrics` and the
 * admin API.
 *
 * Why a sub-app and not a middleware: the edge owns several routes at its mount point (POST, GET
 * and DELETE at `<mount>` and `<mount>/<name>`, and 405 with `Allow` for every other method), so
 * as a middleware it would have to route by itself; as a sub-app Hono's router does it, the host's
 * own middleware (`app.use(...)` before the `route` call: logging, auth, CORS) runs in front of the
 * edge, and requests outside the mount point never reach it (the host's 404 stays the host's).
 *
 * The runtime builds of the package (src/adapters/node/node-edge.ts, src/adapters/workers/
 * workers-edge.ts) call {@link createMcpEdge} with their {@link EdgeRuntime}: engine, origin
 * client, logger, client-gone signal.
 */
import { startupRecords } from './core/startup-report'
import { Hono, type Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { ClientSignal } from './core/client-signal'
import { toWebResponse, type EdgeResponse, type RequestHeaders } from './core/edge-response'
import { noOriginHere, servePost, targetFor, type McpPost } from './core/front-door'
import { edgeFault, notFound, refusalResponse, type EdgeDeps } from './core/exchange'
import { TextMetrics } from './observe/text-metrics'
import { handlePassThrough } from './core/forwarding/pass-through'
import type { EdgeMetrics, EdgeTracer, KvStore, Logger, OriginClient, ValidatorEngine } from './core/ports'
import type { RegistryStats } from './observe/metric-names'
import { observeAnswer } from './core/observe/answer-bytes'
import { localResponse } from './core/local-answer'
import { checkHostAndOrigin } from './core/request/transport-checks'
import { createToolRegistry } from './core/validation/tool-registry'
import { resolveConfig, type McpEdgeOptions } from './edge-options'
import { MemoryKv } from './stores/memory-kv'
import { ConfigError, type Config } from './core/config'
import { createJwtVerifier } from './auth/jwt-verifier'
import { edgeAuth, filterLayersOf, type EdgeAuth } from './core/access/resource-server'
import { cachedVerifier } from './core/access/verified-token-cache'
import { authorizeRequest, metadataAnswer } from './core/request-auth'
import { WELL_KNOWN_PRM, type AccessIdentity } from './core/access/bearer'
import { cors } from 'hono/cors'
import { MemoryRateLimiter } from './core/access/rate-limit'
import { handleVirtualPassThrough, virtualServerFor } from './core/virtual/virtual-server'
import { virtualSessionOnOrigin } from './core/virtual/virtual-caller'

/** What a runtime build of the package supplies where {@link McpEdgeOptions} leave a port unset. */
export interface EdgeRuntime {
  /** The JSON Schema engine when `options.engine` is unset. */
  engine(): ValidatorEngine
  /** The origin client when `options.originClient` is unset; `close` releases its connections. */
  originClient(): OriginClient & { close?(): Promise<void> }
  /** The log sink when `options.logger` is unset. */
  logger(): Logger
  /** The signal that fires when the client of a request goes away (default: the request's `AbortSignal`). */
  clientSignal?(c: Context): ClientSignal | undefined
  /** True where Hono contexts carry a Workers `ExecutionContext`: deferred work then goes to `waitUntil`. */
  executionContext?: boolean
  /**
   * The metrics when `options.metrics` is unset (the standalone Node server: prom-client when
   * installed, src/observe/prom-metrics.ts); default: the dependency-free text (src/observe/text-metrics.ts). `registry` gives the tool
   * registry's figures at scrape time.
   */
  metrics?(registry: RegistryStats): EdgeMetrics
  /** The tracer when `options.tracer` is unset (the standalone Node server: OpenTelemetry when installed, src/observe/otel-tracer.ts); unset: no spans. */
  tracer?(): EdgeTracer
  /**
   * The store's propagation bound for tool pins' `effectiveFrom`, in ms (docs/pinning.md): Workers
   * KV is eventually consistent (about 60 s), plus the pins' reload interval. Unset: by store.
   */
  pinPropagationMs?: number
  /**
   * How the start-up governance line names the store (core/startup-report.ts): the Node server
   * says which (`file .edge-data/kv.json`, `redis ...`); default `given` for a store passed in,
   * else `memory (not persisted)`.
   */
  storeName?(store: KvStore | undefined): string
  /**
   * True when the entry writes the start-up report itself (the standalone Node server, once it
   * listens: a start that fails writes nothing but its error); else {@link buildEdgeDeps} writes it.
   */
  reportsStart?: boolean
  /**
   * True where the edge's memory is per isolate and requests of one client land on any isolate
   * (Workers): a random session key per isolate would break every virtual-server session on the
   * next isolate, so `VIRTUAL_SERVERS` without `VIRTUAL_SESSION_KEY` is a configuration error
   * there ({@link buildEdgeDeps}). Unset (Node): one random key per process, said at start.
   */
  sharedSessionKeyRequired?: boolean
}

/** The extras of the sub-app `mcpEdge()` returns. */
export interface McpEdgeParts {
  /**
   * The edge's ports and configuration for a request: the same object for every request. With
   * options given as a function of the environment, built on the first request from its `env`.
   * @throws ConfigError when those options hold an unusable value
   */
  depsFor(c: Context): EdgeDeps
  /** The ports, when built (always, with options given as an object). */
  readonly deps: EdgeDeps | undefined
  /** Releases the origin client's connections (Node build); the edge must not be used after. */
  close(): Promise<void>
  /**
   * Resolves when the background work the edge has started so far (tool lists learned, pins
   * decided and written) has settled, or after `maxMs` milliseconds, whichever comes first: a host
   * that stops calls it before closing its store, so nothing the edge was writing is cut off. On
   * Workers that work belongs to the request's `waitUntil` and this resolves at once.
   * @returns true when everything settled, false when `maxMs` passed first
   */
  idle(maxMs: number): Promise<boolean>
  /**
   * With auth on, the protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource`
   * and its path-suffixed form for `AUTH_AUDIENCE`'s path (`.../oauth-protected-resource/mcp`):
   * a Hono app to mount at the host's root, `app.route('/', edge.wellKnown)`, since those paths are
   * outside the edge's mount point (the standalone app does it). 404 with auth off or on any other path.
   */
  readonly wellKnown: Hono
}

/** The sub-app `mcpEdge()` returns: mount it with `app.route(path, edge)`, or serve it alone with `edge.fetch`. */
export type McpEdge = Hono & McpEdgeParts

/** Options, or a function that gives them from the runtime's environment (a Worker's `env`: bindings and vars), called once. */
export type McpEdgeInit<E = unknown> = McpEdgeOptions | ((env: E) => McpEdgeOptions)

/** A store that is not there: what the edge sees when a Worker's KV binding is missing (every call fails: a store outage, D8). */
export function missingStore(binding: string): McpEdgeOptions['store'] {
  const fail = () => Promise.reject(new Error(`the KV binding ${binding} is missing`))
  return { get: fail, put: fail, delete: fail }
}

/**
 * The resource server of a configuration with auth on (`AUTH_ISSUER` set), else undefined: the
 * jose verifier (src/auth/jwt-verifier.ts) behind the verified-token cache (a repeated token costs
 * a Map lookup, not a signature check: docs/security.md), the metadata, the scopes.
 * @throws ConfigError for an unusable AUTH_JWKS (not a key set, private members) or AUTH_JWKS_URL
 */
export function buildEdgeAuth(config: Config, runtime: Pick<EdgeRuntime, 'executionContext'> = {}): EdgeAuth | undefined {
  if (config.authIssuer === null || config.authAudience === null) return undefined
  const verifier = createJwtVerifier({
    issuer: config.authIssuer,
    audience: config.authAudience,
    ...(config.authJwksUrl !== null ? { jwksUrl: config.authJwksUrl, cooldownMs: config.authJwksCooldownMs, maxBytes: config.authJwksMaxBytes } : {}),
    ...(config.authJwks !== null ? { jwks: config.authJwks } : {}),
    ...(config.authAlgorithms.length ? { algorithms: config.authAlgorithms } : {}),
  })
  return edgeAuth({
    issuer: config.authIssuer,
    audience: config.authAudience,
    // Workers (executionContext): no promise shared across requests (verified-token-cache.ts says why).
    verifier: cachedVerifier(verifier, { shareInFlight: !runtime.executionContext }),
    toolScopes: config.toolScopes,
    originAuthorization: config.originAuthorization,
    // The metadata and the 401 challenge name only scopes a visible tool can need.
    filters: filterLayersOf(config),
    ...(verifier.keys ? { keys: verifier.keys } : {}),
  })
}

/** Severity of a log record's `level` (a record without one is `info`). */
const SEVERITY: Record<string, number> = { debug: 0, info: 1, warn: 2, error: 3 }

/**
 * The logger that writes only records at `LOG_LEVEL` or above: with `warn`, the `mcp.post` line
 * of a POST whose ids were all answered (`level: "info"`) is not built into a line at all, which
 * is the cost operators asked to drop on busy edges; the lines that report a failure are `warn`.
 */
function byLevel(logger: Logger, level: 'info' | 'warn' | 'error'): Logger {
  if (level === 'info') return logger
  const least = SEVERITY[level]!
  return (r) => {
    if ((SEVERITY[typeof r.level === 'string' ? r.level : 'info'] ?? 1) >= least) logger(r)
  }
}

/**
 * The deps (ports and configuration) for a set of options.
 * @throws ConfigError for an unusable option or variable
 */
export function buildEdgeDeps(options: McpEdgeOptions, runtime: EdgeRuntime, defer: EdgeDeps['defer']): EdgeDeps & { close(): Promise<void> } {
  const config = resolveConfig(options)
  if (runtime.sharedSessionKeyRequired && config.virtualSessionKey === null && Object.keys(config.virtualServers).length > 0)
    throw new ConfigError(
      'VIRTUAL_SESSION_KEY is unset: each Worker isolate would sign the session ids of VIRTUAL_SERVERS with its own random key, and a session would fail on the next isolate; set it to one secret of 32 or more characters: npx wrangler secret put VIRTUAL_SESSION_KEY (e.g. the output of openssl rand -hex 32)',
      'VIRTUAL_SESSION_KEY'
    )
  const auth = buildEdgeAuth(config, runtime)
  const client = options.originClient ? null : runtime.originClient()
  const logger = byLevel(options.logger === false ? () => undefined : (options.logger ?? runtime.logger()), config.logLevel)
  // Registry events (refresh, unusable schema) are log lines of their own (docs/observability.md).
  const store = options.store ?? new MemoryKv()
  // Start-up truth, once per edge (a Worker isolate: on its first request): unknown variables in the
  // edge's namespaces, then the governance in force (core/startup-report.ts).
  const storeName = runtime.storeName?.(options.store) ?? (options.store ? 'given' : 'memory (not persisted)')
  if (!runtime.reportsStart) for (const r of startupRecords(config, options.env ?? {}, storeName)) logger(r)
  const registry = createToolRegistry(config, store, options.engine ?? runtime.engine(), (r) => logger(r))
  // Enforce's baseline is trust on first use: on a store that forgets at exit, every start trusts
  // whatever the origin serves then, so a rug pull survives a restart. Said once, at start.
  if (config.toolPinning === 'enforce' && store.persistent === false)
    logger({
      level: 'warn',
      msg: 'pin.store_not_persistent',
      store: 'memory',
      detail:
        'TOOL_PINNING=enforce on a store that does not persist: the pins and their first-sight baseline are lost at every restart, and the next start trusts whatever the origin serves then. Use a store that persists (STORE_FILE, STORE_URL, Workers KV, or the store option) or import a reviewed manifest at each start.',
    })
  const tracer = options.tracer ?? runtime.tracer?.()
  return {
    config,
    registry,
    origin: options.originClient ?? client!,
    log: logger,
    defer,
    metrics: options.metrics ?? runtime.metrics?.(() => registry.stats) ?? new TextMetrics(() => registry.stats),
    ...(tracer ? { tracer } : {}),
    ...(auth ? { auth } : {}),
    ...(runtime.pinPropagationMs !== undefined ? { pinPropagationMs: runtime.pinPropagationMs } : {}),
    // RATE_LIMIT budgets: the limiter given, else counted in memory, per edge (docs/security.md#rate-limiting).
    ...(config.rateLimits.empty ? {} : { rateLimiter: options.rateLimiter ?? new MemoryRateLimiter() }),
    close: async () => {
      await client?.close?.()
    },
  }
}

/** 405 for the methods an MCP endpoint does not take (D13). */
function notAllowed(): Response {
  return toWebResponse(localResponse({ kind: 'transport', status: 405, message: 'Method Not Allowed: use POST, GET or DELETE', headers: { allow: 'GET, POST, DELETE' } }))
}

/**
 * Reads a Hono request's body for the front door: as is when its length was declared (and checked),
 * through hono's bodyLimit otherwise; null past `maxBytes`.
 *
 * Why not bodyLimit for every POST: it reads `c.req.raw.body` first, which makes
 * @hono/node-server build a full web Request with a stream body for every POST.
 */
async function readHonoBody(c: Context, maxBytes: number | undefined): Promise<Uint8Array | null> {
  if (maxBytes === undefined) return new Uint8Array(await c.req.arrayBuffer())
  let body: Uint8Array | null = null
  await bodyLimit({ maxSize: maxBytes, onError: () => new Response(null, { status: 413 }) })(c, async () => {
    body = new Uint8Array(await c.req.arrayBuffer())
  })
  return body
}

/** Longest the edge waits for an unread body to arrive before it answers anyway (ms). */
const DISCARD_WAIT_MS = 1_000

/**
 * Reads and drops a request body the edge answered without reading, up to `maxBytes` and for at
 * most {@link DISCARD_WAIT_MS} (then it stops: the connection may close, as it does for any body
 * past `MAX_BODY_BYTES`). Not for a client waiting for `100 Continue` (it sends no body once it
 * has a final answer) or one that declared more than `maxBytes`.
 *
 * Why: workerd closes a connection whose request body was left unread, without a
 * `Connection: close`, so a keep-alive client's next request on it failed with "other side
 * closed" (every time, in test/transport/keep-alive.test.ts: a refused POST, then a normal one). Node's HTTP
 * server drains such bodies itself; reading it here costs nothing there either.
 */
async function discardBody(req: Request, maxBytes: number): Promise<void> {
  if (req.body === null || req.bodyUsed) return
  if (/100-continue/i.test(req.headers.get('expect') ?? '') || Number(req.headers.get('content-length')) > maxBytes) return
  const reader = req.body.getReader()
  const stop = setTimeout(() => void reader.cancel().catch(() => undefined), DISCARD_WAIT_MS)
  let bytes = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      if ((bytes += value.byteLength) > maxBytes) {
        await reader.cancel()
        return
      }
    }
  } catch {
    // The client went away or the stream failed: nothing left to keep usable.
  } finally {
    clearTimeout(stop)
  }
}

/**
 * One `POST <mount>[/<name>]` carried by a web `Request`: the front door ({@link servePost}); a
 * body it answered without reading (404, a transport refusal, 413 on the declared length) is then
 * read and dropped ({@link discardBody}), so the client's keep-alive connection stays usable. The
 * Hono route calls it with Hono's body read; the standalone Worker (src/adapters/workers/index.ts)
 * with its own, for the POSTs it takes before Hono.
 * @param originName the segment after the mount point; undefined for the mount point itself
 * @param readBody reads the whole body ({@link McpPost}'s `readBody`)
 */
export async function serveWebPost(
  d: EdgeDeps,
  request: Request,
  originName: string | undefined,
  readBody: McpPost['readBody'],
  clientSignal: () => ClientSignal | undefined
): Promise<EdgeResponse> {
  let read = false
  const answer = await servePost(d, {
    originName,
    headers: request.headers,
    readBody: (maxBytes) => {
      read = true
      return readBody(maxBytes)
    },
    clientSignal,
  })
  if (!read) await discardBody(request, d.config.maxBodyBytes)
  return answer
}

/**
 * Creates the edge's sub-app for one runtime build. Routes, relative to the mount point:
 * `POST /` and `POST /:origin` -> the front door ({@link servePost}); `GET`/`DELETE` -> the
 * origin's stream and session end ({@link handlePassThrough}, after the Host/Origin checks);
 * any other method -> 405. Every answer is a JSON-RPC envelope; a fault inside the edge is 500 -32603.
 * @throws ConfigError (options given as an object) for an unusable option or variable
 */
export function createMcpEdge<E = unknown>(init: McpEdgeInit<E>, runtime: EdgeRuntime): McpEdge {
  // Workers: background work goes to the latest request's ExecutionContext (`waitUntil`).
  let ctx: { waitUntil(p: Promise<unknown>): void } | undefined
  // Elsewhere (Node): held until it settles, so a stop can wait for it (`idle`).
  const background = new Set<Promise<unknown>>()
  const defer: EdgeDeps['defer'] = (p) => {
    if (ctx) return ctx.waitUntil(p)
    const held = p.catch(() => undefined).finally(() => background.delete(held))
    background.add(held)
  }
  let deps: (EdgeDeps & { close(): Promise<void> }) | undefined = typeof init === 'function' ? undefined : buildEdgeDeps(init, runtime, defer)
  let configFault: ConfigError | undefined
  const depsFor = (c: Context): EdgeDeps => {
    if (runtime.executionContext) {
      try {
        ctx = c.executionCtx
      } catch {
        ctx = undefined // Hono throws when the context has none
      }
    }
    if (deps) return deps
    // A configuration the edge cannot serve is refused at every request (500 -32603, as any fault),
    // and said once per isolate in one `edge.config_error` line naming the variable and the fix:
    // the answer cannot say it (nothing internal reaches a client) and a Worker has no start to stop.
    if (configFault) throw configFault
    let options: McpEdgeOptions | undefined
    try {
      options = (init as (env: E) => McpEdgeOptions)(c.env as E)
      return (deps = buildEdgeDeps(options, runtime, defer))
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e
      configFault = e
      const log = options?.logger === false ? undefined : (options?.logger ?? runtime.logger())
      log?.({ level: 'error', msg: 'edge.config_error', ...(e.variable !== undefined ? { variable: e.variable } : {}), text: e.message })
      throw e
    }
  }
  const clientSignal = runtime.clientSignal ?? ((c: Context) => c.req.raw.signal)
  // Faults are answered here, not by an onError of the sub-app: Hono wraps every route of a
  // sub-app that has one in a second compose per request.
  const fault = (e: unknown) => toWebResponse(edgeFault(e, () => deps!))

  const post = async (c: Context): Promise<Response> => {
    let d: EdgeDeps
    try {
      d = depsFor(c)
    } catch (e) {
      return fault(e)
    }
    return toWebResponse(
      await serveWebPost(
        d,
        c.req.raw,
        c.req.param('origin'),
        (maxBytes) => readHonoBody(c, maxBytes),
        () => clientSignal(c)
      )
    )
  }
  const passThrough = (method: 'GET' | 'DELETE') => async (c: Context) => {
    // Hono routes HEAD to the GET handler; a HEAD would open the origin's standalone stream for
    // a response that has no body, and nothing would ever close it.
    if (c.req.method === 'HEAD') return notAllowed()
    try {
      const d = depsFor(c)
      const virtual = virtualServerFor(d.config, c.req.param('origin'))
      const t = virtual ? { id: virtual.name, url: '' } : targetFor(d.config, c.req.param('origin'))
      if (!t) return toWebResponse(noOriginHere())
      const refusal = checkHostAndOrigin(c.req.raw.headers, d.config)
      if (refusal) return toWebResponse(refusalResponse(refusal))
      let headers: RequestHeaders = c.req.raw.headers
      let identity: AccessIdentity | undefined
      if (d.auth) {
        // The same token check as a POST (request-auth.ts); the origin gets the edge's credential, not the client's.
        const a = await authorizeRequest(d.auth, d, t, headers, method)
        if (!a.ok) return toWebResponse(a.response)
        headers = a.headers
        identity = a.identity
      }
      if (virtual) return toWebResponse(await handleVirtualPassThrough(method, headers, virtual, d, identity))
      // A virtual server's session id never reaches an origin (it carries the other origins' sessions).
      const misrouted = await virtualSessionOnOrigin(d, headers)
      if (misrouted) return toWebResponse(localResponse(misrouted))
      const validUntilMs = identity?.validUntilMs
      return toWebResponse(observeAnswer(d.metrics, t.id, 0, await handlePassThrough(method, headers, t, d, validUntilMs !== undefined ? { validUntilMs } : {})))
    } catch (e) {
      return fault(e)
    }
  }

  const app = new Hono()
  for (const path of ['/', '/:origin']) {
    app.post(path, post)
    app.get(path, passThrough('GET'))
    app.delete(path, passThrough('DELETE'))
    // 405: a body sent with it (PUT, PATCH) is dropped first, up to 64 KiB (discardBody says why).
    app.all(path, async (c) => (await discardBody(c.req.raw, 64 * 1024), notAllowed()))
  }
  const wellKnown = new Hono()
  const metadata = (c: Context) => {
    let d: EdgeDeps
    try {
      d = depsFor(c)
    } catch (e) {
      return fault(e)
    }
    const answer = d.auth ? metadataAnswer(d.auth, c.req.path) : null
    return toWebResponse(answer ?? notFound())
  }
  // Public and read before a client holds a token: any page may read it (a preflight for the MCP-Protocol-Version header the SDK sends).
  for (const path of [WELL_KNOWN_PRM, `${WELL_KNOWN_PRM}/*`]) {
    wellKnown.use(path, cors({ origin: '*', allowMethods: ['GET', 'OPTIONS'], maxAge: 600 }))
    wellKnown.get(path, metadata)
  }
  const parts: McpEdgeParts = {
    wellKnown,
    depsFor,
    get deps() {
      return deps
    },
    close: async () => {
      await deps?.close()
    },
    idle: async (maxMs) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), maxMs)))
      try {
        // Work may start more work (a decided list writes its snapshot): wait until none is left.
        while (background.size > 0) if ((await Promise.race([Promise.all(background).then(() => true), late])) === false) return false
        return true
      } finally {
        clearTimeout(timer)
      }
    },
  }
  return Object.defineProperties(app, Object.getOwnPropertyDescriptors(parts)) as McpEdge
}
