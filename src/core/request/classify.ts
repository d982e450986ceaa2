/**
 * @module core/request/classify
 * Stage 3: one parsed item -> request | notification | response | invalid. Pure; never throws.
 *
 * Rules (JSON-RPC 2.0 §4, §5; MCP basic "Messages"; docs/design.md D3, D4, D5, D6):
 * - not an object, duplicate member names, `jsonrpc` not "2.0", `method` not a string,
 *   `params` not an object, an id that is not a string or integer: -32600;
 * - the id is echoed when it could be read as a valid id (D1), else `null`;
 * - reserved `rpc.*` methods: -32601 (D6), and so is a variant of an MCP request method under a
 *   case/NFKC/whitespace fold (`TOOLS/CALL`; -32600 without an id, as D5); other methods are the origin's business;
 * - a message with `result` or `error` and no `method` is a response (the client answering a
 *   server request); both members, or neither with no method, is invalid.
 */
import { ErrorCode, NULL_ID, isObject, toRawId, type RawId } from '../jsonrpc/jsonrpc'
import type { InvalidMessage } from '../local-answer'
import { MCP_REQUEST_METHODS } from '../jsonrpc/mcp-methods'
import { boundText } from '../jsonrpc/bound-text'
import { foldToolName } from '../patterns/tool-glob'
import type { ParsedItem } from './parse-body'

/** Unknown methods without an id stay notifications (forwarded, vectors 6, 21). */
const REQUEST_METHODS = MCP_REQUEST_METHODS

/**
 * The MCP request method whose fold (patterns/tool-glob.ts `foldToolName`) `method` shares, if any;
 * `tools/call` for a method too long to fold (past 1024 characters and not plain lower-case ASCII):
 * it could hide any of them, and no MCP method looks like it.
 */
function requestMethodOf(method: string): string | undefined {
  const folded = foldToolName(method)
  if (folded === null) return 'tools/call'
  return folded !== method && REQUEST_METHODS.has(folded) ? folded : undefined
}

/** A message that is valid JSON-RPC and is not refused locally. `text` is its exact source text. */
export type Classified =
  | { kind: 'request'; id: RawId; method: string; params: Record<string, unknown> | undefined; text: string }
  | { kind: 'notification'; method: string; params: Record<string, unknown> | undefined; text: string }
  | { kind: 'response'; id: RawId | null; text: string }
  /** Answered locally ({@link InvalidMessage}); `notification`: one JSON-RPC accepts but MCP does not (D5, D15), never forwarded. */
  | InvalidMessage

function invalid(id: RawId, message: string, code: number = ErrorCode.InvalidRequest, extra: Partial<InvalidMessage> = {}): Classified {
  return { kind: 'invalid', id, error: { code, message }, responseShaped: false, notification: false, ...extra }
}

/**
 * Classifies one message.
 * @param item the parsed value with its source span
 * @param text the whole body text (spans refer to it)
 */
export function classify(item: ParsedItem, text: string): Classified {
  const v = item.value
  if (!isObject(v)) return invalid(NULL_ID, 'Invalid Request: a JSON-RPC message must be an object')
  const el = item.el
  const hasId = 'id' in v
  const id = hasId ? toRawId(v.id, el.idStart >= 0 ? text.slice(el.idStart, el.idEnd) : undefined) : null
  const echo = id ?? NULL_ID
  const source = text.slice(el.start, el.end)

  if (!('method' in v)) {
    const hasResult = 'result' in v
    const hasError = 'error' in v
    if (hasResult || hasError) {
      if (hasResult && hasError) return invalid(NULL_ID, 'Invalid Request: a response carries both result and error', ErrorCode.InvalidRequest, { responseShaped: true })
      if (v.jsonrpc !== '2.0' || el.duplicateNames || !(id || v.id === null))
        return invalid(NULL_ID, 'Invalid Request: malformed JSON-RPC response', ErrorCode.InvalidRequest, { responseShaped: true })
      if (hasError && !isObject(v.error)) return invalid(NULL_ID, 'Invalid Request: error must be an object', ErrorCode.InvalidRequest, { responseShaped: true })
      return { kind: 'response', id, text: source }
    }
    return invalid(echo, 'Invalid Request: method is missing')
  }
  if (el.duplicateNames) return invalid(echo, 'Invalid Request: a member name appears twice in one object')
  if (v.jsonrpc !== '2.0') return invalid(echo, 'Invalid Request: jsonrpc must be exactly "2.0"')
  if (typeof v.method !== 'string') return invalid(hasId ? echo : NULL_ID, 'Invalid Request: method must be a string', ErrorCode.InvalidRequest, { notification: !hasId })
  if (hasId && !id) return invalid(NULL_ID, 'Invalid Request: id must be a string or an integer')
  const params = v.params
  if ('params' in v && !isObject(params)) return invalid(echo, 'Invalid Request: params must be an object', ErrorCode.InvalidRequest, { notification: !hasId })
  if (v.method.startsWith('rpc.')) {
    if (!id) return invalid(NULL_ID, 'Invalid Request: rpc.* methods are reserved', ErrorCode.InvalidRequest, { notification: true })
    return invalid(id, `Method not found: rpc.* methods are reserved by JSON-RPC 2.0`, ErrorCode.MethodNotFound)
  }
  // A variant of an MCP request method (`TOOLS/CALL`, ` tools/call`, fullwidth letters) is no MCP
  // method, and an origin that normalises method names would run it past every check the edge
  // makes on the real one (tool filter, scopes, validation, tool budgets): never forwarded.
  const variantOf = REQUEST_METHODS.has(v.method) ? undefined : requestMethodOf(v.method)
  if (!id) {
    // D5: a client->server *request* method sent without an id is not an MCP notification; it is
    // never forwarded (a `tools/call` without an id would otherwise skip validation and grading).
    if (REQUEST_METHODS.has(v.method) || variantOf !== undefined)
      return invalid(NULL_ID, `Invalid Request: ${boundText(variantOf ?? v.method, 64, '')} is a request and needs an id`, ErrorCode.InvalidRequest, { notification: true })
    return { kind: 'notification', method: v.method, params: params as Record<string, unknown> | undefined, text: source }
  }
  if (variantOf !== undefined) return invalid(id, `Method not found: method names are case-sensitive and exact; the MCP method is ${variantOf}`, ErrorCode.MethodNotFound)
  return { kind: 'request', id, method: v.method, params: params as Record<string, unknown> | undefined, text: source }
}
