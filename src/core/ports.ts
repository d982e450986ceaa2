/**
 * @module ports
 * What the runtime entries implement and hand to the core. The core only sees these shapes, so
 * the same pipeline runs on Node (undici, file store, ajv) and Workers (fetch, KV, cfworker).
 */
import type { Dialect } from './jsonrpc/versions'
import type { ClientSignal } from './client-signal'
import type { ByteSource } from './edge-response'
import { EdgeError } from './errors'

/**
 * A key-value namespace: Workers KV's `get`/`put`/`delete`/`list` subset (docs/stores.md). Values
 * are text (JSON here). Keys: 1 to 512 UTF-8 bytes, not `.` or `..`; `expirationTtl` in seconds,
 * at least 60, fractions dropped (Workers KV's rules; every store refuses the same inputs).
 * Errors: implementations throw on I/O failure; the core treats that as "no schema" (D8).
 * A `put`/`delete` that resolved is durable as far as the store goes (docs/stores.md).
 */
export interface KvStore {
  get(key: string): Promise<string | null>
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>
  delete(key: string): Promise<void>
  /**
   * Puts several entries as one write: when it resolves every entry is stored; when it rejects
   * none is (the file store: one file write; Redis: one MULTI/EXEC; memory: at once). Every key,
   * value and TTL is checked first: a bad one rejects before anything changes. Optional: Workers
   * KV's binding has no batch write and no transaction, {@link putEntries} falls back to one `put`
   * per entry there (docs/stores.md says what that means for a failure).
   */
  putMany?(entries: readonly KvPut[]): Promise<void>
  /**
   * Keys in UTF-8 byte order, a page at a time, with Workers KV's shape: at most `limit` keys
   * (1 to 1000, default 1000) starting with `prefix`, after the page that gave `cursor`; with
   * `list_complete: false` the result's `cursor` fetches the next page. `expiration` is the key's
   * expiry in epoch seconds when it has one. Optional: the admin API and the CLI list through it.
   */
  list?(options?: KvListOptions): Promise<KvListResult>
  /**
   * Tells `listener` about changes made by other processes sharing the store (a key that was put
   * or deleted elsewhere), so an in-memory copy can be dropped; `null` means changes may have been
   * missed (the feed was down) and every copy should be dropped. Returns the unsubscribe function.
   * Optional: only shared stores (Redis) have it.
   */
  subscribe?(listener: KvChangeListener): () => void
  /**
   * False for a store whose contents do not outlive the process (the memory store): pinning's trust
   * on first use then starts again at every start, which the edge says at start under `enforce`.
   * Absent: the store persists (file, Redis, Workers KV).
   */
  readonly persistent?: boolean
}

/** One entry of {@link KvStore.putMany}: as the arguments of `put` (`expirationTtl` in seconds). */
export interface KvPut {
  key: string
  value: string
  expirationTtl?: number
}

/**
 * Writes `entries` through `kv.putMany` when the store has it (all or nothing); else one `put`
 * per entry in order, at most 32 at a time, so a failure may leave the earlier entries written
 * (each whole): the caller puts the entry that makes the others visible (a list of names) last.
 * @throws what the store throws
 */
export async function putEntries(kv: KvStore, entries: readonly KvPut[]): Promise<void> {
  if (entries.length === 0) return
  if (typeof kv.putMany === 'function') return kv.putMany(entries)
  const put = (e: KvPut) => kv.put(e.key, e.value, e.expirationTtl === undefined ? undefined : { expirationTtl: e.expirationTtl })
  const last = entries[entries.length - 1]!
  const rest = entries.slice(0, -1)
  for (let i = 0; i < rest.length; i += 32) await Promise.all(rest.slice(i, i + 32).map(put))
  await put(last)
}

/** Options of {@link KvStore.list}. */
export interface KvListOptions {
  prefix?: string
  /** Keys per page, 1 to 1000; default 1000. */
  limit?: number
  /** The `cursor` of the previous page. */
  cursor?: string
}

/** One page of {@link KvStore.list}: Workers KV's `KVNamespaceListResult` without metadata. */
export interface KvListResult {
  keys: { name: string; expiration?: number }[]
  list_complete: boolean
  /** Present (non-empty) when `list_complete` is false. */
  cursor?: string
}

/** Receives the key changed by another process, or null when changes may have been missed. */
export type KvChangeListener = (key: string | null) => void

/** One place in the arguments where validation failed; built from the schema, never from the value. */
export interface ValidationIssue {
  /** JSON Pointer into the arguments, e.g. `/units` or `/items/2/qty` (`` for the root). */
  path: string
  /** The JSON Schema keyword that failed, e.g. `required`, `enum`, `type`. */
  keyword: string
  /** JSON Pointer to the failing keyword in the schema, e.g. `/properties/units/enum`. */
  schemaPath: string
  /** For `required` and `additionalProperties`: the member name concerned. */
  property?: string
}

/** A compiled validator: returns null when valid, else the issues (possibly only the first). */
export type CompiledValidator = (value: unknown) => ValidationIssue[] | null

/**
 * A JSON Schema engine. `compile` throws {@link SchemaUnusableError} when the schema cannot be
 * used (bad schema, remote `$ref`, unsupported feature); it must never evaluate strings as code on
 * Workers.
 */
export interface ValidatorEngine {
  readonly name: string
  compile(schema: unknown, dialect: Dialect): CompiledValidator
}

/** Thrown by engines for a schema that cannot be used; `reason` is safe to show (no schema text). */
export class SchemaUnusableError extends EdgeError {
  override readonly name = 'SchemaUnusableError'
  override readonly code = 'EDGE_ERR_SCHEMA_UNUSABLE'
  constructor(readonly reason: string) {
    super(reason)
  }
}

/** A request to the origin. Header names are lower case. Body is text (bytes as received). */
export interface OriginRequest {
  method: 'GET' | 'POST' | 'DELETE'
  url: string
  headers: Record<string, string>
  body?: string
  /** Milliseconds before the origin client aborts with {@link OriginTimeoutError}. */
  timeoutMs: number
  /**
   * Silence allowed between two chunks of the body, in ms, before {@link OriginTimeoutError};
   * default `timeoutMs`; 0: none (a standalone GET stream may be quiet for hours).
   */
  bodyTimeoutMs?: number
  /**
   * Aborts the request (headers or body) when it fires, e.g. because the client went away; the
   * client then rejects with the runtime's abort error. Optional.
   */
  signal?: ClientSignal
  /**
   * Upper bound of the body `text()` may return, in bytes (`MAX_REPLY_BYTES`). Beyond it `text()`
   * rejects with {@link OriginReplyTooLargeError} and the rest of the body is discarded unread.
   * Does not apply to `stream()`. Unset: unbounded.
   */
  maxReplyBytes?: number
}

/** The origin's reply. Exactly one of `text()` or `stream()` may be called, once. */
export interface OriginReply {
  status: number
  /** Lower-case header names. */
  headers: Record<string, string>
  /**
   * The whole body as UTF-8 text (for JSON replies). Rejects with {@link OriginReplyTooLargeError}
   * beyond the request's `maxReplyBytes`, {@link OriginTimeoutError} on a silent body.
   */
  text(): Promise<string>
  /**
   * The whole body as the origin's bytes (for JSON replies the edge relays unchanged), with the
   * same bound and errors as {@link text}; read either this or `text`, once. Optional: a client
   * without it still works, and the edge then answers with the text it re-encodes.
   */
  bytes?(): Promise<Uint8Array>
  /** The body as a byte stream (SSE replies); null when there is no body. */
  stream(): ByteSource | null
  /** Releases the body without reading it. */
  discard(): void
}

/** Sends one HTTP request to an origin. Rejects with {@link OriginTimeoutError} or any error on network failure. */
export type OriginClient = (req: OriginRequest) => Promise<OriginReply>

/** The origin client's timeout (D9: -31002). */
export class OriginTimeoutError extends EdgeError {
  override readonly name = 'OriginTimeoutError'
  override readonly code = 'EDGE_ERR_ORIGIN_TIMEOUT'
  constructor() {
    super('origin timeout')
  }
}

/** The origin's body was larger than {@link OriginRequest.maxReplyBytes} (D9: -31001); the body was discarded. */
export class OriginReplyTooLargeError extends EdgeError {
  override readonly name = 'OriginReplyTooLargeError'
  override readonly code = 'EDGE_ERR_ORIGIN_REPLY_TOO_LARGE'
  constructor() {
    super('origin reply too large')
  }
}

/** One structured log record (docs/design.md §6). */
export type LogRecord = Record<string, unknown>

/** Sink for one JSON log line per POST. Must not throw. */
export type Logger = (record: LogRecord) => void

/** Runs background work past the response (Workers `ctx.waitUntil`; Node: fire and forget). */
export type Defer = (work: Promise<unknown>) => void

/**
 * What one POST cost, for the metrics port ({@link EdgeMetrics.observePost}). Seconds are
 * high-resolution (`performance.now()`; on Workers it advances only across I/O).
 */
export interface PostFigures {
  /** The origin id (`default` or a name of `ORIGINS`). */
  origin: string
  /**
   * Time the edge itself spent: from the start of the POST to its answer (a JSON body, or the
   * headers of a relayed SSE stream), minus {@link originSeconds}.
   */
  edgeSeconds: number
  /** Time from sending to the origin until its response headers; absent when nothing was forwarded. */
  originSeconds?: number
  /** True when the POST was forwarded to the origin; false when the edge answered it alone. */
  forwarded: boolean
}

/**
 * The metrics port: the core records, the runtime stores and renders (Node: prom-client with
 * process and event-loop metrics; Workers: dependency-free Prometheus text, per isolate).
 * docs/observability.md lists the series. Every method must be cheap (called on the hot path)
 * and must not throw.
 */
export interface EdgeMetrics {
  /**
   * One graded JSON-RPC id.
   * @param method the JSON-RPC method (`''` when there was none); implementations bound it to the MCP method names
   * @param tool the tool name of a tools/call (bounded by the registry's names; `_unknown` for unknown tools)
   */
  countGrade(origin: string, method: string, tool: string | undefined, grade: string): void
  /** One POST answered (after every id of it was graded or the answer was sent). */
  observePost(figures: PostFigures): void
  /** Bytes of a POST body received (`in`) or of an answer sent (`out`), for one origin. */
  countBytes(origin: string, direction: 'in' | 'out', bytes: number): void
  /**
   * One request, or one element of a batch, refused on access grounds
   * (`mcp_edge_denials_total{reason}`): the reasons of core/guards/denial.ts `DENIAL_REASONS`
   * counted in `denials` (`tool_filtered`, `rate_limited`, `no_token`, `invalid_token`,
   * `insufficient_scope`, `jwks_unavailable`) and reply guards' codes (docs/security.md). `reason` is
   * one of the edge's fixed reason names, never caller data.
   */
  countDenial(reason: string): void
  /** An SSE stream to a client opened (+1) or ended (-1). */
  streamOpen(origin: string, delta: 1 | -1): void
  /** `mcp_edge_tool_pins{origin,state}`: tool names per pin state (docs/pinning.md), summed over the scopes held. Optional for embedders' ports. */
  setToolPins?(origin: string, state: 'approved' | 'changed' | 'pending' | 'removed', n: number): void
  /** `mcp_edge_tool_pin_blocks_total{origin,reason}`: one call or list refused, or a list with tools left out, by tool pinning. Optional. */
  countPinBlock?(origin: string, reason: string): void
  /**
   * `mcp_edge_result_findings_total{origin,category,action}`: `n` findings of a result check
   * (docs/result-checks.md); `category` and `action` are fixed names of the edge, never result text. Optional.
   */
  countResultFinding?(origin: string, category: string, action: string, n: number): void
  /** `mcp_edge_virtual_origin_left_out_total{server,origin}`: an origin of a virtual server left out of a merged list, a session or a call (docs/virtual-servers.md). Optional. */
  countVirtualLeftOut?(server: string, origin: string): void
  /** The Prometheus text exposition (format 0.0.4). */
  render(): Promise<string>
  /** The Content-Type of {@link render}'s text. */
  readonly contentType: string
}

/**
 * One trace span of the edge (an OpenTelemetry span behind the port; src/observe/otel-tracer.ts).
 * A span that records nothing (sampled out) has `recording: false`, and callers skip building
 * attributes for it; its `traceparent` still goes to the origin. With no tracer at all there is
 * no span ({@link EdgeTracer}).
 */
export interface TraceSpan {
  readonly recording: boolean
  /** Sets attributes (MCP semantic conventions: `mcp.method.name`, `gen_ai.tool.name`, `rpc.jsonrpc.error_code`, ...). */
  setAttributes(attributes: Record<string, string | number | boolean>): void
  /** Marks the span failed, with a short fixed description (never caller data). */
  fail(description: string): void
  end(): void
  /** The W3C `traceparent` naming this span, to send to the origin; undefined when not recording. */
  traceparent(): string | undefined
}

/**
 * Starts spans: a POST's root span under the client's `traceparent`, or a child of a span.
 * `start` returns undefined when no tracer is there to take the span (OpenTelemetry: no provider
 * registered): the POST then has no span at all, and the stages skip every span site (a child is
 * never asked for, no `traceparent` is sent). Why: with no provider, the three span sites of a
 * forwarded POST still cost the provider lookups and their closures on every call.
 */
export interface EdgeTracer {
  start(name: string, parent: TraceSpan | { traceparent: string | null }, kind?: 'server' | 'client' | 'internal'): TraceSpan | undefined
}
