/**
 * @module core/protocol/era-decision
 * Which protocol version ("era") serves a message, or why it is refused: the per-request `_meta`
 * version envelope of 2026-07-28, the `MCP-Protocol-Version` cross-check, the batch rule, and
 * what the origin is known to speak (protocol/origin-eras.ts). Pure; never throws.
 *
 * Follows docs/protocol-rules.md §4 (check order) and §3 (rows E1-E24); docs/design.md §3, D14, D17.
 * Codes: -32602 envelope (400), -32020 header mismatch (400), -32022 unsupported version (400).
 */
import { allowsBatches, DEFAULT_VERSION, isKnownVersion, isModern, looksModern, META_VERSION_KEY, newestFirst, type ProtocolVersion } from '../jsonrpc/versions'
import { ErrorCode, isObject, NULL_ID, type RawId } from '../jsonrpc/jsonrpc'
import type { ProtocolRefusal } from '../local-answer'
import type { Classified } from '../request/classify'
import { type RequestHeaders } from '../edge-response'
import type { OriginEraView } from './origin-eras'
import { headerMismatch, refuse, unsupportedVersion } from './protocol-refusals'
import { boundText } from '../jsonrpc/bound-text'

/** `_meta` key of the client capabilities (required on every 2026-07-28 request). */
export const META_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities'
/** `_meta` key of the client info (optional, SHOULD). */
export const META_CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo'
/** `_meta` key of the per-request log level (optional). */
export const META_LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel'

/** The era a message is served in, or why it is refused. */
export type EraDecision = { kind: 'legacy'; era: ProtocolVersion } | { kind: 'modern' } | ProtocolRefusal

/** What era detection needs besides the message. */
export interface EraContext {
  headers: RequestHeaders
  /** Versions the edge accepts (SUPPORTED_VERSIONS). */
  supported: readonly ProtocolVersion[]
  /** What the origin is known to speak (learned, D17), if anything. */
  origin?: OriginEraView
}

/** The trimmed `MCP-Protocol-Version` header, or null when absent. */
export function headerVersion(headers: RequestHeaders): string | null {
  const v = headers.get('mcp-protocol-version')
  return v === null ? null : v.trim()
}

/** The envelope claim of a message: present when `params._meta` holds the version key. */
function claimOf(value: unknown): { present: boolean; version?: unknown; meta?: Record<string, unknown> } {
  if (!isObject(value) || !isObject(value.params) || !isObject(value.params._meta)) return { present: false }
  const meta = value.params._meta
  if (!(META_VERSION_KEY in meta)) return { present: false, meta }
  return { present: true, version: meta[META_VERSION_KEY], meta }
}

/** Envelope problems (MCP 2026-07-28 Basic §_meta): missing or malformed required fields, malformed optional ones. */
function envelopeIssues(meta: Record<string, unknown> | undefined): { missing: string[]; invalid: string[] } {
  const missing: string[] = []
  const invalid: string[] = []
  if (!meta) return { missing: ['_meta'], invalid }
  if (!(META_VERSION_KEY in meta)) missing.push(META_VERSION_KEY)
  else if (typeof meta[META_VERSION_KEY] !== 'string') invalid.push(META_VERSION_KEY)
  if (!(META_CAPABILITIES_KEY in meta)) missing.push(META_CAPABILITIES_KEY)
  else if (!isObject(meta[META_CAPABILITIES_KEY])) invalid.push(META_CAPABILITIES_KEY)
  if (META_CLIENT_INFO_KEY in meta && !isObject(meta[META_CLIENT_INFO_KEY])) invalid.push(META_CLIENT_INFO_KEY)
  if (META_LOG_LEVEL_KEY in meta && typeof meta[META_LOG_LEVEL_KEY] !== 'string') invalid.push(META_LOG_LEVEL_KEY)
  return { missing, invalid }
}

function envelopeError(id: RawId, issues: { missing: string[]; invalid: string[] }): ProtocolRefusal {
  const parts = [...issues.missing.map((k) => `missing ${k}`), ...issues.invalid.map((k) => `malformed ${k}`)]
  return refuse(400, id, ErrorCode.InvalidParams, `Invalid params: the 2026-07-28 request envelope in params._meta is incomplete (${parts.join('; ')})`, { envelope: issues })
}

/** Versions a modern claim may name: the modern ones the edge supports and the origin is not known to lack. */
function modernAllowed(ctx: EraContext): ProtocolVersion[] {
  return ctx.supported.filter((v) => isModern(v) && ctx.origin?.speaks(v) !== false)
}

/**
 * The list shown in -32022 for a refused 2026-07-28 request: what the edge and its origin both
 * serve. Once the origin has listed its versions itself (`server/discover`, or its own -32022),
 * only versions on that list are named, so the error never offers a version the client's own
 * `server/discover` (relayed from the origin) did not (2026-07-28 Basic/Versioning: the error
 * lists "the versions it does support"). An empty intersection falls back to the edge's list.
 */
function servedList(ctx: EraContext): ProtocolVersion[] {
  const both = ctx.supported.filter((v) => ctx.origin?.speaks(v) !== false)
  const announced = ctx.origin?.announced()
  if (!announced) return both
  const listed = both.filter((v) => announced.has(v))
  return listed.length > 0 ? listed : both
}

/**
 * Decides the era of one classified message (request, notification or client response) of a
 * non-batch body, docs/protocol-rules.md E6-E24.
 * @param c the classified message (not `invalid`: shape errors are answered before the era)
 * @param value the parsed message
 */
export function decideEra(c: Exclude<Classified, { kind: 'invalid' }>, value: unknown, ctx: EraContext): EraDecision {
  const P = headerVersion(ctx.headers)
  const id = c.kind === 'request' ? c.id : NULL_ID
  const pModern = P !== null && looksModern(P)

  if (c.kind === 'response') {
    // E6: clients MUST NOT post responses in 2026-07-28 (B16: -32600).
    if (pModern) return refuse(400, NULL_ID, ErrorCode.InvalidRequest, 'Invalid Request: a 2026-07-28 client must not post JSON-RPC responses')
    return legacyByHeader(P, id, ctx)
  }

  const claim = claimOf(value)
  const mcpMethod = ctx.headers.get('mcp-method')
  if (claim.present) {
    // E8: the envelope must be complete and well-formed.
    const issues = envelopeIssues(claim.meta)
    if (issues.missing.length || issues.invalid.length) return envelopeError(id, issues)
    const C = claim.version as string
    // E9 / E21: the header, when present, must equal the claim.
    if (P !== null && P !== C) return headerMismatch(id, 'MCP-Protocol-Version does not equal the protocol version in params._meta')
    // E10: Mcp-Method, when present, must equal the method (values are case-sensitive).
    if (mcpMethod !== null && mcpMethod.trim() !== c.method) return headerMismatch(id, 'Mcp-Method does not equal the method in the body')
    if (c.method === 'initialize' && P === null) return headerMismatch(id, 'initialize with a 2026-07-28 envelope needs the MCP-Protocol-Version header')
    // E11: a claim must name a modern version both the edge and the origin serve.
    if (!(isKnownVersion(C) && modernAllowed(ctx).includes(C))) return unsupportedVersion(id, C, servedList(ctx))
    // E12: the header is required on every 2026-07-28 POST (notifications: optional, E20).
    if (P === null && c.kind === 'request') return headerMismatch(id, 'the MCP-Protocol-Version header is missing')
    return { kind: 'modern' }
  }

  if (P === null) {
    if (c.kind === 'request' && c.method === 'initialize') return legacyInitialize(c, value, ctx)
    return legacyByHeader(P, id, ctx)
  }
  if (pModern) {
    if (c.kind === 'notification') {
      // E22: no envelope needed on notifications; Mcp-Method optional, checked when present (B3).
      if (!(isKnownVersion(P) && ctx.supported.includes(P))) return unsupportedVersion(NULL_ID, P, ctx.supported)
      if (mcpMethod !== null && mcpMethod.trim() !== c.method) return headerMismatch(NULL_ID, 'Mcp-Method does not equal the method in the body')
      return { kind: 'modern' }
    }
    // D14 / E16: a version the edge does not serve is named first (B4), in every era.
    if (!(isKnownVersion(P) && ctx.supported.includes(P))) return unsupportedVersion(id, P, servedList(ctx))
    // E15: initialize under a modern header is a contradiction (SDK r16).
    if (c.method === 'initialize') return headerMismatch(id, 'initialize does not exist in MCP 2026-07-28; send it without a 2026-07-28 MCP-Protocol-Version header')
    return envelopeError(id, envelopeIssues(claim.meta))
  }
  // E17 / E19: a legacy header.
  return legacyByHeader(P, id, ctx)
}

function legacyByHeader(P: string | null, id: RawId, ctx: EraContext): EraDecision {
  if (P === null) {
    // E18: no header means 2025-03-26, when served.
    if (!ctx.supported.includes(DEFAULT_VERSION)) return unsupportedVersion(id, DEFAULT_VERSION, ctx.supported)
    return { kind: 'legacy', era: DEFAULT_VERSION }
  }
  if (isKnownVersion(P) && !isModern(P) && ctx.supported.includes(P)) return { kind: 'legacy', era: P }
  return unsupportedVersion(id, P, ctx.supported)
}

/**
 * E14: a header-less `initialize` is forwarded; the origin negotiates the version (D14). The era
 * is the asked version when the edge knows it. Only an edge serving no legacy version refuses it,
 * naming what it serves (2026-07-28 versioning, Backward Compatibility; vector 151).
 */
function legacyInitialize(c: Extract<Classified, { kind: 'request' }>, value: unknown, ctx: EraContext): EraDecision {
  const asked = isObject(value) && isObject(value.params) ? value.params.protocolVersion : undefined
  if (!ctx.supported.some((v) => !isModern(v))) return unsupportedVersion(c.id, typeof asked === 'string' ? asked : DEFAULT_VERSION, ctx.supported)
  if (isKnownVersion(asked) && !isModern(asked) && ctx.supported.includes(asked)) return { kind: 'legacy', era: asked }
  const fallback = newestFirst(ctx.supported).find((v) => !isModern(v))!
  return { kind: 'legacy', era: ctx.supported.includes(DEFAULT_VERSION) ? DEFAULT_VERSION : fallback }
}

/**
 * The batch rule (docs/protocol-rules.md E3-E5; docs/design.md §3): arrays only in 2025-03-26 or with
 * no header; an element carrying a modern claim refuses the whole body.
 * @returns the era to process the batch in, or a refusal (400, id null)
 */
export function decideBatchEra(values: unknown[], ctx: EraContext): { kind: 'legacy'; era: ProtocolVersion } | ProtocolRefusal {
  const P = headerVersion(ctx.headers)
  if (values.some((v) => claimOf(v).present)) return refuse(400, NULL_ID, ErrorCode.InvalidRequest, 'Invalid Request: MCP 2026-07-28 does not allow JSON-RPC batches')
  if (P !== null && !(isKnownVersion(P) && ctx.supported.includes(P)) && !looksModern(P)) return unsupportedVersion(NULL_ID, P, ctx.supported)
  if (P !== null && !(isKnownVersion(P) && allowsBatches(P)))
    return refuse(400, NULL_ID, ErrorCode.InvalidRequest, `Invalid Request: JSON-RPC batches are not part of MCP ${boundText(P, 64, '')}; send one message per POST`)
  if (!ctx.supported.includes(DEFAULT_VERSION)) return unsupportedVersion(NULL_ID, DEFAULT_VERSION, ctx.supported)
  return { kind: 'legacy', era: DEFAULT_VERSION }
}
