/**
 * Shared pieces of the grading tests (docs/grading.md): raw HTTP posts to an edge, waiting for the
 * per-POST log line, and pushing tool schemas through the admin API so `tools/call` is validated.
 */
import type { EdgeUnderTest, LogWait } from './runtimes'
import type { LogRecord } from '../../src/core/ports'
import { waitFor } from './wait'
import { mcpHeaders } from './mcp'

export { mcpHeaders } from './mcp'

/** What the client received, byte for byte. */
export interface Received {
  status: number
  headers: Headers
  text: string
}

/** POSTs `body` (text, sent as is) to the edge's MCP URL (or `/mcp/<origin>`). */
export async function post(edge: EdgeUnderTest, body: string, headers: Record<string, string> = mcpHeaders(), origin?: string): Promise<Received> {
  const url = origin ? `${edge.url}/${origin}` : edge.url
  const res = await fetch(url, { method: 'POST', headers, body })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

/** The `mcp.post` log records written so far (once `until` holds, see {@link LogWait}). */
export async function postLogs(edge: EdgeUnderTest, until?: Omit<LogWait, 'msg'>): Promise<LogRecord[]> {
  return (await edge.logs(until && { ...until, msg: 'mcp.post' })).filter((r) => r.msg === 'mcp.post')
}

/**
 * Waits until the edge has written more than `before` `mcp.post` lines and returns the newest.
 * Workers' console lines arrive through workerd's stdout a little later than the response.
 */
export async function nextLog(edge: EdgeUnderTest, before: number, timeoutMs = 10_000): Promise<LogRecord> {
  const logs = await waitFor(
    async () => {
      const l = await postLogs(edge)
      return l.length > before ? l : null
    },
    { what: `mcp.post log line number ${before + 1}`, timeoutMs }
  )
  return logs[logs.length - 1]!
}

/** A grade row as the log line holds it. */
export interface LoggedGrade {
  id: string
  method: string
  tool?: string
  grade: string
  code?: number
  isError?: boolean
  answeredBy: string
}

/** The per-id grade table of a log line, reduced to `{ id, grade, code? }` for comparison. */
export function gradesOf(rec: LogRecord): { id: string; grade: string; code?: number }[] {
  return (rec.grades as LoggedGrade[]).map((g) => ({ id: g.id, grade: g.grade, ...(g.code !== undefined ? { code: g.code } : {}) }))
}

/** Pushes tool schemas into the edge's store through the admin API (needs ADMIN_TOKEN=test-admin). */
export async function pushTools(edge: EdgeUnderTest, tools: { name: string; inputSchema: unknown }[], origin = 'default'): Promise<void> {
  const base = new URL(edge.url)
  const res = await fetch(new URL(`/admin/tools/${origin}`, base), {
    method: 'PUT',
    headers: { authorization: 'Bearer test-admin', 'content-type': 'application/json' },
    body: JSON.stringify({ tools, protocolVersion: '2025-06-18' }),
  })
  if (res.status !== 200) throw new Error(`admin push failed: ${res.status} ${await res.text()}`)
}

/** The admin token the grading tests start their edges with. */
export const ADMIN_TOKEN = 'test-admin'
