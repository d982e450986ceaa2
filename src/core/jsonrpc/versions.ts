/**
 * @module core/jsonrpc/versions
 * Protocol versions ("eras") and the per-era rules of docs/design.md §3. Pure.
 */

/**
 * Protocol versions the edge speaks, newest first (the order used in -32022 `data.supported`).
 * 2024-11-05 defined only stdio and HTTP+SSE; its sessions on Streamable HTTP are served under
 * the 2025-03-26 transport rules without batches (docs/protocol-rules.md §7).
 */
export const ALL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const

/** One MCP protocol version. */
export type ProtocolVersion = (typeof ALL_VERSIONS)[number]

/** The version assumed when a 2025-era request carries no `MCP-Protocol-Version` header (MCP 2025-06-18 transports). */
export const DEFAULT_VERSION: ProtocolVersion = '2025-03-26'

/** The 2026-07-28 `_meta` key that carries the per-request version (docs/protocol-rules.md M10). */
export const META_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion'

/** The first modern revision: per-request `_meta` version, standard headers, no sessions. */
export const MODERN_VERSION: ProtocolVersion = '2026-07-28'

const DATE = /^\d{4}-\d{2}-\d{2}$/

/**
 * True when `v` is a well-formed version string (`YYYY-MM-DD`) naming 2026-07-28 or later. The
 * format is checked first (docs/protocol-rules.md §3, B14): SDK's plain string comparison calls "banana" modern.
 */
export function looksModern(v: string): boolean {
  return DATE.test(v) && v >= '2026-07-28'
}

/** `versions` sorted newest first (the order of -32022 `data.supported`, docs/protocol-rules.md M12). */
export function newestFirst(versions: readonly ProtocolVersion[]): ProtocolVersion[] {
  return ALL_VERSIONS.filter((v) => versions.includes(v))
}

/** True when `v` is one of {@link ALL_VERSIONS}. */
export function isKnownVersion(v: unknown): v is ProtocolVersion {
  return typeof v === 'string' && (ALL_VERSIONS as readonly string[]).includes(v)
}

/**
 * Batches are allowed only in 2025-03-26: added there (changelog), removed in 2025-06-18, and
 * absent from 2024-11-05 (its schema's `JSONRPCMessage` has no array).
 */
export function allowsBatches(v: ProtocolVersion): boolean {
  return v === '2025-03-26'
}

/**
 * True when a client of version `v` sends `MCP-Protocol-Version` after `initialize` (introduced by
 * 2025-06-18; 2024-11-05 and 2025-03-26 clients need not, though SDK clients do).
 */
export function hasVersionHeader(v: ProtocolVersion): boolean {
  return v >= '2025-06-18'
}

/** From 2025-11-25 on, invalid tool arguments are a tool execution error (SEP-1303). */
export function invalidArgsAsToolError(v: ProtocolVersion): boolean {
  return v >= '2025-11-25'
}

/** The 2026-07-28 revision: stateless, per-request version, standard headers. */
export function isModern(v: ProtocolVersion): boolean {
  return v >= '2026-07-28'
}

/** JSON Schema dialects the edge validates. */
export type Dialect = 'draft-07' | '2019-09' | '2020-12'

/**
 * The dialect of a schema: its `$schema` when present (null when that names a dialect the edge
 * does not support), else the era default (draft-07 before 2025-11-25, 2020-12 from then on;
 * MCP 2025-11-25 basic "JSON Schema Usage").
 */
export function dialectOf(schema: unknown, era: ProtocolVersion): Dialect | null {
  const declared = typeof schema === 'object' && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined
  if (declared === undefined) return era >= '2025-11-25' ? '2020-12' : 'draft-07'
  if (typeof declared !== 'string') return null
  const s = declared.replace(/^https?:\/\//, '').replace(/#$/, '')
  if (s === 'json-schema.org/draft-07/schema' || s === 'json-schema.org/draft-06/schema') return 'draft-07'
  if (s === 'json-schema.org/draft/2019-09/schema') return '2019-09'
  if (s === 'json-schema.org/draft/2020-12/schema') return '2020-12'
  return null
}
