/**
 * @module core/patterns/linear-pattern
 * `pattern` and `patternProperties` run on one linear-time engine on every runtime: re2js (the
 * JavaScript port of RE2, pure JS, so it runs in workerd too). ECMAScript's backtracking RegExp can
 * take exponential time on a caller's string (`^(\w|\d)*$` against 25 digits and `!` held the event
 * loop 986 ms, doubling with each character) and no static check (safe-regex2 passed that one)
 * tells every such pattern apart; RE2 matches in time linear in the string for every pattern.
 * Pure; runtime-neutral.
 *
 * A schema's patterns are ECMAScript regular expressions (JSON Schema 2020-12 §6.4). They are
 * translated to RE2 syntax with ECMAScript `u`-flag meaning where the two differ:
 * - `.` matches any code point except the ECMAScript line terminators (\n, \r, U+2028, U+2029);
 * - `\s` / `\S` outside a class, and `\s` inside one, are ECMAScript's white space and line terminators;
 * - `\uXXXX`, `\u{X}` (surrogate pairs joined), `\cX`, `\0`, `[\b]`, `[^]`, `[]`, named groups `(?<n>`;
 * - `\p{Script=X}` / `\p{sc=X}` / `\p{General_Category=X}` / `\p{gc=X}` become RE2's `\p{X}`, and
 *   long category names (`\p{Letter}`, `\p{Decimal_Number}`) RE2's short ones (`\p{L}`, `\p{Nd}`).
 * Left as documented differences (docs/validation.md): `\S` inside a class is RE2's (ASCII white
 * space), and Unicode properties RE2 does not know (binary properties such as `\p{Emoji}`,
 * `Script_Extensions`, four-letter script codes) make the pattern unusable. Backreferences and lookaround cannot run in
 * linear time: a pattern with one is unusable, and the reason names the feature.
 */
import { RE2JS } from 're2js'
import { EdgeError } from '../errors'

/** Bounds of one pattern (a legitimate pattern is far below both; docs/validation.md). */
export const PATTERN_LIMITS = {
  /** Characters of the pattern's source text. The longest pattern in the suites and the demo schemas is under 700. */
  maxLength: 8_192,
  /**
   * Instructions of the compiled RE2 program. Matching costs up to about 90 ns per character per
   * instruction (re2js's NFA; the DFA, where it gives up, more: see {@link DFA_MAX_PROGRAM}), so the
   * validation budget weighs a pattern by its program (schema-portability.ts `COST_WEIGHTS`). Real
   * tool patterns compile to under 150 (a UUID 40, an ISO date-time 39, `^\p{L}[\p{L}\p{N} ]{0,63}$`
   * 131); 2,000 leaves room for counted repetitions such as `{1,500}` and keeps one character's
   * worst work near 0.2 ms. At 20,000, `[ab]*a[ab]{999}c` against 10 KB held the event loop 2-3 s.
   */
  maxProgram: 2_000,
} as const

/**
 * Programs larger than this skip re2js's lazy DFA and run on its NFA (or bit-state backtracker):
 * where the DFA's states blow up it builds states of O(program) for each character before it
 * gives up, measured 308 ns per character per instruction for `[ab]*a[ab]{999}c` (1,005
 * instructions) against the NFA's 76-92; at 105 instructions the DFA's worst was 28.
 */
export const DFA_MAX_PROGRAM = 128

/** Stands in for re2js's lazy DFA: "gave up", so the engine goes on to its NFA. */
const NO_DFA = { match: () => null }

/** ECMAScript's WhiteSpace and LineTerminator code points (the members of `\s`), in RE2 class syntax. */
const JS_SPACE = '\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}'
/** ECMAScript's `.` without the `s` flag. */
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]'

/** A pattern the linear-time engine cannot run; `reason` names the feature (never the pattern text). */
export class PatternUnusableError extends EdgeError {
  override readonly name = 'PatternUnusableError'
  override readonly code = 'EDGE_ERR_PATTERN_UNUSABLE'
  constructor(readonly reason: string) {
    super(reason)
  }
}

const hex = (cp: number) => `\\x{${cp.toString(16)}}`
const PROPERTY_PREFIX = /^(?:Script|sc|General_Category|gc)=/
/** ECMAScript's long General_Category names (and aliases) -> the short names RE2 knows. */
const CATEGORY: Record<string, string> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Combining_Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
}

/**
 * Translates an ECMAScript (`u` flag) pattern to RE2 syntax (see the module comment).
 * @param source the pattern as written in the schema
 * @returns the RE2 source
 * @throws PatternUnusableError for a backreference or lookaround
 */
export function toRe2Syntax(source: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (c === '\\') {
      const n = source[i + 1]
      if (n === undefined) return out + '\\' // invalid; RE2 refuses it too
      if (/[1-9]/.test(n) || (n === 'k' && !inClass)) throw new PatternUnusableError('a backreference, which the edge cannot match in linear time')
      i++
      if (n === 'u') {
        let cp: number | null = null
        if (source[i + 1] === '{') {
          const end = source.indexOf('}', i + 2)
          if (end > 0) {
            cp = parseInt(source.slice(i + 2, end), 16)
            i = end
          }
        } else if (/^[0-9a-fA-F]{4}$/.test(source.slice(i + 1, i + 5))) {
          cp = parseInt(source.slice(i + 1, i + 5), 16)
          i += 4
          // `u` mode: an escaped surrogate pair is one code point
          const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(source.slice(i + 1))
          if (cp >= 0xd800 && cp <= 0xdbff && low) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (parseInt(low[1]!, 16) - 0xdc00)
            i += 6
          }
        }
        out += cp === null || Number.isNaN(cp) ? '\\u' : hex(cp)
      } else if (n === 'c' && /[a-zA-Z]/.test(source[i + 1] ?? '')) {
        out += hex(source.charCodeAt(i + 1) % 32)
        i++
      } else if (n === '0') out += hex(0)
      else if (n === 'b' && inClass) out += hex(8)
      else if (n === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`
      else if (n === 'S' && !inClass) out += `[^${JS_SPACE}]`
      else if ((n === 'p' || n === 'P') && source[i + 1] === '{') {
        const end = source.indexOf('}', i + 2)
        const name = end > 0 ? source.slice(i + 2, end) : ''
        const bare = name.replace(PROPERTY_PREFIX, '')
        out += `\\${n}{${CATEGORY[bare] ?? bare}}`
        i = end > 0 ? end : i
      } else out += '\\' + n
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      out += c
      continue
    }
    if (c === '[') {
      if (source.startsWith('[^]', i)) {
        out += '[\\x{0}-\\x{10ffff}]'
        i += 2
      } else if (source.startsWith('[]', i)) {
        out += '[^\\x{0}-\\x{10ffff}]'
        i += 1
      } else {
        inClass = true
        out += c
        // a `]` right after `[` or `[^` is a literal in RE2 but closes an (empty) class in ECMAScript: not reached here
      }
      continue
    }
    if (c === '(' && source[i + 1] === '?') {
      const rest = source.slice(i + 2, i + 4)
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') {
        throw new PatternUnusableError('a lookahead or lookbehind, which the edge cannot match in linear time')
      }
      if (rest.startsWith('<')) {
        out += '(?P<'
        i += 2
        continue
      }
    }
    out += c === '.' ? JS_DOT : c
  }
  return out
}

/** Code point ranges `[lo, hi]` (inclusive) of one single-character atom of a pattern. */
type CharSet = [number, number][]
/** A single-character atom and how often it repeats (`max` Infinity for `*`, `+`, `{n,}`). */
interface Atom {
  set: CharSet
  min: number
  max: number
}

const SYNTAX = '^$\\.*+?()[]{}|/'
const DIGIT: CharSet = [[0x30, 0x39]]
const WORD: CharSet = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]
/** Characters a subset atom may name: below the surrogates, so every engine reads them as one code point alike. */
const plain = (cp: number) => cp < 0xd800

/** One escape (`source[i]` is the backslash) in the subset: its set and the index after it, or null. */
function escapeAt(source: string, i: number, inClass: boolean): [CharSet, number] | null {
  const n = source[i + 1]
  if (n === 'd') return [DIGIT, i + 2]
  if (n === 'w') return [WORD, i + 2]
  if (n !== undefined && (SYNTAX.includes(n) || (inClass && n === '-'))) return [[[n.charCodeAt(0), n.charCodeAt(0)]], i + 2]
  return null
}

/** A class `[...]` (not negated) at `source[i]` in the subset: its set and the index after it, or null. */
function classAt(source: string, i: number): [CharSet, number] | null {
  const set: CharSet = []
  let j = i + 1
  if (source[j] === '^' || source[j] === ']') return null
  while (j < source.length && source[j] !== ']') {
    let lo: number
    if (source[j] === '\\') {
      const e = escapeAt(source, j, true)
      if (!e) return null
      j = e[1]
      if (e[0].length !== 1 || e[0][0]![0] !== e[0][0]![1]) {
        set.push(...e[0])
        continue
      }
      lo = e[0][0]![0]
    } else if (source[j] === '[') return null
    else {
      lo = source.codePointAt(j)!
      if (!plain(lo)) return null
      j++
    }
    // A range `a-b` (a `-` last in the class is a literal).
    if (source[j] === '-' && source[j + 1] !== ']' && j + 1 < source.length) {
      const c = source[j + 1]!
      let hi: number
      if (c === '\\') {
        const e = escapeAt(source, j + 1, true)
        if (!e || e[0].length !== 1 || e[0][0]![0] !== e[0][0]![1]) return null
        hi = e[0][0]![0]
        j = e[1]
      } else {
        hi = source.codePointAt(j + 1)!
        if (!plain(hi) || c === '[') return null
        j += 2
      }
      if (hi < lo) return null
      set.push([lo, hi])
    } else set.push([lo, lo])
  }
  return j < source.length ? [set, j + 1] : null
}

/** The atoms of `source` when it is `^`, then single-character atoms with optional greedy quantifiers, then an optional `$`; else null. */
function atomsOf(source: string): Atom[] | null {
  if (source[0] !== '^') return null
  const atoms: Atom[] = []
  let i = 1
  const end = source.endsWith('$') && !source.endsWith('\\$') ? source.length - 1 : source.length
  while (i < end) {
    let set: CharSet
    const c = source[i]!
    if (c === '\\') {
      const e = escapeAt(source, i, false)
      if (!e) return null
      ;[set, i] = e
    } else if (c === '[') {
      const k = classAt(source, i)
      if (!k) return null
      ;[set, i] = k
    } else {
      const cp = source.codePointAt(i)!
      if (SYNTAX.includes(c) || !plain(cp)) return null
      set = [[cp, cp]]
      i++
    }
    let min = 1
    let max = 1
    const q = source[i]
    if (q === '*' || q === '+' || q === '?') {
      min = q === '+' ? 1 : 0
      max = q === '?' ? 1 : Infinity
      i++
    } else if (q === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(source.slice(i, i + 12))
      if (!m) return null
      min = Number(m[1])
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
      if (max < min) return null
      i += m[0].length
    }
    // A lazy quantifier (`*?`) or anything else after one is outside the subset.
    if (i < end && (source[i] === '?' || source[i] === '*' || source[i] === '+' || source[i] === '{')) return null
    atoms.push({ set, min, max })
  }
  return atoms
}

const overlaps = (a: CharSet, b: CharSet) => a.some(([lo, hi]) => b.some(([l2, h2]) => lo <= h2 && l2 <= hi))

/**
 * True when ECMAScript's backtracking matcher provably runs `source` in time linear in the input:
 * the pattern is anchored with `^` (one start position), holds only single-character atoms
 * (literals, `\d`, `\w`, escaped syntax characters and non-negated classes of them, all below
 * U+D800) with greedy quantifiers, then optionally `$`; and every atom that can repeat a variable
 * number of times shares no character with any atom that can follow it (up to and including the
 * next one that must match at least once). Then a character an atom gives back on backtracking
 * can start no later atom, so each step back fails at once: at most (atoms x input) steps in all.
 * `^[A-Za-z ]+$`, `^[A-Z]{3}-[0-9]{4}$` and a UUID are in; `^\d*\d*x` (cubic on a backtracking
 * engine), alternation, groups, `.`, `\s` and negated classes are not, and run on re2js.
 * On this subset both engines mean the same (ASCII `\d`/`\w`, no code point either reads differently).
 */
export function isLinearForBacktracking(source: string): boolean {
  const atoms = atomsOf(source)
  if (atoms === null) return false
  for (let i = 0; i < atoms.length; i++) {
    const a = atoms[i]!
    if (a.min === a.max) continue
    for (let j = i + 1; j < atoms.length; j++) {
      if (overlaps(a.set, atoms[j]!.set)) return false
      if (atoms[j]!.min > 0) break
    }
  }
  return true
}

/** `new RegExp(source, 'u')`, or null when ECMAScript refuses the pattern (then re2js decides). */
function nativeRegExp(source: string): RegExp | null {
  try {
    return new RegExp(source, 'u')
  } catch {
    return null
  }
}

/** A compiled pattern: `test` searches the string (unanchored, as JSON Schema's `pattern`). */
export interface LinearPattern {
  test(input: string): boolean
  /** Instructions of the compiled RE2 program (the per-character work of matching grows with it). */
  readonly program: number
}

/** Compiled patterns shared by every schema of the isolate (bounded; the oldest leaves first). */
const cache = new Map<string, LinearPattern | PatternUnusableError>()
const CACHE_MAX = 4_096

function compileUncached(source: string): LinearPattern | PatternUnusableError {
  if (source.length > PATTERN_LIMITS.maxLength) return new PatternUnusableError(`a pattern longer than ${PATTERN_LIMITS.maxLength} characters`)
  let re: RE2JS
  try {
    re = RE2JS.compile(toRe2Syntax(source))
  } catch (e) {
    if (e instanceof PatternUnusableError) return e
    return new PatternUnusableError('a pattern the edge cannot match in linear time (a repetition count above 1000, or a construct RE2 lacks)')
  }
  const re2 = re.re2() as unknown as { numberOfInstructions(): number; lazyDFA: unknown }
  const program = re2.numberOfInstructions()
  if (program > PATTERN_LIMITS.maxProgram) return new PatternUnusableError(`a pattern whose compiled program exceeds ${PATTERN_LIMITS.maxProgram} instructions`)
  if (program > DFA_MAX_PROGRAM) re2.lazyDFA = NO_DFA
  // The RE2 compile above still decides what is usable (and the program weighs the cost model);
  // a pattern the backtracking engine provably runs in linear time is matched by it: 35 against
  // 500-600 ns per test of `^[A-Za-z ]+$` or `^[A-Z]{3}-[0-9]{4}$` on re2js (one core), 51 such
  // tests per call of the 100-property benchmark schema.
  const native = isLinearForBacktracking(source) ? nativeRegExp(source) : null
  if (native) return { test: (input: string) => native.test(input), program }
  return { test: (input: string) => re.test(input), program }
}

/**
 * Compiles a schema pattern for linear-time matching, from a shared bounded cache.
 * @param source an ECMAScript pattern (assumed valid ECMAScript; see {@link patternProblem})
 * @returns the compiled pattern
 * @throws PatternUnusableError when the pattern cannot run in linear time (the reason names why)
 */
export function compilePattern(source: string): LinearPattern {
  let hit = cache.get(source)
  if (hit === undefined) {
    hit = compileUncached(source)
    cache.set(source, hit)
    if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value as string)
  }
  if (hit instanceof PatternUnusableError) throw hit
  return hit
}

/**
 * Instructions of a usable pattern's compiled program, or 0 for a non-string or an unusable pattern
 * (the cost model's per-character weight of the pattern; see {@link PATTERN_LIMITS}).
 * @param source the pattern text
 */
export function patternProgram(source: unknown): number {
  if (typeof source !== 'string') return 0
  try {
    return compilePattern(source).program
  } catch {
    return 0
  }
}

/**
 * Why a schema pattern cannot be used, or null: not a valid ECMAScript `u` pattern (what JSON
 * Schema requires), or not runnable by the linear-time engine.
 * @param source the pattern text (a non-string is no pattern: null)
 * @returns a safe reason phrase, e.g. "a lookahead or lookbehind, which ..."; never the pattern
 */
export function patternProblem(source: unknown): string | null {
  if (typeof source !== 'string') return null
  try {
    new RegExp(source, 'u')
  } catch {
    return 'a pattern that is not a valid regular expression'
  }
  try {
    compilePattern(source)
    return null
  } catch (e) {
    return e instanceof PatternUnusableError ? e.reason : 'a pattern the edge cannot match in linear time'
  }
}

/** Keys whose values are data, not subschemas (never walked for patterns). */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples'])

/**
 * The first reason a `pattern` or `patternProperties` name in a schema cannot be used, or null.
 * Both engines call it at compile time, so a schema refused by one is refused by the other.
 * @param node a schema (any JSON value; data keywords are not walked)
 * @returns a reason phrase for {@link patternProblem}, e.g. "a backreference, which ..."
 */
export function schemaPatternProblem(node: unknown, depth = 0): string | null {
  if (depth > 256 || typeof node !== 'object' || node === null) return null
  const o = node as Record<string, unknown>
  if (!Array.isArray(node)) {
    const own = patternProblem(o.pattern)
    if (own !== null) return own
    if (typeof o.patternProperties === 'object' && o.patternProperties !== null) {
      for (const k of Object.keys(o.patternProperties)) {
        const p = patternProblem(k)
        if (p !== null) return p
      }
    }
  }
  for (const [k, v] of Object.entries(o)) {
    if (DATA_KEYS.has(k)) continue
    const p = schemaPatternProblem(v, depth + 1)
    if (p !== null) return p
  }
  return null
}
