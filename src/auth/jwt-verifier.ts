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
 * (`timeoutDuration`) and by AUTH_JWKS_MAX_BYTES (1 MiB: jose itself reads any size). On Node
 * concurrent verifications share one read (jose keeps one pending fetch: single-flight); on
 * Workers jose starts a fetch per request, because a promise made in one request's I/O context
 * cannot be awaited by another there.
 *
 * A read that fails (an error status, no answer, too large, not a key set) starts the same
 * cooldown: jose's starts only after a successful read, so while the issuer failed every request
 * read it again. Until the cooldown ends no read is made (the fetch jose asks for fails at once);
 * a token is then refused 503 `jwks_unavailable` with `Retry-After` the seconds left, except
 * when keys are held and its `kid` is not among them: 401 `unknown_key`, since a failed read
 * cannot vouch for a key the issuer never published here. The failure names the URL and what the
 * read got, for the log line; {@link JwtVerifier.keys} gives the same for `/readyz` and the
 * start-up warning.
 *
 * One verification costs 180-440 us of CPU on Node 20 (scripts/bench/access-cost.ts): wrap the
 * verifier in cachedVerifier (src/core/access/verified-token-cache.ts) so a client's repeated
 * token is checked once.
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JSONWebKeySet } from 'jose'
import {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_ALGORITHMS,
  type AccessIdentity,
  type SigningKeys,
  type TokenFailure,
  type TokenFailureCode,
  type TokenVerifier,
} from '../core/access/bearer'
import { ConfigError } from '../core/config'
import { EdgeError } from '../core/errors'
import { redactUrl } from '../core/redact-url'

// The allow-list's values live in the core (the AUTH_ALGORITHMS setting checks them there).
export { ASYMMETRIC_ALGORITHMS, DEFAULT_ALGORITHMS }

/** Leeway for `exp` and `nbf`, in seconds (clock skew between the authorization server and the edge). */
export const CLOCK_TOLERANCE_S = 30

/** Remote JWKS figures (ms; bytes), passed to jose's createRemoteJWKSet and the bounded read. */
export const JWKS_DEFAULTS = { cacheMaxAgeMs: 600_000, cooldownMs: 30_000, timeoutMs: 3_000, maxBytes: 1_048_576 } as const

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
  /** Largest JWKS answer read, bytes (AUTH_JWKS_MAX_BYTES); default 1048576. A larger one is a failed read. */
  maxBytes?: number
  /** The clock, ms since the epoch (default `Date.now`); for the failed-read cooldown. */
  now?: () => number
  /** The fetch used for the JWKS (default the global `fetch`). */
  fetch?: typeof fetch
}

/** The verifier, and the remote key set behind it (null with an inline JWKS). */
export interface JwtVerifier extends TokenVerifier {
  readonly keys: SigningKeys | null
}

/** Marks a failure to get the key set (network, status, size, JSON), as opposed to a key not in it. */
class JwksUnavailable extends EdgeError {
  override readonly name = 'JwksUnavailable'
  override readonly code = 'EDGE_ERR_JWKS_UNAVAILABLE'
  constructor(
    /** What the read got, e.g. `answered HTTP 500`. */
    readonly answered: string,
    /** Seconds until the next read may be made. */
    readonly retryAfterS: number
  ) {
    super(`the JWKS read failed: ${answered}`)
  }
}

/** A JWKS read that failed: what it got (one short phrase, no body text). */
class ReadFailed extends EdgeError {
  override readonly name = 'ReadFailed'
  override readonly code = 'EDGE_ERR_JWKS_READ'
}

/**
 * Reads a response body as text, at most `maxBytes` bytes.
 * @throws ReadFailed past `maxBytes` (the rest is not read: the connection is cancelled)
 */
async function boundedText(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN)
  const tooLarge = () => new ReadFailed(`sent more than ${maxBytes} bytes (AUTH_JWKS_MAX_BYTES)`)
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined)
    throw tooLarge()
  }
  if (!res.body) return ''
  const reader = res.body.getReader()
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge()
    }
    parts.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const p of parts) (all.set(p, at), (at += p.byteLength))
  return new TextDecoder().decode(all)
}

/** A failed fetch as a short phrase: a timeout, or the error code of the connection when there is one. */
function unreachable(e: unknown, timeoutMs: number): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return `no answer within ${timeoutMs} ms`
  const cause = e instanceof Error ? (e.cause as { code?: unknown } | undefined) : undefined
  const code = typeof cause?.code === 'string' && /^[A-Z_]{2,40}$/.test(cause.code) ? cause.code : null
  return code ? `unreachable (${code})` : 'unreachable'
}

/**
 * The remote key set: jose's createRemoteJWKSet over a fetch that reads at most `maxBytes`,
 * remembers what the last read got, and makes no read within `cooldownMs` of a failed one.
 */
function remoteKeys(url: URL, opts: JwtVerifierOptions) {
  const now = opts.now ?? Date.now
  const cooldownMs = opts.cooldownMs ?? JWKS_DEFAULTS.cooldownMs
  const timeoutMs = opts.timeoutMs ?? JWKS_DEFAULTS.timeoutMs
  const maxBytes = opts.maxBytes ?? JWKS_DEFAULTS.maxBytes
  const doFetch = opts.fetch ?? ((input, init) => fetch(input, init))
  const shown = redactUrl(url.href)
  /** The last failed read: when it ended and what it got; null after a read that succeeded. */
  let failed: { at: number; answered: string } | null = null
  const waitS = () => (failed === null ? 0 : Math.max(1, Math.ceil((failed.at + cooldownMs - now()) / 1000)))
  const cooling = () => failed !== null && now() - failed.at < cooldownMs
  const read = async (href: string, init: RequestInit): Promise<Response> => {
    if (failed !== null && cooling()) throw new ReadFailed(failed.answered)
    try {
      let res: Response
      try {
        res = await doFetch(href, init)
      } catch (e) {
        throw new ReadFailed(unreachable(e, timeoutMs))
      }
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined)
        throw new ReadFailed(res.status >= 300 && res.status < 400 ? `redirected (HTTP ${res.status}); set the key set's own URL` : `answered HTTP ${res.status}`)
      }
      let text: string
      try {
        text = await boundedText(res, maxBytes)
      } catch (e) {
        throw e instanceof ReadFailed ? e : new ReadFailed(unreachable(e, timeoutMs))
      }
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        throw new ReadFailed('sent a body that is not JSON, not a JSON Web Key Set')
      }
      const keys = (json as { keys?: unknown } | null)?.keys
      if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k)))
        throw new ReadFailed('sent JSON that is not a JSON Web Key Set {"keys":[...]}')
      failed = null
      return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } })
    } catch (e) {
      failed = { at: now(), answered: e instanceof ReadFailed ? e.message : 'failed' }
      throw e
    }
  }
  const remote = createRemoteJWKSet(url, {
    cacheMaxAge: opts.cacheMaxAgeMs ?? JWKS_DEFAULTS.cacheMaxAgeMs,
    cooldownDuration: cooldownMs,
    timeoutDuration: timeoutMs,
    [customFetch]: read,
  })
  const getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token)
    } catch (e) {
      if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys || e instanceof errors.JOSENotSupported || e instanceof errors.JOSEAlgNotAllowed)
        throw e
      const answered = failed?.answered ?? 'failed'
      // Keys held (read before): a kid that is not among them is unknown, whatever the read got.
      const held = remote.jwks()
      if (held !== undefined) {
        try {
          await createLocalJWKSet(held)(header, token)
        } catch (k) {
          if (k instanceof errors.JWKSNoMatchingKey) throw new UnknownKeyOnHeldKeys(answered)
        }
      }
      throw new JwksUnavailable(answered, waitS() || 5)
    }
  }
  const keys: SigningKeys = {
    variable: 'AUTH_JWKS_URL',
    url: shown,
    async check() {
      if (remote.fresh) return 'ok'
      if (failed !== null && cooling()) return failed.answered
      try {
        await remote.reload()
        return 'ok'
      } catch {
        return failed?.answered ?? 'failed'
      }
    },
  }
  return { getKey, keys }
}

/** An unknown `kid` decided on the keys held, because the read that might have found it failed. */
class UnknownKeyOnHeldKeys extends errors.JWKSNoMatchingKey {
  constructor(readonly answered: string) {
    super()
  }
}

/**
 * Builds the verifier.
 * @throws ConfigError naming the variable: no or both key sources (`AUTH_JWKS_URL` / `AUTH_JWKS`),
 *   an AUTH_JWKS that is not a JWKS (never shown: it may hold private members by mistake), an
 *   algorithm outside {@link ASYMMETRIC_ALGORITHMS}, an AUTH_JWKS_URL that is not http(s)
 */
export function createJwtVerifier(opts: JwtVerifierOptions): JwtVerifier {
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
  let keys: SigningKeys | null = null
  if (opts.jwksUrl !== undefined) {
    let url: URL
    try {
      url = new URL(opts.jwksUrl)
    } catch {
      throw ConfigError.bad('AUTH_JWKS_URL', opts.jwksUrl, 'an http:// or https:// URL of a JSON Web Key Set')
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw ConfigError.bad('AUTH_JWKS_URL', opts.jwksUrl, 'an http:// or https:// URL of a JSON Web Key Set')
    const maxBytes = opts.maxBytes ?? JWKS_DEFAULTS.maxBytes
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new ConfigError('AUTH_JWKS_MAX_BYTES: expected an integer >= 1', 'AUTH_JWKS_MAX_BYTES')
    ;({ getKey, keys } = remoteKeys(url, opts))
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

  const leewayMs = clockTolerance * 1000
  return {
    keys,
    async verify(token) {
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, getKey, { issuer: opts.issuer, audience: opts.audience, algorithms, clockTolerance, requiredClaims: ['exp'] }))
      } catch (e) {
        return { ok: false, failure: classify(e, fresh, opts) }
      }
      const scopes = new Set<string>()
      if (typeof payload.scope === 'string') for (const s of payload.scope.split(' ')) if (s !== '') scopes.add(s)
      if (Array.isArray(payload.scp)) for (const s of payload.scp) if (typeof s === 'string' && s !== '') scopes.add(s)
      const clientId = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : null
      const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : clientId
      if (sub === null) return fail('malformed', `The access token names no subject (no sub or client_id claim); ${fresh}.`)
      // `exp` is required and checked by jwtVerify: a finite number here.
      const identity: AccessIdentity = { sub, clientId, scopes, validUntilMs: (payload.exp as number) * 1000 + leewayMs }
      return { ok: true, identity }
    },
  }
}

/** A jose error (or ours) as a failure code and message; never the token or a claim value. */
function classify(e: unknown, fresh: string, opts: JwtVerifierOptions): TokenFailure {
  const [code, message] = classifyCode(e, fresh, opts)
  const url = opts.jwksUrl !== undefined ? redactUrl(opts.jwksUrl) : ''
  if (e instanceof JwksUnavailable) return { code, message, retryAfterS: e.retryAfterS, keys: { url, answered: e.answered } }
  if (e instanceof UnknownKeyOnHeldKeys) return { code, message, keys: { url, answered: e.answered } }
  return { code, message }
}

function classifyCode(e: unknown, fresh: string, opts: JwtVerifierOptions): [TokenFailureCode, string] {
  if (e instanceof JwksUnavailable)
    return ['jwks_unavailable', `The edge could not read the signing keys of ${opts.issuer} to check the token; try again in ${e.retryAfterS} s (the token itself may be fine).`]
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
