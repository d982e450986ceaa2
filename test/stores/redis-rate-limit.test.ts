/**
 * src/stores/redis-rate-limit.ts on a real redis-server: two limiters (as two edges) share one
 * budget, atomically under concurrency; a refusal takes nothing and says how long to wait; the
 * window ends with the key's expiry; a key without an expiry gets one; Redis down rejects at once
 * and an unreachable Redis at start is one line with the password redacted.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chargeRequest, parseRateLimits } from '../../src/core/access/rate-limit'
import { RedisRateLimiter } from '../../src/stores/redis-rate-limit'
import { freePort } from '../helpers/peers-procs'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'

let redis: RedisServer
let a: RedisRateLimiter
let b: RedisRateLimiter
let raw: Redis
const prefix = `rl-test-${process.pid}:`

beforeAll(async () => {
  redis = await startRedisServer()
  a = new RedisRateLimiter({ url: redis.url, prefix })
  b = new RedisRateLimiter({ url: redis.url, prefix })
  await Promise.all([a.connect(), b.connect()])
  raw = new Redis(redis.url)
})
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
  raw?.disconnect()
  await redis?.stop()
})

describe('RedisRateLimiter', () => {
  it('two edges share one budget: 50 concurrent takes against a limit of 20 give exactly 20', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).take('shared', 1, 20, 60_000)))
    expect(results.filter((r) => r.ok)).toHaveLength(20)
    const refused = results.filter((r) => !r.ok)
    expect(refused).toHaveLength(30)
    for (const r of refused) expect(r).toEqual({ ok: false, retryAfterS: 60, remaining: 0 })
    expect(await raw.get(`${prefix}rl:shared`)).toBe('20')
  })

  it('a refusal takes nothing; remaining counts down', async () => {
    expect(await a.take('cost', 2, 3, 60_000)).toEqual({ ok: true, retryAfterS: 0, remaining: 1 })
    expect(await b.take('cost', 2, 3, 60_000)).toEqual({ ok: false, retryAfterS: 60, remaining: 1 })
    expect(await b.take('cost', 1, 3, 60_000)).toEqual({ ok: true, retryAfterS: 0, remaining: 0 })
  })

  it('the window ends with the key: afterwards the budget is whole again', async () => {
    expect((await a.take('short', 1, 1, 200)).ok).toBe(true)
    const refused = await b.take('short', 1, 1, 200)
    expect(refused).toEqual({ ok: false, retryAfterS: 1, remaining: 0 })
    const pttl = await raw.pttl(`${prefix}rl:short`)
    expect(pttl).toBeGreaterThan(0)
    expect(pttl).toBeLessThanOrEqual(200)
    for (let i = 0; i < 100 && (await raw.exists(`${prefix}rl:short`)); i++) await new Promise((r) => setTimeout(r, 20))
    expect(await b.take('short', 1, 1, 200)).toEqual({ ok: true, retryAfterS: 0, remaining: 0 })
  })

  it('a counter left without an expiry gets the window as its expiry', async () => {
    await raw.set(`${prefix}rl:noexpiry`, '5')
    expect((await a.take('noexpiry', 1, 5, 60_000)).ok).toBe(false)
    expect(await raw.pttl(`${prefix}rl:noexpiry`)).toBeGreaterThan(59_000)
  })

  it('chargeRequest over Redis: per caller, per tool, across two edges', async () => {
    const rl = parseRateLimits('3/min,search_*=1/min')
    expect((await chargeRequest(a, rl, 'alice', 'search_docs')).ok).toBe(true)
    expect(await chargeRequest(b, rl, 'alice', 'search_docs')).toEqual({ ok: false, refusedBy: 'search_*=1/min', retryAfterS: 60 })
    expect((await chargeRequest(b, rl, 'bob', 'search_docs')).ok).toBe(true)
  })

  it('bad arguments are refused before Redis is asked', async () => {
    await expect(a.take('k', 0, 1, 1000)).rejects.toThrow(RangeError)
    await expect(a.take('k', 1, 1, 1.5)).rejects.toThrow('cost, limit and windowMs must be positive integers')
  })
})

describe('Redis unavailable', () => {
  it('at start: one line naming the variable, the password redacted', async () => {
    const port = await freePort()
    const l = new RedisRateLimiter({ url: `redis://:s3cret@127.0.0.1:${port}`, prefix })
    const e = await l.connect().then(
      () => null,
      (err: Error) => err
    )
    expect(e?.message).toMatch(new RegExp(`^cannot reach Redis at STORE_URL=redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port} \\(`))
    expect(e?.message).not.toContain('s3cret')
  })

  it('down while running: take rejects at once, nothing hangs', async () => {
    const own = await startRedisServer()
    const l = new RedisRateLimiter({ url: own.url, prefix })
    await l.connect()
    expect((await l.take('k', 1, 5, 60_000)).ok).toBe(true)
    await own.stop()
    await expect(l.take('k', 1, 5, 60_000)).rejects.toThrow()
    await l.close()
  })
})
