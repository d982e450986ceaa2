/**
 * @module core/jsonrpc/json-outline
 * The outline of an origin's JSON reply in one pass over its text: whether it nests deeper than
 * `MAX_JSON_DEPTH`, and where each top-level value sits (each element of a batch). That is all
 * grading needs before `JSON.parse` and to relay each response's exact text; member names and
 * duplicate checks (core/jsonrpc/json-scan.ts, for requests) are left out.
 *
 * Written here, not taken from a library, because no JSON library reports source spans without
 * building a value tree, and the pass must cost less than the parse it guards: on Node 20 it takes
 * about 0.35-0.5 of `JSON.parse`'s time on 100 KB of small objects or of escaped prose, where the
 * request-side scan (member names, duplicates) took 0.85 and 3.5 (scripts/reply-cpu.mts).
 * Pure; never throws.
 */
import type { Span } from './json-scan'

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

/** Strings longer than this are finished with `indexOf` (native) instead of the loop. */
const SHORT_STRING = 24

/**
 * The offset of the quote that closes the string opening at `open`, or -1 when it never closes.
 * Short strings (names, small values) are walked in the loop, because an `indexOf` call per
 * string cost more than the characters it skipped; long ones (text content) with `indexOf`.
 */
function stringEnd(text: string, open: number): number {
  const n = text.length
  let j = open + 1
  const stop = Math.min(n, j + SHORT_STRING)
  for (; j < stop; j++) {
    const d = text.charCodeAt(j)
    if (d === 0x22) return j
    if (d === 0x5c) j++
  }
  if (j >= n) return -1
  // From here, the next quote not preceded by an odd run of backslashes.
  let q = text.indexOf('"', j)
  for (;;) {
    if (q < 0) return -1
    // The run of backslashes before the quote (it cannot reach past the opening quote).
    let k = q - 1
    while (text.charCodeAt(k) === 0x5c) k--
    if ((q - 1 - k) % 2 === 0) return q
    q = text.indexOf('"', q + 1)
  }
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
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
  const elements: Span[] = []
  // Depth at which top-level values start: 1 inside a batch, 0 otherwise.
  const at = isArray ? 1 : 0
  let depth = 0
  let start = -1
  const close = (end: number) => {
    while (end > start && isWs(text.charCodeAt(end - 1))) end--
    elements.push({ start, end })
    start = -1
  }
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      if (start < 0 && depth === at) start = i
      const end = stringEnd(text, i)
      if (end < 0) return { tooDeep: false, isArray, elements }
      i = end
    } else if (c === 0x7b || c === 0x5b) {
      if (start < 0 && depth === at) start = i
      if (++depth > maxDepth) return { tooDeep: true, isArray, elements: [] }
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0 && isArray && start >= 0) close(i)
    } else if (c === 0x2c) {
      if (depth === 1 && isArray && start >= 0) close(i)
    } else if (start < 0 && depth === at && c > 0x20) start = i
  }
  if (!isArray && start >= 0) close(n)
  return { tooDeep: false, isArray, elements }
}
