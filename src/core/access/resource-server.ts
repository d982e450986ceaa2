/**
 * @module core/access/resource-server
 * The edge's resource-server state, built once per edge when `AUTH_ISSUER` is set: the verifier
 * (behind the port of ./bearer.ts, with the verified-token cache in front), the metadata URL the
 * challenges name, the metadata document and the paths it is served on (RFC 9728), the per-tool
 * scopes, and the credential sent to the origin instead of the client's. Pure.
 */
import { protectedResourceMetadata, protectedResourceMetadataPaths, protectedResourceMetadataUrl, type TokenVerifier } from './bearer'
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
}): EdgeAuth {
  const doc = protectedResourceMetadata({ resource: opts.audience, issuer: opts.issuer, scopes: opts.toolScopes.allScopes })
  return {
    issuer: opts.issuer,
    audience: opts.audience,
    verifier: opts.verifier,
    metadataUrl: protectedResourceMetadataUrl(opts.audience),
    metadataPaths: protectedResourceMetadataPaths(opts.audience),
    metadataText: JSON.stringify(doc),
    toolScopes: opts.toolScopes,
    originAuthorization: opts.originAuthorization,
  }
}
