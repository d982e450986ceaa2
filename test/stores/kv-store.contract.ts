/**
 * The store contract (docs/stores.md): what every {@link KvStore} of the edge does the same way as
 * Workers KV, run by kv-store-contract.test.ts against MemoryKv, FileKv, RedisKv (a real
 * redis-server) and the Workers KV binding under Miniflare. Each test gets a fresh, empty store.
 */
import { describe, expect, it } from 'vitest'
import { putEntries, type KvListResult, type KvStore } from '../../src/core/ports'
import { toolKey } from '../../src/core/validation/tool-store'

/** A fresh, empty store for one test. */
export interface StoreUnderTest {
  kv: KvStore & { list: NonNullable<KvStore['list']> }
  /** Moves the store's clock forward by `ms` (stores with an injectable clock only). */
  advance?(ms: number): void
  /**
   * Makes the store's backend fail (server stopped, namespace disposed, directory removed);
   * `readsFail`: reads fail too (the file store still serves reads from memory).
   */
  breakStore?(): Promise<{ readsFail: boolean }>
  /**
   * Stores `value` under every key in `keys`, for a test's bulk setup (default: `kv.put` 100 at a
   * time). A store whose every call crosses a process boundary can do it in one crossing.
   */
  putMany?(keys: string[], value: string): Promise<void>
  close(): Promise<void>
}

/** Makes a store; `breakable`: the test will call `breakStore` (it may need a backend of its own). */
export type StoreFactory = (opts?: { breakable?: boolean }) => Promise<StoreUnderTest>

/** Values that must come back byte for byte. */
export const VALUES: [string, string][] = [
  ['plain ASCII', 'sunny'],
  ['empty', ''],
  ['JSON with escapes', JSON.stringify({ name: 'get_weather', inputSchema: { type: 'object', description: 'quote " backslash \\ tab \t' } })],
  ['accents, CJK, emoji, combining marks', 'café 東京 🌦️ e\u0301 \u{1F468}\u200D\u{1F469}\u200D\u{1F467}'],
  ['NUL, CR LF, U+2028', 'a\u0000b\r\nc\u2028d'],
  ['astral code points', '\u{10000}\u{1F600}\u{10FFFF}'],
  ['one mebibyte', 'x'.repeat(1 << 20)],
]

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

/** Registers the contract tests for one store. */
export function kvStoreContract(name: string, factory: StoreFactory): void {
  const withStore = (fn: (s: StoreUnderTest) => Promise<void>, opts?: { breakable?: boolean }) => async () => {
    const s = await factory(opts)
    try {
      await fn(s)
    } finally {
      await s.close()
    }
  }

  describe(`store contract: ${name}`, () => {
    it(
      'get of a missing key is null; put, overwrite, delete',
      withStore(async ({ kv }) => {
        expect(await kv.get(toolKey('default', 'public', 'nope'))).toBeNull()
        await kv.put('k', 'one')
        expect(await kv.get('k')).toBe('one')
        await kv.put('k', 'two')
        expect(await kv.get('k')).toBe('two')
        await kv.delete('k')
        expect(await kv.get('k')).toBeNull()
        await kv.delete('k') // deleting a missing key is no error
        expect(await kv.get('k')).toBeNull()
      })
    )

    it(
      'values come back byte for byte',
      withStore(async ({ kv }) => {
        for (const [label, value] of VALUES) {
          await kv.put(`v:${label}`, value)
          const got = await kv.get(`v:${label}`)
          expect(got === value, `${label}: ${got === null ? 'null' : `${got.length} of ${value.length} chars`}`).toBe(true)
        }
      })
    )

    it(
      'keys: unicode and 512 UTF-8 bytes are fine; empty, ".", ".." and 513 bytes are refused',
      withStore(async ({ kv }) => {
        const unicode = toolKey('météo', 'public', '天気🌦')
        await kv.put(unicode, 'u')
        expect(await kv.get(unicode)).toBe('u')
        const max = 'é'.repeat(256) // 512 bytes
        await kv.put(max, 'm')
        expect(await kv.get(max)).toBe('m')
        for (const bad of ['', '.', '..', max + 'x']) {
          await expect((async () => kv.put(bad, 'x'))(), JSON.stringify(bad.slice(0, 10))).rejects.toThrow()
        }
        await expect((async () => kv.get(''))()).rejects.toThrow()
      })
    )

    it(
      'list: by prefix, in UTF-8 byte order, a page at a time with a cursor',
      withStore(async ({ kv }) => {
        // UTF-8 order puts U+FFFD (EF BF BD) before U+1F600 (F0 9F 98 80); UTF-16 order does not.
        const names = ['p:b', 'p:a', 'p:\u{1F600}', 'p:\uFFFD', 'p:a:1', 'p:Z']
        for (const n of names) await kv.put(n, n)
        await kv.put('other:a', 'x')
        await kv.put('p', 'the prefix itself is not under p:')
        const expected = ['p:Z', 'p:a', 'p:a:1', 'p:b', 'p:\uFFFD', 'p:\u{1F600}']
        const whole = await kv.list({ prefix: 'p:' })
        expect(whole.keys.map((k) => k.name)).toEqual(expected)
        expect(whole.list_complete).toBe(true)
        expect(whole.cursor ?? '').toBe('')
        const { names: paged, pages } = await allKeys(kv, 'p:', 4)
        expect(paged).toEqual(expected)
        expect(pages.map((p) => p.keys.length)).toEqual([4, 2])
        expect(pages[0]!.list_complete).toBe(false)
        expect(typeof pages[0]!.cursor === 'string' && pages[0]!.cursor.length > 0).toBe(true)
        expect((await allKeys(kv, 'p:', 1)).names).toEqual(expected)
        expect((await allKeys(kv, 'p:', 6)).pages.length).toBe(1)
        expect((await kv.list()).keys.map((k) => k.name)).toEqual(['other:a', 'p', ...expected])
        expect((await kv.list({ prefix: 'nothing:' })).keys).toEqual([])
        await kv.delete('p:a')
        expect((await kv.list({ prefix: 'p:a' })).keys.map((k) => k.name)).toEqual(['p:a:1'])
        await expect((async () => kv.list({ limit: 1001 }))()).rejects.toThrow()
      })
    )

    it(
      'list pages 1,050 keys in pages of at most 1000, none lost or repeated',
      withStore(async ({ kv, putMany }) => {
        // Past one full page, and no more than needed.
        const n = 1050
        const want: string[] = []
        for (let i = 0; i < n; i++) want.push(`bulk:${String(i).padStart(5, '0')}`)
        if (putMany) await putMany(want, '1')
        else for (let i = 0; i < n; i += 100) await Promise.all(want.slice(i, i + 100).map((k) => kv.put(k, '1')))
        const { names, pages } = await allKeys(kv, 'bulk:', 1000)
        expect(names).toEqual(want)
        expect(pages.map((p) => p.keys.length)).toEqual([1000, 50])
      })
    )

    it(
      'TTL: expirationTtl in seconds (at least 60); the expiry is reported by list and cleared by a put without one',
      withStore(async (s) => {
        const { kv } = s
        const before = Math.floor(Date.now() / 1000)
        await kv.put('t:short', 'lives a minute', { expirationTtl: 60 })
        await kv.put('t:long', 'lives an hour', { expirationTtl: 3600 })
        await kv.put('t:none', 'forever')
        expect(await kv.get('t:short')).toBe('lives a minute')
        const listed = new Map((await kv.list({ prefix: 't:' })).keys.map((k) => [k.name, k.expiration]))
        const after = Math.floor(Date.now() / 1000) + 1
        expect(listed.get('t:short')).toBeGreaterThanOrEqual(before + 59)
        expect(listed.get('t:short')).toBeLessThanOrEqual(after + 60)
        expect(listed.get('t:long')).toBeGreaterThanOrEqual(before + 3599)
        expect(listed.get('t:long')).toBeLessThanOrEqual(after + 3600)
        expect(listed.get('t:none')).toBeUndefined()
        await kv.put('t:long', 'now forever')
        expect((await kv.list({ prefix: 't:long' })).keys[0]!.expiration).toBeUndefined()
        for (const bad of [30, 0, -1, Number.NaN]) {
          await expect((async () => kv.put('t:bad', 'x', { expirationTtl: bad }))(), String(bad)).rejects.toThrow()
        }
        expect(await kv.get('t:bad')).toBeNull()
        if (s.advance) {
          s.advance(61_000)
          expect(await kv.get('t:short')).toBeNull()
          expect(await kv.get('t:none')).toBe('forever')
          expect((await kv.list({ prefix: 't:' })).keys.map((k) => k.name)).toEqual(['t:long', 't:none'])
        }
      })
    )

    it(
      'a batch write (putMany, or putEntries where the store has none: Workers KV) stores every entry; a bad key or TTL anywhere stores none',
      withStore(async ({ kv }) => {
        const entries = Array.from({ length: 60 }, (_, i) => ({ key: `b:${String(i).padStart(3, '0')}`, value: `v${i}`, ...(i % 7 === 0 ? { expirationTtl: 3600 } : {}) }))
        await putEntries(kv, entries)
        const { names } = await allKeys(kv, 'b:', 1000)
        expect(names).toEqual(entries.map((e) => e.key))
        expect(await kv.get('b:059')).toBe('v59')
        const listed = await kv.list({ prefix: 'b:00' })
        expect(listed.keys.find((k) => k.name === 'b:000')?.expiration).toBeGreaterThan(Date.now() / 1000)
        if (typeof kv.putMany !== 'function') {
          expect(name).toMatch(/Workers KV/)
          return
        }
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
          await expect(kv.putMany(bad)).rejects.toThrow()
        expect(await kv.get('c:ok')).toBeNull()
      })
    )

    it(
      'on failure every call rejects, promptly, and nothing hangs',
      withStore(
        async (s) => {
          if (!s.breakStore) {
            // MemoryKv has no backend that can fail; its contract ends here.
            expect(name).toBe('MemoryKv')
            return
          }
          await s.kv.put('f:before', 'kept')
          const { readsFail } = await s.breakStore()
          const t0 = Date.now()
          // Each call in an async function: a binding of a disposed Miniflare throws as its method is read.
          const calls = [() => s.kv.put('f:after', 'x'), () => s.kv.delete('f:before'), () => s.kv.get('f:missing'), () => s.kv.list({ prefix: 'f:' })]
          const outcomes = await Promise.allSettled(calls.map(async (call) => call()))
          expect(outcomes.map((o) => o.status)).toEqual(readsFail ? ['rejected', 'rejected', 'rejected', 'rejected'] : ['rejected', 'rejected', 'fulfilled', 'fulfilled'])
          for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(Error)
          // Every store bounds a call (Redis: 1 s per command): the bound only catches a call that waits for the lost backend (10x).
          expect(Date.now() - t0).toBeLessThan(10_000)
        },
        { breakable: true }
      )
    )
  })
}
