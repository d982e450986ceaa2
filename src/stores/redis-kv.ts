/**
 * @module stores/redis-kv
 * The shared store for several Node instances: a {@link KvStore} on Redis through ioredis, with
 * Workers KV's rules (./kv-rules.ts) and TTL semantics (`expirationTtl` in seconds, as `SET .. EX`).
 * Selected with `STORE_URL=redis://...` (docs/stores.md).
 *
 * Redis layout under the prefix `P` (default `mcp-edge:`, `STORE_PREFIX`):
 * - `P` + `v:` + key -> the value (a string; `EX` when it has a TTL)
 * - `P` + `keys` -> sorted set of every key (score 0), for `list` in UTF-8 byte order with
 *   `ZRANGEBYLEX` (SCAN is unordered and walks the whole keyspace); members whose value has
 *   expired are skipped and removed by `list`
 * - channel `P` + `changes` -> `{"from":<instance id>,"key":<key>}` after each put/delete, so other
 *   edges drop their memory copy ({@link KvStore.subscribe})
 * A put or delete is one MULTI/EXEC (value, index and notice together).
 *
 * Failure: no offline queue and no retry of a command, each bounded by `commandTimeoutMs`; while
 * Redis is down every call rejects at once, which the core treats as "no schema" (D8 fail-open).
 * The client reconnects in the background (backoff up to 2 s).
 */
import { redactUrl } from '../core/redact-url'
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import type { KvChangeListener, KvListOptions, KvListResult, KvPut, KvStore } from '../core/ports'
import { checkKey, compareKeys, decodeCursor, DEFAULT_REDIS_PREFIX, encodeCursor, expiryOf, listLimit } from './kv-rules'
import { EdgeError } from '../core/errors'

/** Options of {@link RedisKv}. */
export interface RedisKvOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://...` (TLS). */
  url: string
  /** Prefix of every Redis key and of the channel; default `mcp-edge:`. */
  prefix?: string
  /** Bound of one command, ms; default 1000. */
  commandTimeoutMs?: number
  /** Bound of the first connection, ms; default 3000. */
  connectTimeoutMs?: number
  /** The variable the URL came from, for messages; default `STORE_URL`. */
  variable?: string
}

/** Redis could not be reached at start; the message names the variable and the URL (password redacted). */
export class StoreConnectError extends EdgeError {
  override readonly name = 'StoreConnectError'
  override readonly code = 'EDGE_ERR_STORE_CONNECT'
  constructor(message: string) {
    super(message)
  }
}

// The default prefix of the Redis keys is kept in kv-rules.ts (node-store.ts reads it without loading ioredis).
export { DEFAULT_REDIS_PREFIX }

/** Redis-backed KV namespace; see the module comment. Call {@link connect} before use. */
export class RedisKv implements KvStore {
  readonly prefix: string
  private readonly client: Redis
  private subscriber: Redis | null = null
  private subscribing: Promise<void> = Promise.resolve()
  private readonly listeners = new Set<KvChangeListener>()
  /** Tells this instance's own notices apart from other edges' ones. */
  private readonly instanceId = randomUUID()
  private readonly indexKey: string
  private readonly channel: string
  private readonly variable: string
  private readonly shownUrl: string
  private connected = false
  private lastError = ''

  constructor(private readonly opts: RedisKvOptions) {
    this.prefix = opts.prefix ?? DEFAULT_REDIS_PREFIX
    this.indexKey = this.prefix + 'keys'
    this.channel = this.prefix + 'changes'
    this.variable = opts.variable ?? 'STORE_URL'
    this.shownUrl = redactUrl(opts.url)
    this.client = this.newClient()
  }

  private newClient(): Redis {
    const client = new Redis(this.opts.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.opts.commandTimeoutMs ?? 1000,
      connectTimeout: this.opts.connectTimeoutMs ?? 3000,
      // No retry before the first connection (the start fails with a clear line), backoff after.
      retryStrategy: (times) => (this.connected ? Math.min(times * 100, 2000) : null),
    })
    // Without a listener ioredis prints every connection error with its stack; the last one is
    // kept for the start message, later ones surface as rejected calls.
    client.on('error', (e: Error) => {
      this.lastError = e.message
    })
    return client
  }

  /**
   * Connects (and checks with PING).
   * @throws StoreConnectError `cannot reach Redis at STORE_URL=redis://:***@host:port (reason)`
   */
  async connect(): Promise<void> {
    try {
      await this.client.connect()
      await this.client.ping()
      this.connected = true
    } catch (e) {
      this.client.disconnect()
      const why = this.lastError || (e as Error).message
      throw new StoreConnectError(`cannot reach Redis at ${this.variable}=${this.shownUrl} (${why})`)
    }
  }

  private k(key: string): string {
    return this.prefix + 'v:' + key
  }

  /** The value, or null when missing or expired. @throws on a bad key, or when Redis fails */
  async get(key: string): Promise<string | null> {
    checkKey(key)
    return this.client.get(this.k(key))
  }

  /** Stores `value` (with `EX` for `expirationTtl`, seconds) and tells other edges. @throws on a bad key or TTL, or when Redis fails */
  async put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void> {
    checkKey(key)
    if (typeof value !== 'string') throw new TypeError('a KV value must be a string')
    const ttl = options?.expirationTtl
    expiryOf(ttl, 0) // checks it
    const m = this.client.multi()
    if (ttl === undefined) m.set(this.k(key), value)
    else m.set(this.k(key), value, 'EX', Math.floor(ttl))
    m.zadd(this.indexKey, 0, key)
    m.publish(this.channel, JSON.stringify({ from: this.instanceId, key }))
    await this.exec(m)
  }

  /**
   * Stores every entry in one MULTI/EXEC (values, index and one notice per key), so Redis applies
   * all of them or none. @throws on a bad key, value or TTL (before anything is sent), or when Redis fails
   */
  async putMany(entries: readonly KvPut[]): Promise<void> {
    for (const e of entries) {
      checkKey(e.key)
      if (typeof e.value !== 'string') throw new TypeError('a KV value must be a string')
      expiryOf(e.expirationTtl, 0)
    }
    if (entries.length === 0) return
    const m = this.client.multi()
    for (const e of entries) {
      if (e.expirationTtl === undefined) m.set(this.k(e.key), e.value)
      else m.set(this.k(e.key), e.value, 'EX', Math.floor(e.expirationTtl))
      m.zadd(this.indexKey, 0, e.key)
      m.publish(this.channel, JSON.stringify({ from: this.instanceId, key: e.key }))
    }
    await this.exec(m)
  }

  /** Removes `key` and tells other edges. @throws on a bad key, or when Redis fails */
  async delete(key: string): Promise<void> {
    checkKey(key)
    const m = this.client.multi()
    m.del(this.k(key))
    m.zrem(this.indexKey, key)
    m.publish(this.channel, JSON.stringify({ from: this.instanceId, key }))
    await this.exec(m)
  }

  private async exec(m: ReturnType<Redis['multi']>): Promise<void> {
    const results = await m.exec()
    if (results === null) throw new Error('Redis transaction aborted')
    for (const [err] of results) if (err) throw err
  }

  /** One page of keys in UTF-8 byte order (Workers KV's shape). @throws RangeError for a bad limit, or when Redis fails */
  async list(options?: KvListOptions): Promise<KvListResult> {
    const limit = listLimit(options)
    const after = decodeCursor(options?.cursor)
    if (after === undefined) return { keys: [], list_complete: true }
    const prefix = options?.prefix ?? ''
    // Upper bound of the keys under a prefix: the prefix then a 0xFF byte, which no UTF-8 text has.
    const max: Buffer | string = prefix === '' ? '+' : Buffer.concat([Buffer.from('[' + prefix, 'utf8'), Buffer.from([0xff])])
    let min: string = after !== null && compareKeys(after, prefix) >= 0 ? '(' + after : prefix === '' ? '-' : '[' + prefix
    const keys: KvListResult['keys'] = []
    const nowMs = Date.now()
    for (;;) {
      const want = limit + 1 - keys.length
      const names = await this.client.zrangebylex(this.indexKey, min, max, 'LIMIT', 0, want)
      if (names.length === 0) return { keys, list_complete: true }
      const p = this.client.pipeline()
      for (const n of names) p.pttl(this.k(n))
      const ttls = (await p.exec()) ?? []
      const gone: string[] = []
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!
        const [err, ms] = ttls[i] ?? [new Error('no reply from Redis'), null]
        if (err) throw err
        // PTTL: -2 no such key (expired), -1 no expiry, else milliseconds left.
        if (ms === -2) gone.push(name)
        else keys.push(typeof ms === 'number' && ms >= 0 ? { name, expiration: Math.floor((nowMs + ms) / 1000) } : { name })
      }
      // Index members whose value expired: removed here, so the index does not grow with them.
      if (gone.length > 0) await this.client.zrem(this.indexKey, ...gone)
      if (keys.length > limit) {
        const page = keys.slice(0, limit)
        return { keys: page, list_complete: false, cursor: encodeCursor(page[page.length - 1]!.name) }
      }
      if (names.length < want) return { keys, list_complete: true }
      min = '(' + names[names.length - 1]!
    }
  }

  /**
   * Calls `listener` with each key another edge put or deleted (from the `changes` channel), and
   * with null after the feed was down (notices may have been missed). Opens the subscriber
   * connection on first use.
   */
  subscribe(listener: KvChangeListener): () => void {
    this.listeners.add(listener)
    if (!this.subscriber) {
      const sub = this.client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, retryStrategy: (times: number) => Math.min(times * 100, 2000) })
      this.subscriber = sub
      sub.on('error', () => undefined) // reconnects by itself; a gap is reported as null below
      let readyOnce = false
      sub.on('ready', () => {
        if (readyOnce) for (const l of this.listeners) l(null)
        readyOnce = true
      })
      sub.on('message', (_channel: string, text: string) => {
        let notice: { from?: unknown; key?: unknown }
        try {
          notice = JSON.parse(text) as { from?: unknown; key?: unknown }
        } catch {
          return
        }
        if (notice.from === this.instanceId || typeof notice.key !== 'string') return
        for (const l of this.listeners) l(notice.key)
      })
      this.subscribing = sub.subscribe(this.channel).then(
        () => undefined,
        () => undefined
      )
    }
    return () => void this.listeners.delete(listener)
  }

  /**
   * Resolves once the subscriber connection listens (changes before it are not seen), at the latest
   * after `connectTimeoutMs` (it keeps trying in the background); at once without {@link subscribe}.
   */
  async subscribed(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const bound = new Promise<void>((r) => (timer = setTimeout(r, this.opts.connectTimeoutMs ?? 3000)))
    await Promise.race([this.subscribing, bound])
    clearTimeout(timer)
  }

  /** Every write is acknowledged by Redis before it resolves: nothing to flush. */
  async flush(): Promise<void> {}

  /** Closes both connections (QUIT when connected, else dropped at once). Idempotent. */
  async close(): Promise<void> {
    this.connected = false
    for (const c of [this.subscriber, this.client]) {
      if (!c || c.status === 'end') continue
      if (c.status !== 'ready') {
        c.disconnect()
        continue
      }
      try {
        await c.quit()
      } catch {
        c.disconnect()
      }
    }
    this.subscriber = null
  }
}
