/**
 * The registry's memory cache (src/core/validation/tool-memory.ts), on its own: the caller's
 * private scope before `public`, expiry, remembered misses, private scopes this isolate dropped,
 * changes from other edges during a store read, and the hit counter.
 */
import { describe, expect, it } from 'vitest'
import { Freshness } from '../../../src/core/validation/freshness'
import { PrivateScopes } from '../../../src/core/validation/private-scopes'
import { ToolMemory } from '../../../src/core/validation/tool-memory'
import type { ResolvedTool } from '../../../src/core/validation/tool-record'
import { MemoryKv } from '../../../src/stores/memory-kv'
import { toolKey } from '../../../src/core/validation/tool-store'

function parts(maxPerOrigin = 10) {
  const c = { t: 1_000_000 }
  const now = () => c.t
  const freshness = new Freshness(300, now)
  const scopes = new PrivateScopes({ kv: new MemoryKv(), ttlS: 3600, maxPerOrigin, now })
  const stats = { memoryHits: 0 }
  return { c, freshness, scopes, stats, memory: new ToolMemory(100, freshness, scopes, stats, now) }
}

const tool = (name: string, fetchedAt: number): ResolvedTool => ({ record: { name, inputSchema: { type: 'object' }, dialect: '2020-12', hash: name, fetchedAt }, validate: null })

describe('ToolMemory', () => {
  it('serves the caller scope first, then public, until the entry expires; counts a hit only when it can tell', () => {
    const { c, memory, scopes, stats } = parts()
    memory.hold('o', 'public', 't', tool('public-t', c.t), c.t + 1000)
    // Nothing held for the caller's own scope: memory cannot tell (the store may have a private list).
    expect(memory.cached('o', 'u-a', 't')).toBeUndefined()
    // A remembered miss there: then public answers.
    memory.hold('o', 'u-a', 't', null, c.t + 1000)
    expect(memory.cached('o', 'u-a', 't')?.record.name).toBe('public-t')
    scopes.touch('o', 'u-a')
    memory.hold('o', 'u-a', 't', tool('own-t', c.t), c.t + 1000)
    expect(memory.cached('o', 'u-a', 't')?.record.name).toBe('own-t')
    expect(memory.cached('o', 'public', 'other')).toBeUndefined()
    expect(stats.memoryHits).toBe(2)
    c.t += 1000
    expect(memory.cached('o', 'public', 't')).toBeUndefined()
    // peek does not look at the expiry: a reply to a call just validated is graded with what is held.
    expect(memory.peek('o', 'u-a', 't')?.record.name).toBe('own-t')
  })

  it('what was just read is never served after it changed: replaced, dropped, evicted, changed elsewhere', () => {
    const { c, freshness, scopes, stats } = parts()
    const memory = new ToolMemory(2, freshness, scopes, stats, () => c.t)
    const read = (name: string) => memory.cached('o', 'public', name)?.record.hash
    memory.hold('o', 'public', 't', tool('v1', c.t), c.t + 60_000)
    expect(read('t')).toBe('v1')
    memory.hold('o', 'public', 't', tool('v2', c.t), c.t + 60_000)
    expect(read('t')).toBe('v2')
    memory.drop('o', 'public', 't')
    expect(read('t')).toBeUndefined()
    memory.hold('o', 'public', 't', tool('v3', c.t), c.t + 60_000)
    expect(read('t')).toBe('v3')
    memory.dropScope('o', 'public')
    expect(read('t')).toBeUndefined()
    memory.hold('o', 'public', 't', tool('v4', c.t), c.t + 60_000)
    expect(read('t')).toBe('v4')
    memory.changedElsewhere(null)
    expect(read('t')).toBeUndefined()
    // Past the bound of 2 entries, the oldest unread one goes.
    memory.hold('o', 'public', 'a', tool('a', c.t), c.t + 60_000)
    expect(read('a')).toBe('a')
    memory.hold('o', 'public', 'b', tool('b', c.t), c.t + 60_000)
    memory.hold('o', 'public', 'c', tool('c', c.t), c.t + 60_000)
    expect([read('a'), read('b'), read('c')].filter((x) => x !== undefined)).toHaveLength(2)
    // The expiry is checked on every read.
    memory.hold('o', 'public', 'e', tool('e', c.t), c.t + 10)
    expect(read('e')).toBe('e')
    c.t += 10
    expect(read('e')).toBeUndefined()
  })

  it('a remembered miss answers null; a tool past its freshness comes back stale', () => {
    const { c, memory } = parts()
    memory.hold('o', 'public', 'gone', null, c.t + 60_000)
    expect(memory.cached('o', 'public', 'gone')).toBeNull()
    memory.hold('o', 'public', 't', tool('t', c.t - 300_000), c.t + 60_000)
    expect(memory.cached('o', 'public', 't')?.stale).toBe(true)
  })

  it('a private scope this isolate no longer holds is not served, its remembered misses are', () => {
    const { c, memory, scopes } = parts(1)
    scopes.touch('o', 'u-a')
    memory.hold('o', 'u-a', 't', tool('t', c.t), c.t + 60_000)
    memory.hold('o', 'u-a', 'miss', null, c.t + 60_000)
    scopes.touch('o', 'u-b')
    expect(scopes.isHeld('o', 'u-a')).toBe(false)
    expect(memory.get('o', 'u-a', 't', c.t)).toBeUndefined()
    expect(memory.get('o', 'u-a', 'miss', c.t)).toBeNull()
  })

  it('what a store read returns is not held when another edge changed a record meanwhile', () => {
    const { c, memory } = parts()
    const before = memory.generation
    memory.changedElsewhere(toolKey('o', 'public', 'x'))
    memory.holdUnlessChanged(before, 'o', 'public', 't', tool('t', c.t), c.t + 60_000)
    expect(memory.size).toBe(0)
    memory.holdUnlessChanged(memory.generation, 'o', 'public', 't', tool('t', c.t), c.t + 60_000)
    expect(memory.size).toBe(1)
    memory.changedElsewhere(toolKey('o', 'public', 't'))
    expect(memory.size).toBe(0)
  })

  it('drops one tool, one scope, or every scope of an origin', () => {
    const { c, memory } = parts()
    for (const [s, n] of [
      ['public', 'a'],
      ['public', 'b'],
      ['u-a', 'a'],
    ] as const)
      memory.hold('o', s, n, null, c.t + 60_000)
    memory.hold('p', 'public', 'a', null, c.t + 60_000)
    memory.drop('o', 'public', 'a')
    expect(memory.size).toBe(3)
    memory.dropScope('o', 'public')
    expect(memory.size).toBe(2)
    memory.dropScope('o')
    expect(memory.size).toBe(1)
    expect(memory.get('p', 'public', 'a', c.t)).toBeNull()
  })
})
