/**
 * When the registry may pull a tool list (src/core/validation/refresh-policy.ts; docs/design.md
 * D7): single flight, the interval, the per-origin budget over every scope.
 */
import { describe, expect, it } from 'vitest'
import { RefreshPolicy } from '../../../src/core/validation/refresh-policy'

function policy(opts: { refreshMinIntervalMs: number; refreshBudgetPerMin?: number }) {
  const c = { t: 0 }
  const stats = { refreshes: 0, refreshesRefused: 0 }
  return { c, stats, p: new RefreshPolicy(opts, () => c.t, stats) }
}

describe('RefreshPolicy', () => {
  it('concurrent callers share one pull', async () => {
    const { p, stats } = policy({ refreshMinIntervalMs: 0 })
    let pulls = 0
    let release!: () => void
    const pull = () => {
      pulls++
      return new Promise<void>((r) => (release = r))
    }
    const a = p.run('o', 's', pull)
    const b = p.run('o', 's', pull)
    expect(a).toBe(b)
    release()
    expect(await a).toBe(true)
    expect([pulls, stats.refreshes]).toEqual([1, 1])
  })

  it('within the interval the last outcome is repeated without pulling; list_changed lifts it', async () => {
    const { p, c } = policy({ refreshMinIntervalMs: 5_000 })
    let pulls = 0
    const failing = async () => {
      pulls++
      throw new Error('origin down')
    }
    expect(await p.run('o', 's', failing)).toBe(false)
    c.t += 4_999
    expect(await p.run('o', 's', failing)).toBe(false)
    expect(pulls).toBe(1)
    p.forget('o')
    expect(await p.run('o', 's', async () => void pulls++)).toBe(true)
    expect(pulls).toBe(2)
    c.t += 5_000
    expect(await p.run('o', 's', async () => void pulls++)).toBe(true)
    expect(pulls).toBe(3)
  })

  it('the budget counts every scope of one origin together, per minute', async () => {
    const { p, c, stats } = policy({ refreshMinIntervalMs: 0, refreshBudgetPerMin: 3 })
    const results: boolean[] = []
    for (let i = 0; i < 5; i++) results.push(await p.run('o', `u-${i}`, async () => undefined))
    expect(results).toEqual([true, true, true, false, false])
    expect(stats).toEqual({ refreshes: 3, refreshesRefused: 2 })
    expect(await p.run('other', 'u-0', async () => undefined)).toBe(true)
    c.t += 60_000
    expect(await p.run('o', 'u-9', async () => undefined)).toBe(true)
  })
})

describe('RefreshPolicy.listedByLastPull', () => {
  it('names the tools of the last successful pull while its interval lasts; a failed pull or forget clears them', async () => {
    const { p, c } = policy({ refreshMinIntervalMs: 5_000 })
    expect(await p.run('o', 's', async () => ['a', 'b'])).toBe(true)
    expect([p.listedByLastPull('o', 's', 'a'), p.listedByLastPull('o', 's', 'z'), p.listedByLastPull('o', 'other', 'a')]).toEqual([true, false, false])
    c.t += 4_999
    expect(p.listedByLastPull('o', 's', 'b')).toBe(true)
    c.t += 1
    expect(p.listedByLastPull('o', 's', 'b')).toBe(false)
    expect(await p.run('o', 's', async () => ['a'])).toBe(true)
    p.forget('o', 's')
    expect(p.listedByLastPull('o', 's', 'a')).toBe(false)
    expect(await p.run('o', 's', async () => ['a'])).toBe(true)
    p.forget('o', 's')
    expect(
      await p.run('o', 's', async () => {
        throw new Error('origin down')
      })
    ).toBe(false)
    expect(p.listedByLastPull('o', 's', 'a')).toBe(false)
  })
})
