/**
 * @module core/request/parse-body
 * Stage 2: request body bytes -> one message or a batch of messages, or a rejection of the whole
 * body. Never throws and never copies parser text (Node's JSON.parse error quotes the input, which
 * may hold secrets: field case B10).
 */
import { ErrorCode } from '../jsonrpc/jsonrpc'
import type { BodyRefusal } from '../local-answer'
import { DEFAULT_MAX_JSON_DEPTH, nestsDeeperThan, scanJsonText, type ScannedElement } from '../jsonrpc/json-scan'

/** One message of the body: its parsed value, its span and members in `text`. */
export interface ParsedItem {
  value: unknown
  el: ScannedElement
}

/** The body, parsed. `text` is the decoded body; spans in items refer to it. */
export type Parsed =
  | { kind: 'single'; text: string; item: ParsedItem }
  | { kind: 'batch'; text: string; items: ParsedItem[] }
  /** The whole body is refused (docs/design.md D2): -32700 for bytes that are not JSON, -32600 for `[]`. */
  | BodyRefusal

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/**
 * Decodes UTF-8 and parses JSON (RFC 8259; JSON-RPC 2.0 §5.1 -32700).
 * A body nesting arrays and objects deeper than `maxDepth` is refused with -32700 before any
 * parse runs (RFC 8259 §9 lets a parser limit nesting; {@link nestsDeeperThan} says why).
 * @param body raw bytes, or text already decoded
 * @param maxDepth the deepest nesting accepted (`MAX_JSON_DEPTH`)
 * @returns the parsed body or a whole-body refusal ({@link BodyRefusal}); its message is a fixed phrase
 */
export function parseBody(body: Uint8Array | string, maxDepth = DEFAULT_MAX_JSON_DEPTH): Parsed {
  let text: string
  if (typeof body === 'string') text = body
  else {
    try {
      text = decoder.decode(body)
    } catch {
      return { kind: 'body', code: ErrorCode.ParseError, message: 'Parse error: the body could not be read as UTF-8 text' }
    }
  }
  if (nestsDeeperThan(text, maxDepth)) return { kind: 'body', code: ErrorCode.ParseError, message: `Parse error: the body nests arrays and objects deeper than ${maxDepth} levels` }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { kind: 'body', code: ErrorCode.ParseError, message: 'Parse error: the body could not be read as JSON' }
  }
  const scan = scanJsonText(text)
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'body', code: ErrorCode.InvalidRequest, message: 'Invalid Request: an empty batch' }
    const items = value.map((v, i) => ({ value: v, el: scan.elements[i]! }))
    return { kind: 'batch', text, items }
  }
  return { kind: 'single', text, item: { value, el: scan.elements[0]! } }
}
