/**
 * @module settings
 * The one table of the edge's settings: per setting its environment variable, its typed option
 * (the path in `McpEdgeOptions`, or in `NodeServerOptions` for the Node entry's own settings), the
 * key it fills, its rule (kind, bounds, default), the runtime that reads it, whether it is a
 * secret, its `mcp-edge serve` flag and its row of docs/configuration.md. Everything else is
 * derived from {@link SETTINGS}: `loadConfig` (env strings, config.ts), `resolveConfig` (typed
 * options, checked by the same rule without a string round trip, unknown keys refused;
 * edge-options.ts), the Node entry's `loadNodeConfig` (adapters/node/node-config.ts), the serve
 * flags (cli/commands/serve.ts) and the tables of docs/configuration.md (`npm run docs:settings`;
 * test/unit/settings.test.ts fails when the doc is out of date).
 *
 * How to add a setting:
 * 1. add one row to {@link SETTINGS} in the section it belongs to: `variable`, `option` (a new
 *    nested path such as `access.toolsAllow` needs nothing else), `key`, `kind` (one of the rules
 *    below, or `custom({ ... })` around an existing parser that throws ConfigError), `default`,
 *    `runtime`, `arg`, `help`, `example`, `doc` (and `secret: true` for a credential);
 * 2. add its field to `Config` (config.ts; the Node entry's: `NodeConfig` in node-config.ts) and, for
 *    its typed option to `McpEdgeOptions` (edge-options.ts; a new group such as `access` also to
 *    `OPTION_GROUPS` there): the type checks fail until both exist;
 * 3. run `npm run docs:settings` to write its doc row.
 * The flag, the env reader, the typed option's check and the doc row then exist.
 *
 * Pure and runtime-neutral (no runtime API): the table is read on Workers too.
 */
import { ALL_VERSIONS, isKnownVersion, type ProtocolVersion } from './jsonrpc/versions'
import { DEFAULT_MAX_JSON_DEPTH } from './jsonrpc/json-scan'
import { redactUrl } from './redact-url'
import { EdgeError } from './errors'
import { B64TOKEN, B64TOKEN_EXPECTED, ConfigError, INTEGER_TEXT, NOT_SHOWN, ORIGIN_URL_EXPECTED, csvList, isOriginName, originUrlOf, showValue } from './config-rules'
import { parseToolPatterns } from './access/tool-filter'
import { parseRateLimits, rateLimits, type RateLimits } from './access/rate-limit'
import type { ToolPattern } from './patterns/tool-glob'
import { ASYMMETRIC_ALGORITHMS, checkResourceUrl } from './access/bearer'
import { parseToolScopes, toolScopes, type ToolScopes } from './access/tool-scopes'

/** A value a rule refuses: what is expected, and for one part of a compound value (`ORIGINS.weather`) the part's key and text. */
export class Refused extends EdgeError {
  override readonly name = 'Refused'
  override readonly code = 'EDGE_ERR_SETTING_REFUSED'
  constructor(
    readonly expected: string,
    readonly part?: { key: string; text: string }
  ) {
    super(`expected ${expected}`)
  }
}

/**
 * The rule of a setting: how its text (an env variable or a flag) and its typed option become the
 * value, and what either must be. Both forms end in the same check.
 */
export interface Kind<T = unknown> {
  /** What the text form must be, as an error says it (`an integer >= 1`). */
  expected: string
  /** The TypeScript type of the typed option, for the docs (`number`, `string[]`). */
  type: string
  /** @throws Refused (or ConfigError, from a custom parser) */
  fromText(text: string): T
  /** A typed option's value (any JavaScript value: plain JavaScript has no type check). @throws Refused */
  fromValue(value: unknown): T
  /** A value as the docs and `--help` show it (defaults). */
  show(value: T): string
  /** A typed value that means "unset", as an empty variable does (`''` for text kinds, `[]` for lists). */
  isEmpty?(value: unknown): boolean
}

const emptyText = (v: unknown) => v === ''
const emptyList = (v: unknown) => Array.isArray(v) && v.length === 0

/**
 * An integer from `min` to `max` (default: the largest safe integer); the text in decimal digits,
 * surrounding blanks allowed; the typed option a number.
 * @param expected what an error says (default `an integer >= <min>`)
 */
export function int(min: number, opts: { max?: number; expected?: string } = {}): Kind<number> {
  const max = opts.max ?? Number.MAX_SAFE_INTEGER
  const expected = opts.expected ?? `an integer >= ${min}`
  const check = (n: number) => {
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new Refused(expected)
    return n
  }
  return {
    expected,
    type: 'number',
    fromText: (t) => {
      if (!INTEGER_TEXT.test(t)) throw new Refused(expected)
      return check(Number(t))
    },
    fromValue: (v) => {
      if (typeof v !== 'number') throw new Refused(expected)
      return check(v)
    },
    show: String,
  }
}

/** One of `values`, as text and as the typed option. */
export function oneOf<T extends string>(values: readonly T[]): Kind<T> {
  const expected = `one of ${values.join(', ')}`
  const check = (v: unknown): T => {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) throw new Refused(expected)
    return v as T
  }
  return { expected, type: values.map((v) => `'${v}'`).join(' \\| '), fromText: check, fromValue: check, show: (v) => v, isEmpty: emptyText }
}

/** A switch: `on` or `off` as text, `true` or `false` as the typed option. */
export const onOff: Kind<boolean> = {
  expected: 'one of on, off',
  type: 'boolean',
  fromText: (t) => {
    if (t !== 'on' && t !== 'off') throw new Refused('one of on, off')
    return t === 'on'
  },
  fromValue: (v) => {
    if (typeof v !== 'boolean') throw new Refused('true or false')
    return v
  },
  show: (v) => (v ? 'on' : 'off'),
}

/**
 * A list: comma-separated text (entries trimmed, empty ones dropped), a string array as the typed
 * option (an empty array: unset); `item` checks each entry.
 */
export function list<T extends string = string>(opts: { expected: string; typedExpected: string; item?: (s: string) => boolean; nonEmpty?: boolean }): Kind<T[]> {
  const check = (items: string[], expected: string): T[] => {
    if ((opts.nonEmpty && items.length === 0) || (opts.item && !items.every(opts.item))) throw new Refused(expected)
    return items as T[]
  }
  return {
    expected: opts.expected,
    type: 'string[]',
    fromText: (t) => check(csvList(t), opts.expected),
    fromValue: (v) => {
      if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Refused(opts.typedExpected)
      return check([...(v as string[])], opts.typedExpected)
    },
    show: (v) => v.join(','),
    isEmpty: emptyList,
  }
}

/** A string checked by `ok`, the same as text and as the typed option. */
export function text(expected: string, ok: (s: string) => boolean, type = 'string'): Kind<string> {
  const check = (v: unknown) => {
    if (typeof v !== 'string' || !ok(v)) throw new Refused(expected)
    return v
  }
  return { expected, type, fromText: check, fromValue: check, show: (v) => v, isEmpty: emptyText }
}

/**
 * A rule around an existing parser of the text form (one that throws ConfigError naming the
 * variable, e.g. access/tool-filter.ts); `fromValue` is the typed option's rule (default: a string
 * read by `fromText`).
 */
export function custom<T>(k: { expected: string; type?: string; fromText(text: string): T; fromValue?(value: unknown): T; show?(value: T): string }): Kind<T> {
  return {
    expected: k.expected,
    type: k.type ?? 'string',
    fromText: k.fromText,
    fromValue:
      k.fromValue ??
      ((v) => {
        if (typeof v !== 'string') throw new Refused(k.expected)
        return k.fromText(v)
      }),
    show: k.show ?? String,
    isEmpty: emptyText,
  }
}

const ORIGINS_EXPECTED = 'a JSON object of name -> URL, or name -> {"url": URL, "toolsAllow": ..., "toolsDeny": ...}, such as {"weather":"http://127.0.0.1:9000/mcp"}'

/** What a tool list setting must be as a typed option. */
const PATTERNS_TYPED = 'a comma-separated string or a list of tool names or globs (* and ?)'

/**
 * Tool names or globs (access/tool-filter.ts parses them): comma-separated text, or as the typed
 * option the same string or a list of strings. `variable` names the setting in messages
 * (`ORIGINS.weather.toolsDeny: entry 2 (run query) is whitespace, ...`).
 */
function readPatterns(variable: string, v: unknown): ToolPattern[] {
  if (typeof v === 'string') return parseToolPatterns(variable, v)
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v.length === 0 ? [] : parseToolPatterns(variable, v.join(','))
  throw new Refused(PATTERNS_TYPED)
}

/** A tool list setting (`TOOLS_ALLOW`, `TOOLS_DENY`). */
function patterns(variable: string): Kind<ToolPattern[]> {
  return {
    expected: 'comma-separated tool names or globs (* any run of characters, ? one character), such as get_*,search',
    type: 'string \\| string[]',
    fromText: (t) => parseToolPatterns(variable, t),
    fromValue: (v) => readPatterns(variable, v),
    show: (v) => v.map((p) => p.source).join(','),
    isEmpty: (v) => v === '' || emptyList(v),
  }
}

/**
 * One named origin (`ORIGINS`): its URL and its own tool lists, which narrow the global
 * `TOOLS_ALLOW` / `TOOLS_DENY` (docs/security.md#tool-filtering).
 */
export interface OriginSetting {
  url: string
  /** Tools of this origin clients may see and call (empty: every tool the global lists let through). */
  toolsAllow: ToolPattern[]
  /** Tools of this origin hidden from clients (on top of `TOOLS_DENY`). */
  toolsDeny: ToolPattern[]
}

const ORIGIN_ENTRY_KEYS = new Set(['url', 'toolsAllow', 'toolsDeny'])

/**
 * The named origins: a JSON object of name -> URL, or name -> `{ url, toolsAllow?, toolsDeny? }`,
 * as text; the same object as the typed option. Each name reachable at /mcp/<name>, each URL an
 * origin URL, each list as `TOOLS_ALLOW` (errors name `ORIGINS.<name>.toolsDeny` and the entry).
 */
const originsKind: Kind<Record<string, OriginSetting>> = {
  expected: ORIGINS_EXPECTED,
  type: 'Record<string, string \\| { url: string; toolsAllow?: string \\| string[]; toolsDeny?: string \\| string[] }>',
  fromText: (t) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(t)
    } catch {
      // The parser's own message is not shown: it quotes the value, credentials included.
      throw new Refused(`${ORIGINS_EXPECTED}; this is not valid JSON (names and strings in double quotes, no trailing comma)`)
    }
    return originsKind.fromValue(parsed)
  },
  fromValue: (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Refused(ORIGINS_EXPECTED)
    const out: Record<string, OriginSetting> = {}
    for (const [name, entry] of Object.entries(v)) {
      // The path rule (config-rules.ts): a name outside it could never be reached at /mcp/<name>.
      if (!isOriginName(name)) throw new Refused(`origin names of letters, digits, '_', '.', '~' and '-', other than . and .. (not ${showValue(name)})`)
      let setting: OriginSetting
      if (typeof entry === 'string') {
        if (originUrlOf(entry) === null) throw new Refused(ORIGIN_URL_EXPECTED, { key: name, text: entry })
        setting = { url: entry, toolsAllow: [], toolsDeny: [] }
      } else if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
        const e = entry as Record<string, unknown>
        const extra = Object.keys(e).find((k) => !ORIGIN_ENTRY_KEYS.has(k))
        if (extra !== undefined) throw new Refused(`only url, toolsAllow and toolsDeny in origin ${name} (not ${showValue(extra)})`)
        if (typeof e.url !== 'string') throw new Refused(`a URL string for origin ${name} (its "url")`)
        if (originUrlOf(e.url) === null) throw new Refused(ORIGIN_URL_EXPECTED, { key: `${name}.url`, text: e.url })
        const list = (k: 'toolsAllow' | 'toolsDeny') => {
          if (e[k] === undefined) return []
          try {
            return readPatterns(`ORIGINS.${name}.${k}`, e[k])
          } catch (err) {
            if (err instanceof Refused) throw new Refused(PATTERNS_TYPED, { key: `${name}.${k}`, text: JSON.stringify(e[k]) ?? '' })
            throw err
          }
        }
        setting = { url: e.url, toolsAllow: list('toolsAllow'), toolsDeny: list('toolsDeny') }
      } else throw new Refused(`a URL string or an object {"url": ...} for origin ${name}`)
      Object.defineProperty(out, name, { value: setting, enumerable: true, writable: true, configurable: true })
    }
    return out
  },
  show: (v) =>
    JSON.stringify(
      Object.fromEntries(
        Object.entries(v).map(([n, o]) => [
          n,
          o.toolsAllow.length === 0 && o.toolsDeny.length === 0
            ? o.url
            : { url: o.url, toolsAllow: o.toolsAllow.map((p) => p.source).join(','), toolsDeny: o.toolsDeny.map((p) => p.source).join(',') },
        ])
      )
    ),
}

/** How a virtual server names the tools of its origins (`VIRTUAL_SERVERS`, docs/virtual-servers.md#naming). */
export type VirtualPrefix = 'always' | 'conditional' | 'never'

/**
 * One virtual server (`VIRTUAL_SERVERS`): the origins of `ORIGINS` it merges, served together at
 * `/mcp/<name>`, how it names their tools, and the size of its `tools/list` pages.
 */
export interface VirtualServerSetting {
  /** Names of `ORIGINS`, in the order their tools are listed; at least one, no repeats. */
  origins: string[]
  /** `always` (default): every tool as `<origin>__<tool>`; `conditional`: only names two origins share; `never`: shared names left out. */
  prefix: VirtualPrefix
  /** Tools per `tools/list` page the edge answers (1..1000, default 100). */
  pageSize: number
}

const VIRTUAL_SERVERS_EXPECTED =
  'a JSON object of name -> {"origins": [names of ORIGINS], "prefix": "always" | "conditional" | "never"}, such as {"all":{"origins":["weather","files"]}}'
const VIRTUAL_ENTRY_KEYS = new Set(['origins', 'prefix', 'pageSize'])
const VIRTUAL_PREFIXES: readonly VirtualPrefix[] = ['always', 'conditional', 'never']

/**
 * The virtual servers: a JSON object of name -> `{ origins, prefix?, pageSize? }` as text, the same
 * object as the typed option. Each name follows the path rule of origin names (config-rules.ts
 * `isOriginName`); each origin is an origin name too. Whether the names are those of `ORIGINS` is
 * checked once both settings are read (config.ts `checkVirtualServers`).
 */
const virtualServersKind: Kind<Record<string, VirtualServerSetting>> = {
  expected: VIRTUAL_SERVERS_EXPECTED,
  type: "Record<string, { origins: string[]; prefix?: 'always' \\| 'conditional' \\| 'never'; pageSize?: number }>",
  fromText: (t) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(t)
    } catch {
      throw new Refused(`${VIRTUAL_SERVERS_EXPECTED}; this is not valid JSON (names and strings in double quotes, no trailing comma)`)
    }
    return virtualServersKind.fromValue(parsed)
  },
  fromValue: (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Refused(VIRTUAL_SERVERS_EXPECTED)
    const out: Record<string, VirtualServerSetting> = {}
    for (const [name, entry] of Object.entries(v)) {
      if (!isOriginName(name)) throw new Refused(`virtual server names of letters, digits, '_', '.', '~' and '-', other than . and .. (not ${showValue(name)})`)
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Refused(`an object {"origins": [...]} for virtual server ${name}`)
      const e = entry as Record<string, unknown>
      const extra = Object.keys(e).find((k) => !VIRTUAL_ENTRY_KEYS.has(k))
      if (extra !== undefined) throw new Refused(`only origins, prefix and pageSize in virtual server ${name} (not ${showValue(extra)})`)
      const origins = e.origins
      if (origins === undefined) throw new Refused(`a list of names of ORIGINS for virtual server ${name} (its "origins")`)
      const shown = JSON.stringify(origins) ?? ''
      if (!Array.isArray(origins) || !origins.every((o) => typeof o === 'string' && isOriginName(o)))
        throw new Refused('a list of names of ORIGINS', { key: `${name}.origins`, text: shown })
      if (origins.length === 0) throw new Refused('a non-empty list of names of ORIGINS (a virtual server needs at least one origin)', { key: `${name}.origins`, text: shown })
      const twice = origins.find((o, i) => origins.indexOf(o) !== i)
      if (twice !== undefined) throw new Refused(`each origin once (${showValue(twice as string)} is listed twice)`, { key: `${name}.origins`, text: shown })
      const prefix = e.prefix ?? 'always'
      if (typeof prefix !== 'string' || !(VIRTUAL_PREFIXES as readonly string[]).includes(prefix))
        throw new Refused('one of always, conditional, never', { key: `${name}.prefix`, text: JSON.stringify(e.prefix) ?? '' })
      const pageSize = e.pageSize ?? 100
      if (typeof pageSize !== 'number' || !Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 1000)
        throw new Refused('an integer from 1 to 1000', { key: `${name}.pageSize`, text: typeof pageSize === 'number' ? String(pageSize) : (JSON.stringify(pageSize) ?? '') })
      const setting: VirtualServerSetting = { origins: [...(origins as string[])], prefix: prefix as VirtualPrefix, pageSize }
      Object.defineProperty(out, name, { value: setting, enumerable: true, writable: true, configurable: true })
    }
    return out
  },
  show: (v) => JSON.stringify(v),
}

/** A secret key of at least 32 characters (`VIRTUAL_SESSION_KEY`). */
const sessionKey = text('a secret of at least 32 visible ASCII characters, such as the output of openssl rand -hex 32', (s) => /^[\x21-\x7e]{32,}$/.test(s))

/** `RATE_LIMIT` (access/rate-limit.ts parses it): text, or the same string as the typed option. */
const rateLimitKind: Kind<RateLimits> = custom({
  expected: '<n>/s or <n>/min, optionally followed by per-tool budgets <tool or glob>=<n>/s|min, such as 60/min,search_*=10/min',
  fromText: (t) => parseRateLimits(t),
  // The typed option: the same text, or budgets already parsed (parseRateLimits, rateLimits).
  fromValue: (v) => {
    if (typeof v === 'string') return parseRateLimits(v)
    const r = v as RateLimits | null
    if (typeof r === 'object' && r !== null && Array.isArray(r.budgets) && typeof r.budgetsFor === 'function') return r
    throw new Refused('a string such as 60/min,search_*=10/min')
  },
  show: (v) => v.budgets.map((b) => b.source).join(','),
})

/** An interface address or host name (`HOST`): an IPv6 literal, or a host name / IPv4 address as `new URL` accepts it. */
function isHost(host: string): boolean {
  return host.includes(':') ? /^[0-9a-fA-F:.]+$/.test(host) : URL.canParse(`http://${host}/`) && !/[/?#@\s]/.test(host)
}

/** A redis: or rediss: URL with a host (`STORE_URL`). */
function isRedisUrl(value: string): boolean {
  try {
    const u = new URL(value)
    return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== ''
  } catch {
    return false
  }
}

const port = int(0, { max: 65535, expected: 'a TCP port number from 0 to 65535' })
const ms = (min: number) => int(min, { expected: `an integer >= ${min} (milliseconds)` })
const token = text(B64TOKEN_EXPECTED, (s) => B64TOKEN.test(s))

/** An issuer identifier or resource URL: https (http for loopback only), no fragment, no credentials (access/bearer.ts checkResourceUrl). */
const resourceUrl = (what: string) => text(`${what}: an https:// URL (http:// only for 127.0.0.1, [::1] or localhost) without a fragment`, (s) => checkResourceUrl(s).ok)

/** An `Authorization` header value the edge sends (ORIGIN_AUTHORIZATION): visible ASCII and inner spaces (RFC 9110 field-value). */
const AUTHORIZATION_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/

const TOOL_SCOPES_EXPECTED = 'a JSON object from tool name or glob to a scope or a list of scopes, such as {"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}'

const isToolScopes = (v: unknown): v is ToolScopes =>
  typeof v === 'object' && v !== null && Array.isArray((v as ToolScopes).entries) && typeof (v as ToolScopes).requiredScopes === 'function'

/** TOOL_SCOPES: JSON text (access/tool-scopes.ts parseToolScopes, which names the bad entry), or as the typed option the object itself. */
const toolScopesKind: Kind<ToolScopes> = {
  expected: TOOL_SCOPES_EXPECTED,
  type: 'Record<string, string \\| string[]>',
  fromText: (t) => parseToolScopes(t),
  fromValue: (v) => {
    if (typeof v === 'string') return parseToolScopes(v)
    // Already parsed (parseToolScopes or toolScopes of the package): used as it is.
    if (isToolScopes(v)) return v
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Refused(TOOL_SCOPES_EXPECTED)
    return parseToolScopes(JSON.stringify(v))
  },
  show: (v) => (v.empty ? '' : JSON.stringify(Object.fromEntries(v.entries.map((e) => [e.pattern.source, e.scopes])))),
  isEmpty: (v) => v === '' || (isToolScopes(v) && v.empty) || (!isToolScopes(v) && typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0),
}

/** Where a setting's row goes in docs/configuration.md. */
export const SECTIONS = [
  'Origins',
  'Where the Node edge listens, how it stops',
  'Store (Node)',
  'Limits',
  'Schemas and validation',
  'Transport checks',
  'Access',
  'Authorization',
  'Admin API',
  'Observability',
] as const
export type Section = (typeof SECTIONS)[number]

/** One setting (see the module comment). */
export interface Setting<T = unknown> {
  /** The environment variable (and, on Workers, the `[vars]` name), e.g. `MAX_BODY_BYTES`. */
  variable: string
  /** The typed option's path, e.g. `limits.maxBodyBytes` (in `McpEdgeOptions`; for runtime `node`, in `NodeServerOptions`). */
  option: string
  /** The field it fills in `Config` (runtime `all`) or `NodeConfig` (runtime `node`). */
  key: string
  kind: Kind<T>
  /** The value when unset (also what `--help` and the docs show, unless `defaultDoc`). */
  default: T
  /** `all`: read by the edge on every runtime (`Config`); `node`: by the Node entry only (`NodeConfig`). */
  runtime: 'all' | 'node'
  /** A credential: its value is never shown, in an error or anywhere else. */
  secret?: boolean
  /** The flag's argument name: `--max-body-bytes <bytes>`. */
  arg: string
  /** The flag's help (`mcp-edge serve --help`), one short line; the default is appended. */
  help: string
  /** The default as the docs say it (markdown) when the value alone does not say it. */
  defaultDoc?: string
  section: Section
  /** An example value for the docs. */
  example: string
  /** The docs' meaning column (markdown). */
  doc: string
  /** Another flag for the same setting (`--origin` for `--origin-url`). */
  alias?: string
}

/** A row, its `key` and `runtime` kept as literal types (for {@link SettingKey}). */
function row<K extends string, O extends string, R extends 'all' | 'node', T>(s: Setting<T> & { key: K; option: O; runtime: R }): Setting<T> & { key: K; option: O; runtime: R } {
  return s
}

/** Every setting of the edge, in the order of docs/configuration.md. */
export const SETTINGS = [
  // Origins
  row({
    variable: 'ORIGIN_URL',
    option: 'origin',
    key: 'originUrl',
    runtime: 'all',
    section: 'Origins',
    kind: text(ORIGIN_URL_EXPECTED, (s) => originUrlOf(s) !== null),
    default: '',
    defaultDoc: 'none (`npm start`: the demo origin)',
    arg: 'url',
    alias: '--origin',
    help: 'MCP endpoint of the origin, served at /mcp (also --origin)',
    example: 'http://127.0.0.1:9000/mcp',
    doc: 'MCP endpoint of the origin, served at `POST/GET/DELETE /mcp`. Parsed with `new URL`: `http:` or `https:` with a host.',
  }),
  row({
    variable: 'ORIGINS',
    option: 'origins',
    key: 'origins',
    runtime: 'all',
    section: 'Origins',
    kind: originsKind,
    default: {},
    defaultDoc: 'none',
    arg: 'json',
    help: 'more origins by name, JSON {"name":"url"} or {"name":{"url":...,"toolsAllow":...,"toolsDeny":...}}, served at /mcp/<name>',
    example: '{"weather":"http://10.0.0.5:9000/mcp","files":{"url":"http://10.0.0.6:9000/mcp","toolsDeny":"delete_*"}}',
    doc: 'more origins by name, served at `/mcp/<name>`; names of letters, digits, `_`, `.`, `~`, `-`; each URL checked like `ORIGIN_URL`. An entry may be an object `{"url": ..., "toolsAllow": ..., "toolsDeny": ...}`: that origin\'s own tool lists (a comma-separated string or a list), which narrow `TOOLS_ALLOW` / `TOOLS_DENY` ([security.md](security.md#tool-filtering))',
  }),
  row({
    variable: 'VIRTUAL_SERVERS',
    option: 'virtualServers',
    key: 'virtualServers',
    runtime: 'all',
    section: 'Origins',
    kind: virtualServersKind,
    default: {} as Record<string, VirtualServerSetting>,
    defaultDoc: 'none',
    arg: 'json',
    help: 'virtual servers: one endpoint /mcp/<name> over several origins of ORIGINS, JSON {"name":{"origins":["a","b"],"prefix":"always|conditional|never","pageSize":100}}',
    example: '{"all":{"origins":["weather","files"],"prefix":"always"}}',
    doc: 'virtual servers, each served at `/mcp/<name>`: one MCP server whose tools are those of several origins of `ORIGINS`, every guard kept per origin ([virtual-servers.md](virtual-servers.md)). `prefix`: `always` (default, tools named `<origin>__<tool>`), `conditional` (only names two origins share), `never` (shared names left out, logged and shown in `/readyz`); `pageSize`: tools per `tools/list` page (default 100). A name shared with `ORIGINS`, an origin not in `ORIGINS` or an empty list stops the start',
  }),
  row({
    variable: 'VIRTUAL_SESSION_KEY',
    option: 'virtualSessionKey',
    key: 'virtualSessionKey',
    runtime: 'all',
    section: 'Origins',
    secret: true,
    kind: sessionKey,
    default: null as string | null,
    defaultDoc: 'Node: a random key per process (sessions then hold on one replica only); Workers: none, required with `VIRTUAL_SERVERS`',
    arg: 'secret',
    help: 'HMAC key of virtual-server session ids; the same on every replica (prefer the variable)',
    example: '$(openssl rand -hex 32)',
    doc: "HMAC-SHA256 key that signs the session ids of virtual servers, which carry the origins' own session ids ([virtual-servers.md](virtual-servers.md#sessions)); give every replica the same key so a session works on any of them with no shared store. Unset: on Node a random key per process, said at start; a Worker with `VIRTUAL_SERVERS` refuses every request (500, one `edge.config_error` line: set it with `npx wrangler secret put VIRTUAL_SESSION_KEY`), as each isolate would make its own key and sessions would fail across isolates",
  }),
  // The Node entry: where it listens, how it stops
  row({
    variable: 'HOST',
    option: 'host',
    key: 'host',
    runtime: 'node',
    section: 'Where the Node edge listens, how it stops',
    kind: text('an interface address or host name, such as 127.0.0.1, 0.0.0.0 or ::', isHost),
    default: '127.0.0.1',
    arg: 'address',
    help: 'interface to listen on',
    example: '0.0.0.0',
    doc: 'interface to listen on (`::` for every IPv6 and IPv4 interface)',
  }),
  row({
    variable: 'PORT',
    option: 'port',
    key: 'port',
    runtime: 'node',
    section: 'Where the Node edge listens, how it stops',
    kind: port,
    default: 8787,
    arg: 'port',
    help: 'TCP port to listen on; 0 picks a free one',
    example: '8080',
    doc: 'TCP port, 0 to 65535 (0 picks a free one; the start line prints it)',
  }),
  row({
    variable: 'SHUTDOWN_GRACE_MS',
    option: 'shutdownGraceMs',
    key: 'shutdownGraceMs',
    runtime: 'node',
    section: 'Where the Node edge listens, how it stops',
    kind: ms(0),
    default: 10_000,
    arg: 'ms',
    help: 'how long a stop waits for requests in flight',
    example: '25000',
    doc: 'on SIGTERM/SIGINT, how long requests and SSE streams in flight may take to finish; what is still open then gets -31002 per id ([deploy-node.md](deploy-node.md#stopping))',
  }),
  row({
    variable: 'DEMO_PORT',
    option: 'demoPort',
    key: 'demoPort',
    runtime: 'node',
    section: 'Where the Node edge listens, how it stops',
    kind: port,
    default: 3000,
    arg: 'port',
    help: "the demo origin's port with --demo",
    example: '0',
    doc: "the demo origin's port (`--demo` only)",
  }),
  // The Node entry's store
  row({
    variable: 'STORE_FILE',
    option: 'storeFile',
    key: 'storeFile',
    runtime: 'node',
    section: 'Store (Node)',
    kind: text('a file path, or memory', (s) => s !== '', 'string'),
    default: '.edge-data/kv.json',
    arg: 'path',
    help: 'the embedded store on disk, one process per file ("memory" for none)',
    example: '/var/lib/mcp-edge/kv.json',
    doc: 'the embedded store on disk (one edge process per file, durable before each write is acknowledged), in an existing folder (only the default `.edge-data` is created); `memory` keeps nothing',
  }),
  row({
    variable: 'STORE_URL',
    option: 'storeUrl',
    key: 'storeUrl',
    runtime: 'node',
    section: 'Store (Node)',
    kind: text('a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0', isRedisUrl),
    default: null as string | null,
    defaultDoc: 'unset',
    arg: 'url',
    help: 'a store shared by several edges instead: redis://[user:password@]host[:port][/db] or rediss://',
    example: 'redis://:password@10.0.0.5:6379/0',
    doc: 'a store shared by several edges instead of the file: Redis (`redis://` or `rediss://` for TLS); not together with `STORE_FILE`',
  }),
  row({
    variable: 'STORE_PREFIX',
    option: 'storePrefix',
    key: 'storePrefix',
    runtime: 'node',
    section: 'Store (Node)',
    kind: text('a non-empty prefix without white space, such as mcp-edge:', (s) => s !== '' && !/\s/.test(s)),
    default: 'mcp-edge:',
    arg: 'prefix',
    help: 'prefix of the Redis keys of STORE_URL',
    example: 'team-a:',
    doc: 'with `STORE_URL`: the prefix of every Redis key of this fleet',
  }),
  // Limits
  row({
    variable: 'MAX_BODY_BYTES',
    option: 'limits.maxBodyBytes',
    key: 'maxBodyBytes',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: 4 * 1024 * 1024,
    arg: 'bytes',
    help: 'largest request body (413 above it)',
    example: '1048576',
    doc: 'largest request body; HTTP 413 above it',
  }),
  row({
    variable: 'MAX_BATCH',
    option: 'limits.maxBatch',
    key: 'maxBatch',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: 100,
    arg: 'n',
    help: 'largest batch (-32600 above it)',
    example: '20',
    doc: 'most messages in one 2025-03-26 batch; -32600 above it',
  }),
  row({
    variable: 'MAX_JSON_DEPTH',
    option: 'limits.maxJsonDepth',
    key: 'maxJsonDepth',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: DEFAULT_MAX_JSON_DEPTH,
    arg: 'n',
    help: 'deepest nesting of a request body or origin reply',
    example: '32',
    doc: "deepest nesting of arrays and objects in a request body (-32700 above it, checked in one linear pass before any parse), an origin reply (-31001) or a reply to the edge's own tool-list pull",
  }),
  row({
    variable: 'MAX_REPLY_BYTES',
    option: 'limits.maxReplyBytes',
    key: 'maxReplyBytes',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: 16 * 1024 * 1024,
    arg: 'bytes',
    help: 'largest origin reply or SSE event (-31001 above it)',
    example: '4194304',
    doc: 'largest origin JSON reply, and largest SSE event (in characters); beyond it each open id gets -31001',
  }),
  row({
    variable: 'MAX_RESULT_TEXT_BYTES',
    option: 'limits.maxResultTextBytes',
    key: 'maxResultTextBytes',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: null as number | null,
    defaultDoc: 'unset (no bound)',
    arg: 'bytes',
    help: 'largest text item of a tool result, in UTF-8 bytes (OVERSIZE_RESULT says what happens above it)',
    example: '65536',
    doc: 'largest `text` content item of a `tools/call` result, in UTF-8 bytes; above it `OVERSIZE_RESULT` applies ([result-checks.md](result-checks.md#oversize-results))',
  }),
  row({
    variable: 'ORIGIN_TIMEOUT_MS',
    option: 'limits.originTimeoutMs',
    key: 'originTimeoutMs',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: 30_000,
    arg: 'ms',
    help: 'origin deadline (-31002 after it)',
    example: '60000',
    doc: '-31002 when the origin sends no headers (or, on a stream, nothing) for this long',
  }),
  row({
    variable: 'STREAM_IDLE_MS',
    option: 'limits.streamIdleMs',
    key: 'streamIdleMs',
    runtime: 'all',
    section: 'Limits',
    kind: int(0),
    default: 300_000,
    arg: 'ms',
    help: 'an SSE reply completing nothing for this long ends, open ids -31002 (0: no bound)',
    example: '60000',
    doc: 'an SSE reply that completes no event or comment for this long ends; open ids get -31002 (0: no bound)',
  }),
  row({
    variable: 'STREAM_MAX_MS',
    option: 'limits.streamMaxMs',
    key: 'streamMaxMs',
    runtime: 'all',
    section: 'Limits',
    kind: int(0),
    default: 3_600_000,
    arg: 'ms',
    help: 'longest a relayed stream may last, open ids -31002 (0: no bound)',
    example: '600000',
    doc: 'longest a relayed stream (SSE reply, GET stream) may last; open ids get -31002 (0: no bound)',
  }),
  row({
    variable: 'TOOL_LIST_TIMEOUT_MS',
    option: 'limits.toolListTimeoutMs',
    key: 'toolListTimeoutMs',
    runtime: 'all',
    section: 'Limits',
    kind: int(1),
    default: 10_000,
    arg: 'ms',
    help: "deadline of the edge's own tool-list pull",
    example: '5000',
    doc: 'overall deadline of one tool-list pull by the edge (initialize and every page); past it waiting calls are forwarded unvalidated (D16)',
  }),
  row({
    variable: 'MAX_CONNECTIONS',
    option: 'maxConnections',
    key: 'maxConnections',
    runtime: 'node',
    section: 'Limits',
    kind: int(1, { expected: 'an integer >= 1 (connections)' }),
    default: 10_000,
    arg: 'n',
    help: 'client connections held at once; more are closed on accept (keep it below ulimit -n)',
    example: '2000',
    doc: "client connections held at once; a connection past it is closed on accept. Keep it below the process's `ulimit -n` so the edge keeps descriptors for origins and the store",
  }),
  row({
    variable: 'HEADERS_TIMEOUT_MS',
    option: 'headersTimeoutMs',
    key: 'headersTimeoutMs',
    runtime: 'node',
    section: 'Limits',
    kind: ms(1),
    default: 10_000,
    arg: 'ms',
    help: 'a client must send its request headers within this (408 after it)',
    example: '5000',
    doc: 'a client must send its request line and headers within this; HTTP 408 and the connection closed after it',
  }),
  row({
    variable: 'REQUEST_TIMEOUT_MS',
    option: 'requestTimeoutMs',
    key: 'requestTimeoutMs',
    runtime: 'node',
    section: 'Limits',
    kind: ms(1),
    default: 30_000,
    arg: 'ms',
    help: 'a client must send its whole request within this (408 after it)',
    example: '60000',
    doc: 'a client must send its whole request (headers and body) within this (at least `HEADERS_TIMEOUT_MS`); HTTP 408 after it. Replies and streams are not bounded by it',
  }),
  row({
    variable: 'KEEP_ALIVE_TIMEOUT_MS',
    option: 'keepAliveTimeoutMs',
    key: 'keepAliveTimeoutMs',
    runtime: 'node',
    section: 'Limits',
    kind: ms(1),
    default: 5_000,
    arg: 'ms',
    help: 'an idle kept-alive client connection is closed after this',
    example: '65000',
    doc: "an idle kept-alive client connection is closed after this (behind a load balancer, set it above the balancer's idle timeout)",
  }),
  // Schemas and validation
  row({
    variable: 'SCHEMA_TTL_S',
    option: 'limits.schemaTtlS',
    key: 'schemaTtlS',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(0),
    default: 300,
    arg: 's',
    help: 'tool schema freshness in seconds',
    example: '3600',
    doc: "how long a learned tool schema is fresh (an origin's `ttlMs` wins when positive)",
  }),
  row({
    variable: 'REFRESH_MIN_INTERVAL_MS',
    option: 'limits.refreshMinIntervalMs',
    key: 'refreshMinIntervalMs',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(0),
    default: 5_000,
    arg: 'ms',
    help: 'least time between two tool-list pulls per origin and scope',
    example: '1000',
    doc: 'at most one tool-list pull per origin and caller scope per interval (D7)',
  }),
  row({
    variable: 'REFRESH_BUDGET_PER_MIN',
    option: 'limits.refreshBudgetPerMin',
    key: 'refreshBudgetPerMin',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(1),
    default: 30,
    arg: 'n',
    help: 'tool-list pulls per origin per minute',
    example: '10',
    doc: 'at most this many tool-list pulls per origin per minute, over every caller',
  }),
  row({
    variable: 'SCHEMA_RECHECK_MS',
    option: 'limits.schemaRecheckMs',
    key: 'schemaRecheckMs',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(0),
    default: 30_000,
    arg: 'ms',
    help: 'a rejection by a schema older than this is confirmed by one refresh first',
    example: '5000',
    doc: 'a call rejected by a schema learned longer ago than this (or before the process started) is rejected only after one refresh confirms it: no false reds after an origin loosens a schema',
  }),
  row({
    variable: 'VALIDATOR_CACHE_SIZE',
    option: 'limits.validatorCacheSize',
    key: 'validatorCacheSize',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(1),
    default: 1000,
    arg: 'n',
    help: 'compiled validators kept in memory',
    example: '5000',
    doc: 'compiled validators and tool entries kept in memory (LRU)',
  }),
  row({
    variable: 'VALIDATION_BUDGET_MS',
    option: 'limits.validationBudgetMs',
    key: 'validationBudgetMs',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(1),
    default: 50,
    arg: 'ms',
    help: 'a call whose argument validation is estimated past this CPU time is answered as invalid arguments',
    example: '200',
    doc: "the CPU time one call's argument validation may be estimated to take (from the schema's cost and, when that figure is over, from the values the arguments hold; decided before validating); a call past it is answered as invalid arguments (-32602, or an isError result from 2025-11-25), never validated nor forwarded unchecked; raising it lets larger arguments through and lets one call hold the event loop that long ([validation.md](validation.md#validation-budget))",
  }),
  row({
    variable: 'PRIVATE_SCOPE_TTL_S',
    option: 'limits.privateScopeTtlS',
    key: 'privateScopeTtlS',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(60),
    default: 3_600,
    arg: 's',
    help: "seconds the store keeps a caller's private tool list after its last write (at least 60)",
    example: '86400',
    doc: "a caller's private tool list (an origin's `cacheScope: \"private\"`, or a 2026-07-28 list without one) is kept in the store this long after its last write (`expirationTtl`; at least 60, Workers KV's minimum); an active caller's list is written again at each refresh ([scope.md](scope.md#bounds))",
  }),
  row({
    variable: 'MAX_PRIVATE_SCOPES',
    option: 'limits.maxPrivateScopes',
    key: 'maxPrivateScopes',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: int(1),
    default: 1_000,
    arg: 'n',
    help: 'private tool lists (one per caller) kept per origin, least recently used out first',
    example: '20000',
    doc: 'private tool lists (one per caller) kept per origin, in memory and in the store; past it the least recently used go first ([scope.md](scope.md#bounds))',
  }),
  row({
    variable: 'INVALID_ARGS',
    option: 'policies.invalidArgs',
    key: 'invalidArgs',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['auto', 'rpc-error', 'tool-error'] as const),
    default: 'auto',
    arg: 'mode',
    help: 'auto | rpc-error | tool-error',
    example: 'tool-error',
    doc: '`auto` (by protocol version), `rpc-error` (-32602), `tool-error` (an `isError: true` result)',
  }),
  row({
    variable: 'UNKNOWN_TOOL',
    option: 'policies.unknownTool',
    key: 'unknownTool',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['reject', 'forward'] as const),
    default: 'reject',
    arg: 'mode',
    help: 'reject | forward',
    example: 'forward',
    doc: 'a call to a tool the origin does not list: `reject` (-32602 after one refresh) or `forward`',
  }),
  row({
    variable: 'TOOL_PINNING',
    option: 'policies.toolPinning',
    key: 'toolPinning',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['off', 'audit', 'enforce'] as const),
    default: 'audit',
    arg: 'mode',
    help: 'off | audit | enforce',
    example: 'enforce',
    doc: 'tool pinning (docs/pinning.md): `off`; `audit` (default: each change of a tool definition is logged and counted, no answer changes); `enforce` (tools not approved are left out of tools/list and their calls refused)',
  }),
  row({
    variable: 'ON_SCHEMA_ERROR',
    option: 'policies.onSchemaError',
    key: 'onSchemaError',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['forward', 'reject'] as const),
    default: 'forward',
    arg: 'mode',
    help: 'forward | reject',
    example: 'reject',
    doc: 'missing or unusable schema, or the store is down: `forward` (graded `unvalidated`) or `reject` (-32603)',
  }),
  row({
    variable: 'OUTPUT_SCHEMA',
    option: 'policies.outputSchema',
    key: 'outputSchema',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['off', 'warn', 'strict'] as const),
    default: 'warn',
    arg: 'mode',
    help: 'off | warn | strict',
    example: 'strict',
    doc: '`structuredContent` against `outputSchema`: `off`, `warn` (logged only), `strict` (the result becomes an `isError: true` result naming the violated paths)',
  }),
  row({
    variable: 'HIDDEN_FAILURES',
    option: 'policies.hiddenFailures',
    key: 'hiddenFailures',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: onOff,
    default: true,
    arg: 'on|off',
    help: 'add isError: true to results hiding a failure',
    example: 'off',
    doc: 'add `isError: true` to results that hide a failure (`success: false`, a lone `error` member and the like, D11)',
  }),
  row({
    variable: 'RESULT_SECRETS',
    option: 'policies.resultSecrets',
    key: 'resultSecrets',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['off', 'audit', 'redact', 'block'] as const),
    default: 'audit',
    arg: 'mode',
    help: 'secrets in tool results: off | audit | redact | block',
    example: 'redact',
    doc: 'secrets (private keys, cloud keys, tokens) in tool results ([result-checks.md](result-checks.md)): `off`; `audit` (default: each finding logged and counted, the answer unchanged); `redact` (each becomes `[REDACTED:<category>]`); `block` (the result becomes an `isError: true` result, `governance` / `secret_in_result`)',
  }),
  row({
    variable: 'RESULT_CONTROL',
    option: 'policies.resultControl',
    key: 'resultControl',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['off', 'audit', 'strip'] as const),
    default: 'audit',
    arg: 'mode',
    help: 'terminal escapes, bidi and zero-width characters in tool results: off | audit | strip',
    example: 'strip',
    doc: 'terminal escapes, C0/C1 controls, bidi controls and zero-width characters in tool results ([result-checks.md](result-checks.md#hidden-characters)): `off`; `audit` (default: logged and counted, the answer unchanged); `strip` (removed, nothing else changed)',
  }),
  row({
    variable: 'OVERSIZE_RESULT',
    option: 'policies.oversizeResult',
    key: 'oversizeResult',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: oneOf(['error', 'truncate'] as const),
    default: 'error',
    arg: 'mode',
    help: 'a result text item above MAX_RESULT_TEXT_BYTES: error | truncate',
    example: 'truncate',
    doc: 'a `text` item of a tool result above `MAX_RESULT_TEXT_BYTES`: `error` (the id gets -31001, as a reply above `MAX_REPLY_BYTES` does); `truncate` (head and tail kept with a marker naming the bytes dropped, `_meta["io.mcp-edge/truncated"]` set)',
  }),
  row({
    variable: 'SUPPORTED_VERSIONS',
    option: 'policies.supportedVersions',
    key: 'supportedVersions',
    runtime: 'all',
    section: 'Schemas and validation',
    kind: list<ProtocolVersion>({
      expected: `a comma-separated list of ${ALL_VERSIONS.join(', ')}`,
      typedExpected: `a list of ${ALL_VERSIONS.join(', ')}`,
      item: isKnownVersion,
      nonEmpty: true,
    }),
    default: [...ALL_VERSIONS],
    defaultDoc: 'all five',
    arg: 'list',
    help: 'protocol versions accepted, comma-separated',
    example: '2025-06-18,2025-11-25',
    doc: `protocol versions accepted, from ${ALL_VERSIONS.map((v) => `\`${v}\``).join(', ')}; others get 400 -32022`,
  }),
  // Transport checks
  row({
    variable: 'ALLOWED_ORIGINS',
    option: 'allowedOrigins',
    key: 'allowedOrigins',
    runtime: 'all',
    section: 'Transport checks',
    kind: list({ expected: 'a comma-separated list of origins', typedExpected: 'a list of origins (strings)' }),
    default: [] as string[],
    defaultDoc: 'loopback origins',
    arg: 'list',
    help: 'comma-separated browser Origin allow-list ("*" for any)',
    example: 'https://app.example.com',
    doc: 'comma-separated browser `Origin` allow-list (403 otherwise); `*` for any. The same list answers CORS preflights and exposes `Mcp-Session-Id` to pages ([browser-clients.md](browser-clients.md))',
  }),
  row({
    variable: 'FORWARD_ORIGIN_HEADER',
    option: 'forwardOriginHeader',
    key: 'forwardOriginHeader',
    runtime: 'all',
    section: 'Transport checks',
    kind: onOff,
    default: false,
    arg: 'on|off',
    help: "send the browser's Origin, Referer and Sec-Fetch-* headers on to the origin (off: the edge applies ALLOWED_ORIGINS itself)",
    example: 'on',
    doc: "send the browser's `Origin`, `Referer` and `Sec-Fetch-*` headers on to the origin. Off: the edge applies the Origin rule itself (`ALLOWED_ORIGINS`) and calls the origin as its own client, without them, so an origin with its own loopback-only Origin check (the MCP SDK's DNS-rebinding protection) or a Fetch Metadata check (`Sec-Fetch-Site`) serves the pages the edge allows; `on` for an origin that reads them. `Cookie` is always forwarded (an origin may authenticate by cookie)",
  }),
  row({
    variable: 'ALLOWED_HOSTS',
    option: 'allowedHosts',
    key: 'allowedHosts',
    runtime: 'all',
    section: 'Transport checks',
    kind: list({ expected: 'a comma-separated list of host names', typedExpected: 'a list of host names (strings)' }),
    default: null as string[] | null,
    defaultDoc: 'Node on loopback: `localhost`; else no check',
    arg: 'list',
    help: 'comma-separated Host allow-list ("localhost" = loopback names)',
    example: 'edge.example.com',
    doc: 'comma-separated `Host` allow-list (`localhost` = loopback names): DNS-rebinding protection on every route',
  }),
  // Access
  row({
    variable: 'TOOLS_ALLOW',
    option: 'access.toolsAllow',
    key: 'toolsAllow',
    runtime: 'all',
    section: 'Access',
    kind: patterns('TOOLS_ALLOW'),
    default: [] as ToolPattern[],
    defaultDoc: 'unset (every tool)',
    arg: 'list',
    help: 'comma-separated tool names or globs clients may see and call (unset: all)',
    example: 'get_*,search',
    doc: 'tool names or globs (`*` any run, `?` one character) clients may see and call, on every origin; any other tool is absent from `tools/list` and a call to it is answered as an unknown tool, without reaching the origin ([security.md](security.md#tool-filtering))',
  }),
  row({
    variable: 'TOOLS_DENY',
    option: 'access.toolsDeny',
    key: 'toolsDeny',
    runtime: 'all',
    section: 'Access',
    kind: patterns('TOOLS_DENY'),
    default: [] as ToolPattern[],
    defaultDoc: 'unset (none)',
    arg: 'list',
    help: 'comma-separated tool names or globs hidden from clients (wins over TOOLS_ALLOW)',
    example: 'delete_*,admin_*',
    doc: 'tool names or globs hidden from clients on every origin, as if the origin did not have them, with their case, NFKC and whitespace variants; wins over `TOOLS_ALLOW`. Per origin: `toolsAllow` / `toolsDeny` inside `ORIGINS` ([security.md](security.md#tool-filtering))',
  }),
  row({
    variable: 'RATE_LIMIT',
    option: 'access.rateLimit',
    key: 'rateLimits',
    runtime: 'all',
    section: 'Access',
    kind: rateLimitKind,
    default: rateLimits([]),
    defaultDoc: 'unset (no limit)',
    arg: 'budgets',
    help: 'requests per caller: <n>/s or <n>/min, then <tool or glob>=<n>/s|min per tool',
    example: '60/min,search_*=10/min',
    doc: "per caller (the token's `sub` with auth on, else the caller scope): `<n>/s` or `<n>/min` over every JSON-RPC message sent to the origin (requests, notifications and responses), then per-tool budgets `<tool or glob>=<n>/s|min` over `tools/call`; over it HTTP 429 with `Retry-After` (a per-id error in a batch). Counted in memory (Node), in Redis with `STORE_URL` (shared by the edges), or by the Workers Rate Limiting binding ([security.md](security.md#rate-limiting))",
  }),
  // Authorization (the edge as an OAuth 2.1 resource server; docs/security.md)
  row({
    variable: 'AUTH_ISSUER',
    option: 'auth.issuer',
    key: 'authIssuer',
    runtime: 'all',
    section: 'Authorization',
    kind: resourceUrl('the issuer identifier of the authorization server'),
    default: null as string | null,
    defaultDoc: 'unset (auth off)',
    arg: 'url',
    help: 'turns auth on: the issuer (iss) of the access tokens the edge accepts',
    example: 'https://auth.example.com',
    doc: 'turns auth on: the edge accepts only access tokens whose `iss` is exactly this and answers 401 otherwise; named in the protected resource metadata (`authorization_servers`). Needs `AUTH_AUDIENCE` and one of `AUTH_JWKS_URL`, `AUTH_JWKS` ([security.md](security.md))',
  }),
  row({
    variable: 'AUTH_AUDIENCE',
    option: 'auth.audience',
    key: 'authAudience',
    runtime: 'all',
    section: 'Authorization',
    kind: resourceUrl("the edge's resource URL"),
    default: null as string | null,
    defaultDoc: 'unset; required with `AUTH_ISSUER`',
    arg: 'url',
    help: "the edge's own resource URL (RFC 8707): a token's aud must contain it",
    example: 'https://mcp.example.com/mcp',
    doc: "the edge's MCP endpoint as clients call it (RFC 8707 resource): a token's `aud` must contain it; the metadata's `resource` and its URL (`/.well-known/oauth-protected-resource` + the path) derive from it. Named origins (`/mcp/<name>`) are under it",
  }),
  row({
    variable: 'AUTH_JWKS_URL',
    option: 'auth.jwksUrl',
    key: 'authJwksUrl',
    runtime: 'all',
    section: 'Authorization',
    kind: text("an http:// or https:// URL of the issuer's JSON Web Key Set", (s) => originUrlOf(s) !== null),
    default: null as string | null,
    defaultDoc: 'unset',
    arg: 'url',
    help: "the issuer's JWKS URL (or AUTH_JWKS)",
    example: 'https://auth.example.com/.well-known/jwks.json',
    doc: "the issuer's signing keys: kept 10 min, read again at once for an unknown `kid` (at most once per 30 s, and not within 30 s of a failed read), each read bounded by 3 s and `AUTH_JWKS_MAX_BYTES`. `/readyz` reports a key set that cannot be read (check `jwks`) and `mcp-edge serve` warns at start, naming the URL and what it answered. Exactly one of this and `AUTH_JWKS`",
  }),
  row({
    variable: 'AUTH_JWKS',
    option: 'auth.jwks',
    key: 'authJwks',
    runtime: 'all',
    section: 'Authorization',
    secret: true,
    kind: text('a JSON Web Key Set {"keys":[...]} of public keys', (s) => s.trim().startsWith('{')),
    default: null as string | null,
    defaultDoc: 'unset',
    arg: 'json',
    help: 'the signing keys as JSON text instead of AUTH_JWKS_URL (a Workers secret)',
    example: '{"keys":[{"kty":"EC","crv":"P-256","x":"...","y":"...","kid":"k1"}]}',
    doc: 'the signing keys themselves, as JSON text (a Workers secret: `wrangler secret put AUTH_JWKS`); public keys only (a key with `d` or `k` stops the start); never shown in a message',
  }),
  row({
    variable: 'AUTH_JWKS_COOLDOWN_MS',
    option: 'auth.jwksCooldownMs',
    key: 'authJwksCooldownMs',
    runtime: 'all',
    section: 'Authorization',
    kind: ms(0),
    default: 30_000,
    arg: 'ms',
    help: 'least time between two JWKS reads caused by an unknown kid',
    example: '5000',
    doc: 'with `AUTH_JWKS_URL`: a token whose `kid` the cached key set lacks makes the edge read the JWKS again, unless it read it less than this long ago (then the token is refused `unknown_key`); bounds what tokens with invented `kid`s can cost the issuer (at most one read per interval). A read that fails (an error status, no answer, an unusable body) is not tried again for this long either, whatever the requests: they get 503 with `Retry-After`, or 401 `unknown_key` when the edge holds keys and the `kid` of the token is not among them. After a key rotation, new tokens work at most this long after the last read',
  }),
  row({
    variable: 'AUTH_JWKS_MAX_BYTES',
    option: 'auth.jwksMaxBytes',
    key: 'authJwksMaxBytes',
    runtime: 'all',
    section: 'Authorization',
    kind: int(1),
    default: 1024 * 1024,
    arg: 'bytes',
    help: 'largest JWKS answer read from AUTH_JWKS_URL',
    example: '65536',
    doc: 'with `AUTH_JWKS_URL`: the largest key set the edge reads; a larger answer is not read past this many bytes and counts as a failed read (logged with the URL; requests get 503 until a read succeeds). A key set of a few keys is a few KiB',
  }),
  row({
    variable: 'AUTH_ALGORITHMS',
    option: 'auth.algorithms',
    key: 'authAlgorithms',
    runtime: 'all',
    section: 'Authorization',
    kind: list({
      expected: `a comma-separated list of ${[...ASYMMETRIC_ALGORITHMS].join(', ')}`,
      typedExpected: `a list of ${[...ASYMMETRIC_ALGORITHMS].join(', ')}`,
      item: (a) => ASYMMETRIC_ALGORITHMS.has(a),
    }),
    default: [] as string[],
    defaultDoc: '`RS256,ES256,PS256,EdDSA`',
    arg: 'list',
    help: 'signature algorithms accepted (asymmetric only)',
    example: 'ES256',
    doc: 'the JWS algorithms a token may be signed with, among the asymmetric ones; `none` and `HS*` are never accepted',
  }),
  row({
    variable: 'ORIGIN_AUTHORIZATION',
    option: 'auth.originAuthorization',
    key: 'originAuthorization',
    runtime: 'all',
    section: 'Authorization',
    secret: true,
    kind: text('an Authorization header value of visible ASCII characters and inner spaces, such as Bearer <token>', (s) => AUTHORIZATION_VALUE.test(s)),
    default: null as string | null,
    defaultDoc: 'unset (no `Authorization` to the origin)',
    arg: 'value',
    help: "with auth on: the Authorization value the edge sends to the origin (the client's token never is)",
    example: 'Bearer $(cat origin-token)',
    doc: "with auth on, the client's `Authorization` ends at the edge; this value (the edge's own credential, a secret) is sent to the origin instead, on every POST, GET, DELETE and tool-list pull; unset: no `Authorization` at all. Needs `AUTH_ISSUER`",
  }),
  row({
    variable: 'TOOL_SCOPES',
    option: 'auth.toolScopes',
    key: 'toolScopes',
    runtime: 'all',
    section: 'Authorization',
    kind: toolScopesKind,
    default: toolScopes([]),
    defaultDoc: 'none (a valid token calls every tool)',
    arg: 'json',
    help: 'JSON: tool name or glob -> the scope (or list of scopes) a token needs to call it',
    example: '{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}',
    doc: "per-tool scopes: every matching entry applies (a tool needs the union); a `tools/call` without them gets 403 `insufficient_scope` naming them (a per-id error inside a batch); the scopes of entries that can match a tool the filters leave visible form the metadata's `scopes_supported`, and those of the entries that match every tool (`*`) are the `scope` of every 401 challenge. Needs `AUTH_ISSUER`",
  }),
  // Admin API
  row({
    variable: 'ADMIN_TOKEN',
    option: 'adminToken',
    key: 'adminToken',
    runtime: 'all',
    section: 'Admin API',
    secret: true,
    kind: token,
    default: null as string | null,
    defaultDoc: 'unset (admin API off: 404)',
    arg: 'token',
    help: 'bearer token of the admin API (prefer the variable: a flag shows in ps)',
    example: '$(openssl rand -hex 32)',
    doc: "bearer token of the admin API `/admin/*` ([admin-api.md](admin-api.md)); prefer the variable, since a flag is visible to other users in `ps`. Only the characters a client can send after `Bearer ` (RFC 6750 `b64token`: `A-Z a-z 0-9 - . _ ~ + /`, then any `=`); another character (`'my secret!'`) stops the start with `ADMIN_TOKEN (value not shown): expected a bearer token of the characters …`",
  }),
  // Observability
  row({
    variable: 'METRICS_TOKEN',
    option: 'metricsToken',
    key: 'metricsToken',
    runtime: 'all',
    section: 'Observability',
    secret: true,
    kind: token,
    default: null as string | null,
    defaultDoc: 'unset (`/metrics` open, behind the Host check)',
    arg: 'token',
    help: 'bearer token GET /metrics requires (prefer the variable)',
    example: '$(openssl rand -hex 32)',
    doc: 'bearer token `GET /metrics` requires ([observability.md](observability.md)); prefer the variable. The same characters as `ADMIN_TOKEN` (RFC 6750 `b64token`), else the start stops',
  }),
  row({
    variable: 'LOG_LEVEL',
    option: 'logLevel',
    key: 'logLevel',
    runtime: 'all',
    section: 'Observability',
    kind: oneOf(['info', 'warn', 'error'] as const),
    default: 'info',
    arg: 'level',
    help: 'info | warn | error: the least severe log line written',
    example: 'warn',
    doc: 'the least severe log line written ([observability.md](observability.md#log-level)): `info` (default: one `mcp.post` line per POST and every event), `warn` (drops the lines of POSTs whose ids were all answered, keeps every line with an origin failure, a missing answer or a dropped message, and every warning and error event), `error` (error events only). Metrics and traces are not affected',
  }),
] as const

/** The rows a runtime reads: `all` (the edge, every runtime) or `node` (the Node entry's own). */
export function settingsOf(runtime: 'all' | 'node'): readonly Setting[] {
  return (SETTINGS as readonly Setting[]).filter((s) => s.runtime === runtime)
}

/** `MAX_BATCH` -> `--max-batch`: every setting's flag of `mcp-edge serve`. */
export function flagOf(variable: string): string {
  return `--${variable.toLowerCase().replaceAll('_', '-')}`
}

/** A setting's default as `--help` and the docs show it (markdown backticks kept). */
export function defaultText(s: Setting): string {
  return s.defaultDoc ?? `\`${s.kind.show(s.default)}\``
}

/** The flag's help line: the row's help, its default, and the variable (`... (default 100) [MAX_BATCH]`). */
export function flagHelp(s: Setting): string {
  return `${s.help} (default ${defaultText(s).replaceAll('`', '')}) [${s.variable}]`
}

/** A typed value as a message shows it: a string as it is (redacted, bounded) where a string is expected, anything else as JSON (`"5"` for a number option). */
function shownTyped(kind: Kind, value: unknown): string {
  if (typeof value === 'string' && kind.isEmpty?.('')) return showValue(value)
  let json: string
  try {
    json = JSON.stringify(value) ?? String(value)
  } catch {
    json = Object.prototype.toString.call(value)
  }
  if (typeof value === 'number' || typeof value === 'bigint') json = String(value)
  // JSON has its control characters escaped already: only the URLs' credentials hidden and the length bounded.
  const v = redactUrl(json)
  return v.length > 80 ? `${v.slice(0, 80)}...` : v
}

/**
 * A setting's value from its text (an env variable or a flag; unset or empty: the default).
 * @throws ConfigError `<VARIABLE>=<value>: expected <what>` (`<VARIABLE> (value not shown): ...` for a secret)
 */
export function readText(s: Setting, text: string | undefined): unknown {
  if (text === undefined || text === '') return s.default
  try {
    return s.kind.fromText(text)
  } catch (e) {
    if (!(e instanceof Refused)) throw e
    if (s.secret) throw new ConfigError(`${s.variable} ${NOT_SHOWN}: expected ${e.expected}`, s.variable, NOT_SHOWN, e.expected)
    if (e.part) throw ConfigError.bad(`${s.variable}.${e.part.key}`, e.part.text, e.expected)
    throw ConfigError.bad(s.variable, text, e.expected)
  }
}

/**
 * A setting's value from its typed option (the same rule as the text, on the value itself).
 * @returns undefined when the option is unset (undefined, or empty: `''`, `[]`)
 * @throws ConfigError `<option>=<value> (<VARIABLE>): expected <what>` (`origins.weather=... (ORIGINS.weather)` for one part)
 */
export function readTyped(s: Setting, value: unknown): unknown {
  if (value === undefined || s.kind.isEmpty?.(value)) return undefined
  try {
    return s.kind.fromValue(value)
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${s.option} (${s.variable}): ${e.message}`, e.variable, e.shown, e.expected)
    if (!(e instanceof Refused)) throw e
    const variable = e.part ? `${s.variable}.${e.part.key}` : s.variable
    const at = e.part ? `${s.option}.${e.part.key}` : s.option
    const shown = s.secret ? NOT_SHOWN : e.part ? showValue(e.part.text) : shownTyped(s.kind, value)
    throw new ConfigError(`${at}=${shown} (${variable}): expected ${e.expected}`, variable, shown, e.expected)
  }
}

/**
 * Every row's value, keyed by the row's `key`: the typed option when given, else the variable's
 * text, else the default. Entries of `env` that are not strings (Worker bindings) are ignored.
 * @param typed a row's typed option value (undefined: none)
 * @throws ConfigError for the first unusable value, in table order
 */
export function readSettings(rows: readonly Setting[], env: Record<string, unknown>, typed: (s: Setting) => unknown = () => undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const s of rows) {
    const fromOption = readTyped(s, typed(s))
    if (fromOption !== undefined) {
      out[s.key] = fromOption
      continue
    }
    const v = env[s.variable]
    const value = readText(s, typeof v === 'string' ? v : undefined)
    // Defaults that are objects are copied: a caller's change to one edge's Config is not every edge's.
    out[s.key] = Array.isArray(value) ? [...(value as unknown[])] : value !== null && typeof value === 'object' ? { ...value } : value
  }
  return out
}

/** The keys of the table's rows for one runtime (for the type checks in config.ts and node-config.ts). */
export type SettingKey<R extends 'all' | 'node'> = Extract<(typeof SETTINGS)[number], { runtime: R }>['key']

/** The typed option paths of the table's rows for one runtime (for the type check in edge-options.ts). */
export type SettingOption<R extends 'all' | 'node'> = Extract<(typeof SETTINGS)[number], { runtime: R }>['option']
