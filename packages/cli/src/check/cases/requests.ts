/**
 * @module check/cases/requests
 * What every case family shares: the JSON-RPC request builder of each protocol version (the
 * 2026-07-28 envelope and standard headers), the spec-section names rows cite, and the small
 * verdict helpers. Pure.
 */
import { isModern, META_VERSION_KEY, requestMessage, type ProtocolVersion } from '../edge-rules'
import { describeReply, type HttpAnswer } from '../reply'
import type { Judged, Verdict } from './types'

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

/** A section of the Server Tools page of revision `v`. */
export const toolsSection = (v: ProtocolVersion, section: string) => `MCP ${v} Server Tools §${section}`

/**
 * A section of the transport spec: "Transports" up to 2025-11-25, the "Streamable HTTP" page from
 * 2026-07-28 on. 2024-11-05 defines no Streamable HTTP: its sessions there follow the 2025-03-26
 * page (docs/protocol-rules.md §7), which the row cites.
 */
export function transportSection(v: ProtocolVersion, section: string): string {
  if (isModern(v)) return `MCP ${v} Streamable HTTP §${section}`
  if (v === '2024-11-05') return `MCP 2025-03-26 Transports §${section} (applied to 2024-11-05 sessions on Streamable HTTP)`
  return `MCP ${v} Transports §${section}`
}

/** A passing verdict. */
export const pass = (expected: string, rule: string, why = ''): Verdict => ({ grade: 'pass', expected, rule, why })

/** A verdict with the answer described for the response to `id`. */
export function judged(answer: HttpAnswer, id: string | number | null, verdict: Verdict): Judged {
  return { verdict, answered: describeReply(answer, id) }
}
