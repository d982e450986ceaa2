/**
 * @module grade
 * Stage 7: the origin's answer to one forwarded request -> a grade (DESIGN.md section 6) and,
 * where the edge must change it, the text to send instead. Pure; never throws.
 *
 * - D10: `result` and `error` together: the error wins, `result` is dropped; `"error": null`
 *   beside a result is a success.
 * - D11: a `tools/call` result hiding a failure gets `isError: true`, content untouched.
 * - SEP-1303 / MCP tools "Error Handling": an `isError: true` result is kept as it is.
 * - 2026-07-28: `resultType: "input_required"` results are relayed untouched, never failures.
 */
import { errorText, isObject, resultText, toRawId, type RawId } from './jsonrpc'
import { memberText, scanJsonText } from './json-text'

/** Grades of DESIGN.md section 6. */
export type Grade = 'ok' | 'tool_error' | 'rpc_error' | 'rejected' | 'origin_error' | 'missing' | 'unvalidated'

/** Per-id line of the grade table (one log line per POST holds them all). */
export interface GradeRow {
  id: string
  method: string
  tool?: string
  grade: Grade
  code?: number
  isError?: boolean
  answeredBy: 'edge' | 'origin'
  originMs?: number
}

function failureFlag(o: Record<string, unknown>): boolean {
  return o.success === false || o.ok === false || o.status === 'error' || o.status === 'failed'
}

/**
 * D11: true when a `tools/call` result hides a failure: `structuredContent`, or the single text
 * content parsed as a JSON object, carries `success: false`, `ok: false` or
 * `status: "error" | "failed"` at the top level or one level down in `data` or `result`.
 * Plain text, invalid JSON, arrays and `error: null` are never flagged.
 */
export function hidesFailure(result: Record<string, unknown>): boolean {
  const candidates: unknown[] = []
  if (isObject(result.structuredContent)) candidates.push(result.structuredContent)
  const content = result.content
  if (Array.isArray(content) && content.length === 1) {
    const c = content[0]
    if (isObject(c) && c.type === 'text' && typeof c.text === 'string') {
      const t = c.text.trim()
      if (t.startsWith('{') && t.endsWith('}')) {
        try {
          candidates.push(JSON.parse(t))
        } catch {
          // not JSON: prose is never flagged
        }
      }
    }
  }
  for (const o of candidates) {
    if (!isObject(o)) continue
    if (failureFlag(o)) return true
    for (const inner of [o.data, o.result]) if (isObject(inner) && failureFlag(inner)) return true
  }
  return false
}

/** What the edge knows about the request a reply answers. */
export interface ForwardedRequest {
  id: RawId
  method: string
  tool?: string
  /** True when the call went out without a usable schema (D8, D16). */
  unvalidated: boolean
}

/** Options that change grading (DESIGN.md section 8). */
export interface GradeOptions {
  hiddenFailures: boolean
}

/** The outcome for one response message. `text` is set only when the edge rewrote it. */
export interface GradedResponse {
  grade: Grade
  code?: number
  isError?: boolean
  text?: string
}

/**
 * Grades one JSON-RPC response object from the origin.
 * @param msg the parsed response object (must carry `result` or `error`)
 * @param sourceText its exact text (used to keep the id token when rewriting)
 * @param req the request it answers
 */
export function gradeResponse(msg: Record<string, unknown>, sourceText: string, req: ForwardedRequest, opts: GradeOptions): GradedResponse {
  const err = msg.error
  if (err !== undefined && err !== null) {
    const code = isObject(err) && typeof err.code === 'number' ? err.code : undefined
    const out: GradedResponse = { grade: 'rpc_error', ...(code !== undefined ? { code } : {}) }
    if ('result' in msg || !isObject(err)) {
      // D10: error wins; keep the error object as the origin wrote it when it is one.
      const safe = isObject(err) ? err : { code: -31001, message: 'Origin sent a malformed error', data: { source: 'edge' } }
      out.text = errorText(idOf(msg, sourceText, req), safe as { code: number; message: string })
    }
    return out
  }
  const result = msg.result
  const base: Grade = req.unvalidated ? 'unvalidated' : 'ok'
  if (req.method !== 'tools/call' || !isObject(result)) return { grade: base }
  if (result.resultType === 'input_required' || isObject(result.task)) return { grade: base }
  if (result.isError === true) return { grade: 'tool_error', isError: true }
  if (opts.hiddenFailures && hidesFailure(result)) {
    const fixed = { ...result, isError: true }
    return { grade: 'tool_error', isError: true, text: resultText(idOf(msg, sourceText, req), fixed) }
  }
  return { grade: base }
}

/** The reply's own id token (exact digits), falling back to the request's. */
function idOf(msg: Record<string, unknown>, sourceText: string, req: ForwardedRequest): RawId {
  if (typeof msg.id === 'number' && !Number.isSafeInteger(msg.id)) {
    const el = scanJsonText(sourceText).elements[0]
    return toRawId(msg.id, memberText(sourceText, el, 'id')) ?? req.id
  }
  return toRawId(msg.id) ?? req.id
}

/** Compact `MCP-Edge-Grade` header value, e.g. `ok=2 tool_error=1` (grades in a fixed order). */
export function gradeHeader(rows: GradeRow[]): string {
  const order: Grade[] = ['ok', 'tool_error', 'rpc_error', 'rejected', 'origin_error', 'missing', 'unvalidated']
  const counts = new Map<Grade, number>()
  for (const r of rows) counts.set(r.grade, (counts.get(r.grade) ?? 0) + 1)
  return order
    .filter((g) => counts.has(g))
    .map((g) => `${g}=${counts.get(g)}`)
    .join(' ')
}
