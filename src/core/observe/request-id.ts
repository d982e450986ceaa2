/**
 * @module core/observe/request-id
 * The request id of a POST's log line (`rid`, docs/observability.md): the client's
 * `X-Request-Id` when it is a plain token, else the trace id of a valid W3C `traceparent`, else a
 * fresh id unique to this process or isolate. Pure (Web Crypto, on both runtimes).
 */
import type { RequestHeaders } from '../edge-response'

/** An `X-Request-Id` the edge takes as is: 1 to 128 token characters (no spaces, quotes or controls). */
const REQUEST_ID = /^[A-Za-z0-9._:@\/+=-]{1,128}$/
/** W3C Trace Context `traceparent`: version, 32-hex trace id (not all zeros), 16-hex parent id, flags. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** The parts of a valid `traceparent` header (W3C Trace Context, version 00 and later), or null. */
export function parseTraceparent(value: string | null): { traceId: string; spanId: string; flags: number } | null {
  if (value === null) return null
  const m = TRACEPARENT.exec(value.trim())
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return null
  if (/^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return null
  return { traceId: m[2]!, spanId: m[3]!, flags: parseInt(m[4]!, 16) }
}

let prefix = ''
let counter = 0

/**
 * A fresh request id: 12 random hex digits for this process or isolate, then a counter in base
 * 36 (`3f9c0a7d21b4-1k`). Why not `crypto.randomUUID()` per POST: 0.3-0.5 us each here against
 * a few ns (scripts/bench/metrics-cost.ts). The prefix is drawn on first use, since Workers
 * forbid random values at start-up, outside a request.
 */
function freshId(): string {
  if (prefix === '') prefix = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => b.toString(16).padStart(2, '0')).join('')
  return `${prefix}-${(++counter).toString(36)}`
}

/** The request id for `headers` (see the module comment). */
export function requestIdOf(headers: RequestHeaders | undefined): string {
  const given = headers?.get('x-request-id')
  if (given && REQUEST_ID.test(given)) return given
  const tp = headers ? parseTraceparent(headers.get('traceparent')) : null
  if (tp) return tp.traceId
  return freshId()
}
