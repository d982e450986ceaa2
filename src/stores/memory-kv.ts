/**
 * @module stores/memory-kv
 * A Map-backed {@link KvStore}: the same contract as Workers KV's get/put/delete/list (values are
 * text; keys and `expirationTtl` checked by Workers KV's rules, ./kv-rules.ts). Runtime-neutral;
 * used in tests, with `STORE_FILE=memory`, and behind the file store. Nothing outlives the process.
 */
import type { KvListOptions, KvListResult, KvPut, KvStore } from '../core/ports'
import { checkKey, compareKeys, decodeCursor, encodeCursor, expiryOf, listLimit } from './kv-rules'

/** One stored value; `expiresAt` in epoch ms, null for none. */
export interface KvEntry {
  value: string
  expiresAt: number | null
}

/** In-memory KV namespace. `now` is injectable for TTL tests (epoch ms). */
export class MemoryKv implements KvStore {
  /** Nothing outlives the process (the file store, built on this class, says otherwise). */
  readonly persistent: boolean = false
  protected readonly data = new Map<string, KvEntry>()
  constructor(protected readonly now: () => number = Date.now) {}

  /** The value, or null when the key is missing or expired. @throws TypeError/RangeError for a bad key */
  async get(key: string): Promise<string | null> {
    checkKey(key)
    const e = this.data.get(key)
    if (!e) return null
    if (e.expiresAt !== null && e.expiresAt <= this.now()) {
      this.data.delete(key)
      return null
    }
    return e.value
  }

  /** Stores `value` under `key`; `expirationTtl` in seconds (at least 60). @throws TypeError/RangeError for a bad key or TTL */
  async put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void> {
    this.set(key, value, options)
  }

  /** Checks and applies a put in memory. */
  protected set(key: string, value: string, options?: { expirationTtl?: number }): void {
    const [k, e] = this.checked(key, value, options)
    this.data.set(k, e)
  }

  /** The entry a put stores, checked and not applied (the file store applies it with its undo). @throws TypeError/RangeError for a bad key, value or TTL */
  protected checked(key: string, value: string, options?: { expirationTtl?: number }): [string, KvEntry] {
    checkKey(key)
    if (typeof value !== 'string') throw new TypeError('a KV value must be a string')
    return [key, { value, expiresAt: expiryOf(options?.expirationTtl, this.now()) }]
  }

  /** Stores every entry at once (see {@link KvStore.putMany}). @throws TypeError/RangeError for a bad key, value or TTL, before anything changed */
  async putMany(entries: readonly KvPut[]): Promise<void> {
    this.setMany(entries)
  }

  /** Checks every entry, then applies them all in memory (nothing when one is bad). */
  protected setMany(entries: readonly KvPut[]): void {
    for (const [k, v] of this.checkedMany(entries)) this.data.set(k, v)
  }

  /** The entries a putMany stores, all checked and none applied. @throws TypeError/RangeError for a bad key, value or TTL */
  protected checkedMany(entries: readonly KvPut[]): [string, KvEntry][] {
    const now = this.now()
    return entries.map((e): [string, KvEntry] => {
      checkKey(e.key)
      if (typeof e.value !== 'string') throw new TypeError('a KV value must be a string')
      return [e.key, { value: e.value, expiresAt: expiryOf(e.expirationTtl, now) }]
    })
  }

  /** Removes `key` (no error when missing). @throws TypeError/RangeError for a bad key */
  async delete(key: string): Promise<void> {
    checkKey(key)
    this.data.delete(key)
  }

  /** One page of keys in UTF-8 byte order (Workers KV's shape, see {@link KvStore.list}). @throws RangeError for a bad limit */
  async list(options?: KvListOptions): Promise<KvListResult> {
    const limit = listLimit(options)
    const after = decodeCursor(options?.cursor)
    if (after === undefined) return { keys: [], list_complete: true }
    const prefix = options?.prefix ?? ''
    const now = this.now()
    const names: string[] = []
    for (const [k, e] of this.data) {
      if (e.expiresAt !== null && e.expiresAt <= now) continue
      if (k.startsWith(prefix) && (after === null || compareKeys(k, after) > 0)) names.push(k)
    }
    names.sort(compareKeys)
    const page = names.slice(0, limit)
    const keys = page.map((name) => {
      const at = this.data.get(name)!.expiresAt
      return at === null ? { name } : { name, expiration: Math.floor(at / 1000) }
    })
    return names.length > limit ? { keys, list_complete: false, cursor: encodeCursor(page[page.length - 1]!) } : { keys, list_complete: true }
  }

  /** Every key with a prefix, in UTF-8 byte order (all pages of {@link list}), for tests and scripts. */
  async keys(prefix = ''): Promise<string[]> {
    const out: string[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await this.list({ prefix, cursor })
      out.push(...page.keys.map((k) => k.name))
      if (page.list_complete) return out
      cursor = page.cursor
    }
  }
}
