/**
 * @module stores/store-contract
 * The store contract (docs/stores.md "The contract") as plain cases: what every {@link KvStore} of
 * the edge does the same way as Workers KV. Each case is a name and an async function of a fresh,
 * empty store that throws (node:assert) when the store breaks the contract; no test runner is
 * imported, so any runner can loop over {@link STORE_CONTRACT}. The repository runs it against the
 * memory store, the file store, a real redis-server and the Workers KV binding under Miniflare
 * (test/stores/kv-store-contract.test.ts); a store of your own proves itself the same way through
 * `mcp-edge-validator/store-contract`.
 */
import assert from 'node:assert/strict'
import { putEntries, type KvListResult, type KvStore } from '../core/ports'
import { toolKey } from '../core/validation/tool-store'

/** A fresh, empty store for one case, and what the case may do with it beyond the port. */
export interface StoreUnderTest {
  /** The store; `list` is required here (it is optional on the port). */
  kv: KvStore & { list: NonNullable<KvStore['list']> }
  /**
   * Moves the store's clock forward by `ms` milliseconds (stores with an injectable clock only):
   * the TTL case then also checks that an expired key is gone.
   */
  advance?(ms: number): void
  /**
   * Makes the store's backend fail (server stopped, namespace disposed, directory removed) and
   * says whether reads fail too (`readsFail`: false for a store that still serves reads from
   * memory). Without it the failure case checks nothing (a memory store has no backend to lose).
   */
  breakStore?(): Promise<{ readsFail: boolean }>
  /**
   * Stores `value` under every key in `keys`, for a case's bulk setup (default: `kv.put`, 100 at a
   * time). A store whose every call crosses a process boundary can do it in one crossing.
   */
  putMany?(keys: string[], value: string): Promise<void>
  /** Releases the store (connections, files); called after the case, whether it passed or not. */
  close(): Promise<void>
}

/**
 * Makes a fresh, empty store. `breakable`: the case will call `breakStore` (a store that shares a
 * server between cases may want a server of its own for it).
 */
export type StoreFactory = (opts?: { breakable?: boolean }) => Promise<StoreUnderTest>

/** One case of the contract: `run` resolves when the store keeps it and rejects (an AssertionError) when not. */
export interface StoreContractCase {
  /** What the case checks, as a test name. */
  readonly name: string
  /** The case calls `breakStore`: its factory gets `{ breakable: true }`. */
  readonly breakable?: boolean
  run(store: StoreUnderTest): Promise<void>
}

/** Values that must come back byte for byte: [label, value]. */
export const STORE_CONTRACT_VALUES: readonly (readonly [string, string])[] = [
  ['plain ASCII', 'sunny'],
  ['empty', ''],
  ['JSON with escapes', JSON.stringify({ name: 'get_weather', inputSchema: { type: 'object', description: 'quote " backslash \\ tab \t' } })],
  ['accents, CJK, emoji, combining marks', 'café 東京 🌦️ e\u0301 \u{1F468}\u200D\u{1F469}\u200D\u{1F467}'],
  ['NUL, CR LF, U+2028', 'a\u0000b\r\nc\u2028d'],
  ['astral code points', '\u{10000}\u{1F600}\u{10FFFF}'],
  ['one mebibyte', 'x'.repeat(1 << 20)],
]

/** Every key under `prefix`, listed `limit` at a time, and the pages that gave them. */
async function allKeys(kv: StoreUnderTest['kv'], prefix: string, limit: number): Promise<{ names: string[]; pages: KvListResult[] }> {
  const pages: KvListResult[] = []
  let cursor: string | undefined
  for (let i = 0; i < 100; i++) {
    const page = await kv.list({ prefix, limit, cursor })
    pages.push(page)
    if (page.list_complete) return { names: pages.flatMap((p) => p.keys.map((k) => k.name)), pages }
    cursor = page.cursor
  }
  throw new Error('list never completed')
}

/** The contract, one case per rule of docs/stores.md "The contract". */
export const STORE_CONTRACT: readonly StoreContractCase[] = [
  {
    name: 'get of a missing key is null; put, overwrite, delete',
    async run({ kv }) {
      assert.equal(await kv.get(toolKey('default', 'public', 'nope')), null)
      await kv.put('k', 'one')
      assert.equal(await kv.get('k'), 'one')
      await kv.put('k', 'two')
      assert.equal(await kv.get('k'), 'two')
      await kv.delete('k')
      assert.equal(await kv.get('k'), null)
      await kv.delete('k') // deleting a missing key is no error
      assert.equal(await kv.get('k'), null)
    },
  },
  {
    name: 'values come back byte for byte',
    async run({ kv }) {
      for (const [label, value] of STORE_CONTRACT_VALUES) {
        await kv.put(`v:${label}`, value)
        const got = await kv.get(`v:${label}`)
        assert.ok(got === value, `${label}: ${got === null ? 'null' : `${got.length} of ${value.length} chars`}`)
      }
    },
  },
  {
    name: 'keys: unicode and 512 UTF-8 bytes are fine; empty, ".", ".." and 513 bytes are refused',
    async run({ kv }) {
      const unicode = toolKey('météo', 'public', '天気🌦')
      await kv.put(unicode, 'u')
      assert.equal(await kv.get(unicode), 'u')
      const max = 'é'.repeat(256) // 512 bytes
      await kv.put(max, 'm')
      assert.equal(await kv.get(max), 'm')
      // Each call in an async function: a store that throws at once is refusing too.
      for (const bad of ['', '.', '..', max + 'x']) await assert.rejects((async () => kv.put(bad, 'x'))(), JSON.stringify(bad.slice(0, 10)))
      await assert.rejects((async () => kv.get(''))())
    },
  },
  {
    name: 'list: by prefix, in UTF-8 byte order, a page at a time with a cursor',
    async run({ kv }) {
      // UTF-8 order puts U+FFFD (EF BF BD) before U+1F600 (F0 9F 98 80); UTF-16 order does not.
      const names = ['p:b', 'p:a', 'p:\u{1F600}', 'p:\uFFFD', 'p:a:1', 'p:Z']
      for (const n of names) await kv.put(n, n)
      await kv.put('other:a', 'x')
      await kv.put('p', 'the prefix itself is not under p:')
      const expected = ['p:Z', 'p:a', 'p:a:1', 'p:b', 'p:\uFFFD', 'p:\u{1F600}']
      const whole = await kv.list({ prefix: 'p:' })
      assert.deepEqual(
        whole.keys.map((k) => k.name),
        expected
      )
      assert.equal(whole.list_complete, true)
      assert.equal(whole.cursor ?? '', '')
      const { names: paged, pages } = await allKeys(kv, 'p:', 4)
      assert.deepEqual(paged, expected)
      assert.deepEqual(
        pages.map((p) => p.keys.length),
        [4, 2]
      )
      assert.equal(pages[0]!.list_complete, false)
      assert.ok(typeof pages[0]!.cursor === 'string' && pages[0]!.cursor.length > 0, 'a page that is not the last gives a cursor')
      assert.deepEqual((await allKeys(kv, 'p:', 1)).names, expected)
      assert.equal((await allKeys(kv, 'p:', 6)).pages.length, 1)
      assert.deepEqual(
        (await kv.list()).keys.map((k) => k.name),
        ['other:a', 'p', ...expected]
      )
      assert.deepEqual((await kv.list({ prefix: 'nothing:' })).keys, [])
      await kv.delete('p:a')
      assert.deepEqual(
        (await kv.list({ prefix: 'p:a' })).keys.map((k) => k.name),
        ['p:a:1']
      )
      await assert.rejects((async () => kv.list({ limit: 1001 }))())
    },
  },
  {
    name: 'list pages 1,050 keys in pages of at most 1000, none lost or repeated',
    async run({ kv, putMany }) {
      // Past one full page, and no more than needed.
      const n = 1050
      const want: string[] = []
      for (let i = 0; i < n; i++) want.push(`bulk:${String(i).padStart(5, '0')}`)
      if (putMany) await putMany(want, '1')
      else for (let i = 0; i < n; i += 100) await Promise.all(want.slice(i, i + 100).map((k) => kv.put(k, '1')))
      const { names, pages } = await allKeys(kv, 'bulk:', 1000)
      assert.deepEqual(names, want)
      assert.deepEqual(
        pages.map((p) => p.keys.length),
        [1000, 50]
      )
    },
  },
  {
    name: 'TTL: expirationTtl in seconds (at least 60); the expiry is reported by list and cleared by a put without one',
    async run(s) {
      const { kv } = s
      const before = Math.floor(Date.now() / 1000)
      await kv.put('t:short', 'lives a minute', { expirationTtl: 60 })
      await kv.put('t:long', 'lives an hour', { expirationTtl: 3600 })
      await kv.put('t:none', 'forever')
      assert.equal(await kv.get('t:short'), 'lives a minute')
      const listed = new Map((await kv.list({ prefix: 't:' })).keys.map((k) => [k.name, k.expiration]))
      const after = Math.floor(Date.now() / 1000) + 1
      const within = (key: string, low: number, high: number) => {
        const at = listed.get(key)
        assert.ok(typeof at === 'number' && at >= low && at <= high, `${key}: expiration ${String(at)}, expected ${low} to ${high}`)
      }
      within('t:short', before + 59, after + 60)
      within('t:long', before + 3599, after + 3600)
      assert.equal(listed.get('t:none'), undefined)
      await kv.put('t:long', 'now forever')
      assert.equal((await kv.list({ prefix: 't:long' })).keys[0]!.expiration, undefined)
      for (const bad of [30, 0, -1, Number.NaN]) await assert.rejects((async () => kv.put('t:bad', 'x', { expirationTtl: bad }))(), String(bad))
      assert.equal(await kv.get('t:bad'), null)
      if (s.advance) {
        s.advance(61_000)
        assert.equal(await kv.get('t:short'), null)
        assert.equal(await kv.get('t:none'), 'forever')
        assert.deepEqual(
          (await kv.list({ prefix: 't:' })).keys.map((k) => k.name),
          ['t:long', 't:none']
        )
      }
    },
  },
  {
    name: 'a batch write (putMany, or putEntries where the store has none: Workers KV) stores every entry; a bad key or TTL anywhere stores none',
    async run({ kv }) {
      const entries = Array.from({ length: 60 }, (_, i) => ({ key: `b:${String(i).padStart(3, '0')}`, value: `v${i}`, ...(i % 7 === 0 ? { expirationTtl: 3600 } : {}) }))
      await putEntries(kv, entries)
      const { names } = await allKeys(kv, 'b:', 1000)
      assert.deepEqual(
        names,
        entries.map((e) => e.key)
      )
      assert.equal(await kv.get('b:059'), 'v59')
      const listed = await kv.list({ prefix: 'b:00' })
      const expiration = listed.keys.find((k) => k.name === 'b:000')?.expiration
      assert.ok(typeof expiration === 'number' && expiration > Date.now() / 1000, `b:000: expiration ${String(expiration)}, expected one in the future`)
      // putMany is optional on the port (Workers KV has none): its all-or-nothing rule is checked where it exists.
      if (typeof kv.putMany !== 'function') return
      for (const bad of [
        [
          { key: 'c:ok', value: '1' },
          { key: '', value: '2' },
        ],
        [
          { key: 'c:ok', value: '1' },
          { key: 'c:ttl', value: '2', expirationTtl: 5 },
        ],
        [
          { key: 'c:ok', value: '1' },
          { key: 'c:'.padEnd(600, 'x'), value: '2' },
        ],
      ])
        await assert.rejects(kv.putMany(bad))
      assert.equal(await kv.get('c:ok'), null)
    },
  },
  {
    name: 'on failure every call rejects, promptly, and nothing hangs',
    breakable: true,
    async run(s) {
      // A store with no backend that can fail (the memory store): its contract ends here.
      if (!s.breakStore) return
      await s.kv.put('f:before', 'kept')
      const { readsFail } = await s.breakStore()
      const t0 = Date.now()
      // Each call in an async function: a binding of a disposed Miniflare throws as its method is read.
      const calls = [() => s.kv.put('f:after', 'x'), () => s.kv.delete('f:before'), () => s.kv.get('f:missing'), () => s.kv.list({ prefix: 'f:' })]
      const outcomes = await Promise.allSettled(calls.map(async (call) => call()))
      assert.deepEqual(
        outcomes.map((o) => o.status),
        readsFail ? ['rejected', 'rejected', 'rejected', 'rejected'] : ['rejected', 'rejected', 'fulfilled', 'fulfilled']
      )
      for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof Error, `rejected with ${String(o.reason)}, not an Error`)
      // Every store bounds a call (Redis: 1 s per command): the bound only catches a call that waits for the lost backend (10x).
      assert.ok(Date.now() - t0 < 10_000, `the calls took ${Date.now() - t0} ms after the backend failed`)
    },
  },
]

/**
 * Runs one case on a fresh store from `factory` (with `{ breakable: true }` for a case that
 * breaks it) and closes the store afterwards, whether the case passed or not. Resolves when the
 * store keeps the case, rejects with the case's AssertionError (or the store's error) when not.
 */
export async function runStoreContractCase(contractCase: StoreContractCase, factory: StoreFactory): Promise<void> {
  const store = await factory(contractCase.breakable ? { breakable: true } : undefined)
  try {
    await contractCase.run(store)
  } finally {
    await store.close()
  }
}
