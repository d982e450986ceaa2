/**
 * @module core/access/tool-scopes
 * Per-tool scopes: `TOOL_SCOPES`, a JSON object from tool name or glob (core/patterns/tool-glob.ts) to the
 * OAuth scope a token needs to call it, or a list of scopes it needs all of:
 * `{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}`.
 *
 * Every entry whose pattern matches a tool applies, and the tool needs the union of their scopes:
 * the order of the entries does not matter and adding an entry never lowers what a tool needs. A
 * tool no entry matches needs no scope beyond a valid token. A pattern matches a name as written
 * or by its fold (core/patterns/tool-glob.ts `foldToolName`: NFKC, case, whitespace), so `ADMIN_DROP` needs
 * what `admin_*` needs (an origin that normalises names runs `admin_drop` for it). Scope names follow RFC 6749 §3.3
 * (`scope-token`: printable ASCII without space, `"` and `\`). Pure and runtime-neutral.
 */
import { ConfigError, showValue } from '../config-rules'
import { compilePattern, foldToolName, patternProblem, type ToolPattern } from '../patterns/tool-glob'

/** Most entries in TOOL_SCOPES (matching is linear in them). */
export const MAX_SCOPE_ENTRIES = 1000

/** Tool names whose required scopes are remembered. */
const MEMO_SIZE = 1000

/** Longest scope name accepted, in characters. */
export const MAX_SCOPE_LENGTH = 256

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/** Is `s` a valid scope name (RFC 6749 §3.3, at most {@link MAX_SCOPE_LENGTH} characters)? */
export function isScopeToken(s: string): boolean {
  return s.length <= MAX_SCOPE_LENGTH && SCOPE_TOKEN.test(s)
}

/** The parsed TOOL_SCOPES. */
export interface ToolScopes {
  /** The entries in the order written: a pattern and the scopes it requires (deduplicated). */
  readonly entries: readonly { pattern: ToolPattern; scopes: readonly string[] }[]
  /** True when no entry exists (no tool needs a scope). */
  readonly empty: boolean
  /**
   * The scopes a call to `toolName` needs: the union of every matching entry's scopes, sorted.
   * Empty when none applies.
   */
  requiredScopes(toolName: string): string[]
  /**
   * The required scopes of `toolName` that `granted` lacks, sorted; null when it lacks none.
   * The 403 challenge names {@link requiredScopes} (all of them, not only the missing ones), so a
   * client that asks for them again keeps what it has (MCP 2025-11-25 Authorization §Scope Challenge Handling).
   */
  missingScope(granted: ReadonlySet<string>, toolName: string): string[] | null
  /**
   * Every scope any entry names, sorted. The metadata's `scopes_supported` (RFC 9728 §2) is the
   * part of it a visible tool can need (resource-server.ts shownScopes).
   */
  readonly allScopes: readonly string[]
}

/** A value in double quotes for a message: escaped and bounded ({@link showValue}). */
const quoted = (s: string) => (s === '' ? '""' : `"${showValue(s)}"`)

const EXPECTED = 'a JSON object from tool name or glob to a scope or a list of scopes, such as {"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}'

/**
 * Parses TOOL_SCOPES. Unset or blank: no entries.
 * @param variable the setting's name for messages (default `TOOL_SCOPES`)
 * @throws ConfigError naming the variable and the bad entry (`TOOL_SCOPES: entry "admin_*": scope 2 ("a b") is not a scope name ...`)
 */
export function parseToolScopes(value: string | undefined, variable = 'TOOL_SCOPES'): ToolScopes {
  if (value === undefined || value.trim() === '') return toolScopes([])
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    throw ConfigError.bad(variable, value, `valid JSON: ${EXPECTED}`)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw ConfigError.bad(variable, value, EXPECTED)
  const keys = Object.keys(json)
  if (keys.length > MAX_SCOPE_ENTRIES) throw ConfigError.bad(variable, value, `at most ${MAX_SCOPE_ENTRIES} entries (${keys.length} given)`)
  const entries: { pattern: string; scopes: string[] }[] = []
  for (const key of keys) {
    const fail = (why: string) => new ConfigError(`${variable}: entry ${quoted(key)} ${why}; expected ${EXPECTED}`, variable, showValue(value), EXPECTED)
    const problem = patternProblem(key)
    if (problem) throw fail(`has a tool pattern that is ${problem}`)
    const v = (json as Record<string, unknown>)[key]
    const list = typeof v === 'string' ? [v] : v
    if (!Array.isArray(list) || list.length === 0) throw fail('maps to neither a scope name nor a non-empty list of scope names')
    const rule = 'a scope name (printable ASCII without spaces, quotes or backslashes, RFC 6749 §3.3)'
    list.forEach((s, i) => {
      if (typeof s === 'string' && isScopeToken(s)) return
      const shown = typeof s === 'string' ? quoted(s) : s === null ? 'null' : Array.isArray(s) ? 'a list' : typeof s === 'object' ? 'an object' : `a ${typeof s}`
      throw fail(typeof v === 'string' ? `maps to ${shown}, which is not ${rule}` : `has scope ${i + 1} (${shown}), which is not ${rule}`)
    })
    entries.push({ pattern: key, scopes: list as string[] })
  }
  return toolScopes(entries)
}

/**
 * Builds {@link ToolScopes} from entries already checked (tests and typed options use it).
 * @param entries pattern and scopes, in order
 */
export function toolScopes(entries: readonly { pattern: string; scopes: readonly string[] }[]): ToolScopes {
  const compiled = entries.map((e) => ({ pattern: compilePattern(e.pattern), scopes: [...new Set(e.scopes)] }))
  const allScopes = [...new Set(compiled.flatMap((e) => e.scopes))].sort()
  // The answer per tool name is remembered (at most MEMO_SIZE names, then the memo starts over):
  // building and sorting the union cost 0.2 us per tools/call (scripts/bench/auth-cost.ts).
  const memo = new Map<string, readonly string[]>()
  const required = (toolName: string): readonly string[] => {
    let r = memo.get(toolName)
    if (r !== undefined) return r
    const need = new Set<string>()
    const folded = foldToolName(toolName)
    for (const e of compiled) if (e.pattern.matches(toolName, folded)) for (const s of e.scopes) need.add(s)
    r = [...need].sort()
    if (memo.size >= MEMO_SIZE) memo.clear()
    memo.set(toolName, r)
    return r
  }
  const requiredScopes = (toolName: string): string[] => [...required(toolName)]
  return {
    entries: compiled,
    empty: compiled.length === 0,
    requiredScopes,
    missingScope(granted, toolName) {
      if (compiled.length === 0) return null
      let missing: string[] | null = null
      for (const s of required(toolName)) if (!granted.has(s)) (missing ??= []).push(s)
      return missing
    },
    allScopes,
  }
}
