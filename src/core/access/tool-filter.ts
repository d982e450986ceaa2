/**
 * @module core/access/tool-filter
 * Which tools of an origin clients may see and call: `TOOLS_ALLOW` and `TOOLS_DENY`, each a
 * comma-separated list of tool names or globs (core/patterns/tool-glob.ts: `*` and `?`). A tool is visible when
 * no deny pattern matches it and, if an allow list is set, an allow pattern does (deny wins over
 * allow; an empty or unset allow list allows every tool). A hidden tool is absent from `tools/list`
 * results and a call to it is answered as an unknown tool, so a denied tool and a missing one look
 * the same to a client (no enumeration of what exists).
 *
 * A deny pattern also hides every name whose fold ({@link foldToolName}: NFKC, case, whitespace)
 * it matches, so `TOOLS_DENY=delete_*` hides `DELETE_FILE`, ` delete_file` and `ｄelete_file`: an
 * origin that normalises names would otherwise run its `delete_file` for them, since the edge
 * forwards a name it does not know with `UNKNOWN_TOOL=forward`. An allow pattern matches names as
 * written only (a variant of an allowed name is not itself allowed). Pure and runtime-neutral.
 */
import { ConfigError, showValue } from '../config-rules'
import { compilePattern, foldToolName, patternProblem, type ToolPattern } from '../patterns/tool-glob'

/** Most entries in one list (a list longer than this is a mistake, and matching is linear in it). */
export const MAX_PATTERNS = 1000

/**
 * Parses one comma-separated list of tool names or globs. Spaces around commas are dropped; an
 * unset or blank value is an empty list.
 * @param variable the setting's name for messages, e.g. `TOOLS_ALLOW` or `ORIGINS[1].toolsDeny`
 * @param value the raw value
 * @returns the compiled patterns, duplicates removed, in the order written
 * @throws ConfigError naming the variable and the bad entry: `TOOLS_DENY=a,,b: entry 2 is an empty name; expected ...`
 */
export function parseToolPatterns(variable: string, value: string | undefined): ToolPattern[] {
  if (value === undefined || value.trim() === '') return []
  const entries = value.split(',').map((e) => e.trim())
  const expected = 'comma-separated tool names or globs (* any run of characters, ? one character), such as get_*,search'
  if (entries.length > MAX_PATTERNS) throw ConfigError.bad(variable, value, `at most ${MAX_PATTERNS} entries (${entries.length} given); ${expected}`)
  const seen = new Set<string>()
  const out: ToolPattern[] = []
  entries.forEach((entry, i) => {
    const problem = patternProblem(entry)
    if (problem) {
      const shown = showValue(entry)
      throw new ConfigError(`${variable}: entry ${i + 1} (${entry === '' ? 'empty' : shown}) is ${problem}; expected ${expected}`, variable, showValue(value), expected)
    }
    if (seen.has(entry)) return
    seen.add(entry)
    out.push(compilePattern(entry))
  })
  return out
}

/** The tool filter of one origin: its lists and the visibility test. */
export interface ToolFilter {
  /** Allow patterns (empty: every tool not denied is visible). */
  readonly allow: readonly ToolPattern[]
  /** Deny patterns (they win over allow). */
  readonly deny: readonly ToolPattern[]
  /** True when the filter hides nothing (both lists empty): callers may skip it. */
  readonly passAll: boolean
  /** Is the tool named `name` visible to clients and callable? */
  isToolVisible(name: string): boolean
}

/**
 * Builds a filter from parsed lists.
 * @param lists `allow` and `deny` from {@link parseToolPatterns}
 */
export function toolFilter(lists: { allow?: readonly ToolPattern[]; deny?: readonly ToolPattern[] }): ToolFilter {
  const allow = lists.allow ?? []
  const deny = lists.deny ?? []
  // Exact names go to a Set (one lookup); globs are tested in order.
  const allowNames = new Set(allow.filter((p) => p.exact).map((p) => p.source))
  const allowGlobs = allow.filter((p) => !p.exact)
  // Deny: the exact names by their folds too, so one lookup covers every variant.
  const denyNames = new Set(deny.filter((p) => p.exact).flatMap((p) => [p.source, foldToolName(p.source) ?? p.source]))
  const denyGlobs = deny.filter((p) => !p.exact)
  return {
    allow,
    deny,
    passAll: allow.length === 0 && deny.length === 0,
    isToolVisible(name) {
      const folded = foldToolName(name)
      // A name too long to fold (null) is hidden by any deny list: the safe side for a name no tool has.
      if (deny.length > 0 && (folded === null || denyNames.has(name) || denyNames.has(folded) || denyGlobs.some((g) => g.matches(name, folded)))) return false
      return allow.length === 0 || allowNames.has(name) || allowGlobs.some((g) => g.test(name))
    },
  }
}

/**
 * Reads `TOOLS_ALLOW` and `TOOLS_DENY` (or the given names) from an environment-like record.
 * @param names the variables' names; default `TOOLS_ALLOW` and `TOOLS_DENY`
 * @throws ConfigError as {@link parseToolPatterns}
 */
export function parseToolFilter(env: Record<string, string | undefined>, names: { allow: string; deny: string } = { allow: 'TOOLS_ALLOW', deny: 'TOOLS_DENY' }): ToolFilter {
  return toolFilter({ allow: parseToolPatterns(names.allow, env[names.allow]), deny: parseToolPatterns(names.deny, env[names.deny]) })
}

/** A filtered `tools/list` result and how many tools it dropped (for logs and metrics). */
export interface FilteredToolList {
  /** The result with hidden tools removed; every other member (`nextCursor`, `_meta`, `ttlMs`, `cacheScope`, ...) kept unchanged. */
  result: unknown
  /** Tools removed from `tools`. */
  removed: number
}

/**
 * Removes hidden tools from one `tools/list` RESULT object (the JSON-RPC response's `result`, one
 * page). Members other than `tools` are kept as they are, so pagination (`nextCursor`) and
 * metadata (`_meta`) pass through; a page may become empty while `nextCursor` still leads on.
 * An entry of `tools` without a string `name` is kept when there is no allow list (the reply
 * grader judges it) and dropped when there is one (it cannot be shown to be allowed). A value
 * that is not an object with a `tools` array is returned unchanged (`removed: 0`): the grader
 * deals with malformed results.
 * @returns a new object when something was removed, else the same `result`
 */
export function filterToolListResult(filter: ToolFilter, result: unknown): FilteredToolList {
  if (filter.passAll || typeof result !== 'object' || result === null || Array.isArray(result)) return { result, removed: 0 }
  const tools = (result as { tools?: unknown }).tools
  if (!Array.isArray(tools)) return { result, removed: 0 }
  const kept = tools.filter((t) => {
    const name = typeof t === 'object' && t !== null ? (t as { name?: unknown }).name : undefined
    return typeof name === 'string' ? filter.isToolVisible(name) : filter.allow.length === 0
  })
  if (kept.length === tools.length) return { result, removed: 0 }
  return { result: { ...(result as Record<string, unknown>), tools: kept }, removed: tools.length - kept.length }
}
