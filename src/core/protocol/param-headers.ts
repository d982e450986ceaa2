/**
 * @module core/protocol/param-headers
 * The `Mcp-Param-*` codec of 2026-07-28 (MCP 2026-07-28 Streamable HTTP §Schema Extension): which
 * arguments a tool's `inputSchema` declares with `x-mcp-header`, and whether the request's
 * `Mcp-Param-<Name>` headers carry the same values. Pure; never throws. Failures: 400 -32020.
 */
import { isObject, type RawId } from '../jsonrpc/jsonrpc'
import type { ProtocolRefusal } from '../local-answer'
import { type RequestHeaders } from '../edge-response'
import { headerMismatch } from './protocol-refusals'
import { decodeHeaderValue } from './standard-headers'

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** One valid `x-mcp-header` declaration: header name and the argument path (MCP 2026-07-28 Streamable HTTP §Schema Extension). */
export interface ParamHeader {
  header: string
  path: string[]
  type: 'string' | 'integer' | 'boolean'
}

/**
 * The `x-mcp-header` declarations of an `inputSchema`, reached from the root through `properties`
 * only (B11); declarations that break the rules (not a token, duplicate ignoring case, not on a
 * string/integer/boolean property) are skipped (docs/protocol-rules.md M33: enforce only valid ones).
 */
export function paramHeaders(schema: unknown): ParamHeader[] {
  const out: ParamHeader[] = []
  const seen = new Set<string>()
  const walk = (s: unknown, path: string[], depth: number) => {
    if (!isObject(s) || !isObject(s.properties) || depth > 32) return
    for (const [name, sub] of Object.entries(s.properties)) {
      if (!isObject(sub)) continue
      const h = sub['x-mcp-header']
      if (typeof h === 'string' && TOKEN.test(h) && !seen.has(h.toLowerCase()) && (sub.type === 'string' || sub.type === 'integer' || sub.type === 'boolean')) {
        seen.add(h.toLowerCase())
        out.push({ header: h, path: [...path, name], type: sub.type })
      }
      walk(sub, [...path, name], depth + 1)
    }
  }
  walk(schema, [], 0)
  return out
}

/**
 * Step C10 of docs/protocol-rules.md §4: each `Mcp-Param-<Name>` declared by the tool must be present and
 * equal to the argument when the argument has a value; a header for a null or absent value is
 * ignored (B9). Integers compare numerically. Failures: 400 -32020 with the id.
 */
export function checkParamHeaders(id: RawId, schema: unknown, args: Record<string, unknown>, headers: RequestHeaders): ProtocolRefusal | null {
  for (const d of paramHeaders(schema)) {
    let v: unknown = args
    for (const k of d.path) v = isObject(v) ? v[k] : undefined
    if (v === undefined || v === null) continue
    const raw = headers.get(`mcp-param-${d.header}`)
    if (raw === null) return headerMismatch(id, `the Mcp-Param-${d.header} header is missing`)
    const text = decodeHeaderValue(raw)
    if (text === null) return headerMismatch(id, `Mcp-Param-${d.header} holds an invalid Base64 sentinel`)
    let same: boolean
    if (typeof v === 'number') same = /^-?\d+$/.test(text) && Number(text) === v
    else if (typeof v === 'boolean') same = text === String(v)
    else same = typeof v === 'string' && text === v
    // A value of the wrong type is left to inputSchema validation (it will fail there).
    if (!same && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'))
      return headerMismatch(id, `Mcp-Param-${d.header} does not equal the argument ${d.path.join('.')}`)
  }
  return null
}
