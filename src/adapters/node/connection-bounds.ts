/**
 * @module adapters/node/connection-bounds
 * How many client connections the Node edge holds and how long it waits for a slow client
 * (docs/reliability.md). These are `node:http` server settings, applied by
 * {@link applyConnectionBounds} in one place before `listen`:
 *
 * | variable | node:http setting |
 * |---|---|
 * | `MAX_CONNECTIONS` | `server.maxConnections`: a connection past it is closed on accept |
 * | `HEADERS_TIMEOUT_MS` | `headersTimeout`: the request line and headers must arrive within it |
 * | `REQUEST_TIMEOUT_MS` | `requestTimeout`: the whole request (headers and body) must arrive within it |
 * | `KEEP_ALIVE_TIMEOUT_MS` | `keepAliveTimeout`: an idle kept-alive connection is closed after it |
 *
 * Their defaults and rules are the rows of core/settings.ts (docs/configuration.md, "Limits"),
 * read with the rest of the Node entry's settings by `loadNodeConfig` (node-config.ts), from the
 * variables or from `startEdge`'s typed options.
 *
 * A client that misses a deadline gets 408 and its connection is closed. The deadlines bound
 * receiving the request only: a long SSE reply or GET stream is bounded by STREAM_IDLE_MS and
 * STREAM_MAX_MS instead. Node checks the deadlines every `connectionsCheckingInterval` ms (its
 * default, 30 s, is why a slow-header connection was held 91 s and a slow body 331 s under Node's
 * defaults); here it runs every quarter of the shorter deadline, between every 100 ms and every
 * 5 s ({@link checkingIntervalMs}), so a deadline is enforced at most 25% late.
 */
import type { Server } from 'node:http'
import { loadNodeConfig, type NodeConfig, type NodeServerOptions } from './node-config'

/** The connection bounds of one Node edge, in connections and ms. */
export interface ConnectionBounds {
  maxConnections: number
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
}

/**
 * The four bounds of the Node entry's settings, read from the variables (unset or empty: the
 * default) and the typed options by `loadNodeConfig` (node-config.ts).
 * @throws ConfigError naming the variable for a value that is not a positive integer, or for
 *   REQUEST_TIMEOUT_MS below HEADERS_TIMEOUT_MS (the request deadline includes the headers)
 */
export function loadConnectionBounds(env: Record<string, string | undefined>, options: NodeServerOptions = {}): ConnectionBounds {
  return boundsOf(loadNodeConfig(env, options))
}

/** The connection bounds of the Node entry's settings. */
export function boundsOf(config: NodeConfig): ConnectionBounds {
  const { maxConnections, headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = config
  return { maxConnections, headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs }
}

/** How often Node checks the header and request deadlines: a quarter of the shorter one, within 100 ms..5 s. */
export function checkingIntervalMs(b: ConnectionBounds): number {
  return Math.min(5_000, Math.max(100, Math.floor(Math.min(b.headersTimeoutMs, b.requestTimeoutMs) / 4)))
}

/**
 * Applies the bounds to a server that is not listening yet (the deadline checker starts on
 * `listen` and reads `connectionsCheckingInterval` then).
 * @returns the bounds applied
 */
export function applyConnectionBounds(server: Server, b: ConnectionBounds): ConnectionBounds {
  server.maxConnections = b.maxConnections
  server.headersTimeout = b.headersTimeoutMs
  server.requestTimeout = b.requestTimeoutMs
  server.keepAliveTimeout = b.keepAliveTimeoutMs
  ;(server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = checkingIntervalMs(b)
  return b
}
