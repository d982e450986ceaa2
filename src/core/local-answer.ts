/**
 * @module core/local-answer
 * Every answer the edge gives without its origin's reply, as one tagged union ({@link LocalAnswer},
 * discriminated by `kind`), and the one mapping of it to the wire ({@link toWire}: HTTP status,
 * the JSON-RPC id answered, the response text, extra headers). The stages return these values; no
 * other code picks the status or the id of a local answer, so each rule below exists once:
 *
 * | kind        | stage                          | status          | id                      | code                   |
 * |-------------|--------------------------------|-----------------|-------------------------|------------------------|
 * | `transport` | HTTP checks (Host, Origin, ...) | its own (403..) | null                    | -32600                 |
 * | `body`      | the body as a whole (parse)    | 400             | null                    | -32700 or -32600       |
 * | `invalid`   | one message (classify)         | 400 or 200      | the message's, or null  | -32600 or -32601       |
 * | `protocol`  | version and standard headers   | its own (400)   | the request's, or null  | -32602, -32020, -32022 |
 * | `call`      | tools/call validation          | 200             | the request's           | -32602, -32603, none   |
 * | `access`    | the token check, per-tool scopes, RATE_LIMIT (guards/request/) | its own (401, 403, 429, 503) | null, or the request's | -32600, -32603, -31010, -31004 |
 * | `gateway`   | the origin could not answer    | 502             | null                    | -31001 or -31002       |
 * | `fault`     | an exception inside the edge   | 500             | null                    | -32603                 |
 *
 * Statuses follow MCP Streamable HTTP and docs/design.md (D2, D9, D13, D14, D18); ids follow
 * JSON-RPC 2.0 §5 (null when the request id could not be read) and D1. Pure; never throws.
 */
import { ErrorCode, errorText, NULL_ID, type RawId, type RpcError } from './jsonrpc/jsonrpc'
import { edgeResponse, type EdgeResponse } from './edge-response'

/**
 * The whole HTTP request is refused before its body is read (MCP transports "Security Warning",
 * "Sending Messages"; D13): 403 Host or Origin, 406 Accept, 413 body size, 415 Content-Type, 404 no
 * origin at that path, 405 a method the endpoint does not serve. Always -32600 with id null.
 */
export interface TransportRefusal {
  kind: 'transport'
  status: number
  message: string
  /** Extra response headers, e.g. `allow` on a 405. */
  headers?: Record<string, string>
}

/** The body as a whole is refused (D2): -32700 for bytes that are not JSON, -32600 for a batch that cannot be served. 400, id null. */
export interface BodyRefusal {
  kind: 'body'
  code: typeof ErrorCode.ParseError | typeof ErrorCode.InvalidRequest
  /** The whole message, e.g. `Parse error: the body could not be read as JSON`; never quotes the body. */
  message: string
}

/**
 * One message is not valid JSON-RPC, or not valid MCP (request/classify.ts; D3-D6, D15).
 * - `responseShaped`: it looked like a response (has `result` or `error`): answered with id null;
 * - `notification`: it had no id (an MCP-invalid notification): answered with id null, never
 *   forwarded; inside a batch it gets no entry at all (D15).
 * Status: 400 when the answer's id is null, else 200 (the error is about that id).
 */
export interface InvalidMessage {
  kind: 'invalid'
  id: RawId
  error: RpcError
  responseShaped: boolean
  notification: boolean
}

/**
 * A protocol-version or standard-header rule refuses the message (protocol/: era decision,
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`; D14, D18): its status (400)
 * and one JSON-RPC error for `id`.
 */
export interface ProtocolRefusal {
  kind: 'protocol'
  status: number
  id: RawId
  error: RpcError
}

/**
 * A `tools/call` answered locally (validation/tools-call.ts; D7, D8, SEP-1303): `text` is the
 * whole response, already written by jsonrpc/jsonrpc.ts (a -32602 or -32603 error, or an
 * `isError: true` result). The other fields are for the grade row.
 */
export interface CallAnswer {
  kind: 'call'
  id: RawId
  text: string
  tool?: string
  /** The JSON-RPC error code, absent for an `isError` result. */
  code?: number
  isError?: boolean
  /** Set when `tool` names no tool of the origin (counted as `_unknown` in metrics). */
  unknownTool?: boolean
}

/**
 * Access refused (docs/security.md): a missing or invalid bearer token (401, id null, before the
 * body is read), keys that could not be read (503), a tools/call whose tool needs a scope the
 * token lacks (403 for a single request), or a request over a `RATE_LIMIT` budget (429 with
 * `Retry-After`, guards/request/rate-budget.ts). Inside a batch only the element's error counts. `headers`
 * carries `WWW-Authenticate` (RFC 6750 §3) and `Retry-After`. (A filtered tool is answered as an
 * unknown tool, a {@link CallAnswer}.)
 */
export interface AccessDenial {
  kind: 'access'
  status: 401 | 403 | 429 | 503
  id: RawId
  error: RpcError
  headers?: Record<string, string>
  /** The tool of a refused tools/call, for the grade row. */
  tool?: string
}

/** The origin could not be asked (D9): -31002 after `ORIGIN_TIMEOUT_MS`, -31001 for anything else (unreachable, reset). 502, id null. */
export interface GatewayFault {
  kind: 'gateway'
  code: typeof ErrorCode.OriginUnavailable | typeof ErrorCode.OriginTimeout
}

/** An exception no stage turned into an answer: 500 -32603 without any detail (docs/design.md §5). */
export interface EdgeFault {
  kind: 'fault'
}

/** Every answer the edge gives on its own; see the module comment for the table. */
export type LocalAnswer = TransportRefusal | BodyRefusal | InvalidMessage | ProtocolRefusal | CallAnswer | AccessDenial | GatewayFault | EdgeFault

/** A {@link LocalAnswer} as it goes on the wire. */
export interface WireAnswer {
  status: number
  /** The id the response text answers (null id: {@link NULL_ID}). */
  id: RawId
  /** The JSON-RPC response, as text. */
  text: string
  /** The JSON-RPC error code, absent for a result. */
  code?: number
  /** Extra headers besides `content-type` (e.g. `allow`), or none. */
  headers?: Record<string, string>
}

/**
 * A gateway error for one id (D9): `{ code: -31001 | -31002 | -31003, message, data: { source:
 * "edge", originStatus? } }`. Never the origin's body, never an isError result.
 */
export function gatewayError(code: number, originStatus?: number): RpcError {
  const message =
    code === ErrorCode.OriginTimeout
      ? 'Origin timeout: the tool server did not answer in time'
      : code === ErrorCode.OriginNoAnswer
        ? 'Origin never answered this request'
        : 'Origin unavailable or sent an invalid response'
  return { code, message, data: { source: 'edge', ...(originStatus !== undefined ? { originStatus } : {}) } }
}

function wire(status: number, id: RawId, error: RpcError, headers?: Record<string, string>): WireAnswer {
  const w: WireAnswer = { status, id, text: errorText(id, error), code: error.code }
  if (headers) w.headers = headers
  return w
}

/**
 * The wire form of a local answer: the one place that picks its status and id (table in the
 * module comment). The `switch` is exhaustive: a new kind does not type-check until it has a row.
 */
export function toWire(a: LocalAnswer): WireAnswer {
  switch (a.kind) {
    case 'transport':
      return wire(a.status, NULL_ID, { code: ErrorCode.InvalidRequest, message: a.message }, a.headers)
    case 'body':
      return wire(400, NULL_ID, { code: a.code, message: a.message })
    case 'invalid': {
      const id = a.responseShaped || a.notification ? NULL_ID : a.id
      return wire(id === NULL_ID ? 400 : 200, id, a.error)
    }
    case 'protocol':
      return wire(a.status, a.id, a.error)
    case 'call': {
      const w: WireAnswer = { status: 200, id: a.id, text: a.text }
      if (a.code !== undefined) w.code = a.code
      return w
    }
    case 'access':
      return wire(a.status, a.id, a.error, a.headers)
    case 'gateway':
      return wire(502, NULL_ID, gatewayError(a.code))
    case 'fault':
      return wire(500, NULL_ID, { code: ErrorCode.InternalError, message: 'Internal error in the edge' })
    default:
      return unreachable(a)
  }
}

function unreachable(a: never): never {
  throw new Error(`unknown local answer ${JSON.stringify(a)}`)
}

/** Headers of every JSON body the edge writes itself. */
export const JSON_HEADERS = { 'content-type': 'application/json' }

/**
 * The HTTP response of a local answer: {@link toWire}'s status and text with
 * `content-type: application/json`, the answer's own headers, then `headers` (e.g. `mcp-edge-grade`).
 */
export function localResponse(a: LocalAnswer, headers?: Record<string, string>): EdgeResponse {
  return wireResponse(toWire(a), headers)
}

/** {@link localResponse} for an answer already mapped with {@link toWire}. */
export function wireResponse(w: WireAnswer, headers?: Record<string, string>): EdgeResponse {
  // Copied member by member: this runs for every locally answered call (the rejected-call path of the bench).
  const h: Record<string, string> = { 'content-type': JSON_HEADERS['content-type'] }
  if (w.headers) for (const k in w.headers) h[k] = w.headers[k]!
  if (headers) for (const k in headers) h[k] = headers[k]!
  return edgeResponse(w.text, w.status, h)
}
