/**
 * The registry's freshness rules (src/core/validation/freshness.ts, as the registry applies them
 * in src/core/validation/tool-registry.ts; docs/design.md §7): TTL, the origin's `ttlMs` hint,
 * `list_changed` per scope and for every scope, hand-pushed records, and the recheck of rejections.
 */
import { describe, expect, it } from 'vitest'
import { Freshness } from '../../../src/core/validation/freshness'
import { ToolRegistry, type ResolvedTool, type ToolRecord } from '../../../src/core/validation/tool-registry'
import { MemoryKv } from '../../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'

const record = (fetchedAt?: number, ttlMs?: number): ToolRecord => ({
  name: 't',
  inputSchema: { type: 'object' },
  dialect: '2020-12',
  hash: '0',
  ...(fetchedAt !== undefined ? { fetchedAt } : {}),
  ...(ttlMs !== undefined ? { ttlMs } : {}),
})

/** Whether a looked-up tool is stale; fails when there is no tool at all. */
function stale(t: ResolvedTool | null | undefined): boolean {
  if (!t) throw new Error('no tool')
  return t.stale === true
}

/** A clock the test moves by hand. */
function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t }
  return c
}

describe('Freshness', () => {
  it('a record is fresh for SCHEMA_TTL_S, then stale (the bound itself is stale)', () => {
    const c = clock()
    const f = new Freshness(300, c.now)
    const r = record(c.t)
    expect(f.isStale(r, 'o', 'public', c.t + 299_999)).toBe(false)
    expect(f.isStale(r, 'o', 'public', c.t + 300_000)).toBe(true)
  })

  it("the origin's positive ttlMs wins; 0, negative or absent means SCHEMA_TTL_S", () => {
    const f = new Freshness(300, clock().now)
    expect(f.ttlMs(record(0, 5_000))).toBe(5_000)
    for (const hint of [0, -1, undefined]) expect(f.ttlMs(record(0, hint))).toBe(300_000)
    expect(f.isStale(record(0, 5_000), 'o', 'public', 5_000)).toBe(true)
  })

  it('a record without fetchedAt (pushed by hand) never goes stale, even after list_changed', () => {
    const c = clock()
    const f = new Freshness(1, c.now)
    f.changed('o')
    expect(f.isStale(record(), 'o', 'public', c.t + 10 ** 9)).toBe(false)
  })

  it('list_changed makes what was fetched before it stale: one scope, or every scope', () => {
    const c = clock()
    const f = new Freshness(300, c.now)
    const before = record(c.t)
    c.t += 10
    f.changed('o', 'u-1')
    expect(f.isStale(before, 'o', 'u-1', c.t)).toBe(true)
    expect(f.isStale(before, 'o', 'public', c.t)).toBe(false)
    expect(f.isStale(before, 'other', 'u-1', c.t)).toBe(false)
    f.changed('o')
    expect(f.isStale(before, 'o', 'public', c.t)).toBe(true)
    // Fetched after the notice: fresh again.
    c.t += 10
    expect(f.isStale(record(c.t), 'o', 'public', c.t)).toBe(false)
  })

  it('a rejection is rechecked when the record is older than SCHEMA_RECHECK_MS or from before the start, once per bound', () => {
    const c = clock()
    const f = new Freshness(300, c.now)
    const tool = (fetchedAt?: number): ResolvedTool => ({ record: record(fetchedAt), validate: null })
    expect(f.needsRecheck(tool(c.t), 60_000)).toBe(false)
    expect(f.needsRecheck(tool(c.t - 1), 60_000)).toBe(true) // learned before this isolate started
    expect(f.needsRecheck(tool(), 60_000)).toBe(false) // the operator's word
    const old = tool(c.t)
    c.t += 60_001
    expect(f.needsRecheck(old, 60_000)).toBe(true)
    expect(f.needsRecheck(old, 60_000)).toBe(false) // marked: not again within the bound
    c.t += 60_001
    expect(f.needsRecheck(old, 60_000)).toBe(true)
  })
})

describe('ToolRegistry applies the rules', () => {
  function registry(c: ReturnType<typeof clock>, kv = new MemoryKv()) {
    return new ToolRegistry({ kv, engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 10, refreshMinIntervalMs: 1000, now: c.now })
  }

  it('a learned tool is served from memory while fresh, marked stale after the TTL, and after list_changed', async () => {
    const c = clock()
    const reg = registry(c)
    await reg.learn('o', 'public', [{ name: 't', inputSchema: { type: 'object' } }], '2025-06-18')
    expect(stale(reg.cached('o', 'public', 't'))).toBe(false)
    c.t += 150_000
    expect(stale(await reg.lookup('o', 'public', 't'))).toBe(false)
    reg.invalidate('o')
    // The memory entry is gone and the KV record is stale for this isolate.
    expect(reg.cached('o', 'public', 't')).toBeUndefined()
    expect(stale(await reg.lookup('o', 'public', 't'))).toBe(true)
  })

  it("the origin's ttlMs hint (2026-07-28) decides when a learned tool goes stale", async () => {
    const c = clock()
    const reg = registry(c)
    await reg.learn('o', 'public', [{ name: 't', inputSchema: { type: 'object' } }], '2026-07-28', 2_000)
    c.t += 1_999
    expect(stale(await reg.lookup('o', 'public', 't'))).toBe(false)
    c.t += 1
    expect(stale(await reg.lookup('o', 'public', 't'))).toBe(true)
  })

  it('a private scope reads its own list first, then public; list_changed for one scope leaves the others fresh', async () => {
    const c = clock()
    const reg = registry(c)
    await reg.learn('o', 'public', [{ name: 'p', inputSchema: { type: 'object' } }], '2025-06-18')
    await reg.learn('o', 'u-a', [{ name: 'mine', inputSchema: { type: 'object' } }], '2025-06-18')
    expect((await reg.lookup('o', 'u-a', 'p'))?.record.name).toBe('p')
    expect(await reg.lookup('o', 'u-b', 'mine')).toBeNull()
    c.t += 1
    reg.invalidate('o', 'u-a')
    expect(stale(await reg.lookup('o', 'u-a', 'mine'))).toBe(true)
    expect(stale(await reg.lookup('o', 'public', 'p'))).toBe(false)
  })
})

describe('listChangedSince (what a copy of a list pulled at a time may rely on)', () => {
  it('is true for a list_changed of the origin at or after the time, in any scope, and only for that origin', () => {
    const c = clock()
    const reg = new ToolRegistry({ kv: new MemoryKv(), engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 10, refreshMinIntervalMs: 0, now: c.now })
    const pulledAt = c.t
    expect(reg.listChangedSince('o', pulledAt)).toBe(false)
    c.t += 10
    reg.invalidate('other')
    expect(reg.listChangedSince('o', pulledAt)).toBe(false)
    reg.invalidate('o', 'u-a')
    expect(reg.listChangedSince('o', pulledAt)).toBe(true)
    // A list pulled after the change does not see it.
    expect(reg.listChangedSince('o', c.t + 1)).toBe(false)
    // A change in the very millisecond the pull started counts (the pull may have missed it).
    const f = new Freshness(300, c.now)
    f.changed('o')
    expect(f.changedSince('o', c.t)).toBe(true)
  })
})
