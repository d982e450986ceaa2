/**
 * @module core/exchange
 * What one POST carries through the stages: the ports ({@link EdgeDeps}), the origin it is for,
 * the requests forwarded and still open, and the per-id grade table written as one log line
 * (docs/design.md §6). Also the builders of whole-response errors (D2, D9, D13).
 */
import type { Config } from './config'
import type { ProtocolVersion } from './jsonrpc/versions'
import type { RawId } from './jsonrpc/jsonrpc'
import type { Defer, EdgeMetrics, EdgeTracer, Logger, OriginClient, PostFigures, TraceSpan } from './ports'
import type { OriginCause } from './observe/origin-cause'
import { requestIdOf } from './observe/request-id'
import type { RequestHeaders } from './edge-response'
import { gradeHeader, type ForwardedRequest, type GradeRow } from './grade-table'
import type { ToolRegistry } from './validation/tool-registry'
import type { ClientSignal } from './client-signal'
import { OriginEras } from './protocol/origin-eras'
import { HeaderMemos } from './request/transport-checks'
import { type EdgeResponse } from './edge-response'
import { gatewayError, JSON_HEADERS, localResponse, toWire, wireResponse, type LocalAnswer, type TransportRefusal, type WireAnswer } from './local-answer'
import type { ResolvedTool } from './validation/tool-record'
import { boundText } from './jsonrpc/bound-text'
import type { AccessIdentity } from './access/bearer'
import type { EdgeAuth } from './access/resource-server'
import { PinBook } from './pinning/apply-pins'
import type { PinKv } from './pinning/pin-store'
import type { RateLimiter } from './access/rate-limit'

/** Everything the pipeline needs; built once per process or isolate by an entry. */
export interface EdgeDeps {
  config: Config
  registry: ToolRegistry
  origin: OriginClient
  log: Logger
  defer: Defer
  /** The metrics port: the core records, the runtime renders `/metrics`. */
  metrics: EdgeMetrics
  /** The tracing port (OpenTelemetry behind it); absent: no spans at all. */
  tracer?: EdgeTracer
  now?: () => number
  /**
   * What this edge instance has learned of its origins' eras (D17). Per instance, like the
   * registry; {@link originEras} creates it on first use when the entry did not.
   */
  eras?: OriginEras
  /** The instance's remembered Host and Accept verdicts; {@link headerMemos} creates them on first use. */
  headerMemos?: HeaderMemos
  /** The resource server (`AUTH_ISSUER` set): tokens are checked at the front door; absent: auth is off. */
  auth?: EdgeAuth
  /** The instance's tool pins (docs/pinning.md); {@link pinBook} creates them on first use. */
  pins?: PinBook
  /** The store's propagation bound in ms for pins' `effectiveFrom` (the Workers entry sets Workers KV's); default by store. */
  pinPropagationMs?: number
  /** Where `RATE_LIMIT` budgets are counted (memory, Redis, the Workers binding); unset: no rate limiting even with budgets configured. */
  rateLimiter?: RateLimiter
}

/** The {@link PinBook} of one edge instance (`TOOL_PINNING`, default `audit`), held on its deps object. */
export function pinBook(deps: EdgeDeps): PinBook {
  return (deps.pins ??= new PinBook({
    kv: (deps.registry as { kv?: PinKv } | undefined)?.kv,
    mode: deps.config.toolPinning ?? 'audit',
    log: (r) => deps.log(r),
    metrics: deps.metrics,
    defer: (p) => deps.defer(p),
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.pinPropagationMs !== undefined ? { propagationMs: deps.pinPropagationMs } : {}),
    privateScopeTtlS: deps.config.privateScopeTtlS,
    maxPrivateScopes: deps.config.maxPrivateScopes,
  }))
}

/** The {@link OriginEras} of one edge instance, held on its deps object. */
export function originEras(deps: EdgeDeps): OriginEras {
  return (deps.eras ??= new OriginEras())
}

/** The {@link HeaderMemos} of one edge instance, held on its deps object. */
export function headerMemos(deps: EdgeDeps): HeaderMemos {
  return (deps.headerMemos ??= new HeaderMemos())
}

/** The origin a request is for: its name (KV `originId`) and endpoint URL. */
export interface OriginTarget {
  id: string
  url: string
}

export { gatewayError, JSON_HEADERS }

/** 404 for a path that is not an MCP endpoint (no origin named there). */
export function notFound(): EdgeResponse {
  return localResponse({ kind: 'transport', status: 404, message: 'Not Found: the MCP endpoint is /mcp' })
}

/**
 * 500 for a fault inside the edge (an exception no stage turned into an answer): logged as
 * `{ msg: "edge.error", error: <exception name> }`, answered -32603 without any detail, never a
 * stack trace or library text (docs/design.md §5).
 * @param deps resolves the ports lazily: a failure to resolve them or to log is swallowed
 */
export function edgeFault(err: unknown, deps: () => EdgeDeps): EdgeResponse {
  try {
    deps().log({ level: 'error', msg: 'edge.error', error: err instanceof Error ? err.name : 'error' })
  } catch {
    // logging must not turn one fault into two
  }
  return localResponse({ kind: 'fault' })
}

/** The response for a {@link TransportRefusal} (not logged: GET and DELETE have no grade table). */
export function refusalResponse(r: TransportRefusal): EdgeResponse {
  return localResponse(r)
}

/**
 * The grade row of a local answer (docs/design.md §6): `rejected` and answered by the edge, with
 * the answer's code; a `call` answer also names its tool; a `gateway` fault is `origin_error`.
 * @param w the answer's {@link toWire} form (its id and code)
 * @param method the request's method, or `` when unknown
 */
export function answerRow(a: LocalAnswer, w: WireAnswer, method: string): GradeRow {
  if (a.kind === 'call') {
    const row: GradeRow = { id: idLabel(a.id), method, grade: 'rejected', answeredBy: 'edge' }
    if (a.tool !== undefined) row.tool = a.tool
    if (a.unknownTool) row.unknownTool = true
    if (a.code !== undefined) row.code = a.code
    if (a.isError) row.isError = true
    return row
  }
  const row: GradeRow = { id: idLabel(w.id), method, grade: a.kind === 'gateway' ? 'origin_error' : 'rejected', code: w.code!, answeredBy: 'edge' }
  if (a.kind === 'access' && a.tool !== undefined) row.tool = a.tool
  return row
}

/**
 * A message of the origin's reply that the edge did not relay: `repeated` (an id answered twice,
 * the first answer wins), `unknown_id` (an id the edge never forwarded), `no_id` (an error with
 * `"id": null`, given to the ids left open instead), `invalid` (not a JSON-RPC response).
 * `server_request` (a request on the response stream of a 2026-07-28 request, which that
 * revision forbids). `too_large` (a JSON reply body beyond `MAX_REPLY_BYTES`, discarded unread).
 * `id` is the id token (bounded), or `-` when there was none.
 */
export interface DroppedReply {
  id: string
  reason: 'repeated' | 'unknown_id' | 'no_id' | 'invalid' | 'server_request' | 'too_large' | 'too_deep'
}

/** A forwarded request awaiting its answer in the origin's reply. */
export interface Pending extends ForwardedRequest {
  answered: boolean
  /** The tool the arguments were validated against (its output schema grades the reply, D12). */
  resolved?: ResolvedTool
  /** A tools/list request with a `cursor` (a later page): its reply is never a complete list (tool pinning). */
  paged?: boolean
  /**
   * Under `TOOL_PINNING=enforce`, for a tools/list: pulls the whole list (every page) with the
   * caller's authorization, so the first page of a paginated origin can set the baseline.
   */
  pull?: () => Promise<{ tools: unknown[] }>
}

/** The per-POST context: what was forwarded, what was answered, and the grade table. */
export class Exchange {
  readonly rows: GradeRow[] = []
  /** Messages of the origin's reply the edge did not relay (repeated or unknown id, not JSON-RPC, id-less error). */
  readonly dropped: DroppedReply[] = []
  /** Set when the client went away before every id was answered (SSE). */
  clientClosed = false
  private finished = false
  readonly pending = new Map<string, Pending>()
  readonly started: number
  /** `performance.now()` at the start, for the latency histograms (ms, high resolution). */
  readonly startedHr = performance.now()
  originMs?: number
  /** Seconds from sending to the origin until its response headers (high resolution; the metrics port). */
  originSeconds?: number
  /** `performance.now()` when an SSE answer's headers were handed over (its edge latency ends there). */
  streamingAt?: number
  /** The POST's request id (`rid` in the log line): see {@link identify}. */
  requestId?: string
  /** Why the origin call failed, for the log line only (never in the response). */
  originCause?: OriginCause
  /** The POST's root span, when a tracer is configured. */
  span?: TraceSpan
  /** The caller's private KV scope (src/core/validation/caller-scope.ts), set by the pipeline before a tools/list or tools/call is forwarded. */
  scope?: string
  /** The digest of {@link scope} while it is computed: one per POST, shared by the elements of a batch. */
  scopePending?: Promise<string>
  /** Aborts when the client goes away (the runtime's `request.signal`); passed to the origin request of forwarded requests. */
  signal?: ClientSignal
  /**
   * The protocol version the POST asked for when it was refused as unsupported (-32022): logged as
   * `requestedVersion` with `era: null`, since no era served it.
   */
  refusedVersion?: string
  /** The method of the notification a POST forwarded (it has no id, so no grade row): logged as `notification`. */
  notification?: string
  /** True when the POST is a batch (a denial of one element is then answered per id, inside a 200). */
  batch = false
  /** Who the request's verified access token speaks for; set only with auth on, once the token was accepted. */
  identity?: AccessIdentity
  /**
   * The 2026-07-28 mirrored headers (`mcp-method`, `mcp-name`) the edge checked against this POST's
   * body (protocol/standard-headers.ts `checkedMirrors`); only those reach the origin.
   */
  checkedMirrors?: readonly string[]
  constructor(
    readonly deps: EdgeDeps,
    readonly target: OriginTarget,
    /** The POST's protocol version: set once the era rule has decided it (the default until then); logged and traced with the answer. */
    public era: ProtocolVersion
  ) {
    this.started = (deps.now ?? Date.now)()
  }
  /**
   * Ties the exchange to its HTTP request: the request id of the log line (`X-Request-Id`, the
   * `traceparent` trace id, or a fresh one; src/core/observe/request-id.ts) and, with a tracer,
   * the POST's root span under the client's `traceparent`.
   * @returns this exchange
   */
  identify(headers: RequestHeaders): this {
    this.requestId = requestIdOf(headers)
    if (this.deps.tracer) this.span = this.deps.tracer.start('mcp.post', { traceparent: headers.get('traceparent') }, 'server')
    return this
  }

  /** Adds one id's grade to the table and to the metrics counters. */
  row(r: GradeRow): void {
    // Tool names come from callers: bounded in the log line, and unknown ones never become series.
    if (r.tool !== undefined) r.tool = boundText(r.tool)
    this.rows.push(r)
    this.deps.metrics.countGrade(this.target.id, r.method, r.unknownTool ? '_unknown' : r.tool, r.grade)
  }
  /** Notes a message of the origin's reply that was not relayed (logged with the grade table). */
  drop(d: DroppedReply): void {
    if (this.finished) {
      // An SSE reply logs its table once every id is graded; what the origin sends after that
      // (a repeated or unknown id) gets a line of its own.
      this.deps.log({ level: 'warn', msg: 'mcp.post.dropped', rid: this.requestId ?? requestIdOf(undefined), origin: this.target.id, ...d })
      return
    }
    if (this.dropped.length < 100) this.dropped.push(d)
  }
  /**
   * Answers the whole POST locally ({@link LocalAnswer}, mapped by {@link toWire}): adds its grade
   * row ({@link answerRow}), writes the one log line of the POST and sets `MCP-Edge-Grade` like
   * every other JSON answer (docs/design.md §6).
   * @param method the request's method, or `` when unknown
   */
  answer(a: LocalAnswer, method = ''): EdgeResponse {
    const w = toWire(a)
    this.row(answerRow(a, w, method))
    this.finish(w.status)
    return wireResponse(w, { 'mcp-edge-grade': gradeHeader(this.rows) })
  }

  /**
   * Writes the one log line of this POST: `{ msg: "mcp.post", origin, era, status, ms, originMs,
   * grades: GradeRow[], dropped?, clientClosed? }` (docs/design.md §6). Only the first call
   * writes; an SSE reply calls it as soon as every id is graded, and again (a no-op) at the end.
   */
  finish(status: number): void {
    if (this.finished) return
    this.finished = true
    const now = (this.deps.now ?? Date.now)()
    const failed = this.originCause !== undefined || this.rows.some((r) => r.grade === 'origin_error' || r.grade === 'missing')
    // Members in the log line's order, each set once (no spread of a temporary object).
    const rec: Record<string, unknown> = {
      level: failed || this.dropped.length ? 'warn' : 'info',
      msg: 'mcp.post',
      rid: this.requestId ?? requestIdOf(undefined),
      origin: this.target.id,
      era: this.refusedVersion === undefined ? this.era : null,
    }
    if (this.refusedVersion !== undefined) rec.requestedVersion = this.refusedVersion
    rec.status = status
    rec.ms = now - this.started
    rec.originMs = this.originMs
    rec.grades = this.rows
    if (this.identity) rec.sub = boundText(this.identity.sub, 128)
    if (this.notification !== undefined) rec.notification = boundText(this.notification, 128)
    if (this.originCause) {
      rec.originError = this.originCause.code
      rec.originErrorText = this.originCause.text
    }
    if (this.dropped.length) rec.dropped = this.dropped
    if (this.clientClosed) rec.clientClosed = true
    this.deps.log(rec)
    if (this.span) this.endSpan(status)
    const origin = this.originSeconds
    const edge = ((this.streamingAt ?? performance.now()) - this.startedHr) / 1000 - (origin ?? 0)
    const figures = { origin: this.target.id, edgeSeconds: edge > 0 ? edge : 0 } as PostFigures
    if (origin !== undefined) figures.originSeconds = origin
    figures.forwarded = origin !== undefined
    this.deps.metrics.observePost(figures)
  }

  /**
   * Ends the POST span with the MCP semantic attributes of its first id (OpenTelemetry semantic
   * conventions for MCP: `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
   * `rpc.jsonrpc.error_code`, `mcp.protocol.version`) and the edge's own `mcp_edge.grade`
   * (the grade header: every id's grade) and `mcp_edge.origin`.
   */
  private endSpan(status: number): void {
    const span = this.span!
    if (span.recording) {
      const first = this.rows[0]
      const a: Record<string, string | number | boolean> = {
        'mcp_edge.origin': this.target.id,
        'http.response.status_code': status,
        'mcp_edge.grade': gradeHeader(this.rows),
      }
      if (this.refusedVersion === undefined) a['mcp.protocol.version'] = this.era
      if (this.requestId) a['mcp_edge.request_id'] = this.requestId
      if (first) {
        if (first.method) a['mcp.method.name'] = first.method
        if (first.tool !== undefined) a['gen_ai.tool.name'] = first.tool
        if (first.id !== 'null') a['jsonrpc.request.id'] = first.id
        if (first.code !== undefined) a['rpc.jsonrpc.error_code'] = first.code
      }
      if (this.rows.length > 1) a['mcp_edge.batch_size'] = this.rows.length
      span.setAttributes(a)
      if (this.originCause) span.fail(`origin ${this.originCause.code}`)
      else if (status >= 500) span.fail(`HTTP ${status}`)
    }
    span.end()
  }
}

/** The id as it appears in log rows: its JSON token, cut at 80 characters. */
export function idLabel(id: RawId): string {
  return id.raw.length > 80 ? id.raw.slice(0, 80) : id.raw
}

/**
 * True when the POST is a 2026-07-28 `subscriptions/listen`: a long-lived SSE stream that is
 * forwarded with no timeout at all (docs/protocol-rules.md M6, vector 141); the client ends
 * it by disconnecting, which cancels the origin request.
 */
export function isListen(ex: Exchange): boolean {
  for (const p of ex.pending.values()) if (p.method === 'subscriptions/listen') return true
  return false
}
