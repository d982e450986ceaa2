/**
 * @module core/guards/apply-reply-guards
 * The reply chain (grading/reply-guards.ts `replyChain`, run by guards/reply-chain.ts) applied to
 * one response the reply grader relays (grading/reply-grader.ts: a JSON body, each SSE event, each
 * batch element). A changed result is relayed as the edge writes it
 * (`{"jsonrpc":"2.0","id":<id token>,"result":...}`); a denied one becomes an `isError: true`
 * result classified `governance` (jsonrpc/edge-failure.ts) with the guard's code, logged and
 * counted once as a denial (`mcp.denied`, `mcp_edge_denials_total{reason}`), or, for a guard that
 * stands for a transport bound, the JSON-RPC error it names (graded `origin_error`, answered by the edge).
 *
 * Findings the guards report (`ctx.report`) become one `warn` log line each, `mcp.result_finding`
 * with the origin, the tool, the check, the category, the action, where and how many (never the
 * text found), and one count in `mcp_edge_result_findings_total{origin,category,action}`.
 *
 * A guard that changed `structuredContent` (a redaction, a strip) has its change checked again
 * against the tool's `outputSchema` (`brokeSchema`): a result the origin sent valid that no longer
 * fits is refused (`governance` / `result_check_broke_schema`) rather than relayed broken; the
 * `output_schema` guard then judges the bytes the client gets.
 */
import { errorText, resultText } from '../jsonrpc/jsonrpc'
import { appendEdgeFailure } from '../jsonrpc/edge-failure'
import { idLabel, type Exchange, type Pending } from '../exchange'
import { recordDenial } from './denial'
import { requestIdOf } from '../observe/request-id'
import { isModern } from '../jsonrpc/versions'
import { boundText } from '../jsonrpc/bound-text'
import { runReplyGuards, type ReplyChainOutcome, type ReplyRunHooks } from './reply-chain'
import type { ReplyFinding, ReplyGrade, ReplyGuard, ReplyGuardContext } from './guard'

/** One relayed response once the judging guards are done: what is relayed, its grade, and who answered. */
export interface JudgedReply {
  msg: Record<string, unknown>
  text: string
  grade: ReplyGrade
  /** `edge`: the id is answered with the edge's JSON-RPC error (a guard standing for a transport bound). */
  answeredBy: 'origin' | 'edge'
}

/** What the reply grader adds around the chain of one relayed response. */
export interface RelayHooks {
  /** See {@link ReplyRunHooks.brokeSchema}. */
  brokeSchema?: ReplyRunHooks['brokeSchema']
  /**
   * Called once per response when its grade is final, before any hold is awaited (so grade rows
   * are written in the order the responses came). May return the parsed message of an equal list
   * decided before in the same reply: the holding guards then see that one, as a repeat.
   */
  judged(reply: JudgedReply): Record<string, unknown> | void
  /** false: no holding guard runs (an answer given out of turn, synchronously). */
  hold?: boolean
}

/**
 * One relayed response through the reply chain.
 * @param chain the reply chain of the exchange's configuration
 * @returns the text to relay, or a promise of it when a holding guard awaits the pins
 */
export function applyReplyChain(ex: Exchange, p: Pending, chain: readonly ReplyGuard[], msg: Record<string, unknown>, text: string, hooks: RelayHooks): string | Promise<string> {
  const relay = { ex, p, repeat: false }
  // One request id for the findings and the denial of this response (the POST's, else one made up once).
  let rid: string | undefined
  const ridOf = () => (rid ??= ex.requestId ?? requestIdOf(undefined))
  const ctx: ReplyGuardContext = {
    originId: ex.target.id,
    era: ex.era,
    method: p.method,
    ...(p.tool !== undefined ? { tool: p.tool } : {}),
    ...(ex.requestId !== undefined ? { correlationId: ex.requestId } : {}),
    report: (f) => reportFinding(ex, p, ridOf(), f),
    relay,
  }
  const run: ReplyRunHooks = {
    judged: (r) => {
      const instead = hooks.judged({ msg: r.msg, text: r.text, grade: r.grade ?? { grade: p.unvalidated ? 'unvalidated' : 'ok' }, answeredBy: 'origin' })
      if (instead) relay.repeat = true
      return instead
    },
    ...(hooks.brokeSchema ? { brokeSchema: hooks.brokeSchema } : {}),
    ...(hooks.hold === false ? { hold: false } : {}),
  }
  const finish = (out: ReplyChainOutcome): string => (out.kind === 'pass' ? out.text : denied(ex, p, ridOf(), out, hooks))
  const out = runReplyGuards(chain, { msg, text }, ctx, run)
  return out instanceof Promise ? out.then(finish) : finish(out)
}

function reportFinding(ex: Exchange, p: Pending, rid: string, f: ReplyFinding): void {
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

/** The answer to a denied response (module comment), its grade handed to `hooks.judged`. */
function denied(ex: Exchange, p: Pending, rid: string, out: Extract<ReplyChainOutcome, { kind: 'deny' }>, hooks: RelayHooks): string {
  const v = out.verdict
  if (v.rpcError) {
    const error = { code: v.rpcError.code, message: v.rpcError.message, ...(v.rpcError.data ? { data: v.rpcError.data } : {}) }
    const { result: _dropped, ...envelope } = out.msg
    const text = errorText(p.id, error)
    hooks.judged({ msg: { ...envelope, error }, text, grade: { grade: 'origin_error', code: error.code }, answeredBy: 'edge' })
    return text
  }
  recordDenial(ex.deps, rid, ex.target.id, {
    reason: v.code,
    id: idLabel(p.id),
    method: p.method,
    guard: out.guard,
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
  const text = resultText(p.id, parsed)
  // The edge's own isError result: graded as grading grades an isError result (tool_error).
  hooks.judged({ msg: { ...out.msg, result: parsed }, text, grade: { grade: 'tool_error', isError: true }, answeredBy: 'origin' })
  return text
}
