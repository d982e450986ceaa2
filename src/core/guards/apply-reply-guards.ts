/**
 * @module core/guards/apply-reply-guards
 * The reply chain ({@link replyChain}) applied to one response the reply grader relays
 * (grading/reply-grader.ts: a JSON body, each SSE event, each batch element). Runs on responses
 * that carry a `result` object; an `error` response passes untouched. A changed result is relayed
 * as the edge writes it (`{"jsonrpc":"2.0","id":<id token>,"result":...}`); a denied one becomes an
 * `isError: true` result classified `governance` (jsonrpc/edge-failure.ts) with the guard's code,
 * logged and counted once as a denial (`mcp.denied`, `mcp_edge_denials_total{reason}`), or, for a
 * guard that stands for a transport bound, the JSON-RPC error it names (graded `origin_error`).
 *
 * Findings the guards report (`ctx.report`) become one `warn` log line each, `mcp.result_finding`
 * with the origin, the tool, the check, the category, the action, where and how many (never the
 * text found), and one count in `mcp_edge_result_findings_total{origin,category,action}`.
 *
 * A guard that changed `structuredContent` (a redaction, a strip) has its change checked again
 * against the tool's `outputSchema`: a result the origin sent valid that no longer fits is refused
 * (`governance` / `result_check_broke_schema`) rather than relayed broken; the output-schema step
 * (grading/output-schema.ts) then judges the bytes the client gets.
 */
import { errorText, isObject, resultText } from '../jsonrpc/jsonrpc'
import { appendEdgeFailure } from '../jsonrpc/edge-failure'
import { idLabel, type Exchange, type Pending } from '../exchange'
import { recordDenial } from './denial'
import { requestIdOf } from '../observe/request-id'
import { isModern } from '../jsonrpc/versions'
import { boundText } from '../jsonrpc/bound-text'
import { replyChain, runReplyGuards } from './reply-chain'
import type { ReplyFinding } from './guard'

/** What the chain made of one response: the message and text to relay instead, and for an edge error its grade row. */
export interface GuardedReply {
  msg: Record<string, unknown>
  text: string
  /** Set when the id is answered with the edge's JSON-RPC error (the grade is the edge's, not the origin's). */
  rpcError?: { code: number }
}

/**
 * True when `changed` (a result whose `structuredContent` a guard changed) breaks the tool's
 * `outputSchema` where `original` kept it; given by the reply grader, which owns the schema check.
 */
export type SchemaRecheck = (original: Record<string, unknown>, changed: Record<string, unknown>) => boolean

/**
 * One response through the reply chain.
 * @param brokeSchema see {@link SchemaRecheck} (absent: no recheck)
 * @returns null when every guard passed it unchanged (the origin's bytes are relayed), else the
 *   message and text to relay instead
 */
export function applyReplyGuards(ex: Exchange, p: Pending, msg: Record<string, unknown>, brokeSchema?: SchemaRecheck): GuardedReply | null {
  const chain = replyChain(ex.deps.config)
  if (chain.length === 0 || !isObject(msg.result) || 'error' in msg || !chain.some((g) => g.appliesTo(p.method))) return null
  const rid = ex.requestId ?? requestIdOf(undefined)
  const report = (f: ReplyFinding) => {
    ex.deps.metrics.countResultFinding?.(ex.target.id, f.category, f.action, f.count)
    ex.deps.log({
      level: 'warn',
      msg: 'mcp.result_finding',
      rid,
      origin: ex.target.id,
      id: idLabel(p.id),
      method: p.method,
      ...(p.tool !== undefined ? { tool: boundText(p.tool) } : {}),
      ...f,
    })
  }
  const original = msg.result
  const out = runReplyGuards(chain, original, {
    originId: ex.target.id,
    era: ex.era,
    method: p.method,
    ...(p.tool !== undefined ? { tool: p.tool } : {}),
    ...(ex.requestId !== undefined ? { correlationId: ex.requestId } : {}),
    report,
  })
  let verdict = out.kind === 'deny' ? { guard: out.guard, ...out.verdict } : null
  if (out.kind === 'pass') {
    if (out.changedBy.length === 0) return null
    if (out.result.structuredContent === original.structuredContent || !brokeSchema?.(original, out.result))
      return { msg: { ...msg, result: out.result }, text: resultText(p.id, out.result) }
    verdict = {
      guard: out.changedBy.join(','),
      kind: 'deny',
      code: 'result_check_broke_schema',
      message:
        "A result check of this edge changed the tool's structuredContent (RESULT_SECRETS=redact or RESULT_CONTROL=strip), and the changed result no longer fits the tool's outputSchema, so it was withheld. " +
        'The tool server should not return what was removed; an operator can choose RESULT_SECRETS=block or RESULT_CONTROL=audit for this tool server.',
      agentGuidance: 'Do not retry this call as it is; ask the user how to proceed.',
    }
  }
  const v = verdict!
  if (v.rpcError) {
    const error = { code: v.rpcError.code, message: v.rpcError.message, ...(v.rpcError.data ? { data: v.rpcError.data } : {}) }
    const { result: _dropped, ...envelope } = msg
    return { msg: { ...envelope, error }, text: errorText(p.id, error), rpcError: { code: error.code } }
  }
  recordDenial(ex.deps, rid, ex.target.id, {
    reason: v.code,
    id: idLabel(p.id),
    method: p.method,
    guard: v.guard,
    ...(p.tool !== undefined ? { tool: boundText(p.tool) } : {}),
  })
  const result: Record<string, unknown> = { content: [{ type: 'text', text: v.message }], isError: true }
  if (isModern(ex.era)) result.resultType = 'complete'
  const json = appendEdgeFailure(JSON.stringify(result), {
    class: 'governance',
    code: v.code,
    correlationId: rid,
    ...(v.agentGuidance !== undefined ? { agentGuidance: v.agentGuidance } : {}),
  })
  const parsed = JSON.parse(json) as Record<string, unknown>
  return { msg: { ...msg, result: parsed }, text: resultText(p.id, parsed) }
}
