/**
 * @module adapters/node
 * The standalone Node server: `mcpEdge()` (node-edge.ts, with the tiered engine, prom-client
 * metrics and OpenTelemetry spans where installed: server-runtime.ts) with the store STORE_URL / STORE_FILE
 * select (stores/node-store.ts: Redis, the durable file store, or memory), inside the
 * standalone app (`createApp`: `/mcp`, `/healthz`, `/metrics`, admin), served on `node:http` (the
 * POST hot path straight to the edge's front door, the rest through @hono/node-server;
 * post-listener.ts). `startEdge` is used by `mcp-edge serve`, `npm start`, the tests and the benchmark.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp } from '../../app'
import type { EdgeDeps } from '../../core/exchange'
import type { KvStore, LogRecord, OriginClient, ValidatorEngine } from '../../core/ports'
import { isLoopbackHost } from '../../core/request/transport-checks'
import { openNodeStore, type NodeStore } from '../../stores/node-store'
import { drainServer, InFlightRequests, type StopReport } from './graceful-stop'
import { listenError, loadNodeConfig, type NodeConfig, type NodeServerOptions } from './node-config'
import { nodeRuntime, stdoutLogger } from './node-edge'
import { createUndiciOriginClient } from './origin-client'
import { createNodeListener } from './post-listener'
import { loadServerParts } from './server-runtime'
import { createMcpEdge, type McpEdge } from '../../mcp-edge'
import { startupRecords } from '../../core/startup-report'
import { applyConnectionBounds, boundsOf } from './connection-bounds'
import { readText, settingsOf } from '../../core/settings'
import type { RateLimits } from '../../core/access/rate-limit'

/**
 * Options of {@link startEdge}: the Node entry's settings as typed options (`NodeServerOptions`:
 * `host`, `port`, `shutdownGraceMs`, `storeFile`, `storeUrl`, `storePrefix`, `maxConnections`,
 * `headersTimeoutMs`, `requestTimeoutMs`, `keepAliveTimeoutMs`, and `demoPort`, which only
 * `mcp-edge serve --demo` uses), each winning over its variable in `env` (docs/configuration.md),
 * and the server's ports. Anything unset comes from `env`.
 */
export interface StartEdgeOptions extends NodeServerOptions {
  /** The variables of docs/configuration.md (default `process.env`). */
  env?: Record<string, string | undefined>
  /** The store; default the one `storeUrl` / `storeFile` select. */
  kv?: KvStore
  engine?: ValidatorEngine
  origin?: OriginClient
  /** Log sink; default: one JSON line per POST on stdout, batched. */
  log?: (r: LogRecord) => void
}

/** A running edge. `url` is the MCP endpoint. */
export interface RunningEdge {
  url: string
  port: number
  deps: EdgeDeps
  /** The store, as the start-up governance line names it (`file .edge-data/kv.json`, `redis ...`, `memory`). */
  storeName: string
  /** The Node entry's settings in force (typed options over variables over defaults). */
  nodeConfig: NodeConfig
  /** Stops at once: every connection is closed, requests in flight are cut; then the store is closed (flushed first). */
  close(): Promise<void>
  /**
   * Graceful stop (graceful-stop.ts): stops accepting, waits up to `graceMs` (default
   * `shutdownGraceMs`, `SHUTDOWN_GRACE_MS`) for requests and SSE
   * streams in flight, answers what is still open with -31002, then closes the store (flushed
   * first) and flushes the log. Nothing listens once it resolves.
   */
  stop(graceMs?: number): Promise<StopReport>
  /** Resolves when every acknowledged store write is durable (for a shutdown that drains first). */
  flushStore(): Promise<void>
  /** Flushes and releases the store (file lock, Redis connections); later writes reject. Idempotent. */
  closeStore(): Promise<void>
}

/**
 * Starts the standalone edge on Node, with the Node entry's settings read once (`loadNodeConfig`:
 * typed options, then `env`, then the defaults of the settings table): where it listens, the
 * store (`kv` when given, else `storeUrl`: Redis, connected before listening, or `storeFile`;
 * `memory` for none; docs/stores.md), the connection bounds (connection-bounds.ts) and the grace of
 * `stop()`. Bound to loopback, it answers loopback Host names only unless `ALLOWED_HOSTS` says
 * otherwise.
 * @throws ConfigError for a bad configuration value or option (STORE_URL and STORE_PREFIX included)
 * @throws StoreLockedError / StoreFileError (stores/) when another edge holds the store file or it cannot be read
 * @throws StoreConnectError (stores/redis-kv.ts) when Redis cannot be reached
 * @throws ListenError (node-config.ts) when the port is in use or not allowed, or the host is not local
 */
export async function startEdge(opts: StartEdgeOptions = {}): Promise<RunningEdge> {
  const env = opts.env ?? process.env
  const node = loadNodeConfig(env, opts)
  const host = node.host
  const store: Omit<NodeStore, 'kv'> & { kv: KvStore } = opts.kv
    ? { kv: opts.kv, description: 'given', ready: async () => {}, flush: async () => {}, close: async () => {} }
    : await openNodeStore({ ...node, sharedRateLimit: !rateLimitsOf(env).empty })
  // ajv (tiered engine), prom-client and OpenTelemetry when installed (server-runtime.ts).
  const parts = await loadServerParts()
  const undiciClient = opts.origin ? null : createUndiciOriginClient()
  const closeOrigin = async () => {
    await undiciClient?.close()
  }
  const logger = opts.log ?? stdoutLogger()
  let edge: McpEdge
  try {
    const runtime = {
      ...nodeRuntime,
      // The start-up report is written below, once the server listens.
      reportsStart: true,
      engine: parts.engine,
      ...(parts.metrics ? { metrics: parts.metrics } : {}),
      ...(parts.tracer ? { tracer: parts.tracer } : {}),
    }
    edge = createMcpEdge(
      {
        env,
        store: store.kv,
        originClient: opts.origin ?? undiciClient!,
        logger,
        ...(opts.engine ? { engine: opts.engine } : {}),
        // STORE_URL: RATE_LIMIT budgets counted in Redis, shared by every edge on it (else in memory).
        ...(store.rateLimiter ? { rateLimiter: store.rateLimiter } : {}),
        // DNS-rebinding protection: an edge bound to loopback only answers loopback Host names.
        ...(!env.ALLOWED_HOSTS && isLoopbackHost(host) ? { allowedHosts: ['localhost'] } : {}),
      },
      runtime
    )
    // Redis: connected (and subscribed to changes) before the first request.
    await store.ready()
  } catch (e) {
    await closeOrigin()
    await store.close()
    throw e
  }
  const deps = edge.deps!
  const app = createApp(edge)
  const port = node.port
  // POST /mcp goes straight to the edge's front door; the rest through @hono/node-server (post-listener.ts).
  const inFlight = new InFlightRequests()
  const server = createServer(inFlight.wrap(createNodeListener(app, edge, '/mcp')))
  try {
    // Connection cap and header/body deadlines (MAX_CONNECTIONS, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS).
    applyConnectionBounds(server, boundsOf(node))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (e) {
    await closeOrigin()
    await store.close()
    throw listenError(e, host, port)
  }
  const actual = (server.address() as AddressInfo).port
  // Start-up truth once it listens (a failed start writes only its error): unknown variables in the
  // edge's namespaces, then the governance in force (core/startup-report.ts).
  for (const r of startupRecords(deps.config, env, store.description)) deps.log(r)
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/mcp`,
    port: actual,
    deps,
    storeName: store.description,
    nodeConfig: node,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
        void closeOrigin()
      })
      // Background work (lists learned, pins decided and written) finishes before the store closes.
      await edge.idle(BACKGROUND_WAIT_MS)
      await store.close()
    },
    stop: async (graceMs = node.shutdownGraceMs) => {
      const report = await drainServer(server, inFlight, graceMs, () => undiciClient?.expire())
      deps.log({ msg: 'edge.stop', ...report })
      await edge.idle(Math.max(graceMs, 0))
      await closeOrigin()
      await store.close()
      if ('flush' in logger && typeof logger.flush === 'function') await (logger.flush as () => Promise<void>)()
      return report
    },
    flushStore: () => store.flush(),
    closeStore: () => store.close(),
  }
}

/**
 * How long `close()` waits for the edge's background work (tool lists learned, pins written) before
 * it closes the store: a write of a few records takes milliseconds; an origin that hangs a tool-list
 * pull is cut off with the origin's connections.
 */
const BACKGROUND_WAIT_MS = 5_000

/** The `RATE_LIMIT` budgets of `env`, by the settings table's rule (the edge reads the same row). */
function rateLimitsOf(env: Record<string, string | undefined>): RateLimits {
  const row = settingsOf('all').find((s) => s.variable === 'RATE_LIMIT')!
  return readText(row, env.RATE_LIMIT) as RateLimits
}
