/**
 * @module core/patterns/tool-glob
 * Tool-name patterns for the access settings (TOOLS_ALLOW, TOOLS_DENY, TOOL_SCOPES, RATE_LIMIT):
 * a name, or a glob where `*` matches any run of characters (none included) and `?` exactly one.
 * No other character is special: tool names are not paths, so `/`, `.` and `\` match themselves.
 * Case-sensitive, like tool names (MCP 2025-11-25 Server Tools §Tool Names); the access rules
 * also match each name's fold ({@link foldToolName}) against each pattern's fold
 * ({@link ToolPattern.matches}), so a variant an origin may read as the same tool
 * (`DELETE_FILE`, ` delete_file`, fullwidth `ｄelete_file`) is held to the rules of that tool.
 *
 * Own code rather than a glob library: picomatch and minimatch treat `/` as a separator, add
 * braces, extglobs and character classes that tool names do not want, and compile to a RegExp
 * (backtracking engine). This matcher splits the pattern at `*` once and finds the pieces left to
 * right; leftmost placement of each piece is optimal for `*`-separated pieces, so it never
 * backtracks: the worst case is O(name length x pattern length) character comparisons (a 128-character
 * name against a 128-character pattern: at most 16,384), and O(name length) for a pattern without `?`.
 * Pure and runtime-neutral.
 */

/** Longest pattern accepted, in characters (a tool name SHOULD be at most 128: twice that leaves room). */
export const MAX_PATTERN_LENGTH = 256

/** A compiled pattern: `test(name)` is true when the name matches. */
export interface ToolPattern {
  /** The pattern as written, e.g. `search_*`. */
  readonly source: string
  /** True when the pattern has no `*` or `?` (an exact name). */
  readonly exact: boolean
  /** Exact match of the name as written (case-sensitive). */
  test(name: string): boolean
  /**
   * The access rules' match: the name as written, or its fold ({@link foldToolName}, passed in so a
   * caller folds once per name) against the pattern's fold. True for `DELETE_FILE` against `delete_*`,
   * and for a name too long to fold (`folded` null): every rule that could apply does.
   * @param folded `foldToolName(name)`
   */
  matches(name: string, folded: string | null): boolean
}

/** Printable ASCII without upper-case letters and space: a name its fold leaves as it is. */
const FOLD_STABLE = /^[\x21-\x40\x5b-\x7e]*$/

/**
 * Whitespace, control and format characters (zero-width space and joiner, BOM, bidi marks), and
 * every other default-ignorable code point (combining grapheme joiner, Hangul fillers, variation
 * selectors): NFKC_Casefold removes these, so a server that folds names that way reaches
 * `delete_file` from `delete_file` followed by U+3164 as well.
 */
const INVISIBLE = /[\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu

/**
 * Longest name folded, in UTF-16 code units. Folding costs about 0.2 us per character of
 * non-ASCII text (a 1-million-character name took 225 ms), so a request could otherwise hold the
 * event loop with one name; tool names SHOULD be at most 128 characters (MCP 2025-11-25 Server Tools
 * §Tool Names) and the edge stores none past 256.
 */
export const MAX_FOLDED_NAME = 1024

/** The last name folded and its fold: the rules of one call (filter, scopes, budgets) fold the same name. */
let lastName = ''
let lastFold: string | null = ''

/**
 * The fold of a tool name under which two names may reach the same tool on an origin that
 * normalises names: Unicode NFKC (fullwidth `ｄ` is `d`, `ﬁ` is `fi`), full case folding
 * (upper-casing then lower-casing, so `ß` and `SS` meet), and whitespace, control, format and other default-ignorable
 * characters removed. Idempotent; O(name length), and free for a plain lower-case ASCII name.
 * @returns the folded name (may be empty); null for a name past {@link MAX_FOLDED_NAME} that would
 *   need folding: the rules treat it as matching every pattern (a deny hides it, every scope and
 *   tool budget applies), the safe side for a name no tool has
 */
export function foldToolName(name: string): string | null {
  if (name === lastName) return lastFold
  let fold: string | null
  if (FOLD_STABLE.test(name)) fold = name
  else if (name.length > MAX_FOLDED_NAME) fold = null
  else fold = name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replace(INVISIBLE, '')
  lastName = name
  lastFold = fold
  return fold
}

/**
 * Why a pattern cannot be used, or null when it can: empty, too long, or containing whitespace,
 * a control character, a comma or a quote (which would only be a typing mistake in a list).
 */
export function patternProblem(pattern: string): string | null {
  if (pattern === '') return 'an empty name'
  if (pattern.length > MAX_PATTERN_LENGTH) return `longer than ${MAX_PATTERN_LENGTH} characters`
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f,"']/.test(pattern)) return 'whitespace, a control character, a comma or a quote'
  return null
}

/** Does `piece` (which may hold `?`) match `name` at offset `at`? */
function pieceAt(name: string, at: number, piece: string): boolean {
  if (at + piece.length > name.length) return false
  for (let i = 0; i < piece.length; i++) {
    const p = piece.charCodeAt(i)
    if (p !== 63 /* ? */ && p !== name.charCodeAt(at + i)) return false
  }
  return true
}

/** First offset >= `from` where `piece` matches, or -1. */
function findPiece(name: string, from: number, piece: string): number {
  if (!piece.includes('?')) return name.indexOf(piece, from)
  for (let at = from; at + piece.length <= name.length; at++) if (pieceAt(name, at, piece)) return at
  return -1
}

/**
 * Compiles a pattern. Call {@link patternProblem} first for a message; this function does not
 * validate beyond what matching needs.
 * @param pattern a name or a glob with `*` and `?`
 */
export function compilePattern(pattern: string): ToolPattern {
  const test = compileTest(pattern)
  // Patterns are at most MAX_PATTERN_LENGTH characters, so their fold is never null.
  const foldedSource = foldToolName(pattern) ?? pattern
  const foldedTest = foldedSource === pattern ? test : compileTest(foldedSource)
  return {
    source: pattern,
    exact: !pattern.includes('*') && !pattern.includes('?'),
    test,
    matches: (name, folded) => folded === null || test(name) || foldedTest(folded),
  }
}

/** The exact matcher of one pattern (see the module comment for the algorithm). */
function compileTest(pattern: string): (name: string) => boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return (name) => name === pattern
  if (!pattern.includes('*')) return (name) => name.length === pattern.length && pieceAt(name, 0, pattern)
  const pieces = pattern.split('*')
  const head = pieces[0]!
  const tail = pieces[pieces.length - 1]!
  const middle = pieces.slice(1, -1).filter((p) => p !== '')
  const min = pieces.reduce((n, p) => n + p.length, 0)
  return (name) => {
    if (name.length < min) return false
    if (!pieceAt(name, 0, head)) return false
    const end = name.length - tail.length
    if (!pieceAt(name, end, tail)) return false
    let at = head.length
    for (const piece of middle) {
      const found = findPiece(name, at, piece)
      if (found < 0 || found + piece.length > end) return false
      at = found + piece.length
    }
    return true
  }
}

/**
 * Does every name `inner` matches also match `outer`? Decided on the patterns' text, without
 * names: `outer` must match `inner` read as a word in which `inner`'s own `*` and `?` are symbols
 * that only `outer`'s `*` (either) or `?` (a `?`) can stand for. True answers are always right;
 * a false one may be cautious for unusual combinations (`a*` is covered by the pair `a`, `a?*`
 * together, not by either), so callers treat false as "not known to be covered".
 * Cost: O(|outer| x |inner|), at most 256 x 256 steps.
 * @example patternCovers('admin_*', 'admin_drop_*') // true
 * @example patternCovers('*', 'x') // true; patternCovers('a*', '*') // false
 */
export function patternCovers(outer: string, inner: string): boolean {
  // reach[j]: outer[0..j) can stand for inner[0..i) (i the row being built).
  let reach = new Array<boolean>(outer.length + 1).fill(false)
  reach[0] = true
  for (let j = 0; j < outer.length && outer[j] === '*'; j++) reach[j + 1] = true
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!
    const next = new Array<boolean>(outer.length + 1).fill(false)
    for (let j = 0; j < outer.length; j++) {
      const o = outer[j]!
      if (o === '*') {
        // `*` takes this symbol too (stays), or is left (the column to its right, below).
        if (reach[j + 1] || reach[j]) next[j + 1] = true
      } else if (reach[j] && (o === '?' ? c !== '*' : o === c && c !== '*' && c !== '?')) next[j + 1] = true
    }
    for (let j = 0; j < outer.length; j++) if (outer[j] === '*' && next[j]) next[j + 1] = true
    reach = next
  }
  return reach[outer.length]!
}

/** Is there a name both patterns match? Exact for `*` and `?` patterns. Cost: O(|a| x |b|). */
export function patternsMeet(a: string, b: string): boolean {
  // can[i][j]: some name is matched by both a[i..] and b[j..]; filled from the ends.
  const w = b.length + 1
  const can = new Uint8Array((a.length + 1) * w)
  for (let i = a.length; i >= 0; i--)
    for (let j = b.length; j >= 0; j--) {
      const x = a[i]
      const y = b[j]
      const at = (ii: number, jj: number) => ii <= a.length && jj <= b.length && can[ii * w + jj] === 1
      let ok: boolean
      if (x === undefined && y === undefined) ok = true
      // A `*` ends here, or takes the next symbol of the other pattern (a character of the name).
      else if (x === '*') ok = at(i + 1, j) || (y !== undefined && at(i, j + 1))
      else if (y === '*') ok = at(i, j + 1) || (x !== undefined && at(i + 1, j))
      else if (x === undefined || y === undefined) ok = false
      else ok = (x === '?' || y === '?' || x === y) && at(i + 1, j + 1)
      can[i * w + j] = ok ? 1 : 0
    }
  return can[0] === 1
}
