/**
 * `startEdge` takes the Node entry's settings as typed options (`NodeServerOptions`,
 * docs/library.md), read once with the variables by the settings table (`loadNodeConfig`) and
 * handed to the store and to the graceful stop (the connection bounds: test/transport/connection-bounds.test.ts).
 * Each option wins over its variable. Real parts: the Node server, a scripted HTTP origin,
 * redis-server, a store file in a temporary folder.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge } from '../../src/adapters/node/index'
import { ConfigError } from '../../src/core/config'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { MCP_HEADERS } from '../helpers/cli-process'

const ORIGIN = 'http://127.0.0.1:9/mcp'
let dir: string
let redis: RedisServer
let origin: ScriptedOrigin

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'start-edge-options-'))
  redis = await startRedisServer()
  origin = await startScriptedOrigin()
})
afterAll(async () => {
  await redis?.stop()
  await origin?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function startError(opts: Parameters<typeof startEdge>[0]): Promise<unknown> {
  return startEdge({ port: 0, log: () => undefined, ...opts }).then(
    (e) => e.close().then(() => null),
    (e: unknown) => e
  )
}

describe('startEdge: the store options', () => {
  it('storeFile opens that file (over STORE_FILE=memory)', async () => {
    const file = join(dir, 'kv.json')
    const edge = await startEdge({ env: { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory' }, port: 0, storeFile: file, log: () => undefined })
    try {
      expect(edge.storeName).toBe(`file ${file}`)
      expect(edge.nodeConfig.storeFile).toBe(file)
      await edge.deps.registry.kv.put('probe', 'x')
      await edge.flushStore()
      expect(existsSync(file)).toBe(true)
    } finally {
      await edge.close()
    }
  })

  it('storeUrl and storePrefix open the Redis store under that prefix', async () => {
    const edge = await startEdge({ env: { ORIGIN_URL: ORIGIN, STORE_PREFIX: 'from-env:' }, port: 0, storeUrl: redis.url, storePrefix: 'team-a:', log: () => undefined })
    try {
      expect(edge.storeName).toBe(`redis ${redis.url} prefix team-a:`)
      await edge.deps.registry.kv.put('probe', 'x')
      await edge.flushStore()
      const { Redis } = await import('ioredis')
      const r = new Redis(redis.url, { lazyConnect: true })
      try {
        await r.connect()
        expect(await r.get('team-a:v:probe')).toBe('x')
        expect(await r.get('from-env:v:probe')).toBeNull()
      } finally {
        r.disconnect()
      }
    } finally {
      await edge.close()
    }
  })

  it('an empty STORE_PREFIX means its default, as every empty variable does (the store read it apart and refused it)', async () => {
    const edge = await startEdge({ env: { ORIGIN_URL: ORIGIN, STORE_URL: redis.url, STORE_PREFIX: '' }, port: 0, log: () => undefined })
    try {
      expect(edge.storeName).toBe(`redis ${redis.url} prefix mcp-edge:`)
    } finally {
      await edge.close()
    }
  })

  it('storeUrl with STORE_FILE, or with storeFile, is refused naming both', async () => {
    for (const opts of [
      { env: { ORIGIN_URL: ORIGIN, STORE_FILE: join(dir, 'a.json') }, storeUrl: redis.url },
      { env: { ORIGIN_URL: ORIGIN }, storeUrl: redis.url, storeFile: join(dir, 'a.json') },
    ]) {
      const err = await startError(opts)
      expect(err).toBeInstanceOf(ConfigError)
      expect((err as Error).message).toMatch(
        /^STORE_URL and STORE_FILE are both set \(STORE_FILE=.*a\.json\): set STORE_URL for a shared store or STORE_FILE for the embedded one, not both$/
      )
    }
  })

  it('a bad storeUrl or storePrefix is refused naming the option and its variable, the password hidden', async () => {
    const bad = (await startError({ env: { ORIGIN_URL: ORIGIN }, storeUrl: 'http://u:hunter2@10.0.0.5' })) as Error
    expect(bad).toBeInstanceOf(ConfigError)
    expect(bad.message).toBe('storeUrl=http://u:***@10.0.0.5 (STORE_URL): expected a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0')
    const prefix = (await startError({ env: { ORIGIN_URL: ORIGIN }, storeUrl: redis.url, storePrefix: 'a b' })) as Error
    expect(prefix.message).toBe('storePrefix=a b (STORE_PREFIX): expected a non-empty prefix without white space, such as mcp-edge:')
  })
})

describe('startEdge: shutdownGraceMs and the rest', () => {
  it('shutdownGraceMs is the grace of stop() (over SHUTDOWN_GRACE_MS=0): a call in flight finishes', async () => {
    let arrived!: () => void
    const inFlight = new Promise<void>((r) => (arrived = r))
    origin.handle(async (req, res) => {
      const id = (req.json as { id?: unknown }).id
      if (id !== 7) return sendJson(res, { jsonrpc: '2.0', id, result: {} })
      arrived()
      await new Promise((r) => setTimeout(r, 500))
      sendJson(res, { jsonrpc: '2.0', id, result: { contents: [{ uri: 'test://slow', text: 'done slowly' }] } })
    })
    const edge = await startEdge({ env: { ORIGIN_URL: origin.url, STORE_FILE: 'memory', SHUTDOWN_GRACE_MS: '0' }, port: 0, shutdownGraceMs: 20_000, log: () => undefined })
    const call = fetch(edge.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'test://slow' } }),
    }).then((r) => r.text())
    await inFlight
    const report = await edge.stop()
    expect(report.expired).toBe(0)
    expect(await call).toContain('done slowly')
  })

  it('host, port and demoPort are read with the rest (demoPort is for mcp-edge serve --demo)', async () => {
    const edge = await startEdge({
      env: { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory', HOST: '0.0.0.0', DEMO_PORT: '1' },
      host: '127.0.0.1',
      port: 0,
      demoPort: 4100,
      log: () => undefined,
    })
    try {
      expect(edge.url).toBe(`http://127.0.0.1:${edge.port}/mcp`)
      expect(edge.nodeConfig).toMatchObject({ host: '127.0.0.1', port: 0, demoPort: 4100 })
    } finally {
      await edge.close()
    }
  })
})
