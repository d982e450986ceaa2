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

  /** Keys with a prefix (KV `list` subset), for the admin API and tests. */
  async keys(prefix = ''): Promise<string[]> {
    return [...this.data.keys()].filter((k) => k.startsWith(prefix)).sort()
  }
}
