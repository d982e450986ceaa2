/**
 * The registry's bookkeeping of whole tool lists (src/core/validation/pulled-lists.ts): a pull's
 * `toollist:` record and the deletion of tools it no longer names, a private scope's list expiring
 * with its records, and a lookup miss of a listed tool lifting the refresh interval.
 */
import { describe, expect, it } from 'vitest'
import { PrivateScopes } from '../../../src/core/validation/private-scopes'
import { PulledLists } from '../../../src/core/validation/pulled-lists'
import { RefreshPolicy } from '../../../src/core/validation/refresh-policy'
import { toolKey, toolListKey } from '../../../src/core/validation/tool-store'
import { MemoryKv } from '../../../src/stores/memory-kv'

function parts() {
  const c = { t: 1_000_000 }
  const now = () => c.t
  const kv = new MemoryKv()
  const policy = new RefreshPolicy({ refreshMinIntervalMs: 5_000 }, now, { refreshes: 0, refreshesRefused: 0 })
  const scopes = new PrivateScopes({ kv, ttlS: 600, maxPerOrigin: 10, now })
  return { c, kv, policy, lists: new PulledLists(kv, policy, scopes) }
}

describe('PulledLists', () => {
  it("records a pull's names and deletes the records of tools the previous list named and this one does not", async () => {
    const { c, kv, lists } = parts()
    for (const n of ['a', 'b']) await kv.put(toolKey('o', 'public', n), '{}')
    await lists.stored('o', 'public', ['a', 'b'], c.t, 30_000)
    expect(JSON.parse((await kv.get(toolListKey('o', 'public')))!)).toMatchObject({ names: ['a', 'b'], fetchedAt: c.t, ttlMs: 30_000 })
    await lists.stored('o', 'public', ['a'], c.t + 1)
    expect([await kv.get(toolKey('o', 'public', 'a')), await kv.get(toolKey('o', 'public', 'b'))]).toEqual(['{}', null])
    expect(JSON.parse((await kv.get(toolListKey('o', 'public')))!)).not.toHaveProperty('ttlMs')
  })

  it("a private scope's list expires with its records (PRIVATE_SCOPE_TTL_S); a public one does not", async () => {
    const { c, kv, lists } = parts()
    await lists.stored('o', 'u-a', ['a'], c.t)
    await lists.stored('o', 'public', ['a'], c.t)
    const listed = await kv.list({ prefix: 'toollist:' })
    const expiry = Object.fromEntries(listed.keys.map((k) => [k.name, k.expiration]))
    expect(expiry[toolListKey('o', 'u-a')]).toBeGreaterThan(0)
    expect(expiry[toolListKey('o', 'public')]).toBeUndefined()
  })

  it('a miss of a tool the last pull listed lifts the interval for that scope; of an unlisted tool it does not', async () => {
    const { policy, lists } = parts()
    let pulls = 0
    const pull = async () => {
      pulls++
      return ['a']
    }
    expect(await policy.run('o', 'public', pull)).toBe(true)
    lists.missed('o', 'public', 'zzz')
    expect(await policy.run('o', 'public', pull)).toBe(true)
    expect(pulls).toBe(1)
    lists.missed('o', 'public', 'a')
    expect(await policy.run('o', 'public', pull)).toBe(true)
    expect(pulls).toBe(2)
  })
})
