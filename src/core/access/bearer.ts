/**
 * @module core/access/bearer
 * The edge as an OAuth 2.1 resource server (MCP 2025-06-18 and 2025-11-25 Authorization), the
 * runtime-neutral half: the token verifier port and its typed failures, reading the bearer token
 * from `Authorization` (RFC 6750 §2.1), the `WWW-Authenticate` challenges of the 401 and 403
 * answers (RFC 6750 §3, MCP §Scope Challenge Handling) and the protected resource metadata
 * document with its URLs (RFC 9728). Verification itself (jose) lives in src/auth/jwt-verifier.ts.
 * Nothing here returns or logs a token. Pure.
 */

/** Who a verified token speaks for. */
export interface AccessIdentity {
  /** The token's `sub` (else its `client_id`): the caller for rate limits and logs. */
  sub: string
  /** The OAuth client: `client_id` (RFC 9068 §2.2), else `azp`; null when the token names none. */
  clientId: string | null
  /** Granted scopes: the `scope` claim split on spaces (RFC 9068 §2.2.3), or the `scp` array some servers use. */
  scopes: Set<string>
  /**
   * The last moment the edge accepts the token, ms since the epoch: its `exp` plus the clock
   * leeway. A stream opened with the token ends then. Unset: no bound known.
   */
  validUntilMs?: number
}

/** Why a request's token was not accepted. */
export type TokenFailureCode =
  'missing' | 'malformed' | 'expired' | 'not_yet_valid' | 'bad_signature' | 'wrong_issuer' | 'wrong_audience' | 'alg_not_allowed' | 'unknown_key' | 'jwks_unavailable'

/**
 * A refused token: the code and a message safe to send to the client and log (it names what is
 * wrong and what fixes it; it never holds the token nor a claim value taken from it).
 */
export interface TokenFailure {
  code: TokenFailureCode
  message: string
  /** `jwks_unavailable`: seconds until the edge reads the keys again (the `Retry-After`); default 5. */
  retryAfterS?: number
  /**
   * `jwks_unavailable` and an `unknown_key` decided without a fresh read: for the log line only
   * (never the answer), where the keys come from (the URL, credentials hidden) and what the last
   * read got, e.g. `{ url: 'https://auth.example.com/jwks.json', answered: 'answered HTTP 500' }`.
   */
  keys?: { url: string; answered: string }
}

/**
 * Where a remote key set comes from, and whether it can be read now: for `/readyz` and the
 * start-up warning (a wrong `AUTH_JWKS_URL` otherwise looks like a passing outage).
 */
export interface SigningKeys {
  /** The setting it comes from, `AUTH_JWKS_URL`. */
  readonly variable: string
  /** The URL, credentials hidden (for logs and the start-up warning, never for `/readyz`). */
  readonly url: string
  /**
   * `ok` when usable keys are held, else the outcome of one read (at most one per cooldown,
   * failed or not): `ok`, or what the read got (`answered HTTP 404`, `no answer within 3000 ms`,
   * `sent more than 1048576 bytes`, ...). Never rejects.
   */
  check(): Promise<string>
}

/** The verifier port: a bearer token (without the `Bearer ` prefix) to an identity or a failure. Never rejects. */
export interface TokenVerifier {
  verify(token: string): Promise<{ ok: true; identity: AccessIdentity } | { ok: false; failure: TokenFailure }>
}

/** Accepted signature algorithms unless `AUTH_ALGORITHMS` says otherwise (asymmetric only). */
export const DEFAULT_ALGORITHMS = ['RS256', 'ES256', 'PS256', 'EdDSA'] as const

/** Algorithms `AUTH_ALGORITHMS` may name: asymmetric JWS algorithms jose verifies on Node and Workers (never `none`, never HS*). */
export const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'])

/** Longest `Authorization` value read, in characters (a JWT access token is rarely above 4 KiB). */
export const MAX_TOKEN_LENGTH = 16_384

/** RFC 6750 §2.1 b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/**
 * Reads the bearer token of a request (RFC 6750 §2.1: `Authorization: Bearer <token>`, scheme
 * case-insensitive). Only the header method is supported (`bearer_methods_supported: ["header"]`):
 * a token in the query or the body is not looked at.
 * @param authorization the header's value, or null when absent
 * @returns the token, or a failure: `missing` (no header, or another scheme such as Basic) or
 *   `malformed` (Bearer without a token, more than one token, characters outside b64token, longer
 *   than {@link MAX_TOKEN_LENGTH})
 */
export function bearerToken(authorization: string | null | undefined): { ok: true; token: string } | { ok: false; failure: TokenFailure } {
  if (authorization === null || authorization === undefined || authorization.trim() === '')
    return {
      ok: false,
      failure: {
        code: 'missing',
        message: 'This edge needs an OAuth access token: send Authorization: Bearer <token> (the 401 answer names the resource metadata that says where to get one).',
      },
    }
  const v = authorization.trim()
  const sp = v.indexOf(' ')
  const scheme = (sp < 0 ? v : v.slice(0, sp)).toLowerCase()
  if (scheme !== 'bearer')
    return {
      ok: false,
      failure: {
        code: 'missing',
        message: 'This edge accepts only Bearer access tokens in the Authorization header (another scheme was sent): send Authorization: Bearer <token>.',
      },
    }
  const token = sp < 0 ? '' : v.slice(sp + 1).trim()
  if (token.length > MAX_TOKEN_LENGTH)
    return {
      ok: false,
      failure: { code: 'malformed', message: `The bearer token is longer than ${MAX_TOKEN_LENGTH} characters; send the access token the authorization server issued.` },
    }
  if (token === '' || !B64TOKEN.test(token))
    return {
      ok: false,
      failure: {
        code: 'malformed',
        message: 'The Authorization header does not hold one bearer token (RFC 6750 section 2.1: Bearer, one space, the token); send the access token as issued.',
      },
    }
  return { ok: true, token }
}

/** The HTTP answer of a refused token: status and the `WWW-Authenticate` value (with `Retry-After` for 503). */
export interface TokenChallenge {
  status: 401 | 503
  wwwAuthenticate: string | null
  /** Seconds, for 503 only. */
  retryAfterS?: number
}

/**
 * A quoted-string parameter value (RFC 9110 §5.6.4) restricted to what RFC 6750 §3 allows in
 * `error_description` and `scope` (%x20-21 / %x23-5B / %x5D-7E): `"` becomes `'`; `\` and every
 * code point outside printable ASCII are written `U+XXXX` (a tool named in fullwidth letters is
 * still named, not `????`); at most 300 characters.
 */
export function challengeValue(s: string): string {
  const clean = s.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/gu, (c) => (c === '"' ? "'" : 'U+' + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')))
  return '"' + (clean.length > 300 ? clean.slice(0, 297) + '...' : clean) + '"'
}

/**
 * The answer to a refused token (RFC 6750 §3, MCP Authorization §Error Handling):
 * - `missing`: 401 `Bearer resource_metadata="<url>", scope="<scope>"` without an error code
 *   (RFC 6750 §3.1: a request without credentials SHOULD NOT get one);
 * - `jwks_unavailable`: 503 with `Retry-After` (the failure's `retryAfterS`, else 5 seconds) and
 *   no challenge: the token may be fine, the edge could not get the keys to check it (telling the
 *   client its token is invalid would be false);
 * - every other code: 401 `Bearer resource_metadata="<url>", scope="<scope>", error="invalid_token", error_description="<message>"`.
 *
 * `scope` (RFC 6750 §3; MCP 2025-11-25 Authorization §Scope Selection Strategy: servers SHOULD
 * name the scopes needed) is written when `scope` is non-empty: a client then asks for it rather
 * than for every scope of `scopes_supported`.
 * @param metadataUrl the protected resource metadata URL ({@link protectedResourceMetadataUrl})
 * @param scope the scopes every call needs (the base scope of TOOL_SCOPES); empty: no `scope` parameter
 */
export function tokenChallenge(failure: TokenFailure, metadataUrl: string, scope: readonly string[] = []): TokenChallenge {
  const rm = `Bearer resource_metadata=${challengeValue(metadataUrl)}${scope.length > 0 ? `, scope=${challengeValue(scope.join(' '))}` : ''}`
  if (failure.code === 'missing') return { status: 401, wwwAuthenticate: rm }
  if (failure.code === 'jwks_unavailable') return { status: 503, wwwAuthenticate: null, retryAfterS: failure.retryAfterS ?? 5 }
  return { status: 401, wwwAuthenticate: `${rm}, error="invalid_token", error_description=${challengeValue(failure.message)}` }
}

/**
 * The 403 challenge for a token without the scopes a tool needs (RFC 6750 §3.1 `insufficient_scope`;
 * MCP 2025-11-25 Authorization §Scope Challenge Handling): `Bearer error="insufficient_scope",
 * scope="<needed>", resource_metadata="<url>", error_description="..."`.
 * @param needed every scope the operation needs (space-separated in `scope`), not only the missing ones
 * @param description the denial's message (what is missing and how to get it)
 */
export function insufficientScopeChallenge(needed: readonly string[], metadataUrl: string, description: string): string {
  return `Bearer error="insufficient_scope", scope=${challengeValue(needed.join(' '))}, resource_metadata=${challengeValue(metadataUrl)}, error_description=${challengeValue(description)}`
}

/** The path of the protected resource metadata at a host's root (RFC 9728 §3). */
export const WELL_KNOWN_PRM = '/.well-known/oauth-protected-resource'

/**
 * Checks a resource identifier (AUTH_AUDIENCE, RFC 8707 §2 and RFC 9728 §1.2): an absolute
 * https URL (http only for loopback hosts, for tests and local use) with no fragment.
 * @returns the URL, or a reason it cannot be used
 */
export function checkResourceUrl(value: string): { ok: true; url: URL } | { ok: false; reason: string } {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return { ok: false, reason: 'an absolute https:// URL, the edge MCP endpoint as clients call it, such as https://mcp.example.com/mcp' }
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]'
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return { ok: false, reason: 'an https:// URL (http:// only for 127.0.0.1, [::1] or localhost)' }
  if (url.hash !== '' || value.includes('#')) return { ok: false, reason: 'a URL without a fragment (#...), RFC 8707 §2' }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'a URL without user name or password' }
  return { ok: true, url }
}

/**
 * The protected resource metadata URL of a resource (RFC 9728 §3.1): `/.well-known/oauth-protected-resource`
 * inserted between the host and the path, a terminating `/` of the path dropped:
 * `https://h/mcp` -> `https://h/.well-known/oauth-protected-resource/mcp`; `https://h/` -> `https://h/.well-known/oauth-protected-resource`;
 * a query is kept after the path.
 * @param resource a URL accepted by {@link checkResourceUrl}
 */
export function protectedResourceMetadataUrl(resource: string | URL): string {
  const u = new URL(resource)
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '')
  return `${u.origin}${WELL_KNOWN_PRM}${path}${u.search}`
}

/**
 * The request paths on which the edge answers with the metadata document: the path-suffixed form
 * of RFC 9728 §3.1 (the one {@link protectedResourceMetadataUrl} names; for an edge mounted at
 * `/mcp`, `/.well-known/oauth-protected-resource/mcp`) and the bare `/.well-known/oauth-protected-resource`,
 * which MCP 2025-11-25 clients try next (§Protected Resource Metadata Discovery). Duplicates removed.
 */
export function protectedResourceMetadataPaths(resource: string | URL): string[] {
  const u = new URL(protectedResourceMetadataUrl(resource))
  return [...new Set([u.pathname, WELL_KNOWN_PRM])]
}

/** The protected resource metadata document (RFC 9728 §2), as the edge serves it. */
export interface ProtectedResourceMetadata {
  resource: string
  authorization_servers: string[]
  scopes_supported?: string[]
  bearer_methods_supported: ['header']
  resource_name?: string
}

/**
 * Builds the metadata document: `resource` (AUTH_AUDIENCE exactly as configured: RFC 9728 §3.3
 * has clients compare it with the resource they called), `authorization_servers: [issuer]`,
 * `scopes_supported` (the scopes of TOOL_SCOPES, omitted when there are none) and
 * `bearer_methods_supported: ["header"]`. Serve it as `application/json` on the paths of
 * {@link protectedResourceMetadataPaths}.
 */
export function protectedResourceMetadata(opts: { resource: string; issuer: string; scopes?: readonly string[]; resourceName?: string }): ProtectedResourceMetadata {
  const doc: ProtectedResourceMetadata = { resource: opts.resource, authorization_servers: [opts.issuer], bearer_methods_supported: ['header'] }
  if (opts.scopes && opts.scopes.length > 0) doc.scopes_supported = [...opts.scopes]
  if (opts.resourceName) doc.resource_name = opts.resourceName
  return doc
}
