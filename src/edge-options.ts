/**
 * @module edge-options
 * The typed options of `mcpEdge()` (docs/library.md, "Options") and how they become the edge's
 * {@link Config}: each typed option is the typed form of one environment variable of
 * docs/configuration.md (one row of core/settings.ts); the typed option wins over the variable, and
 * either is checked by the row's rule, so a value is checked by one rule whichever way it was given.
 */
import { checkAuthSettings, checkVirtualServers, ConfigError, showValue, type Config } from './core/config'
import { closest } from './core/config-rules'
import { readSettings, settingsOf, type Setting, type SettingOption } from './core/settings'
import type { EdgeDeps } from './core/exchange'
import type { EdgeTracer, KvStore, Logger, OriginClient, ValidatorEngine } from './core/ports'
import type { ProtocolVersion } from './core/jsonrpc/versions'
import type { RateLimiter } from './core/access/rate-limit'

/** Who may call which tool, and how often (docs/security.md). */
export interface EdgeAccess {
  /** `TOOLS_ALLOW`: tool names or globs clients may see and call on every origin (a comma-separated string or a list); default: all. */
  toolsAllow?: string | string[]
  /** `TOOLS_DENY`: tool names or globs hidden from clients on every origin; wins over `toolsAllow`. */
  toolsDeny?: string | string[]
  /** `RATE_LIMIT`: `<n>/s` or `<n>/min` per caller, then per-tool budgets, e.g. `60/min,search_*=10/min`. */
  rateLimit?: string
}

/** One named origin of {@link McpEdgeOptions.origins}: its URL, or its URL and its own tool lists (they narrow `access.toolsAllow` / `toolsDeny`). */
export type OriginOption = string | { url: string; toolsAllow?: string | string[]; toolsDeny?: string | string[] }

/** How the edge answers and grades (the policies of docs/design.md section 8). */
export interface EdgePolicies {
  /** `INVALID_ARGS`: invalid tools/call arguments as -32602 (`rpc-error`), as an `isError` result (`tool-error`), or by protocol version (`auto`, default). */
  invalidArgs?: Config['invalidArgs']
  /** `UNKNOWN_TOOL`: a tools/call for a tool the origin does not list: `reject` (default, -32602 after one refresh) or `forward`. */
  unknownTool?: Config['unknownTool']
  /** `ON_SCHEMA_ERROR`: missing or unusable schema, or a store outage: `forward` (default, graded `unvalidated`) or `reject` (-32603). */
  onSchemaError?: Config['onSchemaError']
  /** `TOOL_PINNING`: `off`, `audit` (default: changes logged and counted, no answer changed) or `enforce` (unapproved tools left out of tools/list, their calls refused; docs/pinning.md). */
  toolPinning?: Config['toolPinning']
  /** `OUTPUT_SCHEMA`: `structuredContent` against `outputSchema`: `off`, `warn` (default), `strict`. */
  outputSchema?: Config['outputSchema']
  /** `HIDDEN_FAILURES`: add `isError: true` to results that hide a failure (default true). */
  hiddenFailures?: boolean
  /** `RESULT_SECRETS`: secrets in tool results: `off`, `audit` (default: logged and counted), `redact` (`[REDACTED:<category>]`) or `block` (an `isError` result; docs/result-checks.md). */
  resultSecrets?: Config['resultSecrets']
  /** `RESULT_CONTROL`: terminal escapes, bidi and zero-width characters in tool results: `off`, `audit` (default) or `strip`. */
  resultControl?: Config['resultControl']
  /** `OVERSIZE_RESULT`: a result text item above `limits.maxResultTextBytes`: `error` (default, -31001) or `truncate` (head and tail kept, a marker between). */
  oversizeResult?: Config['oversizeResult']
  /** `SUPPORTED_VERSIONS`: the protocol versions accepted (default: all five, 2024-11-05 to 2026-07-28). */
  supportedVersions?: ProtocolVersion[]
}

/** Bounds (units in the names: bytes, ms, s). */
export interface EdgeLimits {
  /** `MAX_BODY_BYTES` (default 4194304): 413 above it. */
  maxBodyBytes?: number
  /** `MAX_REPLY_BYTES` (default 16777216): an origin's JSON reply, or one SSE event, above it gives each open id -31001. */
  maxReplyBytes?: number
  /** `MAX_RESULT_TEXT_BYTES` (default unset: no bound): the largest `text` item of a tool result, in UTF-8 bytes; above it `policies.oversizeResult` applies. */
  maxResultTextBytes?: number
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
  /** `SCHEMA_RECHECK_MS` (default 30000): a rejection by a schema learned longer ago than this is confirmed by one refresh first. */
  schemaRecheckMs?: number
  /** `STREAM_IDLE_MS` (default 300000; 0: no bound): an SSE reply completing nothing for this long ends, open ids -31002. */
  streamIdleMs?: number
  /** `STREAM_MAX_MS` (default 3600000; 0: no bound): longest a relayed stream may last. */
  streamMaxMs?: number
  /** `REFRESH_MIN_INTERVAL_MS` (default 5000): at most one tool-list pull per origin and scope per interval. */
  refreshMinIntervalMs?: number
  /** `REFRESH_BUDGET_PER_MIN` (default 30): tool-list pulls per origin per minute, over every caller. */
  refreshBudgetPerMin?: number
  /** `VALIDATOR_CACHE_SIZE` (default 1000): compiled validators and tool entries kept in memory. */
  validatorCacheSize?: number
  /** `VALIDATION_BUDGET_MS` (default 50): the CPU time one call's argument validation may be estimated to take; a call past it is answered as invalid arguments, never forwarded unchecked. */
  validationBudgetMs?: number
  /** `PRIVATE_SCOPE_TTL_S` (default 3600, at least 60): seconds the store keeps a private tool-list scope after its last write. */
  privateScopeTtlS?: number
  /** `MAX_PRIVATE_SCOPES` (default 1000): private tool-list scopes kept per origin, in memory and in the store, least recently used out first. */
  maxPrivateScopes?: number
}

/**
 * The edge as an OAuth 2.1 resource server (docs/security.md): on when `issuer` is set. Each
 * field is the typed form of its variable.
 */
export interface EdgeAuthOptions {
  /** `AUTH_ISSUER`: the `iss` of accepted access tokens; set: auth is on. */
  issuer?: string
  /** `AUTH_AUDIENCE`: the edge's resource URL as clients call it (RFC 8707), e.g. `https://mcp.example.com/mcp`. */
  audience?: string
  /** `AUTH_JWKS_URL`: the issuer's JWKS URL (exactly one of it and `jwks`). */
  jwksUrl?: string
  /** `AUTH_JWKS`: the key set as JSON text (public keys only). */
  jwks?: string
  /** `AUTH_JWKS_COOLDOWN_MS` (default 30000): least time between two JWKS reads caused by an unknown `kid`. */
  jwksCooldownMs?: number
  /** `AUTH_JWKS_MAX_BYTES` (default 1048576): the largest JWKS answer read; a larger one counts as a failed read. */
  jwksMaxBytes?: number
  /** `AUTH_ALGORITHMS`: accepted JWS algorithms (default RS256, ES256, PS256, EdDSA). */
  algorithms?: string[]
  /** `ORIGIN_AUTHORIZATION`: the `Authorization` value sent to the origin instead of the client's (default: none). */
  originAuthorization?: string
  /** `TOOL_SCOPES`: tool name or glob -> the scope (or scopes, all needed) a token needs to call it. */
  toolScopes?: Record<string, string | string[]> | string
}

/** Options of `mcpEdge()`. Everything is optional; unset values come from `env`, then the defaults. */
export interface McpEdgeOptions {
  /** `ORIGIN_URL`: the MCP endpoint of the origin served at the mount point itself. */
  origin?: string
  /** `ORIGINS`: more origins by name, each served at `<mount>/<name>` (names: letters, digits, `.`, `_`, `~`, `-`). */
  origins?: Record<string, OriginOption>
  /**
   * `VIRTUAL_SERVERS`: virtual servers by name, each served at `<mount>/<name>`: the origins of
   * {@link origins} it merges, how it names their tools (`prefix`, default `always`:
   * `<origin>__<tool>`) and its `tools/list` page size (docs/virtual-servers.md).
   */
  virtualServers?: Record<string, { origins: string[]; prefix?: 'always' | 'conditional' | 'never'; pageSize?: number }>
  /** `VIRTUAL_SESSION_KEY`: HMAC key (32+ characters) of virtual-server session ids; the same on every replica. Default: random per process. */
  virtualSessionKey?: string
  /** Where tool schemas are kept (a Workers KV namespace fits). Default: in memory, per edge. */
  store?: KvStore
  /** The JSON Schema engine. Default: @cfworker/json-schema (`createDefaultEngine()`); the tiered engine with ajv: `mcp-edge-validator/engines/tiered`. */
  engine?: ValidatorEngine
  /** How the edge reaches origins. Default: the runtime's global `fetch`; undici's pool: `createUndiciOriginClient()` of `mcp-edge-validator/node`. */
  originClient?: OriginClient
  policies?: EdgePolicies
  limits?: EdgeLimits
  access?: EdgeAccess
  /**
   * Where `RATE_LIMIT` budgets are counted (the limiter port, src/core/access/rate-limit.ts).
   * Default: in memory, per edge (`MemoryRateLimiter`); the standalone Node server with
   * `STORE_URL` uses Redis (`RedisRateLimiter` of `mcp-edge-validator/redis`), the standalone
   * Worker its Rate Limiting bindings (`WorkersRateLimiter`).
   */
  rateLimiter?: RateLimiter
  /** The edge as an OAuth resource server (`AUTH_*`, `ORIGIN_AUTHORIZATION`, `TOOL_SCOPES`); off unless `auth.issuer` is set. */
  auth?: EdgeAuthOptions
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
  /** `METRICS_TOKEN`: bearer token `GET /metrics` of the standalone app requires; default: open (behind the Host check). */
  metricsToken?: string
  /** `LOG_LEVEL`: the least severe log record written (default `info`: one line per POST and every event; `warn` drops the lines of answered POSTs). */
  logLevel?: 'info' | 'warn' | 'error'
  /**
   * One record per POST (the grade table, docs/design.md section 6); `false` for none. Default: one
   * JSON line on stdout (Node build: batched; Workers build: `console.log`).
   */
  logger?: Logger | false
  /** The metrics port (served at `/metrics` by the standalone app). Default: a new `TextMetrics` per edge; prom-client: `promMetrics()` of `mcp-edge-validator/prometheus`. */
  metrics?: EdgeDeps['metrics']
  /** Spans for POSTs, origin calls and tool-list pulls. Default: none; OpenTelemetry: `createOtelTracer()` of `mcp-edge-validator/otel`. */
  tracer?: EdgeTracer
  /**
   * The environment strings of docs/configuration.md (`ORIGIN_URL`, `MAX_BODY_BYTES`, ...), e.g.
   * `process.env` or a Worker's `env`; entries that are not strings (bindings) are ignored.
   * Typed options win over them.
   */
  env?: Record<string, unknown>
}

/**
 * The options of {@link McpEdgeOptions} that are not settings of the table (core/settings.ts):
 * objects the edge is built with. Every other key must be a setting's option path or a group of
 * them (`limits`, `policies`).
 */
const NON_SETTING_OPTIONS = new Set(['store', 'engine', 'originClient', 'logger', 'metrics', 'tracer', 'env', 'rateLimiter'])

/** The option keys holding a group of settings (`limits.maxBatch`). */
type OPTION_GROUPS = 'policies' | 'limits' | 'access' | 'auth'
/** Every typed option path of {@link McpEdgeOptions} (groups expanded). */
type OptionPath = { [K in keyof McpEdgeOptions & string]: K extends OPTION_GROUPS ? `${K}.${keyof NonNullable<McpEdgeOptions[K]> & string}` : K }[keyof McpEdgeOptions & string]
// Every row's option is a field of McpEdgeOptions, and every field of it a row or one of NON_SETTING_OPTIONS.
type NoField = Exclude<SettingOption<'all'>, OptionPath>
type NoRow = Exclude<OptionPath, SettingOption<'all'> | 'store' | 'engine' | 'originClient' | 'logger' | 'metrics' | 'tracer' | 'env' | 'rateLimiter'>
const _everyOptionHasARow: [NoField, NoRow] extends [never, never] ? true : { noField: NoField; noRow: NoRow } = true
void _everyOptionHasARow

/** The settings read from typed options, by option path. */
const BY_OPTION = new Map<string, Setting>(settingsOf('all').map((s) => [s.option, s]))

/** The groups of nested option paths (`limits` -> its keys). */
const GROUPS = new Map<string, Set<string>>()
for (const path of BY_OPTION.keys()) {
  const dot = path.lastIndexOf('.')
  if (dot < 0) continue
  const group = path.slice(0, dot)
  if (!GROUPS.has(group)) GROUPS.set(group, new Set())
  GROUPS.get(group)!.add(path.slice(dot + 1))
}

/**
 * Refuses a key no option has, at any depth (plain JavaScript has no type check: `orign` would be
 * silently ignored and the edge would run without its origin).
 * @throws ConfigError `unknown option limits.maxBodyByte (did you mean limits.maxBodyBytes?)`
 */
function refuseUnknownKeys(options: McpEdgeOptions): void {
  const top = new Set([...NON_SETTING_OPTIONS, ...[...BY_OPTION.keys()].map((p) => p.split('.')[0]!)])
  const walk = (obj: object, prefix: string, known: Set<string>) => {
    for (const key of Object.keys(obj)) {
      const path = prefix ? `${prefix}.${key}` : key
      if (!known.has(key)) {
        const near = closest(key, known)
        const hint = near === undefined ? `the options are ${[...known].sort().join(', ')}` : `did you mean ${prefix ? `${prefix}.` : ''}${near}?`
        throw new ConfigError(`unknown option ${showValue(path)} of mcpEdge() (${hint})`)
      }
      const group = GROUPS.get(path)
      if (group === undefined) continue
      const value = (obj as Record<string, unknown>)[key]
      if (value === undefined) continue
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`${path}: expected an object of ${[...group].join(', ')}`)
      walk(value, path, group)
    }
  }
  walk(options, '', top)
}

/** The value at an option path (`limits.maxBodyBytes`), undefined when any step is missing. */
function at(options: McpEdgeOptions, path: string): unknown {
  let v: unknown = options
  for (const step of path.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined
    v = (v as Record<string, unknown>)[step]
  }
  return v
}

/**
 * The {@link Config} for a set of options: each setting from its typed option (checked by the
 * setting's rule on the value itself, no string round trip), else from `env`'s string, else its
 * default (core/settings.ts).
 * @throws ConfigError for an unknown option key (nested ones too), naming it and the closest known one
 * @throws ConfigError for an unusable value; when it came from a typed option the message names
 *   the option and its variable, e.g. `limits.maxBodyBytes=0 (MAX_BODY_BYTES): expected an integer >= 1`;
 *   a value of the wrong type is refused the same way (`limits.maxBatch="5" (MAX_BATCH): ...`)
 */
export function resolveConfig(options: McpEdgeOptions): Config {
  refuseUnknownKeys(options)
  const env = options.env ?? {}
  const rows = settingsOf('all')
  const config = readSettings(rows, env, (s) => at(options, s.option)) as unknown as Config
  // A setting the `env` option holds is named by its variable; any other by its typed option (the
  // form this caller uses), with the variable after it: `auth.audience (AUTH_AUDIENCE)`.
  const named = (variable: string) => {
    const row = rows.find((s) => s.variable === variable)
    return row === undefined || (typeof env[variable] === 'string' && env[variable] !== '') ? variable : `${row.option} (${variable})`
  }
  checkAuthSettings(config, named)
  checkVirtualServers(config, named)
  return config
}
