/**
 * @module core/guards/reply-chain
 * The run of the reply chain over one response (docs/design.md §2, "The chain of guards"). The
 * chain itself, the reply guards of one configuration in order, is listed in one place:
 * grading/reply-guards.ts `replyChain` (it holds grading, which sits on the floor above the guards).
 * Order: the guards that change a result (`mutate`), then those that judge the bytes the client
 * gets (`judge`: grading among them), then those that await the pins (`hold`); the first `deny`
 * ends the run. One runner for every path: the reply grader's (a JSON body, each SSE event, each
 * batch element; guards/apply-reply-guards.ts) and the edge's own tool-list pull (call-context.ts),
 * where only the guards that read the result run. Pure and runtime-neutral.
 */
import { isObject, resultText } from '../jsonrpc/jsonrpc'
import type { ReplyGrade, ReplyGuard, ReplyGuardContext, ReplyStage, ReplyUnderCheck, ReplyVerdict } from './guard'

const STAGES: Record<ReplyStage, number> = { mutate: 0, judge: 1, hold: 2 }

/**
 * `guards` in chain order: sorted by stage (mutate, judge, hold), in the given order within one.
 * @param guards the guards a configuration builds, in the order of their factories
 */
export function orderReplyGuards(guards: readonly ReplyGuard[]): readonly ReplyGuard[] {
  return guards
    .map((g, i) => [g, i] as const)
    .sort(([a, i], [b, j]) => STAGES[a.stage] - STAGES[b.stage] || i - j)
    .map(([g]) => g)
}

/** One response given to the chain: the parsed message and its exact text (`''` on the edge's own pull). */
export interface ReplyInput {
  msg: Record<string, unknown>
  text: string
}

/** What the chain made of one response. */
export type ReplyChainOutcome =
  | {
      kind: 'pass'
      /** The result to relay (the input's own object when nothing changed it). */
      result: Record<string, unknown>
      /** The message and text to relay (with a relay: written once after the last change). */
      msg: Record<string, unknown>
      text: string
      /** The names of the guards that changed the result. */
      changedBy: readonly string[]
      /** The grade the judging guards gave (unset without a relay). */
      grade?: ReplyGrade
    }
  | { kind: 'deny'; guard: string; verdict: Extract<ReplyVerdict, { kind: 'deny' }>; changedBy: readonly string[]; msg: Record<string, unknown> }

/** What the caller of a relayed run adds around the guards. */
export interface ReplyRunHooks {
  /**
   * True when `changed` (a result whose `structuredContent` a guard changed) breaks the tool's
   * `outputSchema` where `original` kept it: the run then ends in a `result_check_broke_schema`
   * denial rather than relay the result broken. Asked once, when the changed result is written.
   */
  brokeSchema?(original: Record<string, unknown>, changed: Record<string, unknown>): boolean
  /**
   * Called once when the judging is over (before the first holding guard, or at the end): the
   * grade is final. May return the parsed message the holding guards are to see instead (an
   * equal one decided before).
   */
  judged?(reply: { msg: Record<string, unknown>; text: string; grade?: ReplyGrade }): Record<string, unknown> | void
  /** false: the run ends before the holding guards (an answer the edge gives out of turn). */
  hold?: boolean
}

interface RunState extends ReplyUnderCheck {
  msg: Record<string, unknown>
  text: string
  /** The result the guards that read it see; `{}` when the response carries none (or an error). */
  result: Record<string, unknown>
  /** The result as it came, or null when the response carries none (the result guards pass it by). */
  readonly original: Record<string, unknown> | null
  /** A guard changed `result` and the message is not written yet. */
  dirty: boolean
  changedBy: string[]
  grade?: ReplyGrade
  judged: boolean
}

const NO_RESULT: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

/**
 * Runs `chain` over one response. Each guard sees the response as the guards before it left it.
 * The guards that read the result see a response whose `result` is an object and whose `error` is
 * absent or null (a success, D10); the guards that read the message need `ctx.relay`. Synchronous
 * until a guard returns a promise; the rest of the chain then runs after it.
 * @returns `pass` with what to relay, or the first `deny`
 */
export function runReplyGuards(chain: readonly ReplyGuard[], reply: ReplyInput, ctx: ReplyGuardContext, hooks: ReplyRunHooks = {}): ReplyChainOutcome | Promise<ReplyChainOutcome> {
  const { msg } = reply
  const original = isObject(msg.result) && (msg.error === undefined || msg.error === null) ? msg.result : null
  const s: RunState = { msg, text: reply.text, result: original ?? NO_RESULT, original, dirty: false, changedBy: [], judged: false, resultFindings: undefined }
  return run(chain, 0, s, ctx, hooks)
}

function run(chain: readonly ReplyGuard[], from: number, s: RunState, ctx: ReplyGuardContext, hooks: ReplyRunHooks): ReplyChainOutcome | Promise<ReplyChainOutcome> {
  for (let i = from; i < chain.length; i++) {
    const g = chain[i]!
    if (g.reads === 'message') {
      if (!ctx.relay) continue
      const denied = write(s, ctx, hooks)
      if (denied) return denied
      if (g.stage === 'hold' && !s.judged) {
        judged(s, hooks)
        if (hooks.hold === false) return outcome(s)
      }
    } else if (s.original === null) continue
    if (!g.appliesTo(ctx.method)) continue
    // The run state is the guard's view (result, msg, text, grade): no copy per guard; guards keep no reference.
    const v = g.check(s, ctx)
    if (v instanceof Promise) return v.then((r) => apply(s, g, r) ?? run(chain, i + 1, s, ctx, hooks))
    const end = apply(s, g, v)
    if (end) return end
  }
  const denied = write(s, ctx, hooks)
  if (denied) return denied
  if (!s.judged) judged(s, hooks)
  return outcome(s)
}

function apply(s: RunState, g: ReplyGuard, v: ReplyVerdict): ReplyChainOutcome | null {
  switch (v.kind) {
    case 'pass':
      return null
    case 'change':
      s.result = v.result
      s.dirty = true
      s.changedBy.push(g.name)
      return null
    case 'judge':
      s.grade = v.grade
      if (v.text !== undefined) s.text = v.text
      return null
    case 'rewrite':
      s.text = v.text
      return null
    case 'deny':
      return { kind: 'deny', guard: g.name, verdict: v, changedBy: s.changedBy, msg: s.msg }
  }
}

/**
 * Writes a changed result into the relayed message, as the edge writes it; first asks whether the
 * change broke the tool's output schema ({@link ReplyRunHooks.brokeSchema}).
 */
function write(s: RunState, ctx: ReplyGuardContext, hooks: ReplyRunHooks): ReplyChainOutcome | null {
  if (!s.dirty || !ctx.relay) return null
  s.dirty = false
  const original = s.original!
  if (s.result.structuredContent !== original.structuredContent && hooks.brokeSchema?.(original, s.result))
    return {
      kind: 'deny',
      guard: s.changedBy.join(','),
      verdict: {
        kind: 'deny',
        code: 'result_check_broke_schema',
        message:
          "A result check of this edge changed the tool's structuredContent (RESULT_SECRETS=redact or RESULT_CONTROL=strip), and the changed result no longer fits the tool's outputSchema, so it was withheld. " +
          'The tool server should not return what was removed; an operator can choose RESULT_SECRETS=block or RESULT_CONTROL=audit for this tool server.',
        agentGuidance: 'Do not retry this call as it is; ask the user how to proceed.',
      },
      changedBy: s.changedBy,
      msg: s.msg,
    }
  s.msg = { ...s.msg, result: s.result }
  s.text = resultText(ctx.relay.p.id, s.result)
  return null
}

function judged(s: RunState, hooks: ReplyRunHooks): void {
  s.judged = true
  const instead = hooks.judged?.(s.grade ? { msg: s.msg, text: s.text, grade: s.grade } : { msg: s.msg, text: s.text })
  if (instead) s.msg = instead
}

function outcome(s: RunState): ReplyChainOutcome {
  // Without a relay the message is not written as text; it still carries the result to relay.
  const msg = s.dirty ? { ...s.msg, result: s.result } : s.msg
  const out: ReplyChainOutcome = { kind: 'pass', result: s.result, msg, text: s.text, changedBy: s.changedBy }
  if (s.grade) out.grade = s.grade
  return out
}
