/**
 * @module core/guards/apply-reply-guards
 * The reply chain ({@link replyChain}) applied to one response the reply grader relays
 * (grading/reply-grader.ts: a JSON body, each SSE event, each batch element). Runs on responses
 * that carry a `result` object; an `error` response passes untouched. A changed result is relayed
 * as the edge writes it (`{"jsonrpc":"2.0","id":<id token>,"result":...}`); a denied one becomes an
 * `isError: true` result classified `governance` (jsonrpc/edge-failure.ts) with the guard's code,
 * logged and counted once as a denial (`mcp.denied`, `mcp_edge_denials_total{reason}`).
 */
import { isObject, resultText } from '../jsonrpc/jsonrpc'
import { appendEdgeFailure } from '../jsonrpc/edge-failure'
import type { Exchange, Pending } from '../exchange'
import { recordDenial } from './denial'
import { idLabel } from '../exchange'
import { requestIdOf } from '../observe/request-id'
import { replyChain, runReplyGuards } from './reply-chain'

/**
 * One response through the reply chain.
 * @returns null when every guard passed it unchanged (the origin's bytes are relayed), else the
 *   message and text to relay instead
 */
export function applyReplyGuards(ex: Exchange, p: Pending, msg: Record<string, unknown>): { msg: Record<string, unknown>; text: string } | null {
  const chain = replyChain(ex.deps.config)
  if (chain.length === 0 || !isObject(msg.result) || 'error' in msg) return null
  const out = runReplyGuards(chain, msg.result, {
    originId: ex.target.id,
    era: ex.era,
    method: p.method,
    ...(p.tool !== undefined ? { tool: p.tool } : {}),
    ...(ex.requestId !== undefined ? { correlationId: ex.requestId } : {}),
  })
  if (out.kind === 'pass') return out.changedBy.length === 0 ? null : { msg: { ...msg, result: out.result }, text: resultText(p.id, out.result) }
  recordDenial(ex.deps, ex.requestId ?? requestIdOf(undefined), ex.target.id, {
    reason: out.verdict.code,
    id: idLabel(p.id),
    method: p.method,
    guard: out.guard,
    ...(p.tool !== undefined ? { tool: p.tool } : {}),
  })
  const result: Record<string, unknown> = { content: [{ type: 'text', text: out.verdict.message }], isError: true }
  const json = appendEdgeFailure(JSON.stringify(result), { class: 'governance', code: out.verdict.code, correlationId: ex.requestId ?? '' })
  return { msg: { ...msg, result: JSON.parse(json) as Record<string, unknown> }, text: resultText(p.id, JSON.parse(json)) }
}
