/**
 * @module core/jsonrpc/bound-text
 * The one way the edge bounds a text it shows (a tool name, a method, a value the caller sent, a
 * schema fact) in an error message, a log line or a metric label, so that a long or hostile input
 * cannot make an answer or a line long. Pure.
 */

/**
 * `s` when it has at most `n` UTF-16 units; else its first units followed by `mark`, `n` units in
 * all (`n - 1` and `…` by default). The cut never ends on the first half of a surrogate pair, so
 * the result is well-formed text.
 * @param n the most UTF-16 units returned (at least 1); 64 by default, the bound of names in answers and logs
 * @param mark appended when `s` was cut; `''` cuts to a plain prefix of `n` units (a value echoed back
 *   as data, a metric label)
 */
export function boundText(s: string, n = 64, mark = '…'): string {
  if (s.length <= n) return s
  let cut = s.slice(0, Math.max(0, n - mark.length))
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  return cut + mark
}
