/**
 * @module core/protocol/standard-headers
 * The 2026-07-28 standard request headers (MCP 2026-07-28 Streamable HTTP §Standard Request
 * Headers): `Mcp-Method` and `Mcp-Name` must mirror the body, and header values may carry the
 * `=?base64?…?=` sentinel (§Value Encoding). Pure; never throws. Failures: 400 -32020 with the id.
 */
import type { Classified } from '../request/classify'
import type { ProtocolRefusal } from '../local-answer'
import { type RequestHeaders } from '../edge-response'
import { headerMismatch } from './protocol-refusals'

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a standard-header value (MCP 2026-07-28 Streamable HTTP §Value Encoding): optional whitespace trimmed; the exact
 * lower-case `=?base64?…?=` sentinel holds canonical Base64 of UTF-8. Anything else is literal.
 * @returns the value, or null for a sentinel whose payload is not canonical Base64 of UTF-8
 */
export function decodeHeaderValue(raw: string): string | null {
  const v = raw.trim()
  if (!v.startsWith('=?base64?') || !v.endsWith('?=')) return v
  const m = SENTINEL.exec(v)
  if (!m || m[1]!.length % 4 !== 0) return null
  let bin: string
  try {
    bin = atob(m[1]!)
  } catch {
    return null
  }
  if (btoa(bin) !== m[1]) return null // canonical Base64 only (SDK BASE64_CANONICAL)
  const bytes = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
  try {
    return utf8.decode(bytes)
  } catch {
    return null
  }
}

/** Methods whose body field `Mcp-Name` mirrors (MCP 2026-07-28 Streamable HTTP §Standard Request Headers). */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' }

/**
 * Step C9 of docs/protocol-rules.md §4 for a 2026-07-28 request: `Mcp-Method` present and equal to the
 * method; `Mcp-Name` present and equal (after decoding) whenever the body has the mirrored field
 * (B15: absent field, no header required). Failures: 400 -32020 with the id.
 */
export function checkStandardHeaders(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders): ProtocolRefusal | null {
  const method = headers.get('mcp-method')
  if (method === null) return headerMismatch(c.id, 'the Mcp-Method header is missing')
  if (method.trim() !== c.method) return headerMismatch(c.id, 'Mcp-Method does not equal the method in the body')
  const field = NAME_SOURCE[c.method]
  const mirrored = field && c.params ? c.params[field] : undefined
  if (typeof mirrored !== 'string') return null
  const raw = headers.get('mcp-name')
  if (raw === null) return headerMismatch(c.id, `the Mcp-Name header is missing (it must mirror params.${field})`)
  const name = decodeHeaderValue(raw)
  if (name === null) return headerMismatch(c.id, 'Mcp-Name holds an invalid Base64 sentinel')
  if (name !== mirrored) return headerMismatch(c.id, `Mcp-Name does not equal params.${field}`)
  return null
}

/**
 * The mirrored headers {@link checkStandardHeaders} checks for this request (lower-case names):
 * `mcp-method` always, `mcp-name` when the body has the field it mirrors. Only these may be
 * relayed to the origin: a mirrored header the edge did not hold to the body (a 2025 request, a
 * notification, `Mcp-Name` on a `tools/list`) could name a tool the edge hides, and an origin that
 * routes by the header would act on it (MCP 2026-07-28 Streamable HTTP §Standard Request Headers:
 * an intermediary SHOULD NOT trust these headers on versions that do not require them to match).
 */
export function checkedMirrors(c: Extract<Classified, { kind: 'request' }>): readonly string[] {
  const field = NAME_SOURCE[c.method]
  return field && c.params && typeof c.params[field] === 'string' ? METHOD_AND_NAME : METHOD_ONLY
}

const METHOD_AND_NAME = ['mcp-method', 'mcp-name'] as const
const METHOD_ONLY = ['mcp-method'] as const
