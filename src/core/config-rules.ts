/**
 * @module config-rules
 * The error and the value rules every setting is read with ({@link ConfigError}, the origin URL,
 * integer and bearer-token rules), below the settings table (settings.ts) and the readers built on it
 * (config.ts, the Node entry's node-config.ts), so any module that refuses a value (access/,
 * stores/) can import them without loading the table.
 */
import { redactUrl } from './redact-url'
import { EdgeError } from './errors'

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
 * inside `ORIGINS`' JSON too), control characters and lone surrogates escaped (`\n`, `\u0007`),
 * every other character as typed (a quote or a backslash is not escaped: `ORIGINS={"a":1}` shows
 * as the user wrote it), at most 80 characters (then `...`); an empty value as `""`.
 */
export function showValue(value: string): string {
  let v = redactUrl(value)
  // JSON's escapes for control characters and lone surrogates; its `\"` and `\\` undone.
  v = JSON.stringify(v)
    .slice(1, -1)
    .replace(/\\(["\\])/g, '$1')
  if (v === '') return '""'
  return v.length > 80 ? `${v.slice(0, 80)}...` : v
}

/** A caller scope as written: `public`, or a private scope `u-` and 64 lower-case hex digits (core/validation/caller-scope.ts `privateScope`). */
const CALLER_SCOPE = /^(?:public|u-[0-9a-f]{64})$/

/** What a caller scope must be, as an error says it (the admin API's `?scope=`, `mcp-edge tools --scope`). */
export const CALLER_SCOPE_EXPECTED = '"public" or a private scope "u-" followed by 64 lower-case hex digits'

/** Whether `s` is a caller scope: `public` or `u-` and 64 lower-case hex digits (what core/validation/caller-scope.ts `privateScope` gives). */
export function isCallerScope(s: string): boolean {
  return CALLER_SCOPE.test(s)
}

/**
 * The path rule for an origin name (the segment after the mount point): URL-unreserved
 * characters only (RFC 3986 section 2.3), and not a dot segment (`.`, `..`), which URL parsing
 * removes. `ORIGINS` names are held to the same rule, so every configured origin is reachable at
 * `<mount>/<name>` (core/front-door.ts routes by it).
 */
export function isOriginName(name: string): boolean {
  return /^[A-Za-z0-9._~-]+$/.test(name) && name !== '.' && name !== '..'
}

/** What {@link isOriginName} accepts, as messages say it (the edge's `ORIGINS` and the `mcp-edge` command's `--origin`). */
export const ORIGIN_NAME_EXPECTED = "an origin name of letters, digits, '_', '.', '~' and '-', other than . and .."

/** What an origin URL must be (`ORIGIN_URL`, each URL of `ORIGINS`). */
export const ORIGIN_URL_EXPECTED = 'an http:// or https:// URL with a host, such as http://127.0.0.1:3000/mcp'

/** An http: or https: URL with a host, or null. */
export function originUrlOf(value: string): URL | null {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return null
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : null
}

/**
 * Parses an origin URL with `new URL`: http or https, with a host.
 * @throws ConfigError naming `variable` otherwise (`ORIGIN_URL=http://` is refused here)
 */
export function parseOriginUrl(variable: string, value: string): URL {
  const url = originUrlOf(value)
  if (url === null) throw ConfigError.bad(variable, value, ORIGIN_URL_EXPECTED)
  return url
}

/** Decimal digits, surrounding blanks allowed: the text form of every integer setting. */
export const INTEGER_TEXT = /^\s*-?\d+\s*$/

/**
 * The characters of a bearer token (RFC 6750 §2.1 `b64token`: `A-Z a-z 0-9 - . _ ~ + /`, then any
 * `=`), the only ones a client can send in `Authorization: Bearer <token>` and the ones hono's
 * bearer-auth accepts; a token outside them would make every authenticated request fail.
 */
export const B64TOKEN = /^[A-Za-z0-9._~+/-]+=*$/

/** What a bearer-token setting must be (`ADMIN_TOKEN`, `METRICS_TOKEN`). */
export const B64TOKEN_EXPECTED =
  'a bearer token of the characters A-Z a-z 0-9 - . _ ~ + / and trailing = (RFC 6750 b64token: no spaces, quotes or !), such as the output of openssl rand -hex 32'

/** The shown value of a secret in every message. */
export const NOT_SHOWN = '(value not shown)'

/** A comma-separated list: entries trimmed, empty ones dropped. */
export function csvList(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** Edit distance (insertions, deletions, substitutions; letters compared without case), for "did you mean". */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1))
    prev = cur
  }
  return prev[b.length]!
}

/**
 * The known name closest to `name`, when close enough to be a misspelling of it (an edit distance
 * of at most 2, or a third of its length): the "did you mean" of an unknown option key
 * (edge-options.ts) and of an unknown variable (startup-report.ts).
 * @returns the closest known name, or undefined when none is that close
 */
export function closest(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestD = Infinity
  for (const k of known) {
    const d = distance(name, k)
    if (d < bestD) [best, bestD] = [k, d]
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}
