/**
 * @module check/cases/transport
 * The Streamable HTTP cases: a foreign `Origin` (`origin-header`), an unsupported protocol
 * version (`version-header`), and in 2026-07-28 a standard header that differs from the body
 * (`header-mismatch`) and a request without the envelope (`envelope-missing`); the judgements of
 * a notification's answer, of the content types (`content-type`), and of requests a server sends
 * to check on a response stream. Pure.
 */
import { hasVersionHeader, isModern, isObject, requestMessage, type ProtocolVersion } from '../edge-rules'
import { describeReply, hasStackTrace, replyFor, type HttpAnswer } from '../reply'
import { buildRequest, envelope, pass, transportSection } from './requests'
import type { CaseRow, Judged, Verdict, VersionCase } from './types'

/** The foreign origin check sends (a reserved `.invalid` name). */
const FOREIGN_ORIGIN = 'https://mcp-edge-check.invalid'

/** MCP Transports §Security Warning: a request from a foreign Origin is refused. */
export const originHeader: VersionCase = {
  name: 'origin-header',
  plan({ version: v }, nextId) {
    const id = nextId()
    const req = buildRequest(v, id, 'tools/list')
    return {
      case: 'origin-header',
      sent: `tools/list with Origin: ${FOREIGN_ORIGIN}`,
      body: req.body,
      headers: { ...req.headers, origin: FOREIGN_ORIGIN },
      ids: [id],
      judge: (a) => ({ verdict: judgeOrigin(a, v), answered: describeReply(a, id) }),
    }
  },
}

/** MCP Transports §Protocol Version Header (2025-06-18 on); 2026-07-28: header and envelope both claim the version. */
export const versionHeader: VersionCase = {
  name: 'version-header',
  // 2024-11-05 and 2025-03-26 define no version header, so an unknown one proves nothing there.
  versions: hasVersionHeader,
  plan({ version: v }, nextId) {
    const id = nextId()
    const modern = isModern(v)
    const req = buildRequest(v, id, 'tools/list')
    return {
      case: 'version-header',
      sent: modern ? 'tools/list claiming version 1999-01-01 (header and _meta)' : 'tools/list with MCP-Protocol-Version: 1999-01-01',
      body: modern ? JSON.stringify(requestMessage('tools/list', { _meta: envelope('1999-01-01') }, id)) : req.body,
      headers: { ...req.headers, 'mcp-protocol-version': '1999-01-01' },
      ids: [id],
      judge: (a) => ({ verdict: modern ? judgeUnsupportedVersion(a, id, v) : judgeVersionHeader(a, v), answered: describeReply(a, id) }),
    }
  },
}

/** MCP 2026-07-28 Streamable HTTP §Server Validation: `Mcp-Method` differing from the body gets 400 -32020. */
export const headerMismatch: VersionCase = {
  name: 'header-mismatch',
  versions: isModern,
  plan({ version: v }, nextId) {
    const id = nextId()
    return {
      case: 'header-mismatch',
      sent: 'tools/list with Mcp-Method: tools/call',
      body: buildRequest(v, id, 'tools/list').body,
      headers: { 'mcp-method': 'tools/call' },
      ids: [id],
      judge: (a) => ({
        verdict: judgeModernRefusal(
          a,
          id,
          -32020,
          'HTTP 400, error -32020 (HeaderMismatch), id echoed',
          `${transportSection(v, 'Server Validation')} (a standard header that differs from the body: 400 and -32020)`
        ),
        answered: describeReply(a, id),
      }),
    }
  },
}

/** MCP 2026-07-28 Basic §_meta: a request without the envelope gets 400 -32602. */
export const envelopeMissing: VersionCase = {
  name: 'envelope-missing',
  versions: isModern,
  plan({ version: v }, nextId) {
    const id = nextId()
    return {
      case: 'envelope-missing',
      sent: 'tools/list without the _meta envelope',
      body: JSON.stringify(requestMessage('tools/list', undefined, id)),
      headers: { 'mcp-method': 'tools/list' },
      ids: [id],
      judge: (a) => ({
        verdict: judgeModernRefusal(
          a,
          id,
          -32602,
          'HTTP 400, error -32602, id echoed',
          `MCP ${v} Basic §_meta (protocolVersion and clientCapabilities are required on every request: -32602, HTTP 400)`
        ),
        answered: describeReply(a, id),
      }),
    }
  },
}

/**
 * check declares no client capabilities, so a server that sends it sampling or elicitation
 * requests breaks the negotiated capabilities (MCP Lifecycle §Operation: both parties MUST
 * respect them; 2025-03-26: SHOULD). Turns a passing verdict into a failure naming the methods.
 */
export function withCapabilityRule(j: Judged, a: HttpAnswer, v: ProtocolVersion): Judged {
  if (!a.serverRequests?.length || j.verdict.grade === 'misleads') return j
  const methods = [...new Set(a.serverRequests)].join(', ')
  const why = isModern(v) ? `sent ${methods} on the response stream` : `sent ${methods} to a client that declared no such capability`
  const rule = isModern(v)
    ? `${transportSection(v, 'Receiving Messages')} (a server MUST NOT send requests on a response stream)`
    : `MCP ${v} Lifecycle §Operation (both parties respect the negotiated capabilities)`
  const verdict: Verdict =
    j.verdict.grade === 'fails' ? { ...j.verdict, why: `${j.verdict.why}; ${why}`, rule: `${j.verdict.rule}; ${rule}` } : { ...j.verdict, grade: 'fails', why, rule }
  return { verdict, answered: `${j.answered} (after ${methods})` }
}

/** MCP Transports item 4: an accepted notification gets 202 and no body; a refused one an HTTP error. */
export function judgeNotification(a: HttpAnswer, v: ProtocolVersion): Verdict {
  const expected = '202 Accepted, no body'
  const rule = `${transportSection(v, 'Sending Messages to the Server')} (item 4: an accepted notification gets 202 and no body); JSON-RPC 2.0 §4.1`
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
  const rule = `${transportSection(v, 'Security Warning')} (servers MUST validate the Origin header${strict ? '; an invalid Origin gets 403 Forbidden' : ''})`
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
  const rule = `${transportSection(v, 'Protocol Version Header')} (an invalid or unsupported MCP-Protocol-Version gets 400 Bad Request)`
  if (a.failure === 'budget') return { grade: 'info', expected, rule, why: 'not sent: the request budget was spent' }
  if (a.status === null || a.failure) return { grade: 'fails', expected, rule, why: 'no answer' }
  if (a.status === 400) return pass(expected, rule)
  if (a.status >= 500) return { grade: 'fails', expected, rule, why: `HTTP ${a.status}` }
  return { grade: 'fails', expected, rule, why: a.status < 300 ? `HTTP ${a.status}: served under a version it does not speak` : `HTTP ${a.status} instead of 400` }
}

/** MCP Transports item 5: a request is answered with `application/json` or `text/event-stream`. */
export function contentTypeRow(version: ProtocolVersion, answers: { sent: string; answer: HttpAnswer }[]): CaseRow {
  const rule = `${transportSection(version, 'Sending Messages to the Server')} (item 5: a request is answered with Content-Type application/json or text/event-stream)`
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
