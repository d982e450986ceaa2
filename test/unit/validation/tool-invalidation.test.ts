/**
 * What makes the registry forget (src/core/validation/tool-invalidation.ts): `list_changed` for
 * one scope or every scope (entries dropped, interval lifted, older records stale), an operator's
 * change to one record, another edge's change, and a pull about to store a list.
 */
import { describe, expect, it } from 'vitest'
import { Freshness } from '../../../src/core/validation/freshness'
import { PrivateScopes } from '../../../src/core/validation/private-scopes'
import { RefreshPolicy } from '../../../src/core/validation/refresh-policy'
import { ToolInvalidation } from '../../../src/core/validation/tool-invalidation'
import { ToolMemory } from '../../../src/core/validation/tool-memory'
import type { ResolvedTool } from '../../../src/core/validation/tool-record'
import { MemoryKv } from '../../../src/stores/memory-kv'
import { toolKey } from '../../../src/core/validation/tool-store'

function parts() {
  const c = { t: 1_000_000 }
  const now = () => c.t
  const freshness = new Freshness(300, now)
  const scopes = new PrivateScopes({ kv: new MemoryKv(), ttlS: 3600, maxPerOrigin: 10, now })
  const memory = new ToolMemory(100, freshness, scopes, { memoryHits: 0 }, now)
  const policy = new RefreshPolicy({ refreshMinIntervalMs: 60_000 }, now, { refreshes: 0, refreshesRefused: 0 })
  const stats = { remoteChanges: 0 }
  return { c, freshness, memory, policy, stats, scopes, invalidation: new ToolInvalidation(memory, policy, freshness, stats) }
}

const tool = (fetchedAt: number): ResolvedTool => ({ record: { name: 't', inputSchema: { type: 'object' }, dialect: '2020-12', hash: '0', fetchedAt }, validate: null })

describe('ToolInvalidation', () => {
  it('list_changed for every scope: entries dropped, the interval lifted, records fetched before now stale', async () => {
    const { c, memory, policy, freshness, scopes, invalidation } = parts()
    scopes.touch('o', 'u-a')
    for (const s of ['public', 'u-a']) memory.hold('o', s, 't', tool(c.t), c.t + 60_000)
    memory.hold('p', 'public', 't', tool(c.t), c.t + 60_000)
    let pulls = 0
    expect(await policy.run('o', 'u-a', async () => void pulls++)).toBe(true)
    c.t += 1
    invalidation.listChanged('o')
    expect(memory.size).toBe(1)
    expect(freshness.isStale(tool(c.t - 1).record, 'o', 'u-a', c.t)).toBe(true)
    expect(freshness.isStale(tool(c.t - 1).record, 'p', 'public', c.t)).toBe(false)
    expect(await policy.run('o', 'u-a', async () => void pulls++)).toBe(true)
    expect(pulls).toBe(2)
  })

  it('list_changed for one scope leaves the other scopes alone', () => {
    const { c, memory, freshness, scopes, invalidation } = parts()
    scopes.touch('o', 'u-a')
    for (const s of ['public', 'u-a']) memory.hold('o', s, 't', tool(c.t), c.t + 60_000)
    c.t += 1
    invalidation.listChanged('o', 'u-a')
    const held = memory.get('o', 'public', 't', c.t)
    expect([held?.record.name, held?.stale === true]).toEqual(['t', false])
    expect(memory.get('o', 'u-a', 't', c.t)).toBeUndefined()
    expect(freshness.isStale(tool(c.t - 1).record, 'o', 'u-a', c.t)).toBe(true)
  })

  it("an operator's change drops one entry and marks nothing stale; another edge's change is counted; a pull drops its scopes", () => {
    const { c, memory, freshness, stats, invalidation } = parts()
    for (const n of ['a', 'b', 'c']) memory.hold('o', 'public', n, null, c.t + 60_000)
    memory.hold('o', 'u-a', 'a', null, c.t + 60_000)
    invalidation.recordChanged('o', 'public', 'a')
    expect(memory.size).toBe(3)
    expect(freshness.isStale(tool(c.t - 1).record, 'o', 'public', c.t)).toBe(false)
    invalidation.changedElsewhere(toolKey('o', 'public', 'b'))
    expect([memory.size, stats.remoteChanges]).toEqual([2, 1])
    invalidation.pulled('o', ['public'])
    expect(memory.size).toBe(1)
    invalidation.changedElsewhere(null)
    expect([memory.size, stats.remoteChanges]).toEqual([0, 2])
  })
})
