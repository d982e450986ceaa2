/**
 * @module core/jsonrpc/json-outline
 * The outline of an origin's JSON reply in one pass over its text: whether it nests deeper than
 * `MAX_JSON_DEPTH`, and where each top-level value sits (each element of a batch). That is all
 * grading needs before `JSON.parse` and to relay each response's exact text; member names and
 * duplicate checks (core/jsonrpc/json-scan.ts, for requests) are left out.
 *
 * Written here, not taken from a library, because no JSON library reports source spans without
 * building a value tree, and the pass must cost less than the parse it guards. On Node 20, as a
 * share of `JSON.parse`'s time on the same text (scripts/reply-cpu.mts has the whole reply path):
 * 0.25 on 100 KB of small objects and 0.45 on 100 KB of escaped prose (one value: the plain bound;
 * a value of at most `maxDepth` brackets, as a text reply, is now cleared by counting them, about
 * 0.03), 0.4 on a batch of 100 responses (bound and spans), where the request-side scan (member
 * names, duplicates) took 0.9, 3.8 and 2.1.
 * Pure; never throws.
 */
import { isWs, nestsDeeperThan, type Span } from './json-scan'

/** The result of {@link outlineJson}. */
export interface JsonOutline {
  /** True when arrays and objects nest deeper than the bound somewhere (brackets in strings do not count). */
  tooDeep: boolean
  /** True when the top-level value is an array (a batch of responses). */
  isArray: boolean
  /**
   * Each element of a top-level array, or the one top-level value, as offsets in UTF-16 code
   * units (trimmed of white space); empty when `tooDeep`. Unspecified for text that is not JSON.
   */
  elements: Span[]
}

/**
 * The span from `start` to `end` without the white space before `end`. A plain function, not a
 * closure over the loop's state: captured variables live in a heap context, which made every
 * character's step slower.
 */
function spanOf(text: string, start: number, end: number): Span {
  while (end > start && isWs(text.charCodeAt(end - 1))) end--
  return { start, end }
}

/**
 * Outlines JSON text: nesting bound and top-level spans, one pass, no recursion, stopping at the
 * first level past `maxDepth` (so a reply of 750,000 `[` costs `maxDepth` characters, not a
 * parse that freezes the event loop; docs/reliability.md).
 * @param text JSON text (an origin's reply body)
 * @param maxDepth the deepest nesting allowed (1 = a flat object or array)
 */
export function outlineJson(text: string, maxDepth: number): JsonOutline {
  const n = text.length
  let i = 0
  while (i < n && isWs(text.charCodeAt(i))) i++
  const isArray = text.charCodeAt(i) === 0x5b
  // A single value needs no spans but its own: the plain bound (json-scan.ts), which runs at about
  // 0.65 of this loop's time on 100 KB of small objects (the span bookkeeping costs per character).
  if (!isArray) {
    if (nestsDeeperThan(text, maxDepth)) return { tooDeep: true, isArray, elements: [] }
    let end = n
    while (end > i && isWs(text.charCodeAt(end - 1))) end--
    return { tooDeep: false, isArray, elements: i < end ? [{ start: i, end }] : [] }
  }
  // A batch: the span of each element (depth 1), found in the same pass as the bound.
  const elements: Span[] = []
  let depth = 0
  let start = -1
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      if (start < 0 && depth === 1) start = i
      // Skip the string: its end is the next quote not preceded by an odd run of backslashes
      // (`indexOf` is native; walking the characters here cost more, measured on 100 KB replies).
      let q = text.indexOf('"', i + 1)
      for (;;) {
        if (q < 0) return { tooDeep: false, isArray, elements }
        let k = q - 1
        while (text.charCodeAt(k) === 0x5c) k--
        if ((q - 1 - k) % 2 === 0) break
        q = text.indexOf('"', q + 1)
      }
      i = q
    } else if (c === 0x7b || c === 0x5b) {
      if (start < 0 && depth === 1) start = i
      if (++depth > maxDepth) return { tooDeep: true, isArray, elements: [] }
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0 && start >= 0) {
        elements.push(spanOf(text, start, i))
        start = -1
      }
    } else if (c === 0x2c) {
      if (depth === 1 && start >= 0) {
        elements.push(spanOf(text, start, i))
        start = -1
      }
    } else if (start < 0 && depth === 1 && c > 0x20) start = i
  }
  return { tooDeep: false, isArray, elements }
}
