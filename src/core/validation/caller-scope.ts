/**
 * @module core/validation/caller-scope
 * The KV scope of a tool list (docs/design.md §7; docs/protocol-rules.md M39-M41, B7): tool
 * schemas an origin publishes with `cacheScope: "public"` are kept under `public` and serve every
 * caller; a private list (`cacheScope: "private"`, or no valid `cacheScope` in 2026-07-28) is kept
 * under the caller's own scope, `u-<SHA-256 of its authorization context>`, so one user's tools
 * never validate another's (caches MUST NOT be shared across authorization contexts).
 *
 * Runtime-neutral: the hash is Web Crypto's `crypto.subtle.digest('SHA-256')` (Node >= 20 and
 * Workers). The token itself is never written to KV or logged: only the hex digest appears in KV
 * keys. A digest costs about 30-70 us on Node 20 (Web Crypto runs it off-thread), so the last
 * {@link SCOPE_MEMO_SIZE} authorization values seen by this process or isolate are remembered in
 * memory with their digest (memory only, like the request headers themselves).
 */
import { isModern, type ProtocolVersion } from '../jsonrpc/versions'
import type { AccessIdentity } from '../access/bearer'

/** The scope of tool lists every caller may use. */
export const PUBLIC_SCOPE = 'public'

/** Domain separation: the digest of a token here is not the digest of the token anywhere else. */
const SCOPE_LABEL = 'mcp-edge-validator tool-list scope v1\n'

const encoder = new TextEncoder()

/** Authorization values whose digest is remembered per process or isolate (oldest dropped first). */
export const SCOPE_MEMO_SIZE = 1000

const memo = new Map<string, Promise<string>>()
/** The settled digests of `memo` (same keys, dropped with them): read without awaiting. */
const settled = new Map<string, string>()

async function digest(authorization: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', encoder.encode(SCOPE_LABEL + authorization))
  let hex = ''
  for (const b of new Uint8Array(d)) hex += b.toString(16).padStart(2, '0')
  return 'u-' + hex
}

/**
 * The private scope of one authorization context.
 * @param authorization the caller's `Authorization` header value, exactly as sent (null when the
 *   request carried none: every caller without credentials shares that one anonymous context)
 * @returns `u-` followed by 64 lower-case hex digits (SHA-256 of a fixed label and the value)
 */
export function privateScope(authorization: string | null): Promise<string> {
  const key = authorization ?? ''
  let p = memo.get(key)
  if (p) {
    // LRU: move to the back.
    memo.delete(key)
    memo.set(key, p)
    return p
  }
  const mine = (p = digest(key))
  memo.set(key, p)
  p.then(
    (v) => {
      if (memo.get(key) === mine) settled.set(key, v)
    },
    // A failed digest is not remembered.
    () => memo.delete(key)
  )
  while (memo.size > SCOPE_MEMO_SIZE) {
    const oldest = memo.keys().next().value as string
    memo.delete(oldest)
    settled.delete(oldest)
  }
  return p
}

/**
 * The authorization context of a verified caller (auth on), as the key {@link privateScope}
 * digests: its `sub` and OAuth client. Why the identity and not the `Authorization` value: with
 * auth on the origin never sees the client's token, and a client's tokens change (refreshed every
 * few minutes) while the caller stays the same, so keying by the raw header would start a new
 * private list, and a new tool-list pull, at each refresh. It starts with a line feed, which no
 * header value can hold, so it never equals an `Authorization` value's key.
 */
export function identityScopeKey(identity: AccessIdentity): string {
  // Length-prefixed, so no sub and client id pair reads as another (concatenation: JSON.stringify cost 0.4 us per call).
  return '\nsub ' + identity.sub.length + ':' + identity.sub + (identity.clientId === null ? '\n-' : '\n+' + identity.clientId)
}

/**
 * The private scope of an authorization context when its digest is already known in memory
 * (see {@link privateScope}), without awaiting; undefined otherwise. Does not refresh the value's
 * place in the memo (a value dropped from it is digested again on its next call).
 */
export function knownPrivateScope(authorization: string | null): string | undefined {
  return settled.get(authorization ?? '')
}

/**
 * Where the tools of one `tools/list` result belong (docs/protocol-rules.md M39 and B7).
 * - `cacheScope: "public"` -> {@link PUBLIC_SCOPE};
 * - `cacheScope: "private"`, or any other present value -> the caller's scope (SDK 2.4.0 reads a
 *   malformed value as private; the safe side for a shared gateway);
 * - absent: 2026-07-28 -> the caller's scope (the field is required there, so absence is read as
 *   private, B7); earlier revisions have no cache hints -> {@link PUBLIC_SCOPE} (docs/design.md §7).
 * @param callerScope the caller's {@link privateScope}; undefined when unknown, in which case a
 *   private list gets no scope at all (null: it must not be stored)
 */
export function listScope(cacheScope: unknown, era: ProtocolVersion, callerScope: string | undefined): string | null {
  if (cacheScope === 'public') return PUBLIC_SCOPE
  if (cacheScope === undefined && !isModern(era)) return PUBLIC_SCOPE
  return callerScope ?? null
}
