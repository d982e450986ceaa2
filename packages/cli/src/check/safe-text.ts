/**
 * @module check/safe-text
 * The one sanitiser of server text in `mcp-edge check`'s output, for every format (table, lines,
 * JSON): a server's tool names, descriptions, error messages, result texts and headers reach the
 * user's terminal only through it. Pure; never throws.
 *
 * Why escaping rather than removing: a server that writes `ESC [2J` (screen clear),
 * `ESC ]0;…BEL` (window title), `ESC ]52;c;…` (a clipboard write), the C1 CSI U+009B or a
 * right-to-left override (U+202E) into a tool name is hostile, and the report should show that
 * it did: `\u001b[2J` is printed as those six visible characters, never as the control itself.
 * JSON.stringify alone is not enough: it keeps C1 controls and the bidi controls raw.
 */

/**
 * What is never written raw: every C0 control (U+0000-U+001F, tab, line feed and carriage return
 * included: a line feed would start a fake row in `--format lines`), DEL and the C1 controls
 * (U+007F-U+009F), the Arabic letter mark (U+061C), the bidi marks, embeddings, overrides and
 * isolates (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), the line and paragraph separators
 * (U+2028, U+2029), the byte order mark (U+FEFF) and lone UTF-16 surrogates (not encodable).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** `\uXXXX` for one UTF-16 code unit. */
const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/**
 * `s` with every unsafe character ({@link UNSAFE}) written as a visible `\uXXXX` escape, cut to at
 * most `max` characters (then ending in `…`) without splitting an escape or a surrogate pair.
 * Idempotent: its output holds no unsafe character, so a second pass changes nothing.
 * @param max upper bound of the result's length in UTF-16 code units (default: no cut)
 */
export function safeText(s: string, max = Infinity): string {
  if (!Number.isFinite(max)) return s.replace(UNSAFE, escape)
  // Bounded work for any input: only the first `max` characters can be shown.
  const escaped = s.slice(0, max + 1).replace(UNSAFE, escape)
  if (escaped.length <= max && s.length <= max) return escaped
  let out = ''
  // Whole units only: an escape, a surrogate pair or one character.
  for (const unit of escaped.matchAll(/\\u[0-9a-f]{4}|[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g)) {
    if (out.length + unit[0].length > max - 1) break
    out += unit[0]
  }
  return out + '…'
}

/** Upper bound of one field of a report row, in characters (a 1 MiB tool name is not printed whole). */
export const MAX_FIELD_CHARS = 1000

/**
 * A copy of `row` whose string members (one level, plus a nested `through` row) went through
 * {@link safeText}, each cut to {@link MAX_FIELD_CHARS}. Numbers, booleans and null are kept.
 */
export function safeRowText<T extends object>(row: T): T {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) {
    if (typeof v === 'string') out[k] = safeText(v, MAX_FIELD_CHARS)
    else if (k === 'through' && typeof v === 'object' && v !== null) out[k] = safeRowText(v)
    else out[k] = v
  }
  return out as T
}
