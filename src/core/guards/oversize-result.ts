/**
 * @module core/guards/oversize-result
 * `MAX_RESULT_TEXT_BYTES` with `OVERSIZE_RESULT` (docs/result-checks.md#oversize-results): a
 * `text` content item of a `tools/call` result longer than the bound, in UTF-8 bytes.
 * - `error` (default): the id is answered -31001, as a reply above `MAX_REPLY_BYTES` is, with a
 *   message naming the bound and what fixes it (graded `origin_error`).
 * - `truncate`: the item keeps its head and its tail, with a marker between naming how many bytes
 *   were dropped, and the result's `_meta["io.mcp-edge/truncated"]` says which items and their
 *   original sizes (`{ limitBytes, items: [{ index, originalBytes }] }`). `structuredContent`,
 *   `isError` and every other item are left as they are; the cut never splits a character.
 * Unset bound: no guard. Pure and runtime-neutral.
 */
import type { ReplyGuard, ReplyGuardContext, ReplyUnderCheck, ReplyVerdict } from './guard'
import type { Config } from '../config'
import { ErrorCode } from '../jsonrpc/jsonrpc'
import { visitResultText, withMeta } from './result-text'

/** The `_meta` key of a truncation (edge-owned). */
export const TRUNCATED_KEY = 'io.mcp-edge/truncated'

/** UTF-8 bytes of the UTF-16 unit at `i` (4 for a pair's first half, 0 for its second; 3 for a lone half, as U+FFFD). */
function unitBytes(s: string, i: number): number {
  const c = s.charCodeAt(i)
  if (c < 0x80) return 1
  if (c < 0x800) return 2
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = s.charCodeAt(i + 1)
    return d >= 0xdc00 && d <= 0xdfff ? 4 : 3
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const p = s.charCodeAt(i - 1)
    return p >= 0xd800 && p <= 0xdbff ? 0 : 3
  }
  return 3
}

const NON_ASCII = /[^\x00-\x7f]/

/** UTF-8 length of `s` (as `TextEncoder` counts it), without encoding it. */
export function utf8Bytes(s: string): number {
  // ASCII text (the common case) is found by one native search: one byte per unit.
  if (!NON_ASCII.test(s)) return s.length
  // Every unit is at least one byte; add what the others take beyond it.
  const len = s.length
  let n = len
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) n += 1
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < len && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2
      i++
    } else n += 2
  }
  return n
}

/** The marker placed where bytes were dropped. */
export function truncationMarker(dropped: number, limit: number): string {
  return `\n[... ${dropped} bytes dropped by the edge (MAX_RESULT_TEXT_BYTES=${limit}); narrow the call to see them ...]\n`
}

/**
 * `s` cut to at most `limit` UTF-8 bytes (marker included, when the bound leaves room for it): two
 * thirds of the room for the head, the rest for the tail, each cut at a character boundary.
 * @param total `utf8Bytes(s)`, known to be above `limit`
 */
export function truncateText(s: string, total: number, limit: number): string {
  // The marker's own length depends on the figure it names: take its longest form for the room.
  const room = Math.max(0, limit - truncationMarker(total, limit).length)
  const headRoom = Math.ceil((room * 2) / 3)
  const tailRoom = room - headRoom
  let head = 0
  let headBytes = 0
  while (head < s.length) {
    const b = unitBytes(s, head)
    if (headBytes + b > headRoom) break
    headBytes += b
    head += b === 4 ? 2 : 1
  }
  let tail = s.length
  let tailBytes = 0
  while (tail > head) {
    const c = s.charCodeAt(tail - 1)
    const pair = c >= 0xdc00 && c <= 0xdfff && tail - 2 >= head && unitBytes(s, tail - 2) === 4
    const b = pair ? 4 : unitBytes(s, tail - 1) || 3
    if (tailBytes + b > tailRoom) break
    tailBytes += b
    tail -= pair ? 2 : 1
  }
  return s.slice(0, head) + truncationMarker(total - headBytes - tailBytes, limit) + s.slice(tail)
}

/** The guard of `MAX_RESULT_TEXT_BYTES` / `OVERSIZE_RESULT`, or null when the bound is unset. */
export function oversizeResultGuard(config: Config): ReplyGuard | null {
  const limit = config.maxResultTextBytes
  if (limit === null) return null
  const mode = config.oversizeResult
  return {
    name: 'oversize_result',
    phase: 'reply',
    stage: mode === 'truncate' ? 'mutate' : 'judge',
    reads: 'result',
    appliesTo: (method) => method === 'tools/call',
    check({ result }: ReplyUnderCheck, ctx: ReplyGuardContext): ReplyVerdict {
      const items: { index: number; originalBytes: number }[] = []
      const changed = visitResultText(
        result,
        (text, at) => {
          // A UTF-16 unit is 1 to 3 bytes (a pair 4 for 2 units): short texts cannot be over.
          if (text.length * 3 <= limit) return null
          const total = utf8Bytes(text)
          if (total <= limit) return null
          ctx.report?.({ check: 'oversize_result', category: 'oversize_text', action: mode, at: at(), count: 1 })
          items.push({ index: Number(/^content\[(\d+)\]/.exec(at())![1]), originalBytes: total })
          return mode === 'truncate' ? truncateText(text, total, limit) : null
        },
        'content'
      )
      if (items.length === 0) return { kind: 'pass' }
      if (mode === 'truncate') return { kind: 'change', result: withMeta(changed, { [TRUNCATED_KEY]: { limitBytes: limit, items } }) }
      const biggest = Math.max(...items.map((i) => i.originalBytes))
      const message = `Origin reply too large: a text item of the tool result is ${biggest} bytes, above MAX_RESULT_TEXT_BYTES=${limit}. Narrow the call (ask for less), or ask the operator to set OVERSIZE_RESULT=truncate.`
      return {
        kind: 'deny',
        code: 'result_too_large',
        message,
        rpcError: { code: ErrorCode.OriginUnavailable, message, data: { source: 'edge', reason: 'result_too_large', limitBytes: limit } },
      }
    },
  }
}
