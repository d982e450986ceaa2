/**
 * @module exports/index
 * `mcp-edge-validator`: the same module and the same declarations on every runtime (Node, Bun,
 * Deno, Cloudflare Workers, browsers). What differs per runtime (the default logger, the
 * client-gone signal, whether deferred work goes to `waitUntil`) comes from the package's internal
 * `#runtime` import, which the runtime's export condition selects (package.json `imports`:
 * `workerd`/`worker`/`browser` -> runtime-workers.ts, `node`/`bun`/`deno` -> runtime-node.ts),
 * the way the MCP SDK selects its `_shims`. Its one declaration is `EdgeRuntime`, so the types a
 * user sees do not depend on the runtime or on TypeScript's module resolution.
 *
 * Nothing reachable from here imports an optional peer dependency (ajv, undici, prom-client,
 * @opentelemetry/api, ioredis, @hono/node-server): they are behind the
 * subpaths `./engines/ajv`, `./engines/tiered`, `./node`, `./redis`, `./prometheus` and `./otel`.
 * Every name is listed: the API report (api/mcp-edge-validator.api.md) is checked against the
 * built declarations by test/package/package.test.ts.
 */
import { runtime } from '#runtime'
import { createMcpEdge, type McpEdge, type McpEdgeInit } from '../mcp-edge'
import type { ValidatorEngine } from '../core/ports'

/**
 * The edge as a Hono sub-app: `app.route('/mcp', mcpEdge({ origin: 'http://127.0.0.1:3000/mcp' }))`,
 * or `mcpEdge((env) => ({ origin: env.ORIGIN_URL, store: env.TOOL_SCHEMAS }))` in a Worker.
 * Unset ports get the defaults: the @cfworker/json-schema engine, the global `fetch` to the
 * origin, an in-memory store, `TextMetrics`, one JSON log line per POST (docs/library.md, "Options").
 * @throws ConfigError for an unusable option or variable (options given as an object; for a
 *   function of `env`, at the first request)
 */
export function mcpEdge<E = unknown>(options: McpEdgeInit<E> = {}): McpEdge {
  return createMcpEdge(options, runtime)
}

/** The engine `mcpEdge` uses when `engine` is unset: @cfworker/json-schema, which never generates code (workerd forbids it). */
export function createDefaultEngine(): ValidatorEngine {
  return runtime.engine()
}

/** Which engine {@link createDefaultEngine} builds: the same on every runtime (the tiered engine with ajv is `mcp-edge-validator/engines/tiered`). */
export const DEFAULT_ENGINE = 'cfworker' as const

export { createApp, type GetDeps } from '../app'
export type { McpEdge, McpEdgeInit, McpEdgeParts } from '../mcp-edge'
export type { EdgeAccess, EdgeLimits, EdgePolicies, McpEdgeOptions, OriginOption } from '../edge-options'
export { MemoryRateLimiter, parseRateLimits, type MemoryRateLimiterOptions, type RateBudget, type RateDecision, type RateLimiter, type RateLimits } from '../core/access/rate-limit'
export { WorkersRateLimiter, bindingsFromEnv, type ConfiguredBinding, type RateLimitBinding } from '../adapters/workers/rate-limit-binding'
export { ConfigError, loadConfig, type Config } from '../core/config'
export { EdgeError, type EdgeErrorCode } from '../core/errors'
export type { EdgeDeps, OriginTarget } from '../core/exchange'
export { TextMetrics } from '../observe/text-metrics'
export type { EdgeMetrics, EdgeTracer, PostFigures, TraceSpan } from '../core/ports'
export type { Grade, GradeRow } from '../core/grade-table'
export {
  OriginReplyTooLargeError,
  OriginTimeoutError,
  SchemaUnusableError,
  type CompiledValidator,
  type Defer,
  type KvPut,
  type KvStore,
  type LogRecord,
  type Logger,
  type OriginClient,
  type OriginReply,
  type OriginRequest,
  type ValidationIssue,
  type ValidatorEngine,
} from '../core/ports'
export { ALL_VERSIONS, type Dialect, type ProtocolVersion } from '../core/jsonrpc/versions'
export type { ToolRegistry } from '../core/validation/tool-registry'
export { MemoryKv } from '../stores/memory-kv'
export { createCfworkerEngine } from '../validators/cfworker'
export type { EngineOptions } from '../validators/ajv'
export { createFetchOriginClient } from '../adapters/workers/fetch-origin-client'
