/**
 * The registry's caches with the real engines (docs/design.md §7): compiled validators are
 * keyed by schema, bounded by an LRU, and leave nothing behind inside ajv when evicted; nothing is
 * compiled twice; KV is read at most once per tool per TTL per isolate.
 */
import { describe, expect, it } from 'vitest'
import { MAX_MEMORY_ENTRIES, ToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createAjvEngine } from '../../src/validators/ajv'
import { createCfworkerEngine } from '../../src/validators/cfworker'

const schemaN = (n: number) => ({
  $id: 'https://tools.example/shared-id.json',
  type: 'object',
  properties: { [`p${n}`]: { type: 'integer', maximum: n }, nested: { type: 'string' } },
  $defs: { self: { $ref: '#' } },
})

describe('validator cache', () => {
  // Each ajv compile costs 2-3 ms of CPU here (10 ms and more with a second suite beside it), so the
  // loops compile what the assertions need and no more: the equalities below catch a leak of one
  // entry per compile, which shows from the first compile past the bound.
  it('ajv: an LRU of 50 over 300 distinct schemas keeps 50 validators and nothing inside ajv grows', async () => {
    const engine = createAjvEngine()
    const registry = new ToolRegistry({ kv: new MemoryKv(), engine, schemaTtlS: 300, validatorCacheSize: 50, refreshMinIntervalMs: 0 })
    // Warm up the ajv instance (meta-schemas, formats) before measuring.
    await registry.learn('o', 'public', [{ name: 'warm', inputSchema: { type: 'object' } }], '2025-11-25')
    const base = engine.retained()
    // Every schema repeats the same root $id: ajv would refuse the second one if compiles left
    // their ids registered.
    for (let i = 0; i < 300; i += 100) {
      const tools = Array.from({ length: 100 }, (_, k) => ({ name: `t${i + k}`, inputSchema: schemaN(i + k) }))
      await registry.learn('o', 'public', tools, '2025-11-25')
    }
    expect(registry.compiledCount).toBe(50)
    expect(engine.retained()).toBe(base)
    const last = await registry.lookup('o', 'public', 't299')
    expect(last?.validate).toBeTypeOf('function')
    expect(last!.validate!({ p299: 300 })?.[0]).toMatchObject({ keyword: 'maximum' })
    expect(last!.validate!({ p299: 3, nested: 'x' })).toBeNull()
  })

  it('ajv engine: compiling schemas with embedded $id resources 100 times leaves nothing registered', () => {
    const engine = createAjvEngine()
    engine.compile({ type: 'object' }, '2020-12')
    const base = engine.retained()
    for (let i = 0; i < 100; i++) {
      const v = engine.compile(
        { $id: 'https://tools.example/root.json', type: 'object', properties: { a: { $ref: 'inner.json' } }, $defs: { inner: { $id: 'inner.json', type: 'integer', maximum: i } } },
        '2020-12'
      )
      expect(v({ a: i + 1 })?.[0]).toMatchObject({ keyword: 'maximum' })
    }
    expect(engine.retained()).toBe(base)
  })

  it('remembered misses for random tool names stay bounded in memory (VALIDATOR_CACHE_SIZE, at most MAX_MEMORY_ENTRIES)', async () => {
    const small = new ToolRegistry({ kv: new MemoryKv(), engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 10, refreshMinIntervalMs: 0 })
    for (let i = 0; i < 500; i++) expect(await small.lookup('o', 'public', `random_${i}`)).toBeNull()
    expect(small.heldCount).toBe(10)
    const large = new ToolRegistry({ kv: new MemoryKv(), engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 1_000_000, refreshMinIntervalMs: 0 })
    for (let i = 0; i < MAX_MEMORY_ENTRIES + 2000; i++) expect(await large.lookup('o', 'public', `random_${i}`)).toBeNull()
    expect(large.heldCount).toBe(MAX_MEMORY_ENTRIES)
  })

  for (const make of [createAjvEngine, createCfworkerEngine]) {
    it(`${make.name}: one schema shared by many tools is compiled once; lookups read KV once per TTL`, async () => {
      let now = 1_000_000
      const kv = new MemoryKv(() => now)
      const registry = new ToolRegistry({ kv, engine: make(), schemaTtlS: 60, validatorCacheSize: 100, refreshMinIntervalMs: 0, now: () => now })
      const shared = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }
      await registry.learn(
        'o',
        'public',
        Array.from({ length: 20 }, (_, i) => ({ name: `s${i}`, inputSchema: shared })),
        '2025-11-25'
      )
      expect(registry.stats.compiles).toBe(1)
      // A second isolate: same KV, empty memory.
      const other = new ToolRegistry({ kv, engine: make(), schemaTtlS: 60, validatorCacheSize: 100, refreshMinIntervalMs: 0, now: () => now })
      for (let i = 0; i < 50; i++) await other.lookup('o', 'public', 's3')
      expect(other.stats.kvReads).toBe(1)
      expect(other.stats.compiles).toBe(1)
      // The same list seen again soon (another client session listing tools): no KV write.
      const writes = registry.stats.kvWrites
      await registry.learn(
        'o',
        'public',
        Array.from({ length: 20 }, (_, i) => ({ name: `s${i}`, inputSchema: shared })),
        '2025-11-25'
      )
      expect(registry.stats.kvWrites).toBe(writes)
      // A changed schema is written at once.
      await registry.learn('o', 'public', [{ name: 's0', inputSchema: { type: 'object' } }], '2025-11-25')
      expect(registry.stats.kvWrites).toBe(writes + 1)
      now += 61_000
      const stale = await other.lookup('o', 'public', 's3')
      expect(other.stats.kvReads).toBe(2)
      expect(stale?.stale).toBe(true)
      // Same schema text: taken from the compile cache, not compiled again.
      expect(other.stats.compiles).toBe(1)
    })
  }
})
