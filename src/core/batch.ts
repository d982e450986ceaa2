/**
 * @module core/batch
 * The answer to a 2025-03-26 batch once each element is decided (JSON-RPC 2.0 §6; docs/rules.md):
 * local answers in the elements' order, then either the forwarded sub-batch with the replies merged
 * by id (forwarding/forward.ts), or, when nothing needs a reply from the origin, the edge's own answer:
 * 400 when only MCP-invalid notifications were sent or every entry has a null id, 202 when nothing
 * needs an answer, else the 200 array.
 */
import { edgeResponse, type EdgeResponse, type RequestHeaders } from './edge-response'
import { JSON_HEADERS, type Exchange, type Pending } from './exchange'
import { callOrigin, forwardRequests } from './forwarding/forward'
import { gradeHeader } from './grade-table'
import { ErrorCode } from './jsonrpc/jsonrpc'
import { localResponse } from './local-answer'

/**
 * Sends what a batch forwards and answers the POST.
 * @param localTexts the JSON texts of the elements answered by the edge, in the client's order
 * @param forward the texts of the elements that go to the origin (requests, notifications, responses), in order
 * @param forwarded the requests among them that await a reply, one pending entry per id
 * @param sent the sub-batch's text when the caller has it whole (every element forwarded: the
 *   client's own body); by default the texts of `forward` joined into an array
 */
export async function respondToBatch(
  ex: Exchange,
  headers: RequestHeaders,
  localTexts: string[],
  forward: string[],
  forwarded: Pending[],
  sent = `[${forward.join(',')}]`
): Promise<EdgeResponse> {
  if (forward.length === 0) {
    if (localTexts.length === 0) {
      // Only MCP-invalid notifications: refused as one (D5, D15).
      ex.finish(400)
      return localResponse(
        { kind: 'body', code: ErrorCode.InvalidRequest, message: 'Invalid Request: notifications must carry object params' },
        { 'mcp-edge-grade': gradeHeader(ex.rows) }
      )
    }
    // Vector 13: a batch whose every entry has a null id is refused as a whole (docs/rules.md).
    const allNull = ex.rows.every((r) => r.id === 'null')
    const status = allNull ? 400 : 200
    ex.finish(status)
    return edgeResponse(`[${localTexts.join(',')}]`, status, { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  for (const p of forwarded) ex.pending.set(p.id.key, p)
  if (forwarded.length === 0) {
    // Only notifications/responses go out: 202 unless local entries need an answer.
    const call = await callOrigin(ex, headers, sent)
    if (call.kind === 'reply') call.reply.discard()
    if (localTexts.length === 0) {
      if (call.kind === 'gateway') {
        ex.finish(502)
        return localResponse(call)
      }
      ex.finish(202)
      return edgeResponse(null, 202)
    }
    ex.finish(200)
    return edgeResponse(`[${localTexts.join(',')}]`, 200, { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  return forwardRequests(sent, localTexts, headers, ex, true)
}
