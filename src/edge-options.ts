/**
 * @module edge-options
 * The typed options of `mcpEdge()` (docs/library.md, "Options") and how they become the edge's
 * {@link Config}: each typed option is the typed form of one environment variable of
 * docs/configuration.md, the two are merged (the typed option wins) and read by {@link loadConfig},
 * so a value is checked by one rule whichever way it was given.
 */
import { ConfigError, loadConfig, type Config } from './core/config'
import type { EdgeDeps } from './core/exchange'
import type { KvStore, Logger, OriginClient, ValidatorEngine } from './core/ports'
import type { ProtocolVersion } from './core/jsonrpc/versions'

/** How the edge answers and grades (the policies of docs/design.md section 8). */
export interface EdgePolicies {
  /** `INVALID_ARGS`: invalid tools/call arguments as -32602 (`rpc-error`), as an `isError` result (`tool-error`), or by protocol version (`auto`, default). */
  invalidArgs?: Config['invalidArgs']
  /** `UNKNOWN_TOOL`: a tools/call for a tool the origin does not list: `reject` (default, -32602 after one refresh) or `forward`. */
  unknownTool?: Config['unknownTool']
  /** `ON_SCHEMA_ERROR`: missing or unusable schema, or a store outage: `forward` (default, graded `unvalidated`) or `reject` (-32603). */
  onSchemaError?: Config['onSchemaError']
  /** `OUTPUT_SCHEMA`: `structuredContent` against `outputSchema`: `off`, `warn` (default), `strict`. */
  outputSchema?: Config['outputSchema']
  /** `HIDDEN_FAILURES`: add `isError: true` to results that hide a failure (default true). */
  hiddenFailures?: boolean
  /** `SUPPORTED_VERSIONS`: the protocol versions accepted (default: all four). */
  supportedVersions?: ProtocolVersion[]
}

/** Bounds (units in the names: bytes, ms, s). */
export interface EdgeLimits {
  /** `MAX_BODY_BYTES` (default 4194304): 413 above it. */
  maxBodyBytes?: number
  /** `MAX_REPLY_BYTES` (default 16777216): an origin's JSON reply, or one SSE event, above it gives each open id -31001. */
  maxReplyBytes?: number
  /** `MAX_BATCH` (default 100): -32600 above it (2025-03-26 batches). */
  maxBatch?: number
  /** `MAX_JSON_DEPTH` (default 64): deepest nesting of a request body (-32700 above it) or an origin reply (-31001). */
  maxJsonDepth?: number
  /** `ORIGIN_TIMEOUT_MS` (default 30000): -31002 after it. */
  originTimeoutMs?: number
  /** `TOOL_LIST_TIMEOUT_MS` (default 10000): overall deadline of one tool-list pull by the edge. */
  toolListTimeoutMs?: number
  /** `SCHEMA_TTL_S` (default 300): tool schema freshness. */
  schemaTtlS?: number
  /** `REFRESH_MIN_INTERVAL_MS` (default 5000): at most one tool-list pull per origin and scope per interval. */
  refreshMinIntervalMs?: number
  /** `REFRESH_BUDGET_PER_MIN` (default 30): tool-list pulls per origin per minute, over every caller. */
  refreshBudgetPerMin?: number
  /** `VALIDATOR_CACHE_SIZE` (default 1000): compiled validators and tool entries kept in memory. */
  validatorCacheSize?: number
  /** `PRIVATE_SCOPE_TTL_S` (default 3600, at least 60): seconds the store keeps a private tool-list scope after its last write. */
  privateScopeTtlS?: number
  /** `MAX_PRIVATE_SCOPES` (default 1000): private tool-list scopes kept per origin, in memory and in the store, least recently used out first. */
  maxPrivateScopes?: number
}

/** Options of `mcpEdge()`. Everything is optional; unset values come from `env`, then the defaults. */
export interface McpEdgeOptions {
  /** `ORIGIN_URL`: the MCP endpoint of the origin served at the mount point itself. */
  origin?: string
  /** `ORIGINS`: more origins by name, each served at `<mount>/<name>` (names: letters, digits, `.`, `_`, `~`, `-`). */
  origins?: Record<string, string>
  /** Where tool schemas are kept (a Workers KV namespace fits). Default: in memory, per edge. */
  store?: KvStore
  /** The JSON Schema engine. Default: the runtime build's `createDefaultEngine()` (Node: tiered; Workers: cfworker). */
  engine?: ValidatorEngine
  /** How the edge reaches origins. Default: Node build undici, Workers build `fetch`. */
  originClient?: OriginClient
  policies?: EdgePolicies
  limits?: EdgeLimits
  /** `ALLOWED_ORIGINS`: browser `Origin` allow-list (`*` for any); default: loopback origins only. */
  allowedOrigins?: string[]
  /**
   * `FORWARD_ORIGIN_HEADER`: send the browser's `Origin` header on to the origin (default false:
   * the edge applies `allowedOrigins` itself and calls the origin as its own client, without it).
   */
  forwardOriginHeader?: boolean
  /** `ALLOWED_HOSTS`: `Host` allow-list (`localhost` = loopback names); default: no Host check. */
  allowedHosts?: string[]
  /** `ADMIN_TOKEN`: bearer token of the admin API of the standalone app (`createApp`). */
  adminToken?: string
  /**
   * One record per POST (the grade table, docs/design.md section 6); `false` for none. Default: one
   * JSON line on stdout (Node build: batched; Workers build: `console.log`).
   */
  logger?: Logger | false
  /** The metrics port (served at `/metrics` by the standalone app). Default: a new set per edge (Node: prom-client; elsewhere TextMetrics). */
  metrics?: EdgeDeps['metrics']
  /**
   * The environment strings of docs/configuration.md (`ORIGIN_URL`, `MAX_BODY_BYTES`, ...), e.g.
   * `process.env` or a Worker's `env`; entries that are not strings (bindings) are ignored.
   * Typed options win over them.
   */
  env?: Record<string, unknown>
}

type Conv = (v: never) => string
// String(): a JavaScript caller's number or object is then refused by loadConfig's rule, by name, not a TypeError.
const text: Conv = (v: string) => String(v)
const num: Conv = (v: number) => String(v)
const csv: Conv = (v: string[]) => (Array.isArray(v) ? v.join(',') : String(v))
const json: Conv = (v: Record<string, string>) => JSON.stringify(v)
const onOff: Conv = (v: boolean) => (v === true ? 'on' : v === false ? 'off' : String(v))

/** Each typed option: its path in {@link McpEdgeOptions}, the variable it stands for, and how it is written as that variable. */
const OPTION_VARS: [path: string, variable: string, get: (o: McpEdgeOptions) => unknown, conv: Conv][] = [
  ['origin', 'ORIGIN_URL', (o) => o.origin, text],
  ['origins', 'ORIGINS', (o) => o.origins, json],
  ['allowedOrigins', 'ALLOWED_ORIGINS', (o) => o.allowedOrigins, csv],
  ['allowedHosts', 'ALLOWED_HOSTS', (o) => o.allowedHosts, csv],
  ['forwardOriginHeader', 'FORWARD_ORIGIN_HEADER', (o) => o.forwardOriginHeader, onOff],
  ['adminToken', 'ADMIN_TOKEN', (o) => o.adminToken, text],
  ['policies.invalidArgs', 'INVALID_ARGS', (o) => o.policies?.invalidArgs, text],
  ['policies.unknownTool', 'UNKNOWN_TOOL', (o) => o.policies?.unknownTool, text],
  ['policies.onSchemaError', 'ON_SCHEMA_ERROR', (o) => o.policies?.onSchemaError, text],
  ['policies.outputSchema', 'OUTPUT_SCHEMA', (o) => o.policies?.outputSchema, text],
  ['policies.hiddenFailures', 'HIDDEN_FAILURES', (o) => o.policies?.hiddenFailures, onOff],
  ['policies.supportedVersions', 'SUPPORTED_VERSIONS', (o) => o.policies?.supportedVersions, csv],
  ['limits.maxBodyBytes', 'MAX_BODY_BYTES', (o) => o.limits?.maxBodyBytes, num],
  ['limits.maxReplyBytes', 'MAX_REPLY_BYTES', (o) => o.limits?.maxReplyBytes, num],
  ['limits.maxBatch', 'MAX_BATCH', (o) => o.limits?.maxBatch, num],
  ['limits.maxJsonDepth', 'MAX_JSON_DEPTH', (o) => o.limits?.maxJsonDepth, num],
  ['limits.originTimeoutMs', 'ORIGIN_TIMEOUT_MS', (o) => o.limits?.originTimeoutMs, num],
  ['limits.toolListTimeoutMs', 'TOOL_LIST_TIMEOUT_MS', (o) => o.limits?.toolListTimeoutMs, num],
  ['limits.schemaTtlS', 'SCHEMA_TTL_S', (o) => o.limits?.schemaTtlS, num],
  ['limits.refreshMinIntervalMs', 'REFRESH_MIN_INTERVAL_MS', (o) => o.limits?.refreshMinIntervalMs, num],
  ['limits.refreshBudgetPerMin', 'REFRESH_BUDGET_PER_MIN', (o) => o.limits?.refreshBudgetPerMin, num],
  ['limits.validatorCacheSize', 'VALIDATOR_CACHE_SIZE', (o) => o.limits?.validatorCacheSize, num],
  ['limits.privateScopeTtlS', 'PRIVATE_SCOPE_TTL_S', (o) => o.limits?.privateScopeTtlS, num],
  ['limits.maxPrivateScopes', 'MAX_PRIVATE_SCOPES', (o) => o.limits?.maxPrivateScopes, num],
]

/**
 * The {@link Config} for a set of options: `env`'s strings, overridden by the typed options
 * written as their variables, read by {@link loadConfig}.
 * @throws ConfigError for an unusable value; when it came from a typed option the message names
 *   the option and its variable, e.g. `limits.maxBodyBytes=0 (MAX_BODY_BYTES): expected an integer >= 1`
 */
export function resolveConfig(options: McpEdgeOptions): Config {
  const vars: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(options.env ?? {})) if (typeof value === 'string') vars[name] = value
  const fromOption = new Map<string, string>()
  for (const [path, variable, get, conv] of OPTION_VARS) {
    const value = get(options)
    if (value === undefined) continue
    vars[variable] = (conv as (v: unknown) => string)(value)
    fromOption.set(variable, path)
  }
  try {
    return loadConfig(vars)
  } catch (e) {
    // Name the option the value came from (`ORIGINS.<name>` for one origin of `origins`).
    const variable = e instanceof ConfigError ? e.variable : undefined
    const base = variable?.startsWith('ORIGINS.') ? 'ORIGINS' : variable
    const path = base === undefined ? undefined : fromOption.get(base)
    if (!(e instanceof ConfigError) || path === undefined || variable === undefined) throw e
    const at = base === variable ? path : `${path}${variable.slice(base!.length)}`
    const message = e.shown !== undefined && e.expected !== undefined ? `${at}=${e.shown} (${variable}): expected ${e.expected}` : `${at} (${variable}): ${e.message}`
    throw new ConfigError(message, variable, e.shown, e.expected)
  }
}
