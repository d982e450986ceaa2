/**
 * @module exports/shared
 * The part of the package's API that is the same on every runtime: re-exported by the `node`
 * build (exports/node.ts) and the Workers build (exports/workers.ts) of `mcp-edge-validator`.
 * Runtime-neutral: nothing here imports `node:*`, ajv or undici.
 */
export { createApp, type GetDeps } from '../app'
export { createMcpEdge, missingStore, type EdgeRuntime, type McpEdge, type McpEdgeInit, type McpEdgeParts } from '../mcp-edge'
export type { EdgeLimits, EdgePolicies, McpEdgeOptions } from '../edge-options'
export { servePost, type McpPost } from '../core/front-door'
export { ConfigError, loadConfig, type Config } from '../core/config'
export type { EdgeDeps, OriginTarget } from '../core/exchange'
// The metrics port's dependency-free implementation; `GradeCounters` is its former name, kept for embedders.
export { TextMetrics, TextMetrics as GradeCounters } from '../observe/text-metrics'
export type { EdgeMetrics, EdgeTracer, PostFigures, TraceSpan } from '../core/ports'
export type { Grade, GradeRow } from '../core/grading/grade-reply'
export {
  OriginReplyTooLargeError,
  OriginTimeoutError,
  SchemaUnusableError,
  type CompiledValidator,
  type Defer,
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
export { createToolRegistry, type ToolRegistry } from '../core/validation/tool-registry'
export { MemoryKv } from '../stores/memory-kv'
export { createCfworkerEngine } from '../validators/cfworker'
export type { EngineOptions } from '../validators/ajv'
export { createFetchOriginClient } from '../adapters/workers/fetch-origin-client'
