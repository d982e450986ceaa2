/**
 * @module check/cases/rows
 * The rows that are not one planned request: the handshake, the tool list (every page), each
 * listed tool's schemas, a `--tool` the server does not list, and a `--call` tool for which no
 * valid arguments could be built. Pure.
 */
import { isModern, isObject, type ProtocolVersion } from '../edge-rules'
import { describeReply, replyFor, type HttpAnswer } from '../reply'
import type { ListedTool, SchemaReport } from '../schemas'
import { transportSection } from './requests'
import type { CaseRow } from './types'

/**
 * The handshake row of a server that answered 401: it needs an access token (MCP Authorization),
 * which is not a fault of the server; the row says so and how to give one, or, when one was sent
 * (`--token` or an `Authorization` `--header`), that the server refused it.
 * @param challenge the answer's `WWW-Authenticate` ('' when none; sanitised with the row)
 * @param tokenSent whether the handshake carried an `Authorization` header
 */
export function authorizationRow(version: ProtocolVersion, challenge: string, tokenSent = false): CaseRow {
  return {
    id: `${version} * handshake`,
    version,
    case: 'handshake',
    sent: isModern(version) ? 'server/discover (official SDK v2 client, auto negotiation)' : `initialize offering ${version} (official SDK client)`,
    rule: `MCP ${version} Authorization (a protected server answers HTTP 401 with WWW-Authenticate until the request carries a valid access token)`,
    grade: 'info',
    expected: 'an answer once authorized',
    answered: `HTTP 401: needs authorization${challenge ? ` (WWW-Authenticate: ${challenge})` : ' (no WWW-Authenticate)'}`,
    why: tokenSent
      ? 'the server refused the access token given (expired, revoked, for another resource or lacking a scope): give a valid one with --token <access token>'
      : "the server requires an OAuth access token: give one with --token <access token> (or --header 'Authorization: Bearer <access token>')",
  }
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
      rule: `${transportSection(version, 'Session Management')} (the session id MUST be visible ASCII, 0x21-0x7E)`,
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

/** What the pages of `tools/list` gave: the last page's answer and id, and the tools read from every page. */
export interface ToolListing {
  /** The last page's answer (undefined: no page was sent). */
  answer?: HttpAnswer
  /** The last page's request id. */
  id: number
  /** Tools with a string name, from every page. */
  tools: ListedTool[]
  /** The same tools as served (every member, for the tool digest), in order. */
  served: Record<string, unknown>[]
  /** Entries without a string name. */
  malformed: number
}

/**
 * The tools-list row: a ListToolsResult, each tool named (MCP Server Tools §Listing Tools); in
 * 2026-07-28 a complete result also carries `resultType`, `ttlMs` and `cacheScope` (Server
 * Utilities Caching §Cacheable Results).
 */
export function toolsListRow(version: ProtocolVersion, listing: ToolListing): CaseRow {
  const { answer, id, tools, malformed } = listing
  const reply = answer ? replyFor(answer, id) : { kind: 'none' as const }
  const ok = reply.kind === 'result' && !reply.isError
  const lr = reply.kind === 'result' && isObject(reply.result) ? reply.result : {}
  const hintProblem =
    !isModern(version) || !ok
      ? ''
      : lr.resultType !== 'complete'
        ? 'the result has no resultType "complete"'
        : !(Number.isInteger(lr.ttlMs) && (lr.ttlMs as number) >= 0) || (lr.cacheScope !== 'public' && lr.cacheScope !== 'private')
          ? 'the result lacks ttlMs (an integer >= 0) or cacheScope ("public" or "private")'
          : ''
  return {
    id: `${version} * tools-list`,
    version,
    case: 'tools-list',
    sent: 'tools/list (every page)',
    answered: ok ? `${tools.length} tools${malformed ? `, ${malformed} without a name` : ''}` : answer ? describeReply(answer, id) : 'not sent',
    status: answer?.status ?? null,
    grade: answer?.failure === 'budget' ? 'info' : ok && malformed === 0 && !hintProblem ? 'pass' : 'fails',
    expected: isModern(version) ? 'a ListToolsResult with resultType, ttlMs and cacheScope' : 'a ListToolsResult: tools, each with a name and an inputSchema',
    rule: `MCP ${version} Server Tools §Listing Tools; MCP ${version} schema ListToolsResult${isModern(version) ? `; MCP ${version} Server Utilities Caching §Cacheable Results (MUST carry ttlMs and cacheScope)` : ''}`,
    why: ok ? [malformed ? `${malformed} entries without a string name` : '', hintProblem].filter(Boolean).join('; ') : 'no tool list',
  }
}

/** The info row of a `--tool` name the server does not list. */
export function unlistedToolRow(version: ProtocolVersion, name: string): CaseRow {
  return {
    id: `${version} ${name} schema`,
    version,
    case: 'schema',
    tool: name,
    sent: 'tools/list',
    answered: 'not listed',
    grade: 'info',
    expected: 'a listed tool',
    rule: '--tool',
    why: 'the server does not list this tool',
  }
}

/** The info row of a tool marked safe to call for which no valid arguments could be built (`reason` says why). */
export function notCalledRow(version: ProtocolVersion, name: string, reason: string): CaseRow {
  return {
    id: `${version} ${name} valid-call`,
    version,
    case: 'valid-call',
    tool: name,
    sent: 'not sent',
    answered: 'not called',
    grade: 'info',
    expected: 'valid arguments',
    rule: 'docs/check.md (valid arguments)',
    why: `no valid arguments could be built: ${reason}`,
  }
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
