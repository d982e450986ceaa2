/**
 * @module core/access/resource-server
 * The edge's resource-server state, built once per edge when `AUTH_ISSUER` is set: the verifier
 * (behind the port of ./bearer.ts, with the verified-token cache in front), the metadata URL the
 * challenges name, the metadata document and the paths it is served on (RFC 9728), the per-tool
 * scopes, and the credential sent to the origin instead of the client's. Pure.
 */
import { protectedResourceMetadata, protectedResourceMetadataPaths, protectedResourceMetadataUrl, type SigningKeys, type TokenVerifier } from './bearer'
import { patternCovers, patternsMeet, type ToolPattern } from '../patterns/tool-glob'
import type { ToolScopes } from './tool-scopes'
import type { CachedVerifier } from './verified-token-cache'

/** What the request path needs to act as a resource server. */
export interface EdgeAuth {
  /** AUTH_ISSUER. */
  readonly issuer: string
  /** AUTH_AUDIENCE: the edge's resource URL (RFC 8707). */
  readonly audience: string
  /** Checks a bearer token (cached: a repeated token is not verified again). */
  readonly verifier: TokenVerifier & Partial<Pick<CachedVerifier, 'peek'>>
  /** The metadata URL named in every challenge (`resource_metadata`, RFC 9728 §5.1). */
  readonly metadataUrl: string
  /** Request paths answered with the metadata document: the path-suffixed form and the bare `/.well-known/oauth-protected-resource`. */
  readonly metadataPaths: readonly string[]
  /** The metadata document as JSON text. */
  readonly metadataText: string
  /** TOOL_SCOPES. */
  readonly toolScopes: ToolScopes
  /**
   * The scopes every call needs (the base scope: the scopes of the TOOL_SCOPES entries that match
   * every tool name, such as `*`), named in the `scope` of every 401 challenge so that a client
   * asks for them and not for every scope of `scopes_supported`. Empty: no `scope` parameter.
   */
  readonly challengeScope: readonly string[]
  /** The remote key set (AUTH_JWKS_URL), for `/readyz` and the start-up warning; absent with AUTH_JWKS. */
  readonly keys?: SigningKeys
  /** ORIGIN_AUTHORIZATION: the `Authorization` value sent to the origin, or null for none. */
  readonly originAuthorization: string | null
}

/**
 * Builds the state from checked settings.
 * @param opts `issuer`, `audience` (checked by checkResourceUrl already), the verifier, the tool scopes and the origin credential
 */
export function edgeAuth(opts: {
  issuer: string
  audience: string
  verifier: TokenVerifier & Partial<Pick<CachedVerifier, 'peek'>>
  toolScopes: ToolScopes
  originAuthorization: string | null
  /** Each origin's tool filter ({@link filterLayersOf}); default: none (every tool visible). */
  filters?: readonly FilterLayers[]
  keys?: SigningKeys
}): EdgeAuth {
  const shown = shownScopes(opts.toolScopes, opts.filters ?? [])
  const doc = protectedResourceMetadata({ resource: opts.audience, issuer: opts.issuer, scopes: shown.supported })
  return {
    issuer: opts.issuer,
    audience: opts.audience,
    verifier: opts.verifier,
    metadataUrl: protectedResourceMetadataUrl(opts.audience),
    metadataPaths: protectedResourceMetadataPaths(opts.audience),
    metadataText: JSON.stringify(doc),
    toolScopes: opts.toolScopes,
    challengeScope: shown.base,
    originAuthorization: opts.originAuthorization,
    ...(opts.keys ? { keys: opts.keys } : {}),
  }
}

/**
 * The tool filter of one origin as the patterns' text, in layers: a tool is visible when every
 * layer shows it (the global TOOLS_ALLOW / TOOLS_DENY, then the origin's own lists in ORIGINS).
 */
export type FilterLayers = readonly { allow: readonly string[]; deny: readonly string[] }[]

/** The tool lists of one configuration: the global ones and each named origin's (the fields of `Config`). */
interface FilterSettings {
  originUrl: string
  toolsAllow: readonly ToolPattern[]
  toolsDeny: readonly ToolPattern[]
  origins: Record<string, { toolsAllow: readonly ToolPattern[]; toolsDeny: readonly ToolPattern[] }>
}

/** The filter layers of every origin of a configuration: `ORIGIN_URL` (global lists), each of `ORIGINS` (global and own). */
export function filterLayersOf(config: FilterSettings): FilterLayers[] {
  const global = { allow: config.toolsAllow.map((p) => p.source), deny: config.toolsDeny.map((p) => p.source) }
  const out: FilterLayers[] = []
  if (config.originUrl) out.push([global])
  for (const o of Object.values(config.origins)) out.push([global, { allow: o.toolsAllow.map((p) => p.source), deny: o.toolsDeny.map((p) => p.source) }])
  return out
}

/**
 * Most pattern-pair steps spent deciding which TOOL_SCOPES entries every filter hides (characters
 * x characters, at start only); past it the remaining entries count as visible (the metadata may
 * then list a scope no visible tool needs, as it did before this check existed).
 */
const HIDDEN_CHECK_BUDGET = 20_000_000

/**
 * Does every origin's filter hide every tool `pattern` matches? True only when the patterns show
 * it (core/patterns/tool-glob.ts patternCovers / patternsMeet): some deny pattern covers it, or an allow list
 * none of whose patterns meets it, on every origin.
 */
function hiddenEverywhere(pattern: string, origins: readonly FilterLayers[], budget: { left: number }): boolean {
  if (origins.length === 0) return false
  const spend = (other: string) => (budget.left -= (other.length + 1) * (pattern.length + 1)) >= 0
  return origins.every((layers) =>
    layers.some((l) => l.deny.some((d) => spend(d) && patternCovers(d, pattern)) || (l.allow.length > 0 && l.allow.every((a) => spend(a) && !patternsMeet(a, pattern))))
  )
}

/**
 * The scopes the edge shows: `supported` (the metadata's `scopes_supported`) holds the scopes of
 * the TOOL_SCOPES entries that may apply to a visible tool (an entry every filter hides, such as
 * `admin_*` with `TOOLS_DENY=admin_*`, would only advertise a scope no call can use); `base` the
 * scopes of those entries that match every tool name (`*`), which every call needs. Both sorted.
 */
export function shownScopes(scopes: ToolScopes, origins: readonly FilterLayers[]): { supported: string[]; base: string[] } {
  const budget = { left: HIDDEN_CHECK_BUDGET }
  const supported = new Set<string>()
  const base = new Set<string>()
  for (const e of scopes.entries) {
    if (hiddenEverywhere(e.pattern.source, origins, budget)) continue
    for (const s of e.scopes) supported.add(s)
    if (patternCovers(e.pattern.source, '*')) for (const s of e.scopes) base.add(s)
  }
  return { supported: [...supported].sort(), base: [...base].sort() }
}
