/**
 * @module ports
 * What the runtime entries implement and hand to the core. The core only sees these shapes, so
 * the same pipeline runs on Node (undici, file store, ajv) and Workers (fetch, KV, cfworker).
 */
import type { Dialect } from './protocol/versions'
import type { ClientSignal } from './client-signal'
import type { ByteSource } from './edge-response'

/**
 * A key-value namespace: Workers KV's `get`/`put`/`delete` subset. Values are JSON text.
 * Errors: implementations may throw on I/O failure; the core treats that as "no schema" (D8).
 */
export interface KvStore {
  get(key: string): Promise<string | null>
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>
  delete(key: string): Promise<void>
}

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
export class SchemaUnusableError extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = 'SchemaUnusableError'
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
  /** The body as a byte stream (SSE replies); null when there is no body. */
  stream(): ByteSource | null
  /** Releases the body without reading it. */
  discard(): void
}

/** Sends one HTTP request to an origin. Rejects with {@link OriginTimeoutError} or any error on network failure. */
export type OriginClient = (req: OriginRequest) => Promise<OriginReply>

/** The origin client's timeout (D9: -31002). */
export class OriginTimeoutError extends Error {
  constructor() {
    super('origin timeout')
    this.name = 'OriginTimeoutError'
  }
}

/** The origin's body was larger than {@link OriginRequest.maxReplyBytes} (D9: -31001); the body was discarded. */
export class OriginReplyTooLargeError extends Error {
  constructor() {
    super('origin reply too large')
    this.name = 'OriginReplyTooLargeError'
  }
}

/** One structured log record (docs/design.md §6). */
export type LogRecord = Record<string, unknown>

/** Sink for one JSON log line per POST. Must not throw. */
export type Logger = (record: LogRecord) => void

/** Runs background work past the response (Workers `ctx.waitUntil`; Node: fire and forget). */
export type Defer = (work: Promise<unknown>) => void
