/**
 * @module core/jsonrpc/json-members
 * The members of a JSON object text, read without parsing it: each top-level member's name and the
 * span of its value, and, for a few named members whose value is an object, that object's members
 * too. Grading reads a handful of members of a tool's JSON text result (grading/grade-reply.ts
 * `hidesFailure`); `JSON.parse` of the whole text built a tree of every value to read them.
 *
 * Written here, not taken from a library, because no JSON library reports member spans without
 * building the value tree (the same reason as json-scan.ts). On Node 20, one core, bundled: a
 * 100 KB text of 1,000 small objects, 421 µs for `JSON.parse` and the member reads, 213 µs for this
 * scan and the same reads; the same objects indented (twice the characters, most of them white
 * space, which `JSON.parse` skips faster than this loop): 450 and 465 µs. A text of 500,000 nested
 * brackets, which `JSON.parse` takes 290 ms over, is one linear pass (6 ms), no recursion and no
 * allocation per level.
 * Pure; never throws; the answer for text that is not JSON is unspecified (never a crash or a hang).
 */
import { isWs, type Span } from './json-scan'

/** The result of {@link objectMembers}. */
export interface ObjectMembers {
  /** Each top-level member: name (escapes decoded) -> span of its value. A repeated name keeps its last value, as `JSON.parse` does. */
  members: Map<string, Span>
  /** For each name asked for in `nested` whose (last) value is an object: that object's members, the same way. */
  nested: Map<string, Map<string, Span>>
  /** The deepest nesting of arrays and objects in the text (1 = a flat object). */
  deepest: number
}

/** The index of the quote that closes the string opening at `open`, or -1 when it never closes. */
function stringEnd(text: string, open: number, end: number): number {
  let q = text.indexOf('"', open + 1)
  for (;;) {
    if (q < 0 || q >= end) return -1
    let k = q - 1
    while (text.charCodeAt(k) === 0x5c) k--
    if ((q - 1 - k) % 2 === 0) return q
    q = text.indexOf('"', q + 1)
  }
}

/** `at` moved back over the white space that ends the value starting at `start`. */
function trimEnd(text: string, start: number, at: number): number {
  while (at > start && isWs(text.charCodeAt(at - 1))) at--
  return at
}

/** A member name token's value: the text between the quotes, or its decoded form when it holds escapes; null when it does not decode. */
function nameOf(text: string, open: number, close: number): string | null {
  const raw = text.slice(open + 1, close)
  if (raw.indexOf('\\') < 0) return raw
  try {
    return JSON.parse(text.slice(open, close + 1)) as string
  } catch {
    return null
  }
}

/**
 * Reads the members of the JSON object text in `text` from `start` (inclusive) to `end`
 * (exclusive) in one pass over its characters: strings are skipped with `indexOf`, nested values by
 * counting brackets, so the cost is linear in the text whatever its nesting.
 * @param nested names of top-level members whose object value's own members are wanted too
 * @returns null when the text does not start with `{` (after white space) or a string in it never
 *   closes. For valid JSON the members are exactly those `JSON.parse` keeps; for other text they
 *   are unspecified, so a caller that acts on a member must confirm with `JSON.parse`.
 */
export function objectMembers(text: string, nested: ReadonlySet<string> = new Set(), start = 0, end = text.length): ObjectMembers | null {
  let i = start
  while (i < end && isWs(text.charCodeAt(i))) i++
  if (text.charCodeAt(i) !== 0x7b) return null
  const members = new Map<string, Span>()
  const inner = new Map<string, Map<string, Span>>()
  // The members being read at depth 2: the object value of a `nested` top-level member, else null.
  let atTwo: Map<string, Span> | null = null
  // The member whose value is being read at depth 1 and at depth 2: its name and value start.
  let name1: string | null = null
  let start1 = -1
  let name2: string | null = null
  let start2 = -1
  let expectName = false
  let depth = 0
  let deepest = 0
  for (; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const q = stringEnd(text, i, end)
      if (q < 0) return null
      if (expectName) {
        expectName = false
        const name = nameOf(text, i, q)
        let v = q + 1
        while (v < end && isWs(text.charCodeAt(v))) v++
        if (name !== null && text.charCodeAt(v) === 0x3a) {
          v++
          while (v < end && isWs(text.charCodeAt(v))) v++
          if (depth === 1) {
            name1 = name
            start1 = v
            inner.delete(name)
          } else {
            name2 = name
            start2 = v
          }
          i = v - 1
          continue
        }
      }
      i = q
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth
      expectName = depth === 1
      if (depth === 1) continue
      if (depth === 2) {
        // Only the object that is itself the value of a `nested` member (not one inside an array).
        atTwo = c === 0x7b && name1 !== null && start1 === i && nested.has(name1) ? new Map() : null
        if (atTwo !== null) {
          inner.set(name1!, atTwo)
          expectName = true
        }
      }
    } else if (c === 0x7d || c === 0x5d || c === 0x2c) {
      if (depth === 1 && name1 !== null) {
        members.set(name1, { start: start1, end: trimEnd(text, start1, i) })
        name1 = null
      } else if (depth === 2 && name2 !== null && atTwo !== null) {
        atTwo.set(name2, { start: start2, end: trimEnd(text, start2, i) })
        name2 = null
      }
      if (c === 0x2c) expectName = depth === 1 || (depth === 2 && atTwo !== null)
      else {
        expectName = false
        if (depth === 2) atTwo = null
        if (--depth === 0) break
      }
    }
  }
  return { members, nested: inner, deepest }
}

/** The text of a member's value (`span` from {@link objectMembers}). */
export function spanText(text: string, span: Span | undefined): string | undefined {
  return span === undefined ? undefined : text.slice(span.start, span.end)
}
