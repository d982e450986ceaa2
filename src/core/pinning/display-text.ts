/**
 * @module core/pinning/display-text
 * How text taken from a tool definition is shown to an operator or a client: bounded and escaped,
 * so a hostile definition cannot smuggle control characters, bidi overrides or megabytes of text
 * through a finding, a pointer or a denial. Pure; never throws.
 */

/**
 * Characters written as `\u{XXXX}` in displayed text: every control, format, surrogate, private-use
 * and unassigned code point (`\p{C}`: C0/C1 controls with ESC, zero-width characters, bidi controls,
 * U+FEFF, Unicode tag characters), line and paragraph separators, and the backslash itself (so an
 * escape in the output is never ambiguous).
 */
const UNSAFE = /[\p{C}\p{Zl}\p{Zp}\\]/gu

/**
 * `text` made safe to show: unsafe characters (see {@link UNSAFE}) escaped as `\u{XXXX}` (the
 * backslash as `\\`), then cut to at most `max` characters of output, ending in `…` when cut.
 * Lone surrogates count as unsafe and are escaped, so the result is always well-formed.
 * @param max upper bound of the result's length in UTF-16 code units (at least 1)
 */
export function displayText(text: string, max = 80): string {
  const escaped = text.replace(UNSAFE, (c) => (c === '\\' ? '\\\\' : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`))
  if (escaped.length <= max) return escaped
  let cut = escaped.slice(0, Math.max(0, max - 1))
  // Never end on the first half of a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  return cut + '…'
}

/** Longest pointer segment shown in full (UTF-16 code units of the escaped text); longer ones are cut with `…`. */
export const MAX_POINTER_SEGMENT = 64

/**
 * One RFC 6901 JSON Pointer reference token: `~` as `~0`, `/` as `~1`.
 * @param key an object member name or an array index
 */
export function pointerToken(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1')
}

/**
 * A JSON Pointer (RFC 6901) for display: each reference token escaped per RFC 6901, then made safe
 * by {@link displayText} and cut to {@link MAX_POINTER_SEGMENT} characters; a path deeper than
 * 2 x {@link POINTER_ENDS} steps shows its first and last {@link POINTER_ENDS} steps around
 * `/…N more…`. So a pointer is at most 16 x 65 characters plus the marker, whatever the value. The
 * result is the exact pointer whenever no token holds an unsafe character, none was cut and the
 * path is not that deep (every pointer into a well-behaved definition); otherwise it is a
 * faithful, bounded picture of it.
 * @param path the member names and array indexes from the root; `[]` is the whole document (`""`)
 */
export function displayPointer(path: readonly (string | number)[]): string {
  if (path.length > 2 * POINTER_ENDS) {
    // A very deep place: its first and last steps, with how many were left out.
    const head = path.slice(0, POINTER_ENDS)
    const tail = path.slice(path.length - POINTER_ENDS)
    return displayPointer(head) + `/…${path.length - 2 * POINTER_ENDS} more…` + displayPointer(tail)
  }
  let out = ''
  for (const key of path) out += '/' + displayText(pointerToken(key), MAX_POINTER_SEGMENT)
  return out
}

/** Steps shown at each end of a pointer deeper than twice this; the steps between are counted, not shown. */
export const POINTER_ENDS = 8

/**
 * A path from the root of a JSON value, one link per step (`null` is the root), so a walk over a
 * deep value shares prefixes instead of copying a path array at every node.
 */
export interface PathLink {
  key: string | number
  parent: PathLink | null
}

/** The steps of a {@link PathLink} from the root, for {@link displayPointer}. */
export function pathOf(link: PathLink | null): (string | number)[] {
  const out: (string | number)[] = []
  for (let l = link; l !== null; l = l.parent) out.push(l.key)
  return out.reverse()
}
