/**
 * @module stores/memory-kv
 * A Map-backed {@link KvStore}: the same contract as Workers KV's get/put/delete (values are
 * text; `expirationTtl` in seconds). Runtime-neutral; used in tests and behind the file store.
 */
import type { KvStore } from '../core/ports'

/** In-memory KV namespace. `now` is injectable for TTL tests (ms). */
export class MemoryKv implements KvStore {
  protected readonly data = new Map<string, { value: string; expiresAt: number | null }>()
  constructor(protected readonly now: () => number = Date.now) {}

  async get(key: string): Promise<string | null> {
    const e = this.data.get(key)
    if (!e) return null
    if (e.expiresAt !== null && e.expiresAt <= this.now()) {
      this.data.delete(key)
      return null
    }
    return e.value
  }

  async put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void> {
    const ttl = options?.expirationTtl
    this.data.set(key, { value, expiresAt: ttl ? this.now() + ttl * 1000 : null })
  }

  async delete(key: string): Promise<void> {
    this.data.delete(key)
  }

  /**
   * Workers KV's `list` shape: at most `limit` (1 to 1000, default 1000) live keys starting with
   * `prefix`, in UTF-8 byte order, after the page whose `cursor` is given; `list_complete: false`
   * with a `cursor` when more follow. For the admin API and `mcp-edge schemas list`
   * (core/validation/stored-tools.ts). The cursor is the last key of the page, URI-encoded.
   */
  async list(options: { prefix?: string; limit?: number; cursor?: string } = {}): Promise<{ keys: { name: string; expiration?: number }[]; list_complete: boolean; cursor?: string }> {
    const prefix = options.prefix ?? ''
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 1000), 1), 1000)
    const utf8 = new TextEncoder()
    const after = options.cursor ? utf8.encode(decodeURIComponent(options.cursor)) : null
    const now = this.now()
    const live = [...this.data.entries()]
      .filter(([k, e]) => k.startsWith(prefix) && (e.expiresAt === null || e.expiresAt > now))
      .map(([k, e]) => ({ name: k, bytes: utf8.encode(k), expiresAt: e.expiresAt }))
      .filter((k) => after === null || compareBytes(k.bytes, after) > 0)
      .sort((a, b) => compareBytes(a.bytes, b.bytes))
    const page = live.slice(0, limit)
    const keys = page.map((k) => (k.expiresAt === null ? { name: k.name } : { name: k.name, expiration: Math.floor(k.expiresAt / 1000) }))
    if (live.length <= limit) return { keys, list_complete: true }
    return { keys, list_complete: false, cursor: encodeURIComponent(page[page.length - 1]!.name) }
  }

  /** Keys with a prefix (KV `list` subset), for the admin API and tests. */
  async keys(prefix = ''): Promise<string[]> {
    return [...this.data.keys()].filter((k) => k.startsWith(prefix)).sort()
  }
}

/** Byte-wise order of two UTF-8 encodings (Workers KV lists keys in this order). */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}
