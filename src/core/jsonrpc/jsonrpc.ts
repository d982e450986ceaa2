/**
 * @module core/jsonrpc/jsonrpc
 * JSON-RPC 2.0 vocabulary for the edge: error codes, id handling and the only place where
 * envelopes are written as text. Pure; no I/O; never throws.
 *
 * Ids are carried as {@link RawId}: the exact JSON token the peer sent (so `"1"` stays a string
 * and `12345678901234567890` keeps every digit, JSON-RPC 2.0 §4/§5) plus a `key` used to match a
 * request with its response.
 */

/** JSON-RPC 2.0 §5.1 codes, MCP 2026-07-28 codes, and the edge's own gateway codes (docs/design.md D9). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP 2026-07-28: a standard header disagrees with the body. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: a required standard header is missing. */
  MissingHeader: -32021,
  /** MCP 2026-07-28: unsupported protocol version (the edge uses it in every era, D14). */
  UnsupportedVersion: -32022,
  /** Edge: origin unreachable or answered something that is not JSON-RPC (D9). */
  OriginUnavailable: -31001,
  /** Edge: origin did not answer within ORIGIN_TIMEOUT_MS (D9). */
  OriginTimeout: -31002,
  /** Edge: origin's reply ended without answering this id (D9). */
  OriginNoAnswer: -31003,
  /** Edge: the caller is over a RATE_LIMIT budget (HTTP 429 for a single request; docs/security.md). */
  RateLimited: -31004,
  /** Edge: the caller's access token lacks a scope the tool needs (TOOL_SCOPES; HTTP 403 for a single request, per id in a batch). */
  InsufficientScope: -31010,
} as const

/** A JSON-RPC id as it travelled: `raw` is the JSON token text, `key` a stable map key. */
export interface RawId {
  /** The exact JSON token, e.g. `7`, `"7"`, `12345678901234567890`. */
  raw: string
  /** `n:<digits>` for integers, `s:<value>` for strings: string 1 and number 1 never collide. */
  key: string
}

/** The `null` id of JSON-RPC 2.0 §5 (used when the request id could not be read). */
export const NULL_ID: RawId = { raw: 'null', key: 'null' }

/** A JSON-RPC error object (JSON-RPC 2.0 §5.1). `data` is edge-built and never echoes input. */
export interface RpcError {
  code: number
  message: string
  data?: unknown
}

/**
 * Builds a {@link RawId} from a parsed id and, where available, its token text.
 * Returns null when the value is not a valid MCP request id (string or integer, MCP basic
 * "Requests": ids MUST be string or integer and MUST NOT be null).
 */
export function toRawId(value: unknown, rawToken?: string): RawId | null {
  if (typeof value === 'string') return { raw: rawToken ?? JSON.stringify(value), key: 's:' + value }
  if (typeof value === 'number' && Number.isInteger(value)) {
    // Integers past 2^53 lose digits in JSON.parse: the token text is the truth.
    // Any JSON number token with an integer value (`7`, `1e3`, `-0`) is echoed exactly as sent.
    const raw = rawToken !== undefined && /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(rawToken) ? rawToken : String(value)
    return { raw, key: 'n:' + (Number.isSafeInteger(value) ? String(value) : raw) }
  }
  return null
}

/**
 * The text of one JSON-RPC 2.0 response (§5) whose member is already JSON text:
 * `{"jsonrpc":"2.0","id":<id token as sent>,"<member>":<json>}`. Every response text the edge
 * writes goes through here; `json` is written as given (the origin's own `error` or `result` text
 * is relayed byte for byte, D10), so it must be one JSON value.
 */
export function responseText(id: RawId, member: 'result' | 'error', json: string): string {
  return `{"jsonrpc":"2.0","id":${id.raw},"${member}":${json}}`
}

/** Serialises an error response `{"jsonrpc":"2.0","id":…,"error":…}` with the id token as sent. */
export function errorText(id: RawId, error: RpcError): string {
  return responseText(id, 'error', JSON.stringify(error))
}

/** Serialises a result response with the id token as sent. `result` must be JSON-serialisable. */
export function resultText(id: RawId, result: unknown): string {
  return responseText(id, 'result', JSON.stringify(result))
}

/**
 * A JSON-RPC 2.0 request (§4; `id` given) or notification (§4.1; `id` omitted) as a value, for the
 * edge's own client session with an origin (forwarding/tool-list-pull.ts). `params` is omitted when
 * undefined.
 */
export function requestMessage(method: string, params?: Record<string, unknown>, id?: number | string): Record<string, unknown> {
  const msg: Record<string, unknown> = { jsonrpc: '2.0' }
  if (id !== undefined) msg.id = id
  msg.method = method
  if (params !== undefined) msg.params = params
  return msg
}

/**
 * The text of a JSON-RPC 2.0 request (§4) with its id token as the client wrote it and `params`
 * given as JSON text: a virtual server's request to one of its origins (core/virtual), which keeps
 * the client's id exactly (an integer past 2^53 keeps every digit).
 */
export function requestText(id: RawId, method: string, paramsJson: string): string {
  return `{"jsonrpc":"2.0","id":${id.raw},"method":${JSON.stringify(method)},"params":${paramsJson}}`
}

/**
 * The text of a JSON-RPC 2.0 notification (§4.1) with `params` given as JSON text: the edge's own
 * notifications on a virtual server's stream, whose `_meta` carries a client's id token exactly.
 */
export function notificationText(method: string, paramsJson: string): string {
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${paramsJson}}`
}

/** The canonical JSON-RPC 2.0 §5.1 message for a standard code. */
export function standardMessage(code: number): string {
  switch (code) {
    case ErrorCode.ParseError:
      return 'Parse error'
    case ErrorCode.InvalidRequest:
      return 'Invalid Request'
    case ErrorCode.MethodNotFound:
      return 'Method not found'
    case ErrorCode.InvalidParams:
      return 'Invalid params'
    default:
      return 'Internal error'
  }
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
