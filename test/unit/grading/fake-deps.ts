/**
 * The parts reply grading needs, real but in memory: the configuration read from the settings
 * table, a tool registry over a memory store with the Workers validator engine, Prometheus text
 * metrics, a logger and a `defer` that keep what they get. An origin reply is built from the
 * bytes a row of a table gives (a JSON body, or SSE events), and an answer is read back to its
 * bytes, so a table row says: these ids were forwarded, the origin sent this, each id got this
 * grade and the client got exactly these bytes.
 */
import { loadConfig } from '../../../src/core/config'
import type { ByteSource, EdgeResponse } from '../../../src/core/edge-response'
import { Exchange, type EdgeDeps, type Pending } from '../../../src/core/exchange'
import type { GradeRow } from '../../../src/core/grade-table'
import { toRawId } from '../../../src/core/jsonrpc/jsonrpc'
import type { ProtocolVersion } from '../../../src/core/jsonrpc/versions'
import type { LogRecord, OriginReply } from '../../../src/core/ports'
import { createToolRegistry } from '../../../src/core/validation/tool-registry'
import { TextMetrics } from '../../../src/observe/text-metrics'
import { MemoryKv } from '../../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'

/** {@link EdgeDeps} for grading, with what it logged and deferred. */
export interface GradingDeps {
  deps: EdgeDeps
  logs: LogRecord[]
  deferred: Promise<unknown>[]
}

/**
 * Builds the deps from settings variables (`OUTPUT_SCHEMA`, `HIDDEN_FAILURES`, ...); the origin
 * client refuses every call (grading never calls the origin; a test that did would see it).
 */
export function gradingDeps(env: Record<string, string> = {}): GradingDeps {
  const config = loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', ...env })
  const logs: LogRecord[] = []
  const deferred: Promise<unknown>[] = []
  const deps: EdgeDeps = {
    config,
    registry: createToolRegistry(config, new MemoryKv(), createCfworkerEngine()),
    origin: () => Promise.reject(new Error('grading does not call the origin')),
    log: (r) => logs.push(r),
    defer: (p) => void deferred.push(p),
    metrics: new TextMetrics(),
  }
  return { deps, logs, deferred }
}

/** One forwarded request: its id as the client wrote it (a number or a string), its method, and the tool of a tools/call. */
export interface Forwarded {
  id: number | string
  /** The id's JSON token, for a number past 2^53 whose digits `JSON.parse` loses. */
  rawId?: string
  method: string
  tool?: string
  unvalidated?: boolean
}

/** An exchange for the default origin with `forwarded` open, in `era`. */
export function exchangeWith(deps: EdgeDeps, forwarded: readonly Forwarded[], era: ProtocolVersion = '2025-06-18'): Exchange {
  const ex = new Exchange(deps, { id: 'default', url: deps.config.originUrl }, era)
  for (const f of forwarded) {
    const id = toRawId(f.id, f.rawId)!
    const p: Pending = { id, method: f.method, unvalidated: f.unvalidated ?? false, answered: false }
    if (f.tool !== undefined) p.tool = f.tool
    ex.pending.set(id.key, p)
  }
  return ex
}

const encoder = new TextEncoder()

/** A 2xx JSON reply whose body is `body` (read with `bytes()`, as both origin clients offer). */
export function jsonReply(body: string | Uint8Array, status = 200, headers: Record<string, string> = { 'content-type': 'application/json' }): OriginReply {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  return {
    status,
    headers,
    text: () => Promise.resolve(new TextDecoder().decode(bytes)),
    bytes: () => Promise.resolve(bytes),
    stream: () => null,
    discard: () => undefined,
  }
}

/** An SSE reply carrying one `message` event per data text, each sent as its own chunk. */
export function sseReply(datas: readonly string[]): OriginReply {
  const chunks = datas.map((d) => encoder.encode(`event: message\ndata: ${d}\n\n`))
  const source: ByteSource = {
    read: () => {
      const value = chunks.shift()
      return Promise.resolve(value ? { done: false as const, value } : { done: true as const })
    },
    cancel: () => Promise.resolve(),
  }
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    text: () => Promise.reject(new Error('an SSE reply is streamed')),
    stream: () => source,
    discard: () => undefined,
  }
}

/** The answer's body as text: a whole body, or every chunk of a stream read to its end. */
export async function answerText(r: EdgeResponse): Promise<string> {
  if (r.body === null) return ''
  if (typeof r.body === 'string') return r.body
  if (r.body instanceof Uint8Array) return new TextDecoder().decode(r.body)
  const parts: Uint8Array[] = []
  for (;;) {
    const c = await r.body.read()
    if (c.done) break
    parts.push(c.value)
  }
  return new TextDecoder().decode(Buffer.concat(parts))
}

/** The grade table of an exchange as `id grade[ code]` strings, in the order the ids were answered. */
export function gradesOf(rows: readonly GradeRow[]): string[] {
  return rows.map((r) => `${r.id} ${r.grade}${r.code !== undefined ? ` ${r.code}` : ''}`)
}
