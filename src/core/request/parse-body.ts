/**
 * @module core/request/parse-body
 * Stage 2: request body bytes -> one message or a batch of messages, or a rejection of the whole
 * body. Never throws and never copies parser text (Node's JSON.parse error quotes the input, which
 * may hold secrets: field case B10).
 */
import { ErrorCode } from '../jsonrpc/jsonrpc'
import type { BodyRefusal } from '../local-answer'
import { countMembers, DEFAULT_MAX_JSON_DEPTH, scanJsonText, scanRequestText, type RequestElement } from '../jsonrpc/json-scan'

/** One message of the body: its parsed value, its span, its id's span and duplicate-name flag in `text`. */
export interface ParsedItem {
  value: unknown
  el: RequestElement
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
 * parse runs (RFC 8259 §9 lets a parser limit nesting; `nestsDeeperThan` in json-scan.ts says
 * why); the same pass finds the spans and counts member names ({@link scanRequestText}).
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
  const scan = scanRequestText(text, maxDepth)
  if (scan === null) return { kind: 'body', code: ErrorCode.ParseError, message: `Parse error: the body nests arrays and objects deeper than ${maxDepth} levels` }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { kind: 'body', code: ErrorCode.ParseError, message: 'Parse error: the body could not be read as JSON' }
  }
  const els = scan.elements
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'body', code: ErrorCode.InvalidRequest, message: 'Invalid Request: an empty batch' }
    // The scan of text JSON.parse accepted has one element per array entry; anything else would be
    // a defect of the scan, and is refused rather than forwarded unchecked.
    if (els.length !== value.length) return unscannable()
    const items: ParsedItem[] = new Array(value.length)
    for (let i = 0; i < value.length; i++) items[i] = { value: value[i], el: flagged(text, els[i]!, value[i]) }
    return { kind: 'batch', text, items }
  }
  if (els.length !== 1) return unscannable()
  return { kind: 'single', text, item: { value, el: flagged(text, els[0]!, value) } }
}

/** `el` with its duplicate-name flag: fewer members kept by the parse than names in the text (see scanRequestText). */
function flagged(text: string, el: RequestElement, value: unknown): RequestElement {
  try {
    el.duplicateNames = countMembers(value) !== el.names
  } catch {
    // The stack ran out (a MAX_JSON_DEPTH set in the thousands): the scan without recursion decides.
    el.duplicateNames = scanJsonText(text.slice(el.start, el.end)).elements[0]?.duplicateNames ?? true
  }
  return el
}

function unscannable(): BodyRefusal {
  return { kind: 'body', code: ErrorCode.ParseError, message: 'Parse error: the body could not be read as JSON' }
}
