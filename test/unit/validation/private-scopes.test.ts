/**
 * The bounds of private tool-list scopes (src/core/validation/private-scopes.ts, as the registry
 * applies them; docs/scope.md "Bounds"): every key of a private scope expires PRIVATE_SCOPE_TTL_S
 * after its last write; an origin keeps at most MAX_PRIVATE_SCOPES private scopes in memory and,
 * up to one sweep's slack, in the store, the least recently used out first. Public lists are not
 * touched by either bound.
 */
import { describe, expect, it } from 'vitest'
import { sweepEvery } from '../../../src/core/validation/private-scopes'
import { ToolRegistry } from '../../../src/core/validation/tool-registry'
import { MemoryKv } from '../../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'
import { toolKey, toolPrefix, toolListKey, scopeMarkerKey, scopeMarkerPrefix } from '../../../src/core/validation/tool-store'

const TOOLS = [
  { name: 'a', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } },
  { name: 'b', inputSchema: { type: 'object' } },
]

function setup(opts: { ttlS?: number; max?: number } = {}) {
  const c = { t: 1_700_000_000_000 }
  const kv = new MemoryKv(() => c.t)
  const registry = new ToolRegistry({
    kv,
    engine: createCfworkerEngine(),
    schemaTtlS: 300,
    validatorCacheSize: 1000,
    refreshMinIntervalMs: 0,
    privateScopeTtlS: opts.ttlS ?? 3600,
    maxPrivateScopes: opts.max ?? 1000,
    now: () => c.t,
  })
  return { c, kv, registry }
}

const scope = (i: number) => `u-${i.toString(16).padStart(64, '0')}`

/** The distinct private scopes that have keys of `kind` in the store. */
async function scopesIn(kv: MemoryKv, kind: 'tools' | 'scopes' | 'toollist'): Promise<string[]> {
  return [...new Set((await kv.keys(`${kind}:o:u-`)).map((k) => k.split(':')[2]!))].sort()
}

describe('private scope TTL', () => {
  it('every key of a private scope is written with PRIVATE_SCOPE_TTL_S and gone after it; public keys never expire', async () => {
    const { c, kv, registry } = setup({ ttlS: 120 })
    await registry.learn('o', scope(1), TOOLS, '2025-06-18')
    await registry.refresh('o', scope(2), async () => ({ tools: TOOLS, era: '2025-06-18', cacheScope: 'private' }))
    await registry.learn('o', 'public', TOOLS, '2025-06-18')
    const page = await kv.list({ prefix: '' })
    const expiry = Object.fromEntries(page.keys.map((k) => [k.name, k.expiration ?? null]))
    const at = Math.floor(c.t / 1000)
    for (const s of [1, 2]) {
      expect(expiry[toolKey('o', scope(s), 'a')]).toBe(at + 120)
      expect(expiry[toolKey('o', scope(s), 'b')]).toBe(at + 120)
      // The marker outlives the keys by one TTL: a sweep still finds what a store kept of them.
      expect(expiry[scopeMarkerKey('o', scope(s))]).toBe(at + 240)
    }
    expect(expiry[toolListKey('o', scope(2))]).toBe(at + 120)
    expect(expiry[toolKey('o', 'public', 'a')]).toBeNull()
    c.t += 120_000
    expect(await kv.get(toolKey('o', scope(1), 'a'))).toBeNull()
    expect(await kv.get(toolKey('o', 'public', 'a'))).not.toBeNull()
    // Memory does not outlive the store either: the private entry is read again (and is gone).
    expect(registry.cached('o', scope(1), 'a')).toBeUndefined()
    const reads = registry.stats.kvReads
    expect(await registry.lookup('o', scope(1), 'a')).toMatchObject({ record: { name: 'a' } }) // the public list serves it
    expect(registry.stats.kvReads).toBeGreaterThan(reads)
  })
})

describe('private scope count (MAX_PRIVATE_SCOPES)', () => {
  it('30 callers of one origin leave at most the bound plus one sweep of slack in the store, the latest ones; memory holds the bound', async () => {
    const max = 5
    const { c, kv, registry } = setup({ max })
    for (let i = 0; i < 30; i++) {
      c.t += 1_000
      await registry.learn('o', scope(i), TOOLS, '2025-06-18')
      expect((await scopesIn(kv, 'tools')).length).toBeLessThanOrEqual(max + sweepEvery(max))
      expect((await scopesIn(kv, 'scopes')).length).toBeLessThanOrEqual(max + sweepEvery(max))
    }
    const kept = await scopesIn(kv, 'tools')
    expect(kept.length).toBeGreaterThanOrEqual(max)
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => scope(30 - kept.length + k)).sort())
    expect(await scopesIn(kv, 'scopes')).toEqual(kept)
    expect(registry.privateScopes.stats.evicted).toBe(30 - kept.length)
    // Memory: the oldest scopes are not served from memory any more; the latest are.
    expect(registry.cached('o', scope(0), 'a')).toBeUndefined()
    expect(registry.cached('o', scope(29), 'a')).toMatchObject({ record: { name: 'a' } })
    // An evicted caller's lookup reads the store, finds nothing (its next refresh stores it again).
    expect(await registry.lookup('o', scope(0), 'a')).toBeNull()
    // Other origins and the public scope are not counted.
    await registry.learn('o', 'public', TOOLS, '2025-06-18')
    await registry.learn('p', scope(0), TOOLS, '2025-06-18')
    expect(await kv.get(toolKey('o', 'public', 'a'))).not.toBeNull()
    expect(await kv.get(toolKey('p', scope(0), 'a'))).not.toBeNull()
  })

  it('least recently used first: in memory a scope read lately stays, in the store a scope written lately stays', async () => {
    const max = 3
    const { c, kv, registry } = setup({ max })
    for (let i = 0; i < 3; i++) {
      c.t += 1_000
      await registry.learn('o', scope(i), TOOLS, '2025-06-18')
    }
    // Scope 0 is read (memory) and written again (store) before three more callers come.
    expect(registry.cached('o', scope(0), 'a')).toBeDefined()
    c.t += 1_000
    await registry.learn('o', scope(0), [{ name: 'a', inputSchema: { type: 'object', properties: { n: { type: 'string' } } } }], '2025-06-18')
    for (let i = 3; i < 5; i++) {
      c.t += 1_000
      await registry.learn('o', scope(i), TOOLS, '2025-06-18')
      expect(registry.cached('o', scope(0), 'a')).toBeDefined()
    }
    expect(await scopesIn(kv, 'tools')).toEqual([scope(0), scope(3), scope(4)].sort())
    expect(registry.cached('o', scope(1), 'a')).toBeUndefined()
  })

  it('a sweep also removes what is left of scopes past their TTL, and a store without list keeps the TTL bound only', async () => {
    const { c, kv, registry } = setup({ ttlS: 60, max: 2 })
    await registry.learn('o', scope(1), TOOLS, '2025-06-18')
    c.t += 61_000
    // A new process on the same store (it never held scope 1): its first new scope sweeps.
    const next = new ToolRegistry({
      kv,
      engine: createCfworkerEngine(),
      schemaTtlS: 300,
      validatorCacheSize: 1000,
      refreshMinIntervalMs: 0,
      privateScopeTtlS: 60,
      maxPrivateScopes: 2,
      now: () => c.t,
    })
    await next.learn('o', scope(2), TOOLS, '2025-06-18')
    expect(await kv.keys(scopeMarkerPrefix('o'))).toEqual([scopeMarkerKey('o', scope(2))])
    expect(next.privateScopes.stats).toMatchObject({ expired: 1, evicted: 0 })

    const plain = new MemoryKv()
    const noList = { get: (k: string) => plain.get(k), put: (k: string, v: string, o?: { expirationTtl?: number }) => plain.put(k, v, o), delete: (k: string) => plain.delete(k) }
    const r2 = new ToolRegistry({ kv: noList, engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 1000, refreshMinIntervalMs: 0, maxPrivateScopes: 1 })
    for (let i = 0; i < 3; i++) await r2.learn('o', scope(i), TOOLS, '2025-06-18')
    expect((await plain.list({ prefix: `${toolPrefix('o')}u-` })).keys.every((k) => typeof k.expiration === 'number')).toBe(true)
  })
})

describe('BoundedMap (CLOCK)', () => {
  it('never drops the entry just set, even when every older entry was used; evicts an older one and reports it', async () => {
    const { BoundedMap } = await import('../../../src/core/validation/bounded-map')
    const evicted: string[] = []
    const m = new BoundedMap<string, { used?: boolean }>(3, (k) => evicted.push(k))
    for (const k of ['a', 'b', 'c']) m.set(k, {})
    for (const k of ['a', 'b', 'c']) m.get(k)!.used = true
    m.set('d', {})
    expect(m.has('d')).toBe(true)
    expect(m.size).toBe(3)
    expect(evicted).toEqual(['a'])
    m.get('b')!.used = true
    m.set('e', {})
    expect([...m.keys()].sort()).toEqual(['b', 'd', 'e'])
    expect(evicted).toEqual(['a', 'c'])
  })
})
