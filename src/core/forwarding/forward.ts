/**
 * @module core/forwarding/forward
 * Stages 6-8 for what the edge forwards: send the valid messages to the origin (forwarding/origin-call.ts),
 * grade its reply per JSON-RPC id (core/grading: reply-grader.ts; JSON in json-reply.ts, SSE event by event in
 * sse-reply.ts), merge the local answers, and respond. Origin faults become gateway errors per id
 * (D9); every forwarded id is answered exactly once. GET and DELETE: pass-through.ts.
 */
import { ErrorCode } from '../jsonrpc/jsonrpc'
import { gradeHeader } from '../grade-table'
import { answerRow, type Exchange } from '../exchange'
import { toWire, wireResponse } from '../local-answer'
import { edgeResponse, type EdgeResponse, type RequestHeaders } from '../edge-response'
import { callOrigin } from './origin-call'
import { isSse, readRefusal, relayHeaders, relaySessionOnly } from '../grading/origin-reply'
import { ReplyGrader } from '../grading/reply-grader'
import { answerRefusedReply, clientGone, gradeJsonReply, respondJson } from '../grading/json-reply'
import { streamReply } from '../grading/sse-reply'

export { callOrigin, type OriginCall } from './origin-call'
export { handlePassThrough } from './pass-through'

/**
 * Stage 6-8: forward `body`, grade the reply per id, merge `localTexts`, respond.
 * JSON replies are answered with `MCP-Edge-Grade`; SSE replies are streamed event by event.
 * The ids to answer are the open entries of `ex.pending` (each gets exactly one answer).
 * @param body the exact text to send: one message, or the sub-batch `[...]` of valid elements
 * @param localTexts answers the edge already built for other elements of a batch
 * @param asBatch answer with a JSON array (the client sent a batch)
 */
export async function forwardRequests(body: string, localTexts: string[], headers: RequestHeaders, ex: Exchange, asBatch: boolean): Promise<EdgeResponse> {
  const sent = await callOrigin(ex, headers, body, ex.signal)
  const grader = new ReplyGrader(ex)
  if (sent.kind === 'gateway' && ex.signal?.aborted) return clientGone(ex, grader)
  if (sent.kind === 'gateway') return respondJson(localTexts, grader.close(sent.code === ErrorCode.OriginTimeout ? 'timeout' : 'error'), ex, asBatch, {})
  const reply = sent.reply
  const ok = reply.status >= 200 && reply.status < 300
  if (ok && isSse(reply)) return streamReply(reply, localTexts, ex, grader, asBatch)
  if (!ok) return answerRefusedReply(reply, localTexts, ex, grader, asBatch)
  return gradeJsonReply(reply, localTexts, ex, grader, asBatch)
}

/** Notifications and client responses: forward, then 202 with no body (MCP transports, item 4). */
export async function forwardWithoutReply(text: string, headers: RequestHeaders, ex: Exchange): Promise<EdgeResponse> {
  const sent = await callOrigin(ex, headers, text)
  if (sent.kind === 'gateway') {
    const w = toWire(sent)
    ex.row(answerRow(sent, w, ''))
    ex.finish(502)
    return wireResponse(w)
  }
  const reply = sent.reply
  if (reply.status >= 200 && reply.status < 300) {
    // 200 with an empty body and 204 are normalised to 202 (field case B14).
    reply.discard()
    ex.finish(202)
    return edgeResponse(null, 202, relaySessionOnly(reply))
  }
  // The origin refused (e.g. 400/404 for a missing or unknown session): relayed with its status,
  // the body only when it is a JSON-RPC error.
  const refusal = await readRefusal(reply)
  if (refusal) {
    ex.row({ id: 'null', method: '', grade: 'rpc_error', code: refusal.code, answeredBy: 'origin' })
    ex.finish(reply.status)
    return edgeResponse(refusal.text, reply.status, { ...relayHeaders(reply), 'content-type': 'application/json', 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  ex.finish(reply.status)
  const h = relayHeaders(reply)
  delete h['content-type']
  return edgeResponse(null, reply.status, h)
}
