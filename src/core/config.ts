/**
 * @module config
 * Environment variables (a plain string record, from `process.env` or Worker vars) to a typed
 * {@link Config} (docs/design.md §8). Throws {@link ConfigError} on a bad value, at start-up,
 * never per request.
 */
import { redactUrl } from './redact-url'
import { ALL_VERSIONS, isKnownVersion, type ProtocolVersion } from './jsonrpc/versions'
import { DEFAULT_MAX_JSON_DEPTH } from './jsonrpc/json-scan'
import { EdgeError } from './errors'

/**
 * What a configured origin name may be, which is also the path rule for it (the segment after the
 * mount point, src/core/front-door.ts): URL-unreserved characters only (RFC 3986 section 2.3),
 * and not a dot segment (`.`, `..`), which URL parsing removes. `ORIGINS` names are checked with it
 * at start-up, request paths per POST.
 */
export function isOriginName(name: string): boolean {
  return /^[A-Za-z0-9._~-]+$/.test(name) && name !== '.' && name !== '..'
}

/** The edge's configuration. Units are in the names (Bytes, Ms, S). */
export interface Config {
  /** Default origin endpoint (POST /mcp). */
  originUrl: string
  /** Named origins (POST /mcp/<name>). */
  origins: Record<string, string>
  /** Browser Origin allow-list; `localhost` means any loopback origin. Empty: only loopback. */
  allowedOrigins: string[]
  /**
   * Send the browser's `Origin` header on to the origin (`FORWARD_ORIGIN_HEADER=on`); default off:
   * the edge is the origin's client and applies the Origin rule itself (`ALLOWED_ORIGINS`), so an
   * origin with its own loopback-only Origin check does not refuse the pages the edge allows.
   */
  forwardOriginHeader: boolean
  /** Host header allow-list ('localhost' = loopback names); null = no Host check. */
  allowedHosts: string[] | null
  maxBodyBytes: number
  /** Upper bound of an origin's JSON reply body (`MAX_REPLY_BYTES`); beyond it every forwarded id gets -31001 (D9). */
  maxReplyBytes: number
  maxBatch: number
  /** Deepest nesting of arrays and objects accepted in a request body or an origin reply (`MAX_JSON_DEPTH`). */
  maxJsonDepth: number
  originTimeoutMs: number
  schemaTtlS: number
  invalidArgs: 'auto' | 'rpc-error' | 'tool-error'
  unknownTool: 'reject' | 'forward'
  onSchemaError: 'forward' | 'reject'
  outputSchema: 'off' | 'warn' | 'strict'
  hiddenFailures: boolean
  supportedVersions: ProtocolVersion[]
  adminToken: string | null
  /** Bearer token `GET /metrics` requires (`METRICS_TOKEN`); null: the metrics are open (behind the Host check). */
  metricsToken: string | null
  /** Upper bound of compiled validators kept in memory (LRU). */
  validatorCacheSize: number
  /** Minimum milliseconds between two tool-list refreshes of one origin for an unknown tool (D7). */
  refreshMinIntervalMs: number
  /** Tool-list pulls one origin may be sent per minute, over every caller together (`REFRESH_BUDGET_PER_MIN`). */
  refreshBudgetPerMin: number
  /**
   * A call is rejected with a schema learned more than this many ms ago (or before this process
   * started) only after one refresh confirms it (`SCHEMA_RECHECK_MS`): no false reds.
   */
  schemaRecheckMs: number
  /** Milliseconds an SSE reply may go without a complete event or comment (`STREAM_IDLE_MS`; 0: no bound). */
  streamIdleMs: number
  /** Longest a relayed stream (SSE reply or standalone GET) may last, in ms (`STREAM_MAX_MS`; 0: no bound). */
  streamMaxMs: number
  /** Overall deadline of one tool-list pull by the edge (initialize, every page), in ms (`TOOL_LIST_TIMEOUT_MS`). */
  toolListTimeoutMs: number
  /** Seconds the store keeps the keys of a private tool-list scope after their last write (`PRIVATE_SCOPE_TTL_S`; at least 60, Workers KV's minimum). */
  privateScopeTtlS: number
  /** Private tool-list scopes kept per origin, in memory and in the store, least recently used out first (`MAX_PRIVATE_SCOPES`). */
  maxPrivateScopes: number
}

/**
 * A configuration value that cannot be used. The message is one line naming the variable, the
 * value and what is expected (`MAX_BATCH=abc: expected an integer >= 1`); a password in a URL is
 * shown as `***` and secrets (ADMIN_TOKEN) are never shown. `variable` and `expected` let a CLI
 * name its flag instead (`--max-batch abc: expected ...`, docs/configuration.md).
 */
export class ConfigError extends EdgeError {
  override readonly name = 'ConfigError'
  override readonly code = 'EDGE_ERR_CONFIG'
  constructor(
    message: string,
    /** The variable concerned, e.g. `MAX_BATCH` (unset for errors that concern several). */
    readonly variable?: string,
    /** The value as shown (bounded, password redacted). */
    readonly shown?: string,
    /** What is expected, e.g. `an integer >= 1`. */
    readonly expected?: string
  ) {
    super(message)
  }

  /** `<variable>=<value>: expected <expected>`, with the value bounded to 80 characters. */
  static bad(variable: string, value: string, expected: string): ConfigError {
    const shown = showValue(value)
    return new ConfigError(`${variable}=${shown}: expected ${expected}`, variable, shown, expected)
  }
}

/**
 * A value as a configuration message shows it: the credentials of every URL in it hidden
 * ({@link redactUrl}: passwords, bare tokens, query values; a URL anywhere in the value, the URLs
 * inside `ORIGINS`' JSON too), control characters escaped, at most 80 characters (then `...`); an
 * empty value as `""`.
 */
export function showValue(value: string): string {
  let v = redactUrl(value)
  v = JSON.stringify(v).slice(1, -1)
  if (v === '') return '""'
  return v.length > 80 ? `${v.slice(0, 80)}...` : v
}

/**
 * Parses an origin URL with `new URL`: http or https, with a host.
 * @throws ConfigError naming `variable` otherwise (`ORIGIN_URL=http://` is refused here)
 */
export function parseOriginUrl(variable: string, value: string): URL {
  const expected = 'an http:// or https:// URL with a host, such as http://127.0.0.1:3000/mcp'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw ConfigError.bad(variable, value, expected)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw ConfigError.bad(variable, value, expected)
  return url
}

/**
 * An integer variable, the one parser of every numeric setting (this file's, and the Node
 * entry's listen and connection settings): unset or empty gives `def`; otherwise a safe integer
 * written in decimal digits (surrounding blanks allowed) from `min` to `max`.
 * @param opts.expected what the error says is expected (default `an integer >= <min>`)
 * @throws ConfigError naming the variable and the value otherwise
 */
export function intVar(env: Record<string, string | undefined>, name: string, def: number, opts: { min?: number; max?: number; expected?: string } = {}): number {
  const v = env[name]
  if (v === undefined || v === '') return def
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = opts
  const n = Number(v)
  if (!/^\s*-?\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) throw ConfigError.bad(name, v, opts.expected ?? `an integer >= ${min}`)
  return n
}

function int(env: Record<string, string | undefined>, name: string, def: number, min = 0): number {
  return intVar(env, name, def, { min })
}

function oneOf<T extends string>(env: Record<string, string | undefined>, name: string, values: readonly T[], def: T): T {
  const v = env[name]
  if (v === undefined || v === '') return def
  if (!(values as readonly string[]).includes(v)) throw ConfigError.bad(name, v, `one of ${values.join(', ')}`)
  return v as T
}

/**
 * The characters of a bearer token (RFC 6750 §2.1 `b64token`: `A-Z a-z 0-9 - . _ ~ + /`, then any
 * `=`), the only ones a client can send in `Authorization: Bearer <token>` and the ones hono's
 * bearer-auth accepts; a token outside them would make every authenticated request fail.
 */
const B64TOKEN = /^[A-Za-z0-9._~+/-]+=*$/

/**
 * A bearer-token variable (`ADMIN_TOKEN`, `METRICS_TOKEN`): unset or empty gives null; otherwise it
 * must be an RFC 6750 b64token.
 * @throws ConfigError naming the variable and the characters allowed, never showing the value (a secret)
 */
export function tokenVar(env: Record<string, string | undefined>, name: string): string | null {
  const v = env[name]
  if (v === undefined || v === '') return null
  if (B64TOKEN.test(v)) return v
  const expected = `a bearer token of the characters A-Z a-z 0-9 - . _ ~ + / and trailing = (RFC 6750 b64token: no spaces, quotes or !), such as the output of openssl rand -hex 32`
  throw new ConfigError(`${name} (value not shown): expected ${expected}`, name, '(value not shown)', expected)
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/**
 * Reads the configuration.
 * @param env variables as strings (unset or empty means the default)
 * @param defaults runtime defaults, e.g. the demo origin URL on Node
 * @throws ConfigError for an unusable value
 */
export function loadConfig(env: Record<string, string | undefined>, defaults: { originUrl?: string } = {}): Config {
  const originUrl = env.ORIGIN_URL || defaults.originUrl || ''
  let origins: Record<string, string> = {}
  if (env.ORIGINS) {
    try {
      const parsed: unknown = JSON.parse(env.ORIGINS)
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error()
      origins = parsed as Record<string, string>
    } catch {
      throw ConfigError.bad('ORIGINS', env.ORIGINS, 'a JSON object of name -> URL, such as {"weather":"http://127.0.0.1:9000/mcp"}')
    }
    for (const [name, url] of Object.entries(origins)) {
      // The path rule (core/front-door.ts): a name outside it could never be reached at /mcp/<name>.
      if (!isOriginName(name)) throw ConfigError.bad('ORIGINS', env.ORIGINS, `origin names of letters, digits, '_', '.', '~' and '-', other than . and .. (not ${showValue(name)})`)
      if (typeof url !== 'string') throw ConfigError.bad('ORIGINS', env.ORIGINS, `a URL string for origin ${name}`)
      parseOriginUrl(`ORIGINS.${name}`, url)
    }
  }
  if (originUrl) parseOriginUrl(env.ORIGIN_URL ? 'ORIGIN_URL' : 'origin URL', originUrl)
  const versions = env.SUPPORTED_VERSIONS ? list(env.SUPPORTED_VERSIONS) : [...ALL_VERSIONS]
  for (const v of versions) {
    if (!isKnownVersion(v)) throw ConfigError.bad('SUPPORTED_VERSIONS', env.SUPPORTED_VERSIONS ?? '', `a comma-separated list of ${ALL_VERSIONS.join(', ')}`)
  }
  return {
    originUrl,
    origins,
    allowedOrigins: list(env.ALLOWED_ORIGINS),
    forwardOriginHeader: oneOf(env, 'FORWARD_ORIGIN_HEADER', ['on', 'off'] as const, 'off') === 'on',
    allowedHosts: env.ALLOWED_HOSTS === undefined || env.ALLOWED_HOSTS === '' ? null : list(env.ALLOWED_HOSTS),
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 4 * 1024 * 1024, 1),
    maxReplyBytes: int(env, 'MAX_REPLY_BYTES', 16 * 1024 * 1024, 1),
    maxBatch: int(env, 'MAX_BATCH', 100, 1),
    maxJsonDepth: int(env, 'MAX_JSON_DEPTH', DEFAULT_MAX_JSON_DEPTH, 1),
    originTimeoutMs: int(env, 'ORIGIN_TIMEOUT_MS', 30_000, 1),
    schemaTtlS: int(env, 'SCHEMA_TTL_S', 300, 0),
    invalidArgs: oneOf(env, 'INVALID_ARGS', ['auto', 'rpc-error', 'tool-error'] as const, 'auto'),
    unknownTool: oneOf(env, 'UNKNOWN_TOOL', ['reject', 'forward'] as const, 'reject'),
    onSchemaError: oneOf(env, 'ON_SCHEMA_ERROR', ['forward', 'reject'] as const, 'forward'),
    outputSchema: oneOf(env, 'OUTPUT_SCHEMA', ['off', 'warn', 'strict'] as const, 'warn'),
    hiddenFailures: oneOf(env, 'HIDDEN_FAILURES', ['on', 'off'] as const, 'on') === 'on',
    supportedVersions: versions as ProtocolVersion[],
    adminToken: tokenVar(env, 'ADMIN_TOKEN'),
    metricsToken: tokenVar(env, 'METRICS_TOKEN'),
    validatorCacheSize: int(env, 'VALIDATOR_CACHE_SIZE', 1000, 1),
    refreshMinIntervalMs: int(env, 'REFRESH_MIN_INTERVAL_MS', 5_000, 0),
    refreshBudgetPerMin: int(env, 'REFRESH_BUDGET_PER_MIN', 30, 1),
    toolListTimeoutMs: int(env, 'TOOL_LIST_TIMEOUT_MS', 10_000, 1),
    schemaRecheckMs: int(env, 'SCHEMA_RECHECK_MS', 30_000, 0),
    streamIdleMs: int(env, 'STREAM_IDLE_MS', 300_000, 0),
    streamMaxMs: int(env, 'STREAM_MAX_MS', 3_600_000, 0),
    privateScopeTtlS: int(env, 'PRIVATE_SCOPE_TTL_S', 3_600, 60),
    maxPrivateScopes: int(env, 'MAX_PRIVATE_SCOPES', 1_000, 1),
  }
}
