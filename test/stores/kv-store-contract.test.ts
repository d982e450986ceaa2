/**
 * The store contract (./kv-store.contract.ts) against every store the edge runs on: MemoryKv,
 * FileKv (a file in a fresh temporary folder), RedisKv (a real redis-server this file starts) and
 * the Workers KV binding under Miniflare (what the Worker's TOOL_SCHEMAS is).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll } from 'vitest'
import type { KvStore } from '../../src/core/ports'
import { FileKv } from '../../src/stores/file-kv'
import { MemoryKv } from '../../src/stores/memory-kv'
import { RedisKv } from '../../src/stores/redis-kv'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'
import { kvStoreContract, type StoreUnderTest } from './kv-store.contract'

type Listing = StoreUnderTest['kv']

kvStoreContract('MemoryKv', async () => {
  let now = Date.now()
  const kv = new MemoryKv(() => now)
  return { kv, advance: (ms) => void (now += ms), close: async () => {} }
})

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
kvStoreContract('FileKv', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-filekv-'))
  dirs.push(dir)
  let now = Date.now()
  mkdirSync(join(dir, 'data'))
  const kv = new FileKv(join(dir, 'data', 'kv.json'), { now: () => now, warn: () => undefined })
  return {
    kv,
    advance: (ms) => void (now += ms),
    breakStore: async () => {
      rmSync(join(dir, 'data'), { recursive: true, force: true })
      return { readsFail: false }
    },
    close: () => kv.close().catch(() => undefined),
  }
})

let redis: RedisServer
const extraServers: RedisServer[] = []
beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(async () => {
  await redis?.stop()
  for (const s of extraServers) await s.stop()
})
let prefixes = 0
kvStoreContract('RedisKv', async (opts) => {
  // A failure test gets a redis-server of its own (it is stopped); the others share one, each under its own prefix.
  const server = opts?.breakable ? await startRedisServer() : redis
  if (opts?.breakable) extraServers.push(server)
  const kv = new RedisKv({ url: server.url, prefix: `contract-${process.pid}-${++prefixes}:` })
  await kv.connect()
  return {
    kv,
    breakStore: async () => {
      await server.stop()
      return { readsFail: true }
    },
    close: () => kv.close(),
  }
})

// One Miniflare with a namespace per test (starting workerd costs about a second); the failure
// test disposes a Miniflare of its own.
const NAMESPACES = Array.from({ length: 12 }, (_, i) => `KV${i}`)
const script = 'export default { fetch() { return new Response("") } }'
let mf: Miniflare | null = null
let nextNamespace = 0
afterAll(async () => {
  await mf?.dispose()
})
kvStoreContract('Workers KV (Miniflare)', async (opts) => {
  if (opts?.breakable) {
    const own = new Miniflare({ modules: true, script, kvNamespaces: ['KV'] })
    const kv = (await own.getKVNamespace('KV')) as unknown as KvStore as Listing
    let disposed = false
    return {
      kv,
      breakStore: async () => {
        disposed = true
        await own.dispose()
        return { readsFail: true }
      },
      close: async () => {
        if (!disposed) await own.dispose()
      },
    }
  }
  mf ??= new Miniflare({ modules: true, script, kvNamespaces: NAMESPACES })
  const name = NAMESPACES[nextNamespace++]
  if (!name) throw new Error('more Miniflare tests than namespaces: raise NAMESPACES')
  // The binding itself, exactly as the Worker gets it (the Worker entry passes it as its KvStore).
  const kv = (await mf.getKVNamespace(name)) as unknown as KvStore as Listing
  return { kv, close: async () => {} }
})
