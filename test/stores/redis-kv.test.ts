/**
 * RedisKv against a real redis-server beyond the shared contract: the key layout under the prefix
 * (docs/stores.md), prefixes keep stores apart, an expired value leaves `list` and the index,
 * change notices between two instances (not to oneself; null after the feed was down), the
 * registry drops its memory entry on a notice, and connect errors.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolRegistry } from '../../src/core/validation/tool-registry'
import { RedisKv, StoreConnectError } from '../../src/stores/redis-kv'
import { redactUrl } from '../../src/core/redact-url'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { freePort } from '../helpers/peers-procs'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'
import { pollUntil } from '../helpers/wait'
import { toolKey } from '../../src/core/validation/tool-store'

let server: RedisServer
let raw: Redis
const open: RedisKv[] = []
beforeAll(async () => {
  server = await startRedisServer()
  raw = new Redis(server.url)
})
afterAll(async () => {
  for (const kv of open) await kv.close()
  raw?.disconnect()
  await server?.stop()
})
async function store(prefix: string, url = server.url): Promise<RedisKv> {
  const kv = new RedisKv({ url, prefix })
  open.push(kv)
  await kv.connect()
  return kv
}
/** Waits until `check()` holds or `ms` have passed (the caller's expect says which). */
async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  await pollUntil(check, Boolean, { timeoutMs: ms, intervalMs: 10 })
}

describe('RedisKv', () => {
  it('lays keys out under the prefix: v:<key> values, one sorted-set index', async () => {
    const kv = await store('layout:')
    await kv.put(toolKey('default', 'public', 'get_weather'), '{"name":"get_weather"}')
    await kv.put('ttl', 'x', { expirationTtl: 120 })
    expect((await raw.keys('layout:*')).sort()).toEqual(['layout:keys', 'layout:v:tools:default:public:get_weather', 'layout:v:ttl'])
    expect(await raw.get('layout:v:tools:default:public:get_weather')).toBe('{"name":"get_weather"}')
    expect(await raw.zrange('layout:keys', '0', '-1')).toEqual([toolKey('default', 'public', 'get_weather'), 'ttl'])
    const ttl = await raw.ttl('layout:v:ttl')
    expect(ttl).toBeGreaterThan(115)
    expect(ttl).toBeLessThanOrEqual(120)
    await kv.delete('ttl')
    expect(await raw.exists('layout:v:ttl')).toBe(0)
    expect(await raw.zrange('layout:keys', '0', '-1')).toEqual([toolKey('default', 'public', 'get_weather')])
  })

  it('two prefixes on one Redis are two stores', async () => {
    const a = await store('team-a:')
    const b = await store('team-b:')
    await a.put('k', 'a')
    expect(await b.get('k')).toBeNull()
    expect((await b.list()).keys).toEqual([])
  })

  it('a value Redis expired is not listed, and its index entry is removed', async () => {
    const kv = await store('expiry:')
    await kv.put('short', 'x', { expirationTtl: 60 })
    await kv.put('stays', 'y')
    // Sixty seconds cannot be waited for here: Redis itself is told to expire the value now.
    await raw.pexpire('expiry:v:short', 1)
    await new Promise((r) => setTimeout(r, 20))
    expect(await kv.get('short')).toBeNull()
    expect((await kv.list()).keys.map((k) => k.name)).toEqual(['stays'])
    expect(await raw.zrange('expiry:keys', '0', '-1')).toEqual(['stays'])
  })

  it('change notices: another instance hears each put and delete, the writer does not hear itself', async () => {
    const writer = await store('notice:')
    const reader = await store('notice:')
    const heard: (string | null)[] = []
    const own: (string | null)[] = []
    reader.subscribe((k) => heard.push(k))
    writer.subscribe((k) => own.push(k))
    await Promise.all([reader.subscribed(), writer.subscribed()])
    await writer.put(toolKey('default', 'public', 'x'), '1')
    await writer.delete(toolKey('default', 'public', 'x'))
    await eventually(() => heard.length >= 2)
    expect(heard).toEqual([toolKey('default', 'public', 'x'), toolKey('default', 'public', 'x')])
    expect(own).toEqual([])
  })

  it('after the feed was down, listeners hear null (drop everything), and notices resume', async () => {
    const port = await freePort()
    let own = await startRedisServer(port)
    try {
      const writer = await store('gap:', own.url)
      const reader = await store('gap:', own.url)
      const heard: (string | null)[] = []
      reader.subscribe((k) => heard.push(k))
      await reader.subscribed()
      await own.stop()
      own = await startRedisServer(port)
      await eventually(() => heard.includes(null), 5_000)
      expect(heard).toEqual([null])
      // The writer reconnects in the background too.
      await eventually(() => false, 300)
      let wrote = false
      for (let i = 0; i < 50 && !wrote; i++) {
        wrote = await writer.put('after', '1').then(
          () => true,
          async () => (await new Promise((r) => setTimeout(r, 100)), false)
        )
      }
      expect(wrote).toBe(true)
      await eventually(() => heard.length >= 2)
      expect(heard).toEqual([null, 'after'])
    } finally {
      await own.stop()
    }
  })

  it('the tool registry drops its memory entry when another edge changes the record', async () => {
    const a = await store('registry:')
    const b = await store('registry:')
    const registryB = new ToolRegistry({ kv: b, engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 100, refreshMinIntervalMs: 0 })
    await b.subscribed()
    const record = (enumValues: string[]) => JSON.stringify({ name: 't', inputSchema: { type: 'object', properties: { u: { enum: enumValues } } }, dialect: '2020-12', hash: 'h' })
    await a.put(toolKey('default', 'public', 't'), record(['c']))
    const first = await registryB.lookup('default', 'public', 't')
    expect(first!.validate!({ u: 'k' })).not.toBeNull()
    expect(registryB.cached('default', 'public', 't')).toBeDefined()
    await a.put(toolKey('default', 'public', 't'), record(['c', 'k']))
    await eventually(() => registryB.cached('default', 'public', 't') === undefined)
    expect(registryB.cached('default', 'public', 't')).toBeUndefined()
    const second = await registryB.lookup('default', 'public', 't')
    expect(second!.validate!({ u: 'k' })).toBeNull()
    expect(registryB.stats.remoteChanges).toBe(2) // both puts of A
  })

  it('a Redis that hangs (SIGSTOP): every call rejects within the 1 s command bound, and works again after', async () => {
    const own = await startRedisServer()
    try {
      const kv = await store('hang:', own.url)
      await kv.put('k', 'v')
      process.kill(own.pid, 'SIGSTOP')
      const t0 = Date.now()
      const outcomes = await Promise.allSettled([kv.get('k'), kv.put('k', 'w'), kv.list()])
      const took = Date.now() - t0
      process.kill(own.pid, 'SIGCONT')
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected'])
      // At the 1 s command bound: not before it, and the upper bound only catches a command that
      // waits for the stopped server (10x).
      expect(took).toBeGreaterThanOrEqual(900)
      expect(took).toBeLessThan(10_000)
      let value: string | null = null
      for (let i = 0; i < 50 && value === null; i++) value = await kv.get('k').catch(async () => (await new Promise((r) => setTimeout(r, 50)), null))
      expect(['v', 'w']).toContain(value)
    } finally {
      try {
        process.kill(own.pid, 'SIGCONT')
      } catch {
        // gone
      }
      await own.stop()
    }
  })

  it('connect to nothing: StoreConnectError naming STORE_URL with the password redacted, within the bound', async () => {
    const port = await freePort()
    const kv = new RedisKv({ url: `redis://:s3cret@127.0.0.1:${port}` })
    const t0 = Date.now()
    const e = await kv.connect().catch((err: unknown) => err)
    // A refused connection fails at once, within the 3 s connect bound in any case; the upper
    // bound only catches a connect that keeps retrying (5x).
    expect(Date.now() - t0).toBeLessThan(15_000)
    expect(e).toBeInstanceOf(StoreConnectError)
    expect((e as Error).message).toBe(`cannot reach Redis at STORE_URL=redis://:***@127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port})`)
    await kv.close()
  })

  it('redactUrl hides passwords in URLs and in text that is not one', () => {
    expect(redactUrl('redis://user:pw@h:1/0')).toBe('redis://user:***@h:1/0')
    expect(redactUrl('rediss://:p%40ss@h')).toBe('rediss://:***@h')
    expect(redactUrl('redis://token@h')).toBe('redis://***@h')
    expect(redactUrl('redis://h:6379')).toBe('redis://h:6379')
  })
})
