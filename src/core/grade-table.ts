/**
 * @module core/grade-table
 * The per-id grade table (docs/design.md §6): the grades, the row each answered id leaves in the
 * POST's one log line, the request a row is about, and the `MCP-Edge-Grade` header written from
 * the rows. Shared vocabulary: the exchange keeps the rows, grading (core/grading) fills them,
 * the entries' metrics count them. Pure.
 */
import type { RawId } from './jsonrpc/jsonrpc'

/** Grades of docs/design.md §6. */
export type Grade = 'ok' | 'tool_error' | 'rpc_error' | 'rejected' | 'origin_error' | 'missing' | 'unvalidated'

/** Per-id line of the grade table (one log line per POST holds them all). */
export interface GradeRow {
  id: string
  method: string
  tool?: string
  grade: Grade
  code?: number
  isError?: boolean
  answeredBy: 'edge' | 'origin'
  originMs?: number
  /** Set when `tool` names no tool of the origin (then counted as `_unknown` in metrics). */
  unknownTool?: boolean
}

/** What the edge knows about the request a reply answers. */
export interface ForwardedRequest {
  id: RawId
  method: string
  tool?: string
  /** True when the call went out without a usable schema (D8, D16). */
  unvalidated: boolean
}

const GRADE_ORDER: readonly Grade[] = ['ok', 'tool_error', 'rpc_error', 'rejected', 'origin_error', 'missing', 'unvalidated']

/** Compact `MCP-Edge-Grade` header value, e.g. `ok=2 tool_error=1` (grades in a fixed order). */
export function gradeHeader(rows: GradeRow[]): string {
  if (rows.length === 1) return `${rows[0]!.grade}=1`
  let out = ''
  for (const g of GRADE_ORDER) {
    let n = 0
    for (const r of rows) if (r.grade === g) n++
    if (n > 0) out += (out ? ' ' : '') + g + '=' + n
  }
  return out
}
