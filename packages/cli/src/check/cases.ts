/**
 * @module check/cases
 * The cases of `mcp-edge check`: for one protocol version, the requests to send (pure data) and,
 * for each, the rule the specs set and the judgement of what the server answered. Pure; no I/O.
 * docs/check.md lists every case with its rule and source.
 *
 * Grades, worst first:
 * - `misleads`: an agent would be fooled: a failure reported as a success (a result without
 *   `isError`, or one hiding `success: false`), an internal error (-32603, HTTP 5xx) or a stack
 *   trace answering a client mistake, a rejected value echoed back, a result beside an error;
 * - `fails`: the answer breaks a MUST/SHOULD of JSON-RPC 2.0 or of the MCP revision, without
 *   fooling an agent (a wrong error code, an `isError` result where a protocol error is required);
 * - `pass`: what the specs require;
 * - `info`: a fact worth showing that is no fault (a version the server does not speak, a schema
 *   the edge cannot validate, a case not run).
 */
import { allowsBatches, invalidArgsAsToolError, isModern, isObject, META_VERSION_KEY, requestMessage, type ProtocolVersion } from './edge-rules'
import { describeHttp, describeReply, echoes, hasStackTrace, replyFor, type HttpAnswer, type Reply } from './reply'
import type { Generated } from './arguments'
import { requiredNames, wrongTypeArguments } from './arguments'
import type { ListedTool, SchemaReport } from './schemas'

/** Grades of a case, worst first. */
export type CheckGrade = 'misleads' | 'fails' | 'pass' | 'info'

/** The order rows are shown in: misleading rows first. */
export const GRADE_ORDER: readonly CheckGrade[] = ['misleads', 'fails', 'pass', 'info']

/** Case names (docs/check.md has one section per name). */
export type CaseName =
  | 'handshake'
  | 'tools-list'
  | 'schema'
  | 'parse-error'
  | 'invalid-request'
  | 'notification'
  | 'unknown-tool'
  | 'batch'
  | 'origin-header'
  | 'version-header'
  | 'content-type'
  | 'header-mismatch'
  | 'envelope-missing'
  | 'missing-required'
  | 'wrong-type'
  | 'arguments-not-object'
  | 'valid-call'

/** The judgement of one case. */
export interface Verdict {
  grade: CheckGrade
  /** What the specs require, in a few words. */
  expected: string
  /** The rule's source: spec and section, e.g. "JSON-RPC 2.0 §5.1". */
  rule: string
  /** Why this grade (empty for a plain pass). */
  why: string
}

/** One row of the report. */
export interface CaseRow extends Verdict {
  /** Stable across runs and targets: `<version> <tool or *> <case>` (rows of --through are paired by it). */
  id: string
  version: ProtocolVersion
  case: CaseName
  tool?: string
  /** What was sent, in a few words. */
  sent: string
  /** What the server answered, one line (server text cut and stripped of control characters). */
  answered: string
  /** HTTP status of the answer, when there was one. */
  status?: number | null
}

/** One request to send and how to judge its answer. */
export interface PlannedCase {
  case: CaseName
  tool?: string
  sent: string
  /** The exact body text to POST. */
  body: string
  /** Extra request headers (lower-case names; they replace the defaults of the same name). */
  headers?: Record<string, string>
  /** Request ids whose responses end the wait (empty for a notification). */
  ids: (string | number)[]
  judge(answer: HttpAnswer): { verdict: Verdict; answered: string }
}

/** A tool together with the edge's reading of it and the valid arguments check built. */
export interface ToolUnderCheck {
  tool: ListedTool
  schema: SchemaReport
  valid: Generated
}

/** Inputs of {@link planCases}. */
export interface PlanContext {
  version: ProtocolVersion
  tools: ToolUnderCheck[]
  /** Tools marked safe to call with valid arguments (`--call`, `--call-all`). */
  callable: ReadonlySet<string>
  /** A unique string placed in rejected argument values, to find echoes. */
  canary: string
  /** First request id to use (ids are numbers counting up). */
  firstId: number
}

/** A name no server lists (the unknown-tool case). */
export const UNKNOWN_TOOL_NAME = 'mcp_edge_check_unknown_tool'

/** The `clientInfo` check sends in the 2026-07-28 envelope. */
export const CLIENT_INFO = { name: 'mcp-edge-check', version: '1' }

/**
 * The 2026-07-28 per-request envelope (`params._meta`; MCP 2026-07-28 Basic §_meta: the protocol
 * version and the client capabilities are required on every request). check declares no capabilities.
 */
export function envelope(version: string): Record<string, unknown> {
  return { [META_VERSION_KEY]: version, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': CLIENT_INFO }
}

/** A request body and the headers it needs in `v`. */
export interface BuiltRequest {
  body: string
  /** Standard headers of 2026-07-28 (`mcp-method`, `mcp-name`); none before. */
  headers: Record<string, string>
}

/**
 * Builds a JSON-RPC request for version `v`. From 2026-07-28 on it carries the envelope in
 * `params._meta` and the standard headers `Mcp-Method` and, for `tools/call`, `Mcp-Name`
 * (MCP 2026-07-28 Streamable HTTP §Standard Request Headers); `Mcp-Name` is left out when the
 * tool name is not a plain header value (check never needs the Base64 form: its own names are ASCII).
 */
export function buildRequest(v: ProtocolVersion, id: string | number, method: string, params?: Record<string, unknown>): BuiltRequest {
  if (!isModern(v)) return { body: JSON.stringify(requestMessage(method, params, id)), headers: {} }
  const withMeta = { ...(params ?? {}), _meta: envelope(v) }
  const headers: Record<string, string> = { 'mcp-method': method }
  const name = params?.name
  if (method === 'tools/call' && typeof name === 'string' && /^[\x21-\x7e]+$/.test(name)) headers['mcp-name'] = name
  return { body: JSON.stringify(requestMessage(method, withMeta, id)), headers }
}

const rpc = (v: ProtocolVersion, id: string | number, method: string, params?: Record<string, unknown>) => buildRequest(v, id, method, params)

const tools = (v: ProtocolVersion, section: string) => `MCP ${v} Server Tools §${section}`
/** A section of the transport spec: "Transports" up to 2025-11-25, the "Streamable HTTP" page from 2026-07-28 on. */
const transports = (v: ProtocolVersion, section: string) => (isModern(v) ? `MCP ${v} Streamable HTTP §${section}` : `MCP ${v} Transports §${section}`)

/** What check looks for in every answer to a client mistake, worst first. */
interface MistakeSpec {
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

const pass = (expected: string, rule: string, why = ''): Verdict => ({ grade: 'pass', expected, rule, why })

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
    misleading.push(r.hidesFailure ? 'the refusal is hidden in a result without isError (success: false or the like)' : 'reported as a success: a result without isError')
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

function judged(answer: HttpAnswer, id: string | number | null, verdict: Verdict) {
  return { verdict, answered: describeReply(answer, id) }
}

/** The two argument cases' rule for a version (SEP-1303 moved them to `isError` in 2025-11-25). */
function argumentSpec(v: ProtocolVersion, canary?: string): MistakeSpec {
  if (invalidArgsAsToolError(v)) {
    return {
      expected: 'an isError result naming the problem',
      rule: `${tools(v, 'Error Handling')} (input validation errors are tool execution errors; SEP-1303)`,
      codes: [],
      isErrorOk: true,
      ...(canary !== undefined ? { canary } : {}),
    }
  }
  return {
    expected: 'JSON-RPC error -32602, or an isError result',
    rule: `${tools(v, 'Error Handling')} (invalid arguments: a protocol error; invalid input data: an isError result)`,
    codes: [-32602],
    isErrorOk: true,
    ...(canary !== undefined ? { canary } : {}),
  }
}

/**
 * Judges a call with valid arguments (only for tools marked safe): the result must say honestly
 * whether it failed (MCP Server Tools §Error Handling: tool errors are reported with
 * `isError: true`; the edge's D11 rule, docs/grading.md), and match the tool's `outputSchema`
 * (MCP 2025-06-18+ Server Tools §Output Schema).
 */
export function judgeValidCall(answer: HttpAnswer, id: number, v: ProtocolVersion, t: ToolUnderCheck): Verdict {
  const errRule = `${tools(v, 'Error Handling')} (a tool's failure is a result with isError: true); docs/design.md D11 (hidden failures get isError)`
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
  if (r.hidesFailure) return v_('misleads', 'a failure reported as a success: the result says success: false (or the like) without isError: true')
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
    const rule = `${tools(v, 'Output Schema')} (servers MUST return structuredContent conforming to outputSchema)`
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

/**
 * The requests of every case for one protocol version, in the order they are sent: the
 * transport cases, then per tool the argument cases, then the valid calls of the tools marked
 * safe, then (2025-03-26 only) the batch.
 */
export function planCases(ctx: PlanContext): PlannedCase[] {
  const v = ctx.version
  let nextId = ctx.firstId
  const id = () => nextId++
  const out: PlannedCase[] = []

  const parseId = id()
  out.push({
    case: 'parse-error',
    sent: 'a body that is not JSON (cut-off tools/list)',
    body: rpc(v, parseId, 'tools/list').body.slice(0, -1),
    headers: rpc(v, parseId, 'tools/list').headers,
    ids: [],
    judge: (a) =>
      judged(
        a,
        null,
        judgeMistake(a, null, {
          expected: 'JSON-RPC error -32700, id null',
          rule: 'JSON-RPC 2.0 §5.1 (-32700 Parse error); §5 (id null when it cannot be read)',
          codes: [-32700],
          isErrorOk: false,
        })
      ),
  })

  const invalidId = id()
  out.push({
    case: 'invalid-request',
    sent: 'a request whose method is a number',
    body: JSON.stringify({ ...requestMessage('tools/list', isModern(v) ? { _meta: envelope(v) } : undefined, invalidId), method: 42 }),
    ids: [invalidId],
    judge: (a) =>
      judged(
        a,
        invalidId,
        judgeMistake(a, invalidId, {
          expected: 'JSON-RPC error -32600',
          rule: 'JSON-RPC 2.0 §4 (method is a String); §5.1 (-32600 Invalid Request)',
          codes: [-32600],
          isErrorOk: false,
        })
      ),
  })

  out.push({
    case: 'notification',
    sent: 'notifications/cancelled for an unknown request',
    body: JSON.stringify(requestMessage('notifications/cancelled', { requestId: 'mcp-edge-check-none', reason: 'mcp-edge check', ...(isModern(v) ? { _meta: envelope(v) } : {}) })),
    ids: [],
    judge: (a) => ({ verdict: judgeNotification(a, v), answered: describeHttp(a) + (a.body !== 'empty' ? `: ${a.messages.length} message(s)` : '') }),
  })

  const unknownId = id()
  out.push({
    case: 'unknown-tool',
    sent: `tools/call ${UNKNOWN_TOOL_NAME}`,
    ...rpc(v, unknownId, 'tools/call', { name: UNKNOWN_TOOL_NAME, arguments: {} }),
    ids: [unknownId],
    judge: (a) =>
      judged(
        a,
        unknownId,
        judgeMistake(a, unknownId, {
          expected: 'JSON-RPC error -32602 (unknown tool)',
          rule: `${tools(v, 'Error Handling')} (unknown tools are protocol errors, example -32602)`,
          codes: [-32602],
          isErrorOk: false,
        })
      ),
  })

  const originId = id()
  out.push({
    case: 'origin-header',
    sent: 'tools/list with Origin: https://mcp-edge-check.invalid',
    body: rpc(v, originId, 'tools/list').body,
    headers: { ...rpc(v, originId, 'tools/list').headers, origin: 'https://mcp-edge-check.invalid' },
    ids: [originId],
    judge: (a) => ({ verdict: judgeOrigin(a, v), answered: describeReply(a, originId) }),
  })

  if (v !== '2025-03-26') {
    const versionId = id()
    const modern = isModern(v)
    out.push({
      case: 'version-header',
      sent: modern ? 'tools/list claiming version 1999-01-01 (header and _meta)' : 'tools/list with MCP-Protocol-Version: 1999-01-01',
      body: modern ? JSON.stringify(requestMessage('tools/list', { _meta: envelope('1999-01-01') }, versionId)) : rpc(v, versionId, 'tools/list').body,
      headers: { ...rpc(v, versionId, 'tools/list').headers, 'mcp-protocol-version': '1999-01-01' },
      ids: [versionId],
      judge: (a) => ({ verdict: modern ? judgeUnsupportedVersion(a, versionId, v) : judgeVersionHeader(a, v), answered: describeReply(a, versionId) }),
    })
  }

  if (isModern(v)) {
    const mismatchId = id()
    out.push({
      case: 'header-mismatch',
      sent: 'tools/list with Mcp-Method: tools/call',
      body: rpc(v, mismatchId, 'tools/list').body,
      headers: { 'mcp-method': 'tools/call' },
      ids: [mismatchId],
      judge: (a) => ({
        verdict: judgeModernRefusal(
          a,
          mismatchId,
          -32020,
          'HTTP 400, error -32020 (HeaderMismatch), id echoed',
          `${transports(v, 'Server Validation')} (a standard header that differs from the body: 400 and -32020)`
        ),
        answered: describeReply(a, mismatchId),
      }),
    })
    const envelopeId = id()
    out.push({
      case: 'envelope-missing',
      sent: 'tools/list without the _meta envelope',
      body: JSON.stringify(requestMessage('tools/list', undefined, envelopeId)),
      headers: { 'mcp-method': 'tools/list' },
      ids: [envelopeId],
      judge: (a) => ({
        verdict: judgeModernRefusal(
          a,
          envelopeId,
          -32602,
          'HTTP 400, error -32602, id echoed',
          `MCP ${v} Basic §_meta (protocolVersion and clientCapabilities are required on every request: -32602, HTTP 400)`
        ),
        answered: describeReply(a, envelopeId),
      }),
    })
  }

  for (const t of ctx.tools) {
    const name = t.tool.name
    const valid = t.valid.ok && isObject(t.valid.value) ? t.valid.value : {}
    const required = requiredNames(t.tool.inputSchema)
    if (required.length > 0) {
      const missing = required[0]!
      const { [missing]: _left, ...args } = valid
      const mid = id()
      out.push({
        case: 'missing-required',
        tool: name,
        sent: `tools/call without required "${missing}"`,
        ...rpc(v, mid, 'tools/call', { name, arguments: args }),
        ids: [mid],
        judge: (a) => judged(a, mid, withSecurityRule(judgeMistake(a, mid, argumentSpec(v)), v)),
      })
    }
    const wrong = wrongTypeArguments(t.tool.inputSchema, valid, ctx.canary)
    if (wrong) {
      const wid = id()
      out.push({
        case: 'wrong-type',
        tool: name,
        sent: `tools/call with "${wrong.property}" of a wrong type`,
        ...rpc(v, wid, 'tools/call', { name, arguments: wrong.args }),
        ids: [wid],
        judge: (a) => judged(a, wid, withSecurityRule(judgeMistake(a, wid, argumentSpec(v, ctx.canary)), v)),
      })
    }
    const nid = id()
    out.push({
      case: 'arguments-not-object',
      tool: name,
      sent: 'tools/call with arguments a string',
      ...rpc(v, nid, 'tools/call', { name, arguments: ctx.canary }),
      ids: [nid],
      judge: (a) =>
        judged(
          a,
          nid,
          judgeMistake(a, nid, {
            expected: 'JSON-RPC error -32602',
            rule: `MCP ${v} schema CallToolRequest (arguments is an object); JSON-RPC 2.0 §5.1 (-32602 Invalid params)`,
            codes: [-32602],
            isErrorOk: false,
            isErrorRule: `${tools(v, 'Error Handling')} (a request that fails the CallToolRequest schema is a protocol error)`,
            canary: ctx.canary,
          })
        ),
    })
  }

  for (const t of ctx.tools) {
    if (!ctx.callable.has(t.tool.name) || !t.valid.ok) continue
    const cid = id()
    const args = t.valid.value
    out.push({
      case: 'valid-call',
      tool: t.tool.name,
      sent: `tools/call with ${JSON.stringify(args).length > 40 ? 'generated valid arguments' : JSON.stringify(args)}`,
      ...rpc(v, cid, 'tools/call', { name: t.tool.name, arguments: args }),
      ids: [cid],
      judge: (a) => judged(a, cid, judgeValidCall(a, cid, v, t)),
    })
  }

  if (allowsBatches(v)) {
    const [a, b, c] = [id(), id(), id()]
    const first = ctx.tools[0]?.tool.name
    const bad = first !== undefined ? { name: first, arguments: ctx.canary } : { name: UNKNOWN_TOOL_NAME }
    out.push({
      case: 'batch',
      sent: `a batch: ping, tools/list, tools/call ${first !== undefined ? 'with arguments a string' : 'of an unknown tool'}`,
      body: JSON.stringify([JSON.parse(rpc(v, a, 'ping').body), JSON.parse(rpc(v, b, 'tools/list').body), JSON.parse(rpc(v, c, 'tools/call', bad).body)]),
      ids: [a, b, c],
      judge: (ans) => judgeBatch(ans, [a, b, c], ctx.canary),
    })
  }
  return out.map((c) => ({ ...c, judge: (a: HttpAnswer) => withCapabilityRule(c.judge(a), a, v) }))
}

/**
 * check declares no client capabilities, so a server that sends it sampling or elicitation
 * requests breaks the negotiated capabilities (MCP Lifecycle §Operation: both parties MUST
 * respect them; 2025-03-26: SHOULD). Turns a passing verdict into a failure naming the methods.
 */
function withCapabilityRule(j: { verdict: Verdict; answered: string }, a: HttpAnswer, v: ProtocolVersion): { verdict: Verdict; answered: string } {
  if (!a.serverRequests?.length || j.verdict.grade === 'misleads') return j
  const methods = [...new Set(a.serverRequests)].join(', ')
  const why = isModern(v) ? `sent ${methods} on the response stream` : `sent ${methods} to a client that declared no such capability`
  const rule = isModern(v)
    ? `${transports(v, 'Receiving Messages')} (a server MUST NOT send requests on a response stream)`
    : `MCP ${v} Lifecycle §Operation (both parties respect the negotiated capabilities)`
  const verdict: Verdict =
    j.verdict.grade === 'fails' ? { ...j.verdict, why: `${j.verdict.why}; ${why}`, rule: `${j.verdict.rule}; ${rule}` } : { ...j.verdict, grade: 'fails', why, rule }
  return { verdict, answered: `${j.answered} (after ${methods})` }
}

/** Adds the tool-input duty to the rule of a misleading argument verdict. */
function withSecurityRule(v: Verdict, version: ProtocolVersion): Verdict {
  return v.grade === 'misleads' ? { ...v, rule: `${v.rule}; ${tools(version, 'Security Considerations')} (servers MUST validate all tool inputs)` } : v
}

/** MCP Transports item 4: an accepted notification gets 202 and no body; a refused one an HTTP error. */
export function judgeNotification(a: HttpAnswer, v: ProtocolVersion): Verdict {
  const expected = '202 Accepted, no body'
  const rule = `${transports(v, 'Sending Messages to the Server')} (item 4: an accepted notification gets 202 and no body); JSON-RPC 2.0 §4.1`
  if (a.failure === 'budget') return { grade: 'info', expected, rule, why: 'not sent: the request budget was spent' }
  if (a.status === null || a.failure) return { grade: 'fails', expected, rule, why: 'no answer' }
  if (a.status >= 500) return { grade: 'fails', expected, rule, why: `HTTP ${a.status}` }
  if (a.messages.some((m) => isObject(m) && ('result' in m || 'error' in m) && a.status! < 300))
    return { grade: 'fails', expected, rule, why: 'a JSON-RPC response to a notification' }
  if (a.status >= 400) return pass(expected, rule, `refused with HTTP ${a.status} (allowed for input the server does not accept)`)
  if (a.status !== 202) return { grade: 'fails', expected, rule, why: `HTTP ${a.status} instead of 202` }
  if (a.body !== 'empty') return { grade: 'fails', expected, rule, why: '202 with a body' }
  return pass(expected, rule)
}

/** MCP Transports §Security Warning: Origin is validated; 2025-11-25 fixes 403 for an invalid one. */
export function judgeOrigin(a: HttpAnswer, v: ProtocolVersion): Verdict {
  const strict = v >= '2025-11-25'
  const expected = strict ? 'HTTP 403' : 'an HTTP 4xx (403 recommended)'
  const rule = `${transports(v, 'Security Warning')} (servers MUST validate the Origin header${strict ? '; an invalid Origin gets 403 Forbidden' : ''})`
  if (a.failure === 'budget') return { grade: 'info', expected, rule, why: 'not sent: the request budget was spent' }
  if (a.status === null || a.failure) return { grade: 'fails', expected, rule, why: 'no answer' }
  if (a.status === 403 || (!strict && a.status >= 400 && a.status < 500)) return pass(expected, rule)
  if (a.status >= 400 && a.status < 500) return { grade: 'fails', expected, rule, why: `HTTP ${a.status} instead of 403` }
  return { grade: 'fails', expected, rule, why: `HTTP ${a.status}: a request from a foreign Origin was served (DNS rebinding)` }
}

/**
 * A 2026-07-28 refusal with a fixed status and code: HTTP 400 and the JSON-RPC error `code`,
 * with the request id echoed (MCP 2026-07-28 Streamable HTTP §Server Validation, Basic §_meta).
 * A result means the server did not check: it fails the spec (nothing is reported as done that was not asked).
 */
export function judgeModernRefusal(a: HttpAnswer, id: number, code: number, expected: string, rule: string): Verdict {
  const f = (why: string): Verdict => ({ grade: 'fails', expected, rule, why })
  if (a.failure === 'budget') return { grade: 'info', expected, rule, why: 'not sent: the request budget was spent' }
  if (a.status === null || a.failure) return f('no answer')
  const r = replyFor(a, id)
  if (a.status >= 500 || (r.kind === 'error' && r.code === -32603)) return { grade: 'misleads', expected, rule, why: 'an internal error for a client mistake' }
  if (hasStackTrace(a)) return { grade: 'misleads', expected, rule, why: 'a stack trace in the answer' }
  if (r.kind === 'result') return f('served as if nothing were wrong')
  if (r.kind === 'none') return f(`HTTP ${a.status} without a JSON-RPC error`)
  const why = [
    a.status !== 400 ? `HTTP ${a.status} instead of 400` : '',
    r.code !== code ? `error ${r.code ?? '(no code)'} instead of ${code}` : '',
    r.idless ? 'the id is not echoed' : '',
  ].filter(Boolean)
  return why.length ? f(why.join('; ')) : pass(expected, rule)
}

/** MCP 2026-07-28 Versioning §Protocol Version Negotiation: an unsupported version gets 400 -32022 with `data.supported`. */
export function judgeUnsupportedVersion(a: HttpAnswer, id: number, v: ProtocolVersion): Verdict {
  const expected = 'HTTP 400, error -32022 with data.supported'
  const rule = `MCP ${v} Versioning §Protocol Version Negotiation (a version the server does not implement: 400 and UnsupportedProtocolVersionError -32022 listing the supported versions)`
  const base = judgeModernRefusal(a, id, -32022, expected, rule)
  if (base.grade !== 'pass') return base
  const r = replyFor(a, id)
  const data = r.kind === 'error' ? r.data : undefined
  if (!isObject(data) || !Array.isArray(data.supported)) return { grade: 'fails', expected, rule, why: 'data.supported is missing' }
  return base
}

/** MCP Transports §Protocol Version Header: an invalid or unsupported version gets 400. */
export function judgeVersionHeader(a: HttpAnswer, v: ProtocolVersion): Verdict {
  const expected = 'HTTP 400'
  const rule = `${transports(v, 'Protocol Version Header')} (an invalid or unsupported MCP-Protocol-Version gets 400 Bad Request)`
  if (a.failure === 'budget') return { grade: 'info', expected, rule, why: 'not sent: the request budget was spent' }
  if (a.status === null || a.failure) return { grade: 'fails', expected, rule, why: 'no answer' }
  if (a.status === 400) return pass(expected, rule)
  if (a.status >= 500) return { grade: 'fails', expected, rule, why: `HTTP ${a.status}` }
  return { grade: 'fails', expected, rule, why: a.status < 300 ? `HTTP ${a.status}: served under a version it does not speak` : `HTTP ${a.status} instead of 400` }
}

/**
 * JSON-RPC 2.0 §6 and MCP 2025-03-26 Basic §Batching: a batch of three with one bad element gets
 * one response per request: two results and one error for the bad element.
 */
export function judgeBatch(a: HttpAnswer, ids: [number, number, number], canary: string): { verdict: Verdict; answered: string } {
  const expected = 'one response per element: 2 results, 1 error'
  const rule = 'JSON-RPC 2.0 §6 (a response per request); MCP 2025-03-26 Basic §Batching (servers MUST support receiving batches)'
  const replies: Reply[] = ids.map((i) => replyFor(a, i))
  const short = (r: Reply) => (r.kind === 'none' ? 'none' : r.kind === 'error' ? `error ${r.code ?? '?'}${r.idless ? ' id null' : ''}` : r.isError ? 'result isError' : 'result')
  const answered = a.status === null || a.failure ? describeHttp(a) : `${describeHttp(a)}: ${replies.map(short).join(', ')}`
  const v = (grade: CheckGrade, why: string): { verdict: Verdict; answered: string } => ({ verdict: { grade, expected, rule, why }, answered })
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

/** The handshake row: what `initialize` negotiated (MCP Lifecycle §Version Negotiation). */
export function handshakeRow(version: ProtocolVersion, outcome: { negotiated?: string; server?: string; error?: string; sessionId?: string }): CaseRow {
  const modern = isModern(version)
  const rule = modern
    ? `MCP ${version} Versioning §Protocol Version Negotiation; MCP ${version} Server Discover (servers MUST implement server/discover)`
    : `MCP ${version} Lifecycle §Version Negotiation (the server answers the requested version when it supports it, else another it supports)`
  const sent = modern ? 'server/discover (official SDK v2 client, auto negotiation)' : `initialize offering ${version} (official SDK client)`
  const base = { id: `${version} * handshake`, version, case: 'handshake' as const, sent, rule }
  if (outcome.error !== undefined)
    return {
      ...base,
      grade: 'fails',
      expected: modern ? 'a DiscoverResult, or a legacy handshake' : 'an InitializeResult',
      answered: outcome.error,
      why: 'the official SDK client could not complete the handshake',
    }
  const sid = outcome.sessionId
  if (sid !== undefined && !/^[\x21-\x7e]+$/.test(sid)) {
    return {
      ...base,
      grade: 'fails',
      expected: 'a session id of visible ASCII',
      answered: `session id of ${sid.length} characters`,
      rule: `${transports(version, 'Session Management')} (the session id MUST be visible ASCII, 0x21-0x7E)`,
      why: 'the session id holds other characters',
    }
  }
  const answered = `protocolVersion ${outcome.negotiated}${outcome.server ? `, server ${outcome.server}` : ''}${sid !== undefined ? ', session' : ', no session'}`
  if (outcome.negotiated !== version)
    return {
      ...base,
      grade: 'info',
      expected: `protocolVersion ${version}, or another version it supports`,
      answered,
      why: `the server does not speak ${version}; its cases are skipped`,
    }
  return { ...base, grade: 'pass', expected: `protocolVersion ${version}`, answered, why: '' }
}

/** The row for one listed tool's inputSchema: its dialect, whether it compiles, whether the edge can validate it. */
export function schemaRow(version: ProtocolVersion, t: ListedTool, s: SchemaReport): CaseRow {
  const base = { id: `${version} ${t.name} schema`, version, case: 'schema' as const, tool: t.name, sent: 'tools/list' }
  const answered = `dialect ${s.dialect ?? 'unsupported'}${s.outputProblem === null && t.outputSchema !== undefined ? ', outputSchema' : ''}`
  const shapeRule = `MCP ${version} schema Tool.inputSchema (a JSON Schema object with type "object")`
  const dialectRule = version >= '2025-11-25' ? `MCP ${version} Basic §JSON Schema Usage (schemas MUST be valid in their dialect; default 2020-12)` : shapeRule
  if (s.shapeProblem) return { ...base, grade: 'fails', expected: 'type: "object"', answered, rule: shapeRule, why: s.shapeProblem }
  if (s.compileProblem)
    return {
      ...base,
      grade: 'fails',
      expected: 'a schema valid in its dialect',
      answered,
      rule: dialectRule,
      why: `neither of the edge's engines compiles it: ${s.compileProblem}`,
    }
  if (s.edgeProblem)
    return {
      ...base,
      grade: 'info',
      expected: 'a schema the edge validates',
      answered,
      rule: 'docs/design.md D8 (calls are forwarded unvalidated)',
      why: `the edge could not validate calls: ${s.edgeProblem}`,
    }
  if (s.outputProblem)
    return {
      ...base,
      grade: 'info',
      expected: 'an outputSchema the edge checks',
      answered,
      rule: 'docs/design.md D12',
      why: `the edge could not check results: ${s.outputProblem}`,
    }
  return { ...base, grade: 'pass', expected: 'a schema valid in its dialect', answered, rule: dialectRule, why: '' }
}

/** MCP Transports item 5: a request is answered with `application/json` or `text/event-stream`. */
export function contentTypeRow(version: ProtocolVersion, answers: { sent: string; answer: HttpAnswer }[]): CaseRow {
  const rule = `${transports(version, 'Sending Messages to the Server')} (item 5: a request is answered with Content-Type application/json or text/event-stream)`
  const withBody = answers.filter((x) => x.answer.status !== null && x.answer.body !== 'empty')
  const wrong = withBody.filter((x) => x.answer.body === 'other' && x.answer.status! < 300)
  const types = [...new Set(withBody.map((x) => (x.answer.contentType ?? 'none').split(';')[0]!.trim().toLowerCase()))]
  const base = {
    id: `${version} * content-type`,
    version,
    case: 'content-type' as const,
    sent: `${withBody.length} answers with a body`,
    expected: 'application/json or text/event-stream',
    rule,
    answered: types.join(', ').slice(0, 60) || 'no answers with a body',
  }
  if (wrong.length > 0) return { ...base, grade: 'fails', why: `${wrong.length} successful answer(s) of another type (first: ${wrong[0]!.sent})` }
  return { ...base, grade: 'pass', why: '' }
}
