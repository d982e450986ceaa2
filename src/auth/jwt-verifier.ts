/**
 * @module auth/jwt-verifier
 * Verifies JWT access tokens with jose (runs on Node and Workers: Web Crypto only) for the
 * {@link TokenVerifier} port of src/core/access/bearer.ts. Outside src/core because the core
 * imports no library beyond what its ports need; nothing here depends on a runtime.
 *
 * Checks, in jose's order: the `alg` is in the allow-list (RS256, ES256, PS256, EdDSA by default;
 * never `none`, never HS*: a public JWKS cannot hold a shared secret, and accepting HS256 with a
 * public key as the secret is the classic key-confusion attack), the signature with the key the
 * `kid` names, `iss` equal to AUTH_ISSUER, `aud` containing AUTH_AUDIENCE (the edge's own
 * resource URL, RFC 8707; MCP: a server MUST reject tokens not issued for it), `exp` present and
 * not passed, `nbf` (when present) not in the future, both with {@link CLOCK_TOLERANCE_S} of leeway for
 * clock skew between the authorization server and the edge.
 *
 * Keys: a remote JWKS (AUTH_JWKS_URL) through jose's createRemoteJWKSet, or an inline JWKS (a JSON
 * string, e.g. a Workers secret). Remote figures (see {@link JWKS_DEFAULTS}): the key set is kept
 * 10 min (`cacheMaxAge`: a key removed at the server stops working here within 10 min), re-read
 * at once for an unknown `kid` unless it was read less than 30 s ago (`cooldownDuration`: tokens
 * with invented `kid`s make at most one JWKS request per 30 s), each read bounded by 3 s
 * (`timeoutDuration`). On Node concurrent verifications share one read (jose keeps one pending
 * fetch: single-flight); on Workers jose starts a fetch per request, because a promise made in one
 * request's I/O context cannot be awaited by another there.
 *
 * One verification costs 180-440 us of CPU on Node 20 (scripts/bench/access-cost.ts): wrap the
 * verifier in cachedVerifier (src/core/access/verified-token-cache.ts) so a client's repeated
 * token is checked once.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JSONWebKeySet } from 'jose'
import { ASYMMETRIC_ALGORITHMS, DEFAULT_ALGORITHMS, type AccessIdentity, type TokenFailure, type TokenFailureCode, type TokenVerifier } from '../core/access/bearer'
import { ConfigError } from '../core/config'
import { EdgeError } from '../core/errors'

// The allow-list's values live in the core (the AUTH_ALGORITHMS setting checks them there).
export { ASYMMETRIC_ALGORITHMS, DEFAULT_ALGORITHMS }

/** Leeway for `exp` and `nbf`, in seconds (clock skew between the authorization server and the edge). */
export const CLOCK_TOLERANCE_S = 30

/** Remote JWKS figures (ms), passed to jose's createRemoteJWKSet. */
export const JWKS_DEFAULTS = { cacheMaxAgeMs: 600_000, cooldownMs: 30_000, timeoutMs: 3_000 } as const

/** Options of {@link createJwtVerifier}. */
export interface JwtVerifierOptions {
  /** AUTH_ISSUER: the authorization server's issuer identifier; `iss` must equal it. */
  issuer: string
  /** AUTH_AUDIENCE: the edge's resource URL; `aud` must contain it. */
  audience: string
  /** AUTH_JWKS_URL: where the issuer publishes its keys. Exactly one of `jwksUrl` and `jwks`. */
  jwksUrl?: string
  /** AUTH_JWKS: the key set itself, as JSON text or parsed. */
  jwks?: string | JSONWebKeySet
  /** The allow-list; default {@link DEFAULT_ALGORITHMS}. Only {@link ASYMMETRIC_ALGORITHMS}. */
  algorithms?: readonly string[]
  /** Leeway in seconds; default {@link CLOCK_TOLERANCE_S}; 0 to 300. */
  clockToleranceS?: number
  /** Remote JWKS cache age, ms; default 600000. */
  cacheMaxAgeMs?: number
  /** Least time between two JWKS reads caused by an unknown `kid`, ms; default 30000. */
  cooldownMs?: number
  /** Bound of one JWKS read, ms; default 3000. */
  timeoutMs?: number
}

/** Marks a failure to get the key set (network, status, JSON), as opposed to a key not in it. */
class JwksUnavailable extends EdgeError {
  override readonly name = 'JwksUnavailable'
  override readonly code = 'EDGE_ERR_JWKS_UNAVAILABLE'
}

/**
 * Builds the verifier.
 * @throws ConfigError naming the variable: no or both key sources (`AUTH_JWKS_URL` / `AUTH_JWKS`),
 *   an AUTH_JWKS that is not a JWKS (never shown: it may hold private members by mistake), an
 *   algorithm outside {@link ASYMMETRIC_ALGORITHMS}, an AUTH_JWKS_URL that is not http(s)
 */
export function createJwtVerifier(opts: JwtVerifierOptions): TokenVerifier {
  const algorithms = [...(opts.algorithms ?? DEFAULT_ALGORITHMS)]
  for (const a of algorithms)
    if (!ASYMMETRIC_ALGORITHMS.has(a))
      throw new ConfigError(
        `AUTH_ALGORITHMS: ${JSON.stringify(a)} is not an asymmetric JWS algorithm; expected some of ${[...ASYMMETRIC_ALGORITHMS].join(', ')}`,
        'AUTH_ALGORITHMS'
      )
  const clockTolerance = opts.clockToleranceS ?? CLOCK_TOLERANCE_S
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0 || clockTolerance > 300) throw new ConfigError('clock tolerance: expected 0 to 300 seconds', 'AUTH_CLOCK_TOLERANCE_S')
  if ((opts.jwksUrl === undefined) === (opts.jwks === undefined))
    throw new ConfigError('AUTH_JWKS_URL / AUTH_JWKS: set exactly one (the issuer JWKS URL, or the key set as JSON)', 'AUTH_JWKS_URL')
  let getKey: JWTVerifyGetKey
  if (opts.jwksUrl !== undefined) {
    let url: URL
    try {
      url = new URL(opts.jwksUrl)
    } catch {
      throw ConfigError.bad('AUTH_JWKS_URL', opts.jwksUrl, 'an http:// or https:// URL of a JSON Web Key Set')
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw ConfigError.bad('AUTH_JWKS_URL', opts.jwksUrl, 'an http:// or https:// URL of a JSON Web Key Set')
    const remote = createRemoteJWKSet(url, {
      cacheMaxAge: opts.cacheMaxAgeMs ?? JWKS_DEFAULTS.cacheMaxAgeMs,
      cooldownDuration: opts.cooldownMs ?? JWKS_DEFAULTS.cooldownMs,
      timeoutDuration: opts.timeoutMs ?? JWKS_DEFAULTS.timeoutMs,
    })
    getKey = async (header, token) => {
      try {
        return await remote(header, token)
      } catch (e) {
        if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys || e instanceof errors.JOSENotSupported || e instanceof errors.JOSEAlgNotAllowed)
          throw e
        throw new JwksUnavailable()
      }
    }
  } else {
    let set: unknown = opts.jwks
    if (typeof set === 'string') {
      try {
        set = JSON.parse(set)
      } catch {
        throw new ConfigError('AUTH_JWKS: not valid JSON (value not shown); expected a JSON Web Key Set {"keys":[...]}', 'AUTH_JWKS')
      }
    }
    const keys = (set as { keys?: unknown } | null)?.keys
    if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k)))
      throw new ConfigError('AUTH_JWKS: not a JSON Web Key Set (value not shown); expected {"keys":[{...public key...}]} with at least one key', 'AUTH_JWKS')
    if (keys.some((k) => 'd' in k || 'k' in k))
      throw new ConfigError('AUTH_JWKS: a key holds private or secret material ("d" or "k"); publish only public keys to the edge (value not shown)', 'AUTH_JWKS')
    getKey = createLocalJWKSet(set as JSONWebKeySet)
  }

  const fail = (code: TokenFailureCode, message: string) => ({ ok: false as const, failure: { code, message } satisfies TokenFailure })
  const fresh = `get a new access token from ${opts.issuer} for ${opts.audience}`

  return {
    async verify(token) {
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, getKey, { issuer: opts.issuer, audience: opts.audience, algorithms, clockTolerance, requiredClaims: ['exp'] }))
      } catch (e) {
        return fail(...classify(e, fresh, opts))
      }
      const scopes = new Set<string>()
      if (typeof payload.scope === 'string') for (const s of payload.scope.split(' ')) if (s !== '') scopes.add(s)
      if (Array.isArray(payload.scp)) for (const s of payload.scp) if (typeof s === 'string' && s !== '') scopes.add(s)
      const clientId = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : null
      const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : clientId
      if (sub === null) return fail('malformed', `The access token names no subject (no sub or client_id claim); ${fresh}.`)
      const identity: AccessIdentity = { sub, clientId, scopes }
      return { ok: true, identity }
    },
  }
}

/** A jose error (or ours) as a failure code and message; never the token or a claim value. */
function classify(e: unknown, fresh: string, opts: JwtVerifierOptions): [TokenFailureCode, string] {
  if (e instanceof JwksUnavailable)
    return ['jwks_unavailable', `The edge could not read the signing keys of ${opts.issuer} to check the token; try again shortly (the token itself may be fine).`]
  if (e instanceof errors.JWTExpired) {
    if (e.claim === 'iat') return ['expired', `The access token was issued too long ago; ${fresh}.`]
    return ['expired', `The access token has expired (exp is more than ${opts.clockToleranceS ?? CLOCK_TOLERANCE_S} s in the past); ${fresh}.`]
  }
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'iss') return ['wrong_issuer', `The access token was not issued by ${opts.issuer} (its iss differs); ${fresh}.`]
    if (e.claim === 'aud')
      return [
        'wrong_audience',
        `The access token was not issued for this resource (its aud does not contain ${opts.audience}); request it with resource=${opts.audience} (RFC 8707).`,
      ]
    if (e.claim === 'nbf' || e.claim === 'iat')
      return ['not_yet_valid', `The access token is not valid yet (its ${e.claim} is in the future beyond the edge clock leeway); check the clocks, or ${fresh}.`]
    if (e.reason === 'missing') return ['malformed', `The access token lacks the ${e.claim} claim; ${fresh}.`]
    return ['malformed', `The access token has an unusable ${e.claim} claim; ${fresh}.`]
  }
  if (e instanceof errors.JOSEAlgNotAllowed)
    return ['alg_not_allowed', `The access token is signed with an algorithm this edge does not accept (allowed: ${(opts.algorithms ?? DEFAULT_ALGORITHMS).join(', ')}); ${fresh}.`]
  if (e instanceof errors.JWSSignatureVerificationFailed) return ['bad_signature', `The access token signature does not verify with the issuer's key; ${fresh}.`]
  if (e instanceof errors.JWKSNoMatchingKey) return ['unknown_key', `The access token is signed with a key ${opts.issuer} does not publish (unknown kid); ${fresh}.`]
  if (e instanceof errors.JWKSMultipleMatchingKeys) return ['unknown_key', `The access token does not say which key signed it (no kid, and several keys fit); ${fresh}.`]
  return ['malformed', `The bearer token is not a well-formed signed JWT access token; ${fresh}.`]
}
