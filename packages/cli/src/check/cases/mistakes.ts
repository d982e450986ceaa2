/**
 * @module check/cases/mistakes
 * The judgement every client-mistake case shares (a cut-off body, a bad method, an unknown tool,
 * bad arguments): the mistake must be refused plainly, with the expected code, without internals
 * and without the rejected value. Pure.
 */
import { echoes, hasStackTrace, replyFor, type HttpAnswer } from '../reply'
import { pass } from './requests'
import type { CheckGrade, Verdict } from './types'

/** What check looks for in every answer to a client mistake, worst first. */
export interface MistakeSpec {
  expected: string
  rule: string
  /** Error codes that satisfy the rule. */
  codes: number[]
  /** True when an `isError: true` result also satisfies it. */
  isErrorOk: boolean
  /** Where `isError` alone is wrong, the rule that says so. */
  isErrorRule?: string
  /** The rejected value to look for in the answer. */
  canary?: string
}

/**
 * Judges the answer to a request that carries a client mistake: it must be refused plainly
 * (JSON-RPC 2.0 §5: every request gets a response), with the expected code, without internals
 * and without the rejected value.
 */
export function judgeMistake(answer: HttpAnswer, id: string | number | null, spec: MistakeSpec): Verdict {
  const v = (grade: CheckGrade, why: string, rule = spec.rule): Verdict => ({ grade, expected: spec.expected, rule, why })
  if (answer.failure === 'budget') return v('info', 'not sent: the request budget was spent')
  if (answer.status === null || answer.failure)
    return v(
      'fails',
      answer.failure === 'timeout' ? 'no answer within the timeout' : 'no answer: the connection failed',
      `${spec.rule}; JSON-RPC 2.0 §5 (every request gets a response)`
    )
  const r = replyFor(answer, id)
  const misleading: string[] = []
  if (answer.status >= 500) misleading.push(`HTTP ${answer.status} (an internal failure) for a client mistake`)
  if (r.kind === 'error' && r.code === -32603) misleading.push('-32603 Internal error for a client mistake: the agent cannot tell its call was wrong')
  if (hasStackTrace(answer)) misleading.push('a stack trace in the answer (server internals, no help to the agent)')
  if (spec.canary !== undefined && echoes(answer, spec.canary)) misleading.push('the rejected value is echoed back')
  if (r.kind === 'error' && r.alsoResult) misleading.push('a result beside the error (JSON-RPC 2.0 §5: exactly one of them)')
  if (r.kind === 'result' && !r.isError)
    misleading.push(
      r.hidesFailure ? 'the refusal is hidden in a result without isError (success: false, a lone error member or the like)' : 'reported as a success: a result without isError'
    )
  if (misleading.length > 0) return v('misleads', misleading.join('; '))
  if (r.kind === 'none') {
    return v('fails', answer.messages.length === 0 ? `HTTP ${answer.status} without a JSON-RPC response` : 'no JSON-RPC response for this id', `${spec.rule}; JSON-RPC 2.0 §5`)
  }
  if (r.kind === 'result') {
    return spec.isErrorOk ? pass(spec.expected, spec.rule, 'an isError result') : v('fails', 'an isError result where a JSON-RPC error is required', spec.isErrorRule ?? spec.rule)
  }
  if (r.code !== null && spec.codes.includes(r.code)) return pass(spec.expected, spec.rule)
  return v('fails', `error ${r.code ?? '(no numeric code)'} instead of ${spec.codes.join(' or ') || 'an isError result'}`)
}
