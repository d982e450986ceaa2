/**
 * @module core/protocol/modern-requests
 * Era detection for the four protocol versions and the 2026-07-28 request rules: the per-request
 * `_meta` version envelope, the `MCP-Protocol-Version` cross-check, the standard `Mcp-Method` /
 * `Mcp-Name` headers, `Mcp-Param-*` headers for `x-mcp-header` arguments, and the era learned
 * from each origin's answers. Pure apart from the per-isolate origin-era memory; never throws.
 *
 * Follows docs/protocol-rules.md §4 (check order) and §3 (rows E1-E24); docs/design.md §3, D14, D17.
 * Codes: -32602 envelope (400), -32020 header mismatch (400), -32022 unsupported version (400).
 */
import { allowsBatches, DEFAULT_VERSION, isKnownVersion, isModern, looksModern, META_VERSION_KEY, newestFirst, type ProtocolVersion } from './versions'
import { ErrorCode, isObject, NULL_ID, type RawId } from './jsonrpc'
import type { ProtocolRefusal } from '../local-answer'
import type { Classified } from '../request/classify'
import { type RequestHeaders } from '../edge-response'

/** `_meta` key of the client capabilities (required on every 2026-07-28 request). */
export const META_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities'
/** `_meta` key of the client info (optional, SHOULD). */
export const META_CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo'
/** `_meta` key of the per-request log level (optional). */
export const META_LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel'

/** A refusal of the message: HTTP status plus one JSON-RPC error for `id` ({@link ProtocolRefusal}). */
export type EraRefusal = ProtocolRefusal

/** The era a message is served in, or why it is refused. */
export type EraDecision = { kind: 'legacy'; era: ProtocolVersion } | { kind: 'modern' } | EraRefusal

/** What era detection needs besides the message. */
export interface EraContext {
  headers: RequestHeaders
  /** Versions the edge accepts (SUPPORTED_VERSIONS). */
  supported: readonly ProtocolVersion[]
  /** What the origin is known to speak (learned, D17), if anything. */
  origin?: OriginEraView
}

function clip(s: string): string {
  return s.length > 64 ? s.slice(0, 64) : s
}

/** The trimmed `MCP-Protocol-Version` header, or null when absent. */
export function headerVersion(headers: RequestHeaders): string | null {
  const v = headers.get('mcp-protocol-version')
  return v === null ? null : v.trim()
}

function refuse(status: number, id: RawId, code: number, message: string, data?: unknown): EraRefusal {
  return { kind: 'protocol', status, id, error: { code, message, ...(data !== undefined ? { data } : {}) } }
}

/**
 * 400 -32022 with `data: { supported, requested }` (D14; docs/protocol-rules.md M12). `requested` is
 * clipped to 64 characters; the message lists the supported versions, newest first.
 */
export function unsupportedVersion(id: RawId, requested: unknown, supported: readonly ProtocolVersion[]): EraRefusal {
  const list = newestFirst(supported)
  const req = typeof requested === 'string' ? clip(requested) : String(requested === undefined ? '' : JSON.stringify(requested) ?? '').slice(0, 64)
  return refuse(400, id, ErrorCode.UnsupportedVersion, `Unsupported protocol version. Supported versions: ${list.join(', ')}`, { supported: list, requested: req })
}

function headerMismatch(id: RawId, what: string): EraRefusal {
  return refuse(400, id, ErrorCode.HeaderMismatch, `Header mismatch: ${what}`)
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

function envelopeError(id: RawId, issues: { missing: string[]; invalid: string[] }): EraRefusal {
  const parts = [...issues.missing.map((k) => `missing ${k}`), ...issues.invalid.map((k) => `malformed ${k}`)]
  return refuse(400, id, ErrorCode.InvalidParams, `Invalid params: the 2026-07-28 request envelope in params._meta is incomplete (${parts.join('; ')})`, { envelope: issues })
}

/** Versions a modern claim may name: the modern ones the edge supports and the origin is not known to lack. */
function modernAllowed(ctx: EraContext): ProtocolVersion[] {
  return ctx.supported.filter((v) => isModern(v) && ctx.origin?.speaks(v) !== false)
}

/** The list shown in -32022 for a refused modern claim: what the edge and its origin both serve. */
function servedList(ctx: EraContext): ProtocolVersion[] {
  return ctx.supported.filter((v) => ctx.origin?.speaks(v) !== false)
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
    if (!(isKnownVersion(P) && ctx.supported.includes(P))) return unsupportedVersion(id, P, ctx.supported)
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
export function decideBatchEra(values: unknown[], ctx: EraContext): { kind: 'legacy'; era: ProtocolVersion } | EraRefusal {
  const P = headerVersion(ctx.headers)
  if (values.some((v) => claimOf(v).present)) return refuse(400, NULL_ID, ErrorCode.InvalidRequest, 'Invalid Request: MCP 2026-07-28 does not allow JSON-RPC batches')
  if (P !== null && !(isKnownVersion(P) && ctx.supported.includes(P)) && !looksModern(P)) return unsupportedVersion(NULL_ID, P, ctx.supported)
  if (P !== null && !(isKnownVersion(P) && allowsBatches(P))) return refuse(400, NULL_ID, ErrorCode.InvalidRequest, `Invalid Request: JSON-RPC batches are not part of MCP ${clip(P)}; send one message per POST`)
  if (!ctx.supported.includes(DEFAULT_VERSION)) return unsupportedVersion(NULL_ID, DEFAULT_VERSION, ctx.supported)
  return { kind: 'legacy', era: DEFAULT_VERSION }
}

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a standard-header value (MCP 2026-07-28 Streamable HTTP §Value Encoding): optional whitespace trimmed; the exact
 * lower-case `=?base64?…?=` sentinel holds canonical Base64 of UTF-8. Anything else is literal.
 * @returns the value, or null for a sentinel whose payload is not canonical Base64 of UTF-8
 */
export function decodeHeaderValue(raw: string): string | null {
  const v = raw.trim()
  if (!v.startsWith('=?base64?') || !v.endsWith('?=')) return v
  const m = SENTINEL.exec(v)
  if (!m || m[1]!.length % 4 !== 0) return null
  let bin: string
  try {
    bin = atob(m[1]!)
  } catch {
    return null
  }
  if (btoa(bin) !== m[1]) return null // canonical Base64 only (SDK BASE64_CANONICAL)
  const bytes = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
  try {
    return utf8.decode(bytes)
  } catch {
    return null
  }
}

/** Methods whose body field `Mcp-Name` mirrors (MCP 2026-07-28 Streamable HTTP §Standard Request Headers). */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' }

/**
 * Step C9 of docs/protocol-rules.md §4 for a 2026-07-28 request: `Mcp-Method` present and equal to the
 * method; `Mcp-Name` present and equal (after decoding) whenever the body has the mirrored field
 * (B15: absent field, no header required). Failures: 400 -32020 with the id.
 */
export function checkStandardHeaders(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders): EraRefusal | null {
  const method = headers.get('mcp-method')
  if (method === null) return headerMismatch(c.id, 'the Mcp-Method header is missing')
  if (method.trim() !== c.method) return headerMismatch(c.id, 'Mcp-Method does not equal the method in the body')
  const field = NAME_SOURCE[c.method]
  const mirrored = field && c.params ? c.params[field] : undefined
  if (typeof mirrored !== 'string') return null
  const raw = headers.get('mcp-name')
  if (raw === null) return headerMismatch(c.id, `the Mcp-Name header is missing (it must mirror params.${field})`)
  const name = decodeHeaderValue(raw)
  if (name === null) return headerMismatch(c.id, 'Mcp-Name holds an invalid Base64 sentinel')
  if (name !== mirrored) return headerMismatch(c.id, `Mcp-Name does not equal params.${field}`)
  return null
}

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
export function checkParamHeaders(id: RawId, schema: unknown, args: Record<string, unknown>, headers: RequestHeaders): EraRefusal | null {
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
    if (!same && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) return headerMismatch(id, `Mcp-Param-${d.header} does not equal the argument ${d.path.join('.')}`)
  }
  return null
}

/** What an origin is known to speak. `speaks(v)`: true, false, or undefined when not known. */
export interface OriginEraView {
  speaks(v: ProtocolVersion): boolean | undefined
}

/**
 * The era of each origin, learned from its answers and kept per process or isolate (D17; docs/protocol-rules.md
 * M28): a `server/discover` result (its `supportedVersions`), a -32022 with `data.supported`,
 * a `server/discover` answered with any other error (a legacy-only server: -32601 or a 2025 SDK's
 * 400 -32000, as SDK's probe classifier reads it), and `initialize` results (the legacy version
 * they negotiate). Unknown until the origin has answered once.
 */
export class OriginEras {
  private readonly known = new Map<string, { versions: Set<string>; modern: boolean | undefined }>()

  /** The view of one origin. */
  view(originId: string): OriginEraView {
    return {
      speaks: (v) => {
        const k = this.known.get(originId)
        if (!k) return undefined
        if (k.versions.has(v)) return true
        if (isModern(v)) return k.modern
        return undefined
      },
    }
  }

  /**
   * Learns from one reply message of the origin to a forwarded request.
   * @param method the method of the request it answers
   * @param msg the parsed JSON-RPC response
   * @param status the HTTP status it came with; 401, 403 and 5xx are never era evidence
   */
  observe(originId: string, method: string, msg: unknown, status = 200): void {
    if (!isObject(msg) || status === 401 || status === 403 || status >= 500) return
    const err = isObject(msg.error) ? msg.error : null
    // Most replies (every tools/call) teach nothing: leave before allocating anything.
    if (method !== 'server/discover' && method !== 'initialize' && err?.code !== ErrorCode.UnsupportedVersion) return
    const entry = this.known.get(originId) ?? { versions: new Set<string>(), modern: undefined }
    if (err && err.code === ErrorCode.UnsupportedVersion && isObject(err.data) && Array.isArray(err.data.supported)) {
      const list = err.data.supported.filter((v): v is string => typeof v === 'string')
      entry.versions = new Set(list)
      entry.modern = list.some((v) => looksModern(v))
    } else if (method === 'server/discover') {
      if (isObject(msg.result) && Array.isArray(msg.result.supportedVersions)) {
        for (const v of msg.result.supportedVersions) if (typeof v === 'string') entry.versions.add(v)
        entry.modern = msg.result.supportedVersions.some((v) => typeof v === 'string' && looksModern(v))
      } else if (err) {
        // Any other error to the probe means a server that does not speak 2026-07-28 (SDK probeClassifier).
        entry.modern = false
      } else return
    } else if (method === 'initialize' && isObject(msg.result) && typeof msg.result.protocolVersion === 'string') {
      if (!isKnownVersion(msg.result.protocolVersion)) return
      entry.versions.add(msg.result.protocolVersion)
    } else return
    this.known.set(originId, entry)
  }
}

const registry = new WeakMap<object, OriginEras>()

/** The {@link OriginEras} of one edge instance (keyed by its deps object: one per process or isolate). */
export function originErasFor(owner: object): OriginEras {
  let e = registry.get(owner)
  if (!e) registry.set(owner, (e = new OriginEras()))
  return e
}
