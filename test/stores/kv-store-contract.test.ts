/**
 * The store contract (mcp-edge-validator/store-contract, src/stores/store-contract.ts: plain cases
 * with no test runner in them) against every store the edge runs on: MemoryKv, FileKv (a file in a
 * fresh temporary folder), RedisKv (a real redis-server this file starts) and the Workers KV
 * binding under Miniflare (what the Worker's TOOL_SCHEMAS is). A store of another package runs the
 * same cases the same way (docs/stores.md "A store of your own").
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KvStore } from '../../src/core/ports'
import { FileKv } from '../../src/stores/file-kv'
import { MemoryKv } from '../../src/stores/memory-kv'
import { RedisKv } from '../../src/stores/redis-kv'
import { STORE_CONTRACT, runStoreContractCase, type StoreFactory, type StoreUnderTest } from 'mcp-edge-validator/store-contract'
import { memoryDir } from '../helpers/memory-dir'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'

/**
 * Registers every case of the contract for one store. `has`: what this store offers beyond the
 * port's required calls (its batch write, checked on every store a case gets; its failure mode, on
 * the store the failure case gets), so none of the edge's stores loses either unnoticed (the cases
 * themselves skip what a store lacks).
 */
function kvStoreContract(name: string, has: { putMany: boolean; failure: boolean }, factory: StoreFactory): void {
  const checked: StoreFactory = async (opts) => {
    const store = await factory(opts)
    expect(typeof store.kv.putMany === 'function', `${name}: putMany`).toBe(has.putMany)
    if (opts?.breakable) expect(typeof store.breakStore === 'function', `${name}: a backend that can fail`).toBe(has.failure)
    return store
  }
  describe(`store contract: ${name}`, () => {
    for (const contractCase of STORE_CONTRACT) it(contractCase.name, () => runStoreContractCase(contractCase, checked))
  })
}

type Listing = StoreUnderTest['kv']

kvStoreContract('MemoryKv', { putMany: true, failure: false }, async () => {
  let now = Date.now()
  const kv = new MemoryKv(() => now)
  return { kv, advance: (ms) => void (now += ms), close: async () => {} }
})

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
kvStoreContract('FileKv', { putMany: true, failure: true }, async () => {
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
kvStoreContract('RedisKv', { putMany: true, failure: true }, async (opts) => {
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
// test disposes a Miniflare of its own. Their KV data lives on tmpfs (helpers/memory-dir.ts): in the
// default folder on disk every put waits for a sync. Bulk setup runs inside the Worker, through the
// same binding (`putMany`): 1,050 puts from Node, one proxy round trip each, took 9 s alone and
// over 30 s with a second suite beside it.
const NAMESPACES = Array.from({ length: 12 }, (_, i) => `KV${i}`)
const script = `export default {
  async fetch(request, env) {
    const { namespace, keys, value } = await request.json()
    await Promise.all(keys.map((k) => env[namespace].put(k, value)))
    return new Response(String(keys.length))
  },
}`
const kvDir = memoryDir('edge-contract-kv-')
let mf: Miniflare | null = null
let nextNamespace = 0
let ownDirs = 0
afterAll(async () => {
  await mf?.dispose()
  kvDir.remove()
})
kvStoreContract('Workers KV (Miniflare)', { putMany: false, failure: true }, async (opts) => {
  if (opts?.breakable) {
    const own = new Miniflare({ modules: true, script, kvNamespaces: ['KV'], kvPersist: join(kvDir.path, `own-${++ownDirs}`) })
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
  mf ??= new Miniflare({ modules: true, script, kvNamespaces: NAMESPACES, kvPersist: join(kvDir.path, 'shared') })
  const name = NAMESPACES[nextNamespace++]
  if (!name) throw new Error('more Miniflare tests than namespaces: raise NAMESPACES')
  // The binding itself, exactly as the Worker gets it (the Worker entry passes it as its KvStore).
  const kv = (await mf.getKVNamespace(name)) as unknown as KvStore as Listing
  const worker = mf
  const putMany = async (keys: string[], value: string) => {
    const r = await worker.dispatchFetch('http://contract.test/', { method: 'POST', body: JSON.stringify({ namespace: name, keys, value }) })
    if ((await r.text()) !== String(keys.length)) throw new Error(`putMany into ${name}: ${r.status}`)
  }
  return { kv, putMany, close: async () => {} }
})
