/**
 * @module core/access/verified-token-cache
 * Remembers accepted tokens so that a client sending the same access token on every request pays
 * for one signature check, not one per request. Measured on Node 20 here
 * (scripts/bench/access-cost.ts, a busy 2-core machine): a jose verification with cached keys
 * costs 180-440 us of process CPU (RS256, ES256, EdDSA: Web Crypto runs on the thread pool),
 * far above a forwarded call's budget of a few microseconds; a hit here costs 0.5-0.75 us.
 *
 * What is kept: the exact token text -> its identity, until the earliest of: the token's `exp`
 * (a cached token is never accepted past its own expiry; the leeway applies only to the first
 * check), {@link VerifiedTokenCacheOptions.maxAgeMs} after it was checked (default
 * 5 min: a key withdrawn at the issuer stops working here within 15 min at most, the JWKS's
 * 10 min cache age plus this), and eviction. Refusals are not kept (a token
 * that fails is checked again each time; the cheap refusals, a bad `alg` or an unknown `kid`,
 * cost no signature check). Bounded: at most `maxEntries` tokens of at most `maxTokenLength`
 * characters (longer ones are checked every time), so at most 1000 x 4096 characters by default;
 * the oldest entry goes first. Concurrent checks of one token share one verification (not on
 * Workers: {@link VerifiedTokenCacheOptions.shareInFlight}).
 * Tokens live only in this process's memory, as they do in the request headers. Pure.
 */
import type { AccessIdentity, TokenVerifier } from './bearer'

/** Options of {@link cachedVerifier}. */
export interface VerifiedTokenCacheOptions {
  /** Most tokens kept (default 1000). */
  maxEntries?: number
  /** Longest token kept, in characters (default 4096). */
  maxTokenLength?: number
  /** Longest time an accepted token is trusted without a new check, ms (default 300000). */
  maxAgeMs?: number
  /** The clock, ms since the epoch (default `Date.now`). */
  now?: () => number
  /** Reads the token's `exp` (seconds since the epoch) after it was accepted; default: decodes the JWT payload. */
  expiryOf?: (token: string) => number | null
  /**
   * Concurrent checks of one token share one verification (default true). False on Workers: a
   * promise made in one request's context must not be awaited by another request there (workerd
   * may never settle it once the first request ended), so each request verifies on its own.
   */
  shareInFlight?: boolean
}

type Verdict = Awaited<ReturnType<TokenVerifier['verify']>>

/** A verifier with the cache in front: {@link TokenVerifier.verify}, and {@link CachedVerifier.peek} for a hit without awaiting. */
export interface CachedVerifier extends TokenVerifier {
  /** Tokens kept now. */
  readonly size: number
  /**
   * The identity of a token accepted before and still kept (a copy), without awaiting; undefined
   * when it is not kept (then call `verify`). Only a token the verifier accepted is ever kept, so
   * a hit needs no other check of the token's text.
   */
  peek(token: string): AccessIdentity | undefined
}

/** `exp` of a JWT's payload, in seconds, or null (decoded without checking: only called on an accepted token). */
export function jwtExpiry(token: string): number | null {
  const part = token.split('.')[1]
  if (part === undefined) return null
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'))
    const exp = (JSON.parse(json) as { exp?: unknown }).exp
    return typeof exp === 'number' && Number.isFinite(exp) ? exp : null
  } catch {
    return null
  }
}

/**
 * Wraps a verifier with the cache described in the module comment. The identity returned from the
 * cache is a copy (its `scopes` Set may be changed by the caller without changing the cache).
 */
export function cachedVerifier(inner: TokenVerifier, opts: VerifiedTokenCacheOptions = {}): CachedVerifier {
  const maxEntries = opts.maxEntries ?? 1000
  const maxTokenLength = opts.maxTokenLength ?? 4096
  const maxAgeMs = opts.maxAgeMs ?? 300_000
  const now = opts.now ?? Date.now
  const expiryOf = opts.expiryOf ?? jwtExpiry
  const shareInFlight = opts.shareInFlight ?? true
  const kept = new Map<string, { identity: AccessIdentity; until: number }>()
  const pending = new Map<string, Promise<Verdict>>()
  const copy = (i: AccessIdentity): AccessIdentity => ({
    sub: i.sub,
    clientId: i.clientId,
    scopes: new Set(i.scopes),
    ...(i.validUntilMs !== undefined ? { validUntilMs: i.validUntilMs } : {}),
  })
  return {
    get size() {
      return kept.size
    },
    peek(token) {
      const hit = kept.get(token)
      return hit !== undefined && hit.until > now() ? copy(hit.identity) : undefined
    },
    async verify(token) {
      if (token.length > maxTokenLength) return inner.verify(token)
      const hit = kept.get(token)
      if (hit) {
        if (hit.until > now()) return { ok: true, identity: copy(hit.identity) }
        kept.delete(token)
      }
      let p = shareInFlight ? pending.get(token) : undefined
      if (!p) {
        p = inner.verify(token).then(
          (v) => {
            pending.delete(token)
            if (v.ok) {
              const exp = expiryOf(token)
              const until = Math.min(now() + maxAgeMs, exp === null ? 0 : exp * 1000)
              if (until > now()) {
                kept.set(token, { identity: copy(v.identity), until })
                while (kept.size > maxEntries) kept.delete(kept.keys().next().value as string)
              }
            }
            return v
          },
          (e: unknown) => {
            pending.delete(token)
            throw e
          }
        )
        if (shareInFlight) pending.set(token, p)
      }
      const v = await p
      return v.ok ? { ok: true, identity: copy(v.identity) } : v
    },
  }
}
