/**
 * @module core/forwarding/json-reply
 * Stage 7-8 for a JSON reply: the origin's body read (bounded by `MAX_REPLY_BYTES` and
 * `MAX_JSON_DEPTH`), each response in it graded per id, the local answers merged in front, one
 * JSON answer with `MCP-Edge-Grade`. Also a refusing origin (non-2xx) and a client that left.
 */
import { nestsDeeperThan, scanJsonText } from '../jsonrpc/json-scan'
import { OriginReplyTooLargeError, type OriginReply } from '../ports'
import { gradeHeader } from '../grading/grade-reply'
import { idLabel, JSON_HEADERS, originEras, type Exchange } from '../exchange'
import { edgeResponse, type EdgeResponse } from '../edge-response'
import { isTimeout, readRefusal, relayHeaders, relaySessionOnly } from './origin-call'
import type { ReplyGrader } from './reply-grader'

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

/** A 2xx JSON reply: read, bounded, graded message by message; open ids closed at the end. */
export async function gradeJsonReply(reply: OriginReply, localTexts: string[], ex: Exchange, grader: ReplyGrader, asBatch: boolean): Promise<EdgeResponse> {
  let text: string
  try {
    text = await reply.text()
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
  if (text.trim() === '') return respondJson(localTexts, grader.close('end'), ex, asBatch, sid)
  // A reply nested past MAX_JSON_DEPTH is not parsed at all (nestsDeeperThan says why): -31001 for every open id.
  if (nestsDeeperThan(text, ex.deps.config.maxJsonDepth)) {
    ex.drop({ id: '-', reason: 'too_deep' })
    return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
  }
  const out: (string | Promise<string>)[] = []
  if (Array.isArray(value)) {
    const scan = scanJsonText(text)
    value.forEach((m, i) => {
      const el = scan.elements[i]!
      const graded = grader.message(m, text.slice(el.start, el.end))
      if (graded !== null) out.push(graded)
    })
  } else {
    const graded = grader.message(value, text.trim())
    if (graded !== null) out.push(graded)
  }
  out.push(...grader.close('end'))
  // A tools/list answer held for its tool digests (tool pinning, enforce) is awaited here; every other answer is text already.
  const texts = out.some((t) => typeof t !== 'string') ? await Promise.all(out.map((t) => Promise.resolve(t))) : (out as string[])
  if (ex.signal?.aborted) return clientGone(ex, grader)
  return respondJson(localTexts, texts, ex, asBatch, sid)
}

/** One JSON answer: local answers first, then the graded replies; HTTP 200 with `MCP-Edge-Grade`. */
export function respondJson(localTexts: string[], answers: string[], ex: Exchange, asBatch: boolean, extra: Record<string, string>): EdgeResponse {
  ex.finish(200)
  const headers: Record<string, string> = { 'content-type': JSON_HEADERS['content-type'] }
  for (const k in extra) headers[k] = extra[k]!
  headers['mcp-edge-grade'] = gradeHeader(ex.rows)
  if (!asBatch) return edgeResponse(localTexts[0] ?? answers[0] ?? '', 200, headers)
  return edgeResponse(`[${[...localTexts, ...answers].join(',')}]`, 200, headers)
}
