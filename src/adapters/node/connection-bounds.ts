/**
 * @module adapters/node/connection-bounds
 * How many client connections the Node edge holds and how long it waits for a slow client
 * (docs/reliability.md). These are `node:http` server settings, applied by
 * {@link applyConnectionBounds} in one place before `listen`:
 *
 * | variable | default | node:http setting |
 * |---|---|---|
 * | `MAX_CONNECTIONS` | 10000 | `server.maxConnections`: a connection past it is closed on accept |
 * | `HEADERS_TIMEOUT_MS` | 10000 | `headersTimeout`: the request line and headers must arrive within it |
 * | `REQUEST_TIMEOUT_MS` | 30000 | `requestTimeout`: the whole request (headers and body) must arrive within it |
 * | `KEEP_ALIVE_TIMEOUT_MS` | 5000 | `keepAliveTimeout`: an idle kept-alive connection is closed after it |
 *
 * A client that misses a deadline gets 408 and its connection is closed. The deadlines bound
 * receiving the request only: a long SSE reply or GET stream is bounded by STREAM_IDLE_MS and
 * STREAM_MAX_MS instead. Node checks the deadlines every `connectionsCheckingInterval` ms (its
 * default, 30 s, is why a slow-header connection was held 91 s and a slow body 331 s under Node's
 * defaults); here it runs every quarter of the shorter deadline, between every 100 ms and every
 * 5 s ({@link checkingIntervalMs}), so a deadline is enforced at most 25% late.
 */
import type { Server } from 'node:http'
import { ConfigError } from '../../core/config'
import { loadNodeConfig } from './node-config'

/** The connection bounds of one Node edge, in connections and ms. */
export interface ConnectionBounds {
  maxConnections: number
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
}

/**
 * Reads the four variables (unset or empty: the default).
 * @throws ConfigError naming the variable for a value that is not a positive integer, or for
 *   REQUEST_TIMEOUT_MS below HEADERS_TIMEOUT_MS (the request deadline includes the headers)
 */
export function loadConnectionBounds(env: Record<string, string | undefined>): ConnectionBounds {
  // The rules and defaults are the table's (core/settings.ts); the cross-check is this module's.
  const { maxConnections, headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = loadNodeConfig(env)
  const b = { maxConnections, headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs }
  if (b.requestTimeoutMs < b.headersTimeoutMs)
    throw ConfigError.bad('REQUEST_TIMEOUT_MS', String(b.requestTimeoutMs), `at least HEADERS_TIMEOUT_MS (${b.headersTimeoutMs}): the request deadline includes the headers`)
  return b
}

/** How often Node checks the header and request deadlines: a quarter of the shorter one, within 100 ms..5 s. */
export function checkingIntervalMs(b: ConnectionBounds): number {
  return Math.min(5_000, Math.max(100, Math.floor(Math.min(b.headersTimeoutMs, b.requestTimeoutMs) / 4)))
}

/**
 * Applies the bounds to a server that is not listening yet (the deadline checker starts on
 * `listen` and reads `connectionsCheckingInterval` then).
 * @returns the bounds applied
 * @throws ConfigError for a bad variable (see {@link loadConnectionBounds})
 */
export function applyConnectionBounds(server: Server, env: Record<string, string | undefined>): ConnectionBounds {
  const b = loadConnectionBounds(env)
  server.maxConnections = b.maxConnections
  server.headersTimeout = b.headersTimeoutMs
  server.requestTimeout = b.requestTimeoutMs
  server.keepAliveTimeout = b.keepAliveTimeoutMs
  ;(server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = checkingIntervalMs(b)
  return b
}
