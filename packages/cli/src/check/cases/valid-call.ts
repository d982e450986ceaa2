/**
 * @module check/cases/valid-call
 * The one call with generated valid arguments, per tool marked safe (`--call`, `--call-all`),
 * and its judgement: an honest result (a failure marked `isError`), matching the tool's
 * `outputSchema`. Pure.
 */
import { isModern, isObject, type ProtocolVersion } from '../edge-rules'
import { hasStackTrace, replyFor, type HttpAnswer } from '../reply'
import { buildRequest, judged, toolsSection } from './requests'
import type { CheckGrade, ToolCase, ToolUnderCheck, Verdict } from './types'

/** A call with the generated valid arguments (tools marked safe, with arguments built, only). */
export const validCall: ToolCase = {
  name: 'valid-call',
  plan({ version: v, callable }, t, nextId) {
    if (!callable.has(t.tool.name) || !t.valid.ok) return undefined
    const id = nextId()
    const args = t.valid.value
    return {
      case: 'valid-call',
      tool: t.tool.name,
      sent: `tools/call with ${JSON.stringify(args).length > 40 ? 'generated valid arguments' : JSON.stringify(args)}`,
      ...buildRequest(v, id, 'tools/call', { name: t.tool.name, arguments: args }),
      ids: [id],
      judge: (a) => judged(a, id, judgeValidCall(a, id, v, t)),
    }
  },
}

/**
 * Judges a call with valid arguments (only for tools marked safe): the result must say honestly
 * whether it failed (MCP Server Tools §Error Handling: tool errors are reported with
 * `isError: true`; the edge's D11 rule, docs/grading.md), and match the tool's `outputSchema`
 * (MCP 2025-06-18+ Server Tools §Output Schema).
 */
export function judgeValidCall(answer: HttpAnswer, id: number, v: ProtocolVersion, t: ToolUnderCheck): Verdict {
  const errRule = `${toolsSection(v, 'Error Handling')} (a tool's failure is a result with isError: true); docs/design.md D11 (hidden failures get isError)`
  const expected = 'a result; a failure marked isError: true; structuredContent matching outputSchema'
  const v_ = (grade: CheckGrade, why: string, rule = errRule): Verdict => ({ grade, expected, rule, why })
  if (answer.failure === 'budget') return v_('info', 'not sent: the request budget was spent')
  if (answer.status === null || answer.failure)
    return v_('fails', answer.failure === 'timeout' ? 'no answer within the timeout' : 'no answer: the connection failed', 'JSON-RPC 2.0 §5 (every request gets a response)')
  const r = replyFor(answer, id)
  if (hasStackTrace(answer)) return v_('misleads', 'a stack trace in the answer (server internals, no help to the agent)')
  if (r.kind === 'none') return v_('fails', 'no JSON-RPC response for this id', 'JSON-RPC 2.0 §5 (every request gets a response)')
  if (r.kind === 'error') {
    if (r.alsoResult)
      return v_(
        'misleads',
        'a result beside the error: a client reading the result sees a success',
        'JSON-RPC 2.0 §5 (exactly one of result and error); docs/design.md D10 (the error wins)'
      )
    return v_('pass', `a JSON-RPC error ${r.code ?? ''} to arguments valid by the inputSchema (a failure, reported as one)`)
  }
  if (r.hidesFailure) return v_('misleads', 'a failure reported as a success: the result says success: false (or holds only an error) without isError: true')
  const result = r.result
  if (!isObject(result) || !Array.isArray(result.content)) return v_('fails', 'the result has no content array', `MCP ${v} schema CallToolResult (content is required)`)
  if (isModern(v) && result.resultType !== 'complete' && result.resultType !== 'input_required') {
    return v_(
      'fails',
      result.resultType === undefined ? 'the result has no resultType' : 'the result has an unknown resultType',
      `MCP ${v} Basic §Result Responses (every result carries resultType "complete" or "input_required")`
    )
  }
  if (r.isError) return v_('pass', 'the tool failed and said so (isError: true)')
  if (v !== '2025-03-26' && t.tool.outputSchema !== undefined) {
    const rule = `${toolsSection(v, 'Output Schema')} (servers MUST return structuredContent conforming to outputSchema)`
    if (!('structuredContent' in result)) return v_('fails', 'the tool declares an outputSchema but the result has no structuredContent', rule)
    if (t.schema.validateOutput) {
      let issues
      try {
        issues = t.schema.validateOutput(result.structuredContent)
      } catch {
        issues = null
      }
      if (issues) return v_('fails', `structuredContent does not match outputSchema at ${issues[0]?.path || 'the root'} (${issues[0]?.keyword})`, rule)
    }
  }
  return v_('pass', '')
}
