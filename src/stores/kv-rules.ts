/**
 * @module stores/kv-rules
 * The input rules of Workers KV that every store of the edge applies the same way (so a key or TTL
 * that works on Node works on Workers and the reverse), the key order of `list` and its cursor.
 * Runtime-neutral (TextEncoder, btoa/atob). docs/stores.md lists the rules.
 */
import type { KvListOptions } from '../core/ports'

/** Default prefix of the Redis store's keys (`STORE_PREFIX`). */
export const DEFAULT_REDIS_PREFIX = 'mcp-edge:'

/** Longest key, in UTF-8 bytes (Workers KV: 512). */
export const MAX_KEY_BYTES = 512
/** Shortest `expirationTtl`, in seconds (Workers KV: 60). */
export const MIN_TTL_S = 60
/** Most keys in one `list` page, and the default (Workers KV: 1000). */
export const MAX_LIST_LIMIT = 1000

const encoder = new TextEncoder()

/**
 * Checks a key against Workers KV's rules.
 * @throws TypeError for an empty key, `.` or `..`, a non-string; RangeError past {@link MAX_KEY_BYTES}
 */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new TypeError('a KV key must be a string')
  if (key === '') throw new TypeError('a KV key cannot be empty')
  if (key === '.' || key === '..') throw new TypeError(`"${key}" is not allowed as a KV key`)
  // A UTF-16 length of 171 or less cannot exceed 512 UTF-8 bytes (3 bytes per code unit at most).
  if (key.length > MAX_KEY_BYTES / 3 && encoder.encode(key).length > MAX_KEY_BYTES)
    throw new RangeError(`a KV key is at most ${MAX_KEY_BYTES} UTF-8 bytes (this one has ${encoder.encode(key).length})`)
}

/**
 * The expiry of a `put` in epoch ms, or null for none.
 * @param ttl `expirationTtl` in seconds: undefined, or a number of at least {@link MIN_TTL_S}
 *   (fractions are dropped, as Workers KV does)
 * @throws RangeError for a TTL below 60 s, not finite or not a number
 */
export function expiryOf(ttl: unknown, nowMs: number): number | null {
  if (ttl === undefined) return null
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < MIN_TTL_S)
    throw new RangeError(`expirationTtl must be a number of seconds of at least ${MIN_TTL_S}, not ${String(ttl)}`)
  return nowMs + Math.floor(ttl) * 1000
}

/**
 * The page size of a `list`: `limit` or {@link MAX_LIST_LIMIT}.
 * @throws RangeError for a limit that is not an integer from 1 to 1000
 */
export function listLimit(options: KvListOptions | undefined): number {
  const limit = options?.limit
  if (limit === undefined) return MAX_LIST_LIMIT
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new RangeError(`list limit must be an integer from 1 to ${MAX_LIST_LIMIT}, not ${String(limit)}`)
  return limit
}

/**
 * Orders keys as Workers KV and Redis do, by UTF-8 bytes, which is code point order (JavaScript's
 * `<` compares UTF-16 code units, which puts U+10000 and above before U+E000-U+FFFF).
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // Only when a surrogate meets a unit at or above U+E000 does code unit order differ.
    const xs = x >= 0xd800 && x <= 0xdfff
    const ys = y >= 0xd800 && y <= 0xdfff
    if (xs !== ys && (xs ? y >= 0xe000 : x >= 0xe000)) return xs ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/** The opaque cursor of a page that ended at `lastKey` (base64 of its UTF-8, as Miniflare's). */
export function encodeCursor(lastKey: string): string {
  let bin = ''
  for (const b of encoder.encode(lastKey)) bin += String.fromCharCode(b)
  return btoa(bin)
}

/**
 * The last key of the previous page, from its cursor: null when there is no cursor (start at the
 * first key), undefined for a cursor this store did not make (the page is then empty and complete,
 * as Miniflare answers).
 */
export function decodeCursor(cursor: string | undefined): string | null | undefined {
  if (cursor === undefined || cursor === '') return null
  try {
    const bin = atob(cursor)
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0))
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}
