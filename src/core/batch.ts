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
 */
export async function respondToBatch(ex: Exchange, headers: RequestHeaders, localTexts: string[], forward: string[], forwarded: Pending[]): Promise<EdgeResponse> {
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
    const sent = await callOrigin(ex, headers, `[${forward.join(',')}]`)
    if (sent.kind === 'reply') sent.reply.discard()
    if (localTexts.length === 0) {
      if (sent.kind === 'gateway') {
        ex.finish(502)
        return localResponse(sent)
      }
      ex.finish(202)
      return edgeResponse(null, 202)
    }
    ex.finish(200)
    return edgeResponse(`[${localTexts.join(',')}]`, 200, { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  return forwardRequests(`[${forward.join(',')}]`, localTexts, headers, ex, true)
}
