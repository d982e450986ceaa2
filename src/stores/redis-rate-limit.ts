/**
 * @module stores/redis-rate-limit
 * The shared rate limiter: the {@link RateLimiter} port on Redis, so several edges that use the
 * same Redis charge one budget per caller. Same algorithm as the in-memory limiter
 * (src/core/access/rate-limit.ts): a fixed window per key, started by its first request.
 *
 * One Lua script per request (atomic: Redis runs it alone), on one key `P` + `rl:` + key holding
 * the count of the current window, with the window as its expiry (PEXPIRE, ms):
 * read the count; refuse without writing when count + cost > limit (the answer carries the key's
 * PTTL, the time left in the window); else INCRBY, PEXPIRE on the window's first request, and
 * answer the count left. A key without an expiry (written by something else) gets one, so no
 * counter outlives its window. The clock is Redis's own, so the edges' clocks do not matter.
 * Memory: one small string per caller and budget, gone when its window ends.
 *
 * Failure: no offline queue and no retry, each command bounded by `commandTimeoutMs` (like the
 * Redis store); while Redis is down `take` rejects at once, and the caller chooses to fail open
 * or closed (docs/security.md).
 */
import { Redis } from 'ioredis'
import type { RateDecision, RateLimiter } from '../core/access/rate-limit'
import { redactUrl } from '../core/redact-url'
import { DEFAULT_REDIS_PREFIX, StoreConnectError } from './redis-kv'

/** The script: KEYS[1] counter; ARGV cost, limit, window ms. Returns {ok 0|1, ms left in the window, units left}. */
export const TAKE_SCRIPT = `
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local win = tonumber(ARGV[3])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur + cost > limit then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl == -1 then redis.call('PEXPIRE', KEYS[1], win) end
  if ttl < 0 then ttl = win end
  return {0, ttl, limit - cur}
end
local n = redis.call('INCRBY', KEYS[1], cost)
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], win)
  ttl = win
end
return {1, ttl, limit - n}
`

/** Options of {@link RedisRateLimiter}. */
export interface RedisRateLimiterOptions {
  /** `redis://...` or `rediss://...`; or pass `client`. */
  url?: string
  /** An ioredis client to use (e.g. the store's); the limiter then does not connect or close it. */
  client?: Redis
  /** Prefix of the keys; default `mcp-edge:` (the store's), keys are `<prefix>rl:<key>`. */
  prefix?: string
  /** Bound of one command, ms; default 1000. */
  commandTimeoutMs?: number
  /** Bound of the first connection, ms; default 3000. */
  connectTimeoutMs?: number
  /** The variable the URL came from, for messages; default `STORE_URL`. */
  variable?: string
}

type WithTake = Redis & { mcpEdgeRateTake(key: string, cost: number, limit: number, windowMs: number): Promise<[number, number, number]> }

/** The Redis-backed limiter; see the module comment. Call {@link connect} first when built from a URL. */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: WithTake
  private readonly own: boolean
  private readonly prefix: string
  private connected = false
  private lastError = ''

  constructor(private readonly opts: RedisRateLimiterOptions) {
    if ((opts.url === undefined) === (opts.client === undefined)) throw new TypeError('RedisRateLimiter: pass exactly one of url and client')
    this.prefix = (opts.prefix ?? DEFAULT_REDIS_PREFIX) + 'rl:'
    this.own = opts.client === undefined
    const client =
      opts.client ??
      new Redis(opts.url!, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: opts.commandTimeoutMs ?? 1000,
        connectTimeout: opts.connectTimeoutMs ?? 3000,
        retryStrategy: (times) => (this.connected ? Math.min(times * 100, 2000) : null),
      })
    if (this.own) client.on('error', (e: Error) => void (this.lastError = e.message))
    // defineCommand sends EVALSHA and falls back to EVAL once when Redis does not know the script.
    client.defineCommand('mcpEdgeRateTake', { numberOfKeys: 1, lua: TAKE_SCRIPT })
    this.client = client as WithTake
  }

  /**
   * Connects and checks with PING (only for a limiter built from a URL; a no-op with `client`).
   * @throws StoreConnectError `cannot reach Redis at STORE_URL=redis://:***@host:port (reason)`
   */
  async connect(): Promise<void> {
    if (!this.own) return
    try {
      await this.client.connect()
      await this.client.ping()
      this.connected = true
    } catch (e) {
      this.client.disconnect()
      throw new StoreConnectError(`cannot reach Redis at ${this.opts.variable ?? 'STORE_URL'}=${redactUrl(this.opts.url!)} (${this.lastError || (e as Error).message})`)
    }
  }

  /**
   * See {@link RateLimiter.take}.
   * @throws RangeError for a cost or limit that is not a positive integer, or a window under 1 ms;
   *   rejects when Redis fails or is down (bounded by `commandTimeoutMs`)
   */
  async take(key: string, cost: number, limit: number, windowMs: number): Promise<RateDecision> {
    if (!Number.isSafeInteger(cost) || cost < 1 || !Number.isSafeInteger(limit) || limit < 1 || !Number.isSafeInteger(windowMs) || windowMs < 1)
      throw new RangeError('rate limit take: cost, limit and windowMs must be positive integers')
    const [ok, ttlMs, left] = await this.client.mcpEdgeRateTake(this.prefix + key, cost, limit, windowMs)
    return ok === 1 ? { ok: true, retryAfterS: 0, remaining: left } : { ok: false, retryAfterS: Math.max(1, Math.ceil(ttlMs / 1000)), remaining: Math.max(0, left) }
  }

  /** Closes the connection it opened (not a `client` passed in). */
  async close(): Promise<void> {
    if (!this.own) return
    this.connected = false
    await this.client.quit().catch(() => this.client.disconnect())
  }
}
