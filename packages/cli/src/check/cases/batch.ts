/**
 * @module check/cases/batch
 * The batch case (2025-03-26 only: batches were removed in 2025-06-18): `ping`, `tools/list`
 * and a `tools/call` with arguments a string, in one JSON array, and its judgement. Pure.
 */
import { allowsBatches } from '../edge-rules'
import { describeHttp, echoes, hasStackTrace, replyFor, type HttpAnswer, type Reply } from '../reply'
import { buildRequest, UNKNOWN_TOOL_NAME } from './requests'
import type { CheckGrade, Judged, VersionCase } from './types'

/** JSON-RPC 2.0 §6: a batch of three, the last element bad (the first tool's arguments a string, or an unknown tool). */
export const batch: VersionCase = {
  name: 'batch',
  versions: allowsBatches,
  plan({ version: v, tools, canary }, nextId) {
    const [a, b, c] = [nextId(), nextId(), nextId()]
    const first = tools[0]?.tool.name
    const bad = first !== undefined ? { name: first, arguments: canary } : { name: UNKNOWN_TOOL_NAME }
    const element = (id: number, method: string, params?: Record<string, unknown>): unknown => JSON.parse(buildRequest(v, id, method, params).body)
    return {
      case: 'batch',
      sent: `a batch: ping, tools/list, tools/call ${first !== undefined ? 'with arguments a string' : 'of an unknown tool'}`,
      body: JSON.stringify([element(a, 'ping'), element(b, 'tools/list'), element(c, 'tools/call', bad)]),
      ids: [a, b, c],
      judge: (ans) => judgeBatch(ans, [a, b, c], canary),
    }
  },
}

/**
 * JSON-RPC 2.0 §6 and MCP 2025-03-26 Basic §Batching: a batch of three with one bad element gets
 * one response per request: two results and one error for the bad element.
 */
export function judgeBatch(a: HttpAnswer, ids: [number, number, number], canary: string): Judged {
  const expected = 'one response per element: 2 results, 1 error'
  const rule = 'JSON-RPC 2.0 §6 (a response per request); MCP 2025-03-26 Basic §Batching (servers MUST support receiving batches)'
  const replies: Reply[] = ids.map((i) => replyFor(a, i))
  const short = (r: Reply) => (r.kind === 'none' ? 'none' : r.kind === 'error' ? `error ${r.code ?? '?'}${r.idless ? ' id null' : ''}` : r.isError ? 'result isError' : 'result')
  const answered = a.status === null || a.failure ? describeHttp(a) : `${describeHttp(a)}: ${replies.map(short).join(', ')}`
  const v = (grade: CheckGrade, why: string): Judged => ({ verdict: { grade, expected, rule, why }, answered })
  if (a.failure === 'budget') return v('info', 'not sent: the request budget was spent')
  if (a.status === null || a.failure) return v('fails', 'no answer')
  const bad = replies[2]!
  const misleading: string[] = []
  if (a.status >= 500) misleading.push(`HTTP ${a.status} for the whole batch`)
  if (hasStackTrace(a)) misleading.push('a stack trace in the answer')
  if (echoes(a, canary)) misleading.push('the rejected value is echoed back')
  if (bad.kind === 'result' && !bad.isError) misleading.push('the bad element is answered as a success')
  if (bad.kind === 'error' && !bad.idless && bad.code === -32603) misleading.push('-32603 Internal error for the bad element')
  if (misleading.length) return v('misleads', misleading.join('; '))
  const whole = replies.every((r) => r.kind === 'error' && r.idless)
  if (whole) return v('fails', 'the batch failed whole: one error for all three, the two good requests got no answer')
  if (replies[0]!.kind !== 'result' || replies[1]!.kind !== 'result') return v('fails', 'a good element got no result')
  if (bad.kind === 'none') return v('fails', 'the bad element got no response')
  return v('pass', '')
}
