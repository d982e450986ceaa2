/**
 * @module core/startup-report
 * What the edge says once when it starts (the Node server at start, a Worker isolate on its first
 * request; src/mcp-edge.ts `buildEdgeDeps`, and `mcp-edge serve` on stderr):
 * - a `warn` for each variable in the edge's namespaces (`TOOL_*`, `TOOLS_*`, `AUTH_*`, `RATE_*`,
 *   `ORIGIN*`, `STORE_*`, `ADMIN_*`, `METRICS_*`, `SHUTDOWN_*`, in any case) that is no setting of
 *   the table (settings.ts), and for a setting's name in another case (`admin_token`), naming the
 *   setting it looks
 *   like: `TOOL_PINING=enforce` is otherwise ignored in silence and the edge runs in `audit`, while
 *   the same typo as a flag or a typed option is refused;
 * - one line with the governance in force: pinning mode and store, auth on or off with the issuer,
 *   the tool lists (global and per origin), the per-tool scopes, the rate budgets, `UNKNOWN_TOOL`,
 *   and the result checks (`RESULT_SECRETS`, `RESULT_CONTROL`, `MAX_RESULT_TEXT_BYTES` with
 *   `OVERSIZE_RESULT`; docs/result-checks.md).
 * - with virtual servers and no `VIRTUAL_SESSION_KEY`, a `warn` that their sessions hold on this
 *   process only (docs/virtual-servers.md#sessions).
 * Values of secrets never appear (only the settings' names and the operator's own lists and URLs,
 * with credentials hidden). Pure and runtime-neutral.
 */
import type { Config } from './config'
import { closest, showValue } from './config-rules'
import { redactUrl } from './redact-url'
import { SETTINGS } from './settings'
import type { LogRecord } from './ports'

/**
 * The variable namespaces the edge owns: a name in them that is no setting is most likely a typo.
 * `ADMIN_` and `METRICS_` hold the tokens: a misspelt one leaves the admin API off or the metrics
 * open without a word otherwise.
 */
const NAMESPACE = /^(TOOLS?_|AUTH_|RATE_|ORIGIN|STORE_|ADMIN_|METRICS_|SHUTDOWN_|RESULT_|OVERSIZE_)/

/** Names in those namespaces that are not settings but Workers bindings the standalone Worker reads (src/adapters/workers). */
const BINDINGS = /^(TOOL_SCHEMAS|RATE_LIMITER_\d+_PER_\d+S)$/

/** One unknown variable: its name (shown bounded) and the setting it looks like, if any. */
export interface UnknownVariable {
  variable: string
  didYouMean?: string
}

/**
 * The string entries of `env` in the edge's namespaces (any case) or spelling a setting in another
 * case that no setting (of any runtime) has, in
 * name order. Entries that are not strings (Worker bindings) are skipped, as the settings reader skips them.
 */
export function unknownVariables(env: Record<string, unknown>): UnknownVariable[] {
  const known = SETTINGS.map((s) => s.variable as string)
  const knownSet = new Set(known)
  const out: UnknownVariable[] = []
  for (const name of Object.keys(env).sort()) {
    if (typeof env[name] !== 'string' || knownSet.has(name) || BINDINGS.test(name)) continue
    // Variables are case-sensitive: `tool_pinning=enforce` sets nothing, so a name in the
    // namespaces in any case, or a setting's name in another case, is reported too.
    const upper = name.toUpperCase()
    if (!NAMESPACE.test(upper) && !knownSet.has(upper)) continue
    const near = closest(upper, known)
    out.push({ variable: showValue(name), ...(near !== undefined ? { didYouMean: near } : {}) })
  }
  return out
}

/** The sentence of an {@link UnknownVariable} warning (stderr of `mcp-edge serve` and the log line's `text`). */
export function unknownVariableText(u: UnknownVariable): string {
  const hint = u.didYouMean !== undefined ? `did you mean ${u.didYouMean}?` : 'see docs/configuration.md for the settings'
  return `${u.variable} is not a setting of the edge and is ignored (${hint})`
}

/** The governance in force, as the start-up line states it. */
export interface Governance {
  /** `TOOL_PINNING`, and where the pins are kept. */
  pinning: Config['toolPinning']
  store: string
  /** `off`, or on with the issuer (`AUTH_ISSUER`, credentials hidden). */
  auth: 'off' | { issuer: string }
  /** `TOOLS_ALLOW` (empty: every tool) and `TOOLS_DENY`, as written. */
  toolsAllow: string[]
  toolsDeny: string[]
  /** The named origins with lists of their own (`ORIGINS.<name>.toolsAllow` / `.toolsDeny`). */
  originLists: Record<string, { toolsAllow: string[]; toolsDeny: string[] }>
  /** `TOOL_SCOPES`: pattern -> the scopes it needs. */
  toolScopes: Record<string, string[]>
  /** `RATE_LIMIT`, each budget as written (empty: no limits). */
  rateLimit: string[]
  unknownTool: Config['unknownTool']
  /** `RESULT_SECRETS` and `RESULT_CONTROL`: the scans of tool results. */
  resultSecrets: Config['resultSecrets']
  resultControl: Config['resultControl']
  /** `MAX_RESULT_TEXT_BYTES` (null: no bound) and what happens above it (`OVERSIZE_RESULT`). */
  maxResultTextBytes: number | null
  oversizeResult: Config['oversizeResult']
}

/**
 * The governance of a configuration.
 * @param store how the store holding pins and schemas is described (`file .edge-data/kv.json`, `Workers KV`, `memory (not persisted)`)
 */
export function governanceOf(config: Config, store: string): Governance {
  const originLists: Governance['originLists'] = {}
  for (const [name, o] of Object.entries(config.origins))
    if (o.toolsAllow.length || o.toolsDeny.length) originLists[name] = { toolsAllow: o.toolsAllow.map((p) => p.source), toolsDeny: o.toolsDeny.map((p) => p.source) }
  const toolScopes: Record<string, string[]> = {}
  for (const e of config.toolScopes.entries) toolScopes[e.pattern.source] = [...e.scopes]
  return {
    pinning: config.toolPinning,
    store,
    auth: config.authIssuer === null ? 'off' : { issuer: redactUrl(config.authIssuer) },
    toolsAllow: config.toolsAllow.map((p) => p.source),
    toolsDeny: config.toolsDeny.map((p) => p.source),
    originLists,
    toolScopes,
    rateLimit: config.rateLimits.budgets.map((b) => b.source),
    unknownTool: config.unknownTool,
    resultSecrets: config.resultSecrets,
    resultControl: config.resultControl,
    maxResultTextBytes: config.maxResultTextBytes,
    oversizeResult: config.oversizeResult,
  }
}

/**
 * The governance as one line of text, e.g. `TOOL_PINNING=enforce (store: file .edge-data/kv.json);
 * auth on (AUTH_ISSUER=https://auth.example.com); TOOLS_ALLOW=all; TOOLS_DENY=delete_*;
 * TOOL_SCOPES=none; RATE_LIMIT=60/min,search=10/min; UNKNOWN_TOOL=reject; RESULT_SECRETS=audit;
 * RESULT_CONTROL=audit; MAX_RESULT_TEXT_BYTES=none (OVERSIZE_RESULT=error)`.
 */
export function governanceText(g: Governance): string {
  const list = (l: string[], none: string) => (l.length ? l.join(',') : none)
  const parts = [
    `TOOL_PINNING=${g.pinning} (store: ${g.store})`,
    g.auth === 'off' ? 'auth off' : `auth on (AUTH_ISSUER=${g.auth.issuer})`,
    `TOOLS_ALLOW=${list(g.toolsAllow, 'all')}`,
    `TOOLS_DENY=${list(g.toolsDeny, 'none')}`,
  ]
  for (const [name, o] of Object.entries(g.originLists)) parts.push(`ORIGINS.${name}: toolsAllow=${list(o.toolsAllow, 'all')} toolsDeny=${list(o.toolsDeny, 'none')}`)
  const scopes = Object.entries(g.toolScopes)
  parts.push(`TOOL_SCOPES=${scopes.length ? JSON.stringify(g.toolScopes) : 'none'}`)
  parts.push(`RATE_LIMIT=${list(g.rateLimit, 'none')}`)
  parts.push(`UNKNOWN_TOOL=${g.unknownTool}`)
  parts.push(`RESULT_SECRETS=${g.resultSecrets}`, `RESULT_CONTROL=${g.resultControl}`)
  parts.push(`MAX_RESULT_TEXT_BYTES=${g.maxResultTextBytes ?? 'none'} (OVERSIZE_RESULT=${g.oversizeResult})`)
  return parts.join('; ')
}

/**
 * The start-up log records: one `warn` `config.unknown_variable` per {@link unknownVariables} entry
 * (`{ variable, didYouMean?, text }`), then one `info` `edge.governance` (the {@link Governance}
 * fields and `text`).
 * @param env the variables the configuration was read from
 * @param store see {@link governanceOf}
 */
export function startupRecords(config: Config, env: Record<string, unknown>, store: string): LogRecord[] {
  const out: LogRecord[] = unknownVariables(env).map((u) => ({ level: 'warn', msg: 'config.unknown_variable', ...u, text: unknownVariableText(u) }))
  const g = governanceOf(config, store)
  out.push({ level: 'info', msg: 'edge.governance', ...g, text: governanceText(g) })
  // A virtual server's session id is signed with this key: a key made at start is this process's
  // alone, and a session opened here fails on any other replica. (A Worker refuses the
  // configuration instead: mcp-edge.ts buildEdgeDeps.)
  const virtual = Object.keys(config.virtualServers)
  if (virtual.length && config.virtualSessionKey === null)
    out.push({
      level: 'warn',
      msg: 'virtual.session_key_generated',
      servers: virtual,
      text: `VIRTUAL_SESSION_KEY is unset: the session ids of the virtual servers (${virtual.join(', ')}) are signed with a random key made at start, valid on this process only; replicas behind one balancer need a shared key: set VIRTUAL_SESSION_KEY (e.g. openssl rand -hex 32) to the same value on each`,
    })
  return out
}
