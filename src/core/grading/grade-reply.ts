/**
 * @module core/grading/grade-reply
 * Stage 7: the origin's answer to one forwarded request -> a grade (docs/design.md §6) and,
 * where the edge must change it, the text to send instead. Pure; never throws.
 *
 * - D10: `result` and `error` together: the error wins, `result` is dropped; `"error": null`
 *   beside a result is a success.
 * - D11: a `tools/call` result hiding a failure gets `isError: true`, content untouched.
 * - SEP-1303 / MCP tools "Error Handling": an `isError: true` result is kept as it is.
 * - 2026-07-28: `resultType: "input_required"` results are relayed untouched, never failures.
 */
import { withEdgeFailure } from '../jsonrpc/edge-failure'
import { isObject, responseText, resultText, toRawId, type RawId } from '../jsonrpc/jsonrpc'
import { objectMembers, spanText, type ObjectMembers } from '../jsonrpc/json-members'
import { DEFAULT_MAX_JSON_DEPTH, memberText, scanJsonText, type Span } from '../jsonrpc/json-scan'
import type { ForwardedRequest, Grade } from '../grade-table'

function failureFlag(o: Record<string, unknown>): boolean {
  return o.success === false || o.ok === false || o.status === 'error' || o.status === 'failed'
}

/**
 * Members that only describe an error, so an object holding an error and nothing but these is an
 * error report (`{"error": "Template 12 not found", "tip": "..."}`, n8n-mcp; `{"error": "..."}`,
 * server-slack). Anything else beside `error` may be the result the call asked for (a log entry,
 * a record with an `error` field), and keeps the object a success. `success`, `ok` and `status`
 * are left out on purpose: their own rule decides (docs/grading.md).
 */
const ERROR_COMPANIONS = new Set(['tip', 'hint', 'message', 'details', 'detail', 'code', 'errorCode', 'error_code', 'reason', 'suggestion', 'help', 'documentation'])

/** A non-empty string after trimming. */
function said(v: unknown): boolean {
  return typeof v === 'string' && v.trim() !== ''
}

/**
 * D11, the `error` member: true when `o` reports an error and holds no result. Its top-level
 * `error` is a non-empty string or an object with a non-empty string `message`, and every other
 * member is an {@link ERROR_COMPANIONS} member, `valid: false`, or an HTTP error status
 * (`status` / `statusCode` 400..599). `error: null`, `""`, `false`, `{}` and `errors` are never an error report.
 */
function errorReport(o: Record<string, unknown>): boolean {
  const e = o.error
  if (!(said(e) || (isObject(e) && said(e.message)))) return false
  for (const k of Object.keys(o)) {
    if (k === 'error' || ERROR_COMPANIONS.has(k)) continue
    const v = o[k]
    if (k === 'valid' && v === false) continue
    if ((k === 'status' || k === 'statusCode') && typeof v === 'number' && v >= 400 && v <= 599) continue
    return false
  }
  return true
}

/** The members {@link objectHidesFailure} reads one level down. */
const INNER = new Set(['data', 'result'])

/** D11 on one object: a failure flag at its top or one level down in `data` or `result`, or an error report. */
function objectHidesFailure(o: Record<string, unknown>): boolean {
  if (failureFlag(o) || errorReport(o)) return true
  for (const inner of [o.data, o.result]) if (isObject(inner) && failureFlag(inner)) return true
  return false
}

/** A JSON string token's value, or undefined when `raw` is not one. */
function stringToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.charCodeAt(0) !== 0x22) return undefined
  try {
    return JSON.parse(raw) as string
  } catch {
    return undefined
  }
}

/** {@link failureFlag} read from member spans: true when a member may be a flag (never false when the parsed object's would be true). */
function mayFlag(text: string, m: Map<string, Span> | undefined): boolean {
  if (m === undefined) return false
  if (spanText(text, m.get('success')) === 'false' || spanText(text, m.get('ok')) === 'false') return true
  const status = stringToken(spanText(text, m.get('status')))
  return status === 'error' || status === 'failed'
}

/**
 * True when a JSON object text may hide a failure, read from its members' spans (json-members.ts)
 * instead of a parse: a flag member, a flag one level down in `data` or `result`, or an `error`
 * member holding a string or an object beside nothing but {@link ERROR_COMPANIONS} members,
 * `valid` and the HTTP status members. Never false where {@link objectHidesFailure} of the parsed
 * text is true; a true answer is confirmed by the parse.
 */
function membersMayHideFailure(text: string, read: ObjectMembers): boolean {
  const m = read.members
  if (mayFlag(text, m) || mayFlag(text, read.nested.get('data')) || mayFlag(text, read.nested.get('result'))) return true
  const e = spanText(text, m.get('error'))
  if (e === undefined || (e.charCodeAt(0) !== 0x22 && e.charCodeAt(0) !== 0x7b)) return false
  for (const k of m.keys()) if (k !== 'error' && k !== 'valid' && k !== 'status' && k !== 'statusCode' && !ERROR_COMPANIONS.has(k)) return false
  return true
}

/**
 * D11: true when a `tools/call` result hides a failure: `structuredContent`, or the single text
 * content parsed as a JSON object, carries `success: false`, `ok: false` or
 * `status: "error" | "failed"` at the top level or one level down in `data` or `result`, or is at
 * its top level an error report with no result beside it ({@link errorReport}).
 * Plain text, invalid JSON, arrays and `error: null` are never flagged.
 *
 * A JSON text item is read without parsing it first (core/jsonrpc/json-members.ts: its members'
 * spans in one linear pass), so a 100 KB JSON text costs a scan, not a value tree; only a text
 * whose members may flag a failure is parsed, to confirm. A text that nests arrays and objects
 * deeper than `maxDepth` is not parsed at all and never flagged (the bound every JSON message of
 * the edge has, `MAX_JSON_DEPTH`: `JSON.parse` of 500,000 nested brackets took 290 ms).
 * @param result the `result` of a `tools/call` response
 * @param maxDepth the deepest nesting of a text item read as JSON (default {@link DEFAULT_MAX_JSON_DEPTH})
 */
export function hidesFailure(result: Record<string, unknown>, maxDepth = DEFAULT_MAX_JSON_DEPTH): boolean {
  if (isObject(result.structuredContent) && objectHidesFailure(result.structuredContent)) return true
  const content = result.content
  if (!Array.isArray(content) || content.length !== 1) return false
  const c = content[0]
  if (!isObject(c) || c.type !== 'text' || typeof c.text !== 'string') return false
  const t = c.text.trim()
  if (!t.startsWith('{') || !t.endsWith('}')) return false
  const read = objectMembers(t, INNER)
  if (read === null || !membersMayHideFailure(t, read) || read.deepest > maxDepth) return false
  let o: unknown
  try {
    o = JSON.parse(t)
  } catch {
    return false // not JSON: prose is never flagged
  }
  return isObject(o) && objectHidesFailure(o)
}

/** Options that change grading (docs/design.md §8). */
export interface GradeOptions {
  hiddenFailures: boolean
  /** The deepest nesting of a JSON text item read for a hidden failure (`MAX_JSON_DEPTH`; default {@link DEFAULT_MAX_JSON_DEPTH}). */
  maxJsonDepth?: number
  /** The POST's request id: a result the edge marks isError carries it as its classification's `correlationId` (jsonrpc/edge-failure.ts). */
  correlationId?: string
}

/** The outcome for one response message. `text` is set only when the edge rewrote it. */
export interface GradedResponse {
  grade: Grade
  code?: number
  isError?: boolean
  text?: string
}

/**
 * True when `msg` is a JSON-RPC 2.0 response object (JSON-RPC 2.0 §5): `jsonrpc: "2.0"`, an `id`
 * member, and a `result` or an `error` object with a numeric `code`. `"error": null` next to a
 * result counts as no error (D10). Anything else in a reply is "not JSON-RPC" (D9 -31001).
 */
export function isResponse(msg: unknown): msg is Record<string, unknown> {
  if (!isObject(msg) || msg.jsonrpc !== '2.0' || !('id' in msg)) return false
  const err = msg.error
  if (err !== undefined && err !== null) return isObject(err) && typeof err.code === 'number'
  return 'result' in msg
}

/**
 * Grades one JSON-RPC response object from the origin.
 * @param msg the parsed response object; must satisfy {@link isResponse}
 * @param sourceText its exact text (the edge edits the text, never re-serialises the value, so
 *   ids, numbers past 2^53 and string escapes reach the client byte for byte)
 * @param req the request it answers
 * @returns the grade; `text` when the edge changed the message (D10 dropped result, D11 isError)
 */
export function gradeResponse(msg: Record<string, unknown>, sourceText: string, req: ForwardedRequest, opts: GradeOptions): GradedResponse {
  const err = msg.error
  if (err !== undefined && err !== null) {
    const code = isObject(err) && typeof err.code === 'number' ? err.code : undefined
    const out: GradedResponse = { grade: 'rpc_error', ...(code !== undefined ? { code } : {}) }
    if ('result' in msg) {
      // D10: error wins; the error object is kept as the origin wrote it, the result is dropped.
      const el = scanJsonText(sourceText).elements[0]
      out.text = responseText(idOf(msg, sourceText, req), 'error', memberText(sourceText, el, 'error') ?? JSON.stringify(err))
    } else if ('error' in msg && msg.id === null) {
      out.text = responseText(req.id, 'error', JSON.stringify(err))
    }
    return out
  }
  const result = msg.result
  const base: Grade = req.unvalidated ? 'unvalidated' : 'ok'
  let text: string | undefined
  if (err === null) {
    // D10: `"error": null` beside a result is a success; the member is dropped so strict
    // clients (which refuse a response carrying both members) accept it.
    text = resultText(idOf(msg, sourceText, req), result)
    const el = scanJsonText(sourceText).elements[0]
    const raw = memberText(sourceText, el, 'result')
    if (raw !== undefined) text = responseText(idOf(msg, sourceText, req), 'result', raw)
  }
  const withText = (g: GradedResponse): GradedResponse => (text !== undefined && g.text === undefined ? { ...g, text } : g)
  if (req.method !== 'tools/call' || !isObject(result)) return withText({ grade: base })
  if (result.resultType === 'input_required' || isObject(result.task)) return withText({ grade: base })
  if (result.isError === true) return withText({ grade: 'tool_error', isError: true })
  if (opts.hiddenFailures && hidesFailure(result, opts.maxJsonDepth)) {
    return { grade: 'tool_error', isError: true, text: markIsError(text ?? sourceText, opts.correlationId) }
  }
  return withText({ grade: base })
}

/**
 * Sets `isError: true` on the `result` of a response text by editing the text: an existing
 * `isError` value is replaced, otherwise the member is appended. Every other byte (content,
 * structuredContent, id) stays as the origin sent it (D11: "content is left exactly as it was").
 * With `correlationId`, the edge's classification `{ class: "capability", code: "hidden_failure", correlationId, agentGuidance }`
 * is added under `_meta["io.mcp-edge/failure"]` (jsonrpc/edge-failure.ts), the origin's `_meta` members kept.
 */
export function markIsError(responseText: string, correlationId?: string): string {
  const el = scanJsonText(responseText).elements[0]
  const span = el?.members?.get('result')
  if (!span) return responseText
  const resultRaw = responseText.slice(span.start, span.end)
  const inner = scanJsonText(resultRaw).elements[0]
  const flag = inner?.members?.get('isError')
  let fixed: string
  if (flag) fixed = resultRaw.slice(0, flag.start) + 'true' + resultRaw.slice(flag.end)
  else {
    const close = resultRaw.lastIndexOf('}')
    const empty = (inner?.members?.size ?? 0) === 0
    fixed = resultRaw.slice(0, close) + (empty ? '' : ',') + '"isError":true' + resultRaw.slice(close)
  }
  // The edge's classification beside the origin's own _meta members (which stay as they are).
  if (correlationId !== undefined)
    fixed = withEdgeFailure(fixed, {
      class: 'capability',
      code: 'hidden_failure',
      correlationId,
      agentGuidance: 'The tool reported a failure in its result; read it before calling again.',
    })
  return responseText.slice(0, span.start) + fixed + responseText.slice(span.end)
}

/** The reply's own id token (exact digits), falling back to the request's. */
function idOf(msg: Record<string, unknown>, sourceText: string, req: ForwardedRequest): RawId {
  if (typeof msg.id === 'number' && !Number.isSafeInteger(msg.id)) {
    const el = scanJsonText(sourceText).elements[0]
    return toRawId(msg.id, memberText(sourceText, el, 'id')) ?? req.id
  }
  return toRawId(msg.id) ?? req.id
}
