/**
 * @module core/validation/kv-keys
 * The KV key layout of tool schemas (docs/design.md §7; one namespace, all values JSON text):
 * - `tools:<originId>:<scope>:<toolName>` -> one tool's record (tool-registry.ts `ToolRecord`)
 * - `toollist:<originId>:<scope>` -> `{ names, hash, fetchedAt, ttlMs? }` of the last full pull
 * - `scopes:<originId>:<scope>` -> `{ at }`: a private scope's marker (private-scopes.ts)
 * Keys of a private scope are written with `expirationTtl` (`PRIVATE_SCOPE_TTL_S`).
 * `scope` is `public`, or `u-<SHA-256 of the caller's Authorization>` for a private list
 * (caller-scope.ts). The in-memory cache uses the same keys. Pure.
 */

/** The key of one tool's record. */
export function toolKey(originId: string, scope: string, name: string): string {
  return `tools:${originId}:${scope}:${name}`
}

/** The prefix of every tool record of an origin in one scope, or in every scope when `scope` is omitted. */
export function toolPrefix(originId: string, scope?: string): string {
  return scope === undefined ? `tools:${originId}:` : `tools:${originId}:${scope}:`
}

/** The key of an origin's last full tool list in one scope. */
export function toolListKey(originId: string, scope: string): string {
  return `toollist:${originId}:${scope}`
}

/**
 * The key of a private scope's marker, `scopes:<originId>:<scope>` -> `{ at }` (epoch ms of the
 * scope's last write), written with every write into the scope and expiring after twice
 * `PRIVATE_SCOPE_TTL_S`: the store-side index by which the oldest private scopes of an origin are
 * found and removed (private-scopes.ts).
 */
export function scopeMarkerKey(originId: string, scope: string): string {
  return `scopes:${originId}:${scope}`
}

/** The prefix of every private scope marker of an origin. */
export function scopeMarkerPrefix(originId: string): string {
  return `scopes:${originId}:`
}
