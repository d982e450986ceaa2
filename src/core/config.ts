/**
 * @module config
 * Environment variables (a plain string record, from `process.env` or Worker vars) to a typed
 * {@link Config} (docs/design.md §8), read by the rules of the settings table (settings.ts). Throws
 * {@link ConfigError} on a bad value, at start-up, never per request.
 */
import type { ProtocolVersion } from './jsonrpc/versions'
import { ConfigError, NOT_SHOWN, parseOriginUrl, showValue } from './config-rules'
import { readSettings, settingsOf, type OriginSetting, type SettingKey, type VirtualServerSetting } from './settings'
import type { ToolPattern } from './patterns/tool-glob'
import type { RateLimits } from './access/rate-limit'
import type { ToolScopes } from './access/tool-scopes'

export { ConfigError, parseOriginUrl, showValue }
export { isOriginName } from './config-rules'
export type { OriginSetting, VirtualServerSetting, VirtualPrefix } from './settings'

/** The edge's configuration. Units are in the names (Bytes, Ms, S). */
export interface Config {
  /** Default origin endpoint (POST /mcp). */
  originUrl: string
  /** Named origins (POST /mcp/<name>): each one's URL and its own tool lists (`ORIGINS`). */
  origins: Record<string, OriginSetting>
  /** Virtual servers (POST /mcp/<name>): several origins of {@link origins} behind one endpoint (`VIRTUAL_SERVERS`). */
  virtualServers: Record<string, VirtualServerSetting>
  /** `VIRTUAL_SESSION_KEY`: the HMAC key of virtual-server session ids (a secret); null: a random key per process. */
  virtualSessionKey: string | null
  /** Tools clients may see and call on every origin (`TOOLS_ALLOW`); empty: all. */
  toolsAllow: ToolPattern[]
  /** Tools hidden from clients on every origin (`TOOLS_DENY`); wins over the allow lists. */
  toolsDeny: ToolPattern[]
  /** Request budgets per caller and per tool (`RATE_LIMIT`); `empty` when unset. */
  rateLimits: RateLimits
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
  /** Largest `text` item of a `tools/call` result, in UTF-8 bytes (`MAX_RESULT_TEXT_BYTES`); null: no bound. */
  maxResultTextBytes: number | null
  maxBatch: number
  /** Deepest nesting of arrays and objects accepted in a request body or an origin reply (`MAX_JSON_DEPTH`). */
  maxJsonDepth: number
  originTimeoutMs: number
  schemaTtlS: number
  invalidArgs: 'auto' | 'rpc-error' | 'tool-error'
  unknownTool: 'reject' | 'forward'
  onSchemaError: 'forward' | 'reject'
  /** `TOOL_PINNING` (docs/pinning.md): `off`, `audit` (default) or `enforce`. */
  toolPinning: 'off' | 'audit' | 'enforce'
  outputSchema: 'off' | 'warn' | 'strict'
  hiddenFailures: boolean
  /** `RESULT_SECRETS` (docs/result-checks.md): secrets in tool results: `off`, `audit` (default), `redact` or `block`. */
  resultSecrets: 'off' | 'audit' | 'redact' | 'block'
  /** `RESULT_CONTROL`: terminal escapes, bidi and zero-width characters in tool results: `off`, `audit` (default) or `strip`. */
  resultControl: 'off' | 'audit' | 'strip'
  /** `OVERSIZE_RESULT`: a result text item above {@link maxResultTextBytes}: `error` (default, -31001) or `truncate`. */
  oversizeResult: 'error' | 'truncate'
  supportedVersions: ProtocolVersion[]
  adminToken: string | null
  /** Bearer token `GET /metrics` requires (`METRICS_TOKEN`); null: the metrics are open (behind the Host check). */
  metricsToken: string | null
  /** `LOG_LEVEL`: the least severe log record written (`info` writes every record). */
  logLevel: 'info' | 'warn' | 'error'
  /** Upper bound of compiled validators kept in memory (LRU). */
  validatorCacheSize: number
  /** CPU time one call's argument validation may be estimated to take, in ms, before it runs (`VALIDATION_BUDGET_MS`); a call past it is answered as invalid arguments. */
  validationBudgetMs: number
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
  /** `AUTH_ISSUER`: the `iss` of accepted access tokens; set: auth is on (docs/security.md). */
  authIssuer: string | null
  /** `AUTH_AUDIENCE`: the edge's resource URL (RFC 8707); a token's `aud` must contain it. */
  authAudience: string | null
  /** `AUTH_JWKS_URL`: the issuer's JWKS URL (exactly one of it and {@link authJwks} with auth on). */
  authJwksUrl: string | null
  /** `AUTH_JWKS`: the JWKS as JSON text (a secret: never shown). */
  authJwks: string | null
  /** `AUTH_JWKS_COOLDOWN_MS`: least time between two JWKS reads caused by an unknown `kid`, ms. */
  authJwksCooldownMs: number
  /** `AUTH_JWKS_MAX_BYTES`: the largest JWKS answer read, in bytes; a larger one is a failed read. */
  authJwksMaxBytes: number
  /** `AUTH_ALGORITHMS`: the accepted JWS algorithms; empty: the default list. */
  authAlgorithms: string[]
  /** `ORIGIN_AUTHORIZATION`: the `Authorization` value sent to the origin with auth on (a secret); null: none. */
  originAuthorization: string | null
  /** `TOOL_SCOPES`: the scopes a token needs per tool (empty: none). */
  toolScopes: ToolScopes
}

/**
 * The rules between the authorization settings, which no single row can check: with `AUTH_ISSUER`
 * set, `AUTH_AUDIENCE` and exactly one of `AUTH_JWKS_URL` / `AUTH_JWKS` are required; without it,
 * the settings that only mean something with auth on are refused rather than silently ignored
 * (an operator who set `TOOL_SCOPES` believes tools are protected). Secrets are never shown.
 * @param name how a message names a setting, given its variable (default: the variable itself;
 *   `mcpEdge()` names the typed option a caller set, `auth.audience (AUTH_AUDIENCE)`)
 * @throws ConfigError naming the setting and its value, e.g.
 *   `AUTH_AUDIENCE is unset: with AUTH_ISSUER=https://auth.example.com ...`
 */
export function checkAuthSettings(config: Config, name: (variable: string) => string = (v) => v): void {
  const issuer = config.authIssuer
  const set: [string, string | null][] = [
    ['AUTH_AUDIENCE', config.authAudience],
    ['AUTH_JWKS_URL', config.authJwksUrl],
    ['AUTH_JWKS', config.authJwks === null ? null : NOT_SHOWN],
    ['AUTH_ALGORITHMS', config.authAlgorithms.length ? config.authAlgorithms.join(',') : null],
    ['ORIGIN_AUTHORIZATION', config.originAuthorization === null ? null : NOT_SHOWN],
    ['TOOL_SCOPES', config.toolScopes.empty ? null : 'set'],
  ]
  /** `NAME=value`, or `option=value (NAME)` when the setting is named by its option. */
  const withValue = (variable: string, value: string) => {
    const m = /^(\S+) \((\w+)\)$/.exec(name(variable))
    return m ? `${m[1]}=${value} (${m[2]})` : `${name(variable)}=${value}`
  }
  if (issuer === null) {
    const stray = set.find(([, v]) => v !== null)
    if (!stray) return
    const [variable, v] = stray
    const n = name(variable)
    const shown = v === NOT_SHOWN ? `${n} ${NOT_SHOWN}` : variable === 'TOOL_SCOPES' ? n : withValue(variable, showValue(v!))
    const why =
      variable === 'ORIGIN_AUTHORIZATION'
        ? "without auth every client would reach the origin with the edge's own credential"
        : variable === 'TOOL_SCOPES'
          ? 'without auth no token is read, so no tool would be protected'
          : 'it means something only with auth on'
    const issuerName = name('AUTH_ISSUER')
    throw new ConfigError(`${shown} is set but ${issuerName} is not: ${why}; set ${issuerName} (the authorization server's issuer) to turn auth on, or unset ${n}`, variable)
  }
  const on = `with ${withValue('AUTH_ISSUER', showValue(issuer))} set (auth on)`
  if (config.authAudience === null)
    throw new ConfigError(
      `${name('AUTH_AUDIENCE')} is unset: ${on}, the edge needs its own resource URL, the MCP endpoint as clients call it, such as https://mcp.example.com/mcp (RFC 8707)`,
      'AUTH_AUDIENCE'
    )
  if (config.authJwksUrl === null && config.authJwks === null)
    throw new ConfigError(`${name('AUTH_JWKS_URL')} and ${name('AUTH_JWKS')} are both unset: ${on}, set one: the issuer's JWKS URL, or the key set as JSON text`, 'AUTH_JWKS_URL')
  if (config.authJwksUrl !== null && config.authJwks !== null)
    throw new ConfigError(`${withValue('AUTH_JWKS_URL', showValue(config.authJwksUrl))} and ${name('AUTH_JWKS')} ${NOT_SHOWN} are both set: set exactly one`, 'AUTH_JWKS_URL')
}

/**
 * The rule between `VIRTUAL_SERVERS` and `ORIGINS`, which no single row can check: a virtual
 * server's name is not an origin's (both would be `/mcp/<name>`), and each of its origins is a
 * name of `ORIGINS`. Every problem is named in one line.
 * @param name how a message names a setting, given its variable (as {@link checkAuthSettings})
 * @throws ConfigError e.g. `VIRTUAL_SERVERS.all.origins: files is not a name of ORIGINS (ORIGINS has weather, news)`
 */
export function checkVirtualServers(config: Config, name: (variable: string) => string = (v) => v): void {
  const problems: string[] = []
  const known = Object.keys(config.origins)
  const has = known.length ? `${name('ORIGINS')} has ${known.map(showValue).join(', ')}` : `${name('ORIGINS')} is empty`
  for (const [vs, setting] of Object.entries(config.virtualServers)) {
    if (Object.hasOwn(config.origins, vs))
      problems.push(`${name('VIRTUAL_SERVERS')}.${vs}: the name is an origin of ${name('ORIGINS')} too, and /mcp/${vs} can serve only one of them; rename the virtual server`)
    const unknown = setting.origins.filter((o) => !Object.hasOwn(config.origins, o))
    if (unknown.length)
      problems.push(
        `${name('VIRTUAL_SERVERS')}.${vs}.origins: ${unknown.map(showValue).join(', ')} ${unknown.length === 1 ? 'is not a name' : 'are not names'} of ${name('ORIGINS')} (${has})`
      )
  }
  if (problems.length) throw new ConfigError(problems.join('; '), 'VIRTUAL_SERVERS')
}

/**
 * Reads the configuration from environment strings (the rows of core/settings.ts the edge reads
 * on every runtime; unset or empty means the default).
 * @param env variables as strings; entries that are not strings (Worker bindings) are ignored
 * @param defaults runtime defaults, e.g. the demo origin URL on Node
 * @throws ConfigError for an unusable value, naming the variable (`MAX_BATCH=abc: expected an integer >= 1`)
 */
export function loadConfig(env: Record<string, unknown>, defaults: { originUrl?: string } = {}): Config {
  const config = readSettings(settingsOf('all'), env) as unknown as Config
  if (!config.originUrl && defaults.originUrl) {
    parseOriginUrl('origin URL', defaults.originUrl)
    config.originUrl = defaults.originUrl
  }
  checkAuthSettings(config)
  checkVirtualServers(config)
  return config
}

// Every Config field is a row of the table and every row of the table a Config field.
type MissingRow = Exclude<keyof Config, SettingKey<'all'>>
type MissingField = Exclude<SettingKey<'all'>, keyof Config>
const _everyFieldHasARow: [MissingRow, MissingField] extends [never, never] ? true : { missingRow: MissingRow; missingField: MissingField } = true
void _everyFieldHasARow
