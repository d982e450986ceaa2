/**
 * @module core/grading/json-reply
 * Stage 7-8 for a JSON reply: the origin's body read (bounded by `MAX_REPLY_BYTES` and
 * `MAX_JSON_DEPTH`), each response in it graded per id, the local answers merged in front, one
 * JSON answer with `MCP-Edge-Grade`. Also a refusing origin (non-2xx) and a client that left.
 */
import { outlineJson } from '../jsonrpc/json-outline'
import { OriginReplyTooLargeError, type OriginReply } from '../ports'
import { gradeHeader } from '../grade-table'
import { idLabel, JSON_HEADERS, originEras, type Exchange } from '../exchange'
import { edgeResponse, type EdgeResponse } from '../edge-response'
import { isTimeout, readRefusal, relayHeaders, relaySessionOnly } from './origin-reply'
import type { ReplyGrader } from './reply-grader'
import { readBatchInSlices, startsArray, type SlicedBatch } from './sliced-batch'
import { SLICE_CHARS, WorkSlices } from '../work-slices'

/**
 * The client went away before a JSON answer (its signal fired, and the origin request was aborted
 * with it): the open ids are graded `missing` with no text (nobody reads), the log line says
 * `clientClosed: true`.
 */
export function clientGone(ex: Exchange, grader: ReplyGrader): EdgeResponse {
  ex.clientClosed = true
  grader.close('cancel')
  ex.finish(200)
  return edgeResponse(null, 200)
}

/**
 * A non-2xx reply: the origin's own JSON-RPC error with its status when it sent one (relayed
 * unchanged, or given to each forwarded id inside a batch with local answers); otherwise -31001
 * with `originStatus` for every open id (D9).
 */
export async function answerRefusedReply(reply: OriginReply, localTexts: string[], ex: Exchange, grader: ReplyGrader, asBatch: boolean): Promise<EdgeResponse> {
  const refusal = await readRefusal(reply)
  // A 4xx JSON-RPC error is the origin's transport refusal (no session, unknown session,
  // 2026-07-28 header errors): relayed with its status. A 5xx one is an answer to the ids: each
  // open id gets it under its own id, as the same body under 200 would (docs/reliability.md).
  if (refusal && reply.status < 500 && (!asBatch || localTexts.length === 0)) {
    // The origin's own JSON-RPC error with its status, relayed unchanged (D9; vectors 82, 83).
    for (const p of ex.pending.values()) {
      if (p.answered) continue
      p.answered = true
      originEras(ex.deps).observe(ex.target.id, p.method, refusal.msg, reply.status) // D17: learn the origin's era
      ex.row({
        id: idLabel(p.id),
        method: p.method,
        ...(p.tool ? { tool: p.tool } : {}),
        grade: 'rpc_error',
        code: refusal.code,
        answeredBy: 'origin',
        ...(ex.originMs !== undefined ? { originMs: ex.originMs } : {}),
      })
    }
    ex.finish(reply.status)
    return edgeResponse(refusal.text, reply.status, { ...relayHeaders(reply), 'content-type': 'application/json', 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  if (refusal) {
    // A batch with local answers, or a 5xx: the origin's error goes to each forwarded id.
    // An id-less error is kept aside, never relayed itself (null).
    void grader.message({ ...refusal.msg, id: null }, refusal.text)
    return respondJson(localTexts, grader.close('end'), ex, asBatch, relaySessionOnly(reply))
  }
  return respondJson(localTexts, grader.close('invalid', reply.status), ex, asBatch, {})
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const lenientUtf8 = new TextDecoder()

/**
 * The reply body as text, and whether its bytes may be relayed as they are: only when they are
 * valid UTF-8 without a byte order mark, so the text graded is exactly what the bytes say (the
 * lenient decode, used otherwise, drops a BOM and replaces bad sequences, as `text()` does).
 */
function decodeReply(bytes: Uint8Array): { text: string; exact: boolean } {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { text: lenientUtf8.decode(bytes), exact: false }
  try {
    return { text: strictUtf8.decode(bytes), exact: true }
  } catch {
    return { text: lenientUtf8.decode(bytes), exact: false }
  }
}

/**
 * A 2xx JSON reply: read, bounded, graded message by message; open ids closed at the end.
 *
 * One pass over the text outlines it (nesting bound, each batch element's span) before the one
 * `JSON.parse`; when grading changes nothing (every message relayed as the origin wrote it, none
 * dropped, no local answer to merge, no open id), the answer is the origin's own bytes, neither
 * re-joined nor re-encoded. Otherwise only the changed messages are new text.
 */
export async function gradeJsonReply(reply: OriginReply, localTexts: string[], ex: Exchange, grader: ReplyGrader, asBatch: boolean): Promise<EdgeResponse> {
  let text: string
  // The origin's bytes, kept while they may still be relayed unchanged.
  let raw: Uint8Array | null = null
  // A large batch answer, read in slices (sliced-batch.ts) instead of as one text.
  let sliced: SlicedBatch | null = null
  const budget = new WorkSlices()
  try {
    if (reply.bytes) {
      const bytes = await reply.bytes()
      if (bytes.length > SLICE_CHARS && startsArray(bytes)) {
        sliced = await readBatchInSlices(bytes, ex.deps.config.maxJsonDepth, budget)
        text = ''
        if (sliced.kind === 'batch' && sliced.exact) raw = bytes
      } else {
        const decoded = decodeReply(bytes)
        text = decoded.text
        if (decoded.exact) raw = bytes
      }
    } else text = await reply.text()
  } catch (e) {
    if (ex.signal?.aborted) return clientGone(ex, grader)
    if (e instanceof OriginReplyTooLargeError) {
      // MAX_REPLY_BYTES: the body was discarded unread; every open id gets -31001 (D9).
      ex.drop({ id: '-', reason: 'too_large' })
      return respondJson(localTexts, grader.close('invalid'), ex, asBatch, relaySessionOnly(reply))
    }
    return respondJson(localTexts, grader.close(isTimeout(e) ? 'timeout' : 'error'), ex, asBatch, {})
  }
  const sid = relaySessionOnly(reply)
  // The messages of the reply: each value with its exact text (a batch), or the one value.
  let values: unknown[]
  let texts: string[]
  let isArray: boolean
  if (sliced) {
    if (sliced.kind === 'too_deep') {
      ex.drop({ id: '-', reason: 'too_deep' })
      return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
    }
    if (sliced.kind === 'invalid') return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
    values = sliced.values
    texts = sliced.texts
    isArray = true
  } else {
    if (text.trim() === '') return respondJson(localTexts, grader.close('end'), ex, asBatch, sid)
    // A reply nested past MAX_JSON_DEPTH is not parsed at all (outlineJson says why): -31001 for every open id.
    const outline = outlineJson(text, ex.deps.config.maxJsonDepth)
    if (outline.tooDeep) {
      ex.drop({ id: '-', reason: 'too_deep' })
      return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
    }
    isArray = Array.isArray(value)
    if (isArray) {
      values = value as unknown[]
      const spans = outline.elements
      if (spans.length !== values.length) raw = null
      texts = values.map((m, i) => {
        const el = spans[i]
        return el ? text.slice(el.start, el.end) : JSON.stringify(m)
      })
    } else {
      const el = outline.elements[0]
      values = [value]
      texts = [el ? text.slice(el.start, el.end) : text.trim()]
    }
  }
  const out: (string | Promise<string>)[] = []
  // Stays true while every message goes out as the origin's text, in the origin's order.
  let unchanged = raw !== null && localTexts.length === 0 && isArray === asBatch
  for (let i = 0; i < values.length; i++) {
    const source = texts[i]!
    const graded = grader.message(values[i], source)
    if (graded !== source) unchanged = false
    if (graded !== null) out.push(graded)
    // Grading a list learns it and (pinning) digests it: a large batch yields between slices of that work.
    const pause = sliced ? budget.spend(source.length) : null
    if (pause) await pause
  }
  const closing = grader.close('end')
  if (closing.length > 0) unchanged = false
  out.push(...closing)
  if (unchanged) {
    if (ex.signal?.aborted) return clientGone(ex, grader)
    return respondJson(localTexts, [], ex, asBatch, sid, raw!)
  }
  // A tools/list answer held for its tool digests (tool pinning, enforce) is awaited here; every other answer is text already.
  const answers = out.some((t) => typeof t !== 'string') ? await Promise.all(out.map((t) => Promise.resolve(t))) : (out as string[])
  if (ex.signal?.aborted) return clientGone(ex, grader)
  return respondJson(localTexts, answers, ex, asBatch, sid)
}

/**
 * One JSON answer: local answers first, then the graded replies; HTTP 200 with `MCP-Edge-Grade`.
 * @param originBytes the origin's body, sent instead when grading changed nothing (gradeJsonReply)
 */
export function respondJson(localTexts: string[], answers: string[], ex: Exchange, asBatch: boolean, extra: Record<string, string>, originBytes?: Uint8Array): EdgeResponse {
  ex.finish(200)
  const headers: Record<string, string> = { 'content-type': JSON_HEADERS['content-type'] }
  for (const k in extra) headers[k] = extra[k]!
  headers['mcp-edge-grade'] = gradeHeader(ex.rows)
  if (originBytes) return edgeResponse(originBytes, 200, headers)
  if (!asBatch) return edgeResponse(localTexts[0] ?? answers[0] ?? '', 200, headers)
  return edgeResponse(`[${[...localTexts, ...answers].join(',')}]`, 200, headers)
}
