/** src/core/access/rate-limit.ts: RATE_LIMIT parsing and messages, budgets per tool, the in-memory fixed-window limiter (refusal takes nothing, Retry-After, bounded keys). */
import { describe, expect, it } from 'vitest'
import { chargeRequest, MemoryRateLimiter, parseRateLimits } from '../../../src/core/access/rate-limit'
import { ConfigError } from '../../../src/core/config'

function message(value: string): string {
  try {
    parseRateLimits(value)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    expect((e as ConfigError).variable).toBe('RATE_LIMIT')
    return (e as Error).message
  }
  throw new Error('did not throw')
}

describe('parseRateLimits', () => {
  it('a caller budget and tool budgets; the caller budget first', () => {
    const rl = parseRateLimits('search_*=10/min, 60/min ,export=2/s')
    expect(rl.budgets.map((b) => [b.source, b.limit, b.windowMs])).toEqual([
      ['60/min', 60, 60_000],
      ['search_*=10/min', 10, 60_000],
      ['export=2/s', 2, 1000],
    ])
    expect(rl.budgetsFor(null).map((b) => b.source)).toEqual(['60/min'])
    expect(rl.budgetsFor('search_docs').map((b) => b.source)).toEqual(['60/min', 'search_*=10/min'])
    expect(rl.budgetsFor('echo').map((b) => b.source)).toEqual(['60/min'])
  })
  it('tool budgets only: other requests are not limited', () => {
    const rl = parseRateLimits('search_*=10/min')
    expect(rl.budgetsFor(null)).toEqual([])
    expect(rl.budgetsFor('search_x')).toHaveLength(1)
  })
  it('unset: empty', () => {
    expect(parseRateLimits(undefined).empty).toBe(true)
    expect(parseRateLimits(' ').empty).toBe(true)
  })
  it.each([
    ['60', /^RATE_LIMIT: entry 1 \(60\) is not <n>\/s or <n>\/min; expected <n>\/s or <n>\/min, optionally followed by per-tool budgets/],
    ['60/hour', /^RATE_LIMIT: entry 1 \(60\/hour\) has a unit that is not s or min;/],
    ['0/s', /entry 1 \(0\/s\) has a count that is not an integer from 1 to 1000000000/],
    ['-1/s', /entry 1 \(-1\/s\) is not <n>\/s or <n>\/min/],
    ['1.5/s', /is not <n>\/s or <n>\/min/],
    ['60/min,', /^RATE_LIMIT: entry 2 \(empty\) is empty/],
    ['60/min,30/s', /entry 2 \(30\/s\) is a second budget without a tool \(there is one per caller\)/],
    ['a=1/s,a=2/s', /entry 2 \(a=2\/s\) is a second budget for a/],
    ['a b=1/s', /entry 1 \(a b=1\/s\) has a tool pattern that is whitespace/],
    ['=1/s', /entry 1 \(=1\/s\) has a tool pattern that is an empty name/],
  ])('%s', (value, re) => {
    expect(message(value)).toMatch(re)
  })
})

describe('MemoryRateLimiter', () => {
  it('n per window, then refused with the time left; a refusal takes nothing; a new window starts afresh', () => {
    let now = 1_000_000
    const l = new MemoryRateLimiter({ now: () => now })
    expect([1, 2, 3].map(() => l.takeNow('k', 1, 3, 60_000))).toEqual([
      { ok: true, retryAfterS: 0, remaining: 2 },
      { ok: true, retryAfterS: 0, remaining: 1 },
      { ok: true, retryAfterS: 0, remaining: 0 },
    ])
    now += 20_500
    expect(l.takeNow('k', 1, 3, 60_000)).toEqual({ ok: false, retryAfterS: 40, remaining: 0 })
    expect(l.takeNow('other', 1, 3, 60_000).ok).toBe(true)
    now += 39_500
    expect(l.takeNow('k', 1, 3, 60_000)).toEqual({ ok: true, retryAfterS: 0, remaining: 2 })
  })
  it('a cost larger than what is left is refused and takes nothing', () => {
    const l = new MemoryRateLimiter({ now: () => 0 })
    expect(l.takeNow('k', 2, 3, 1000).ok).toBe(true)
    expect(l.takeNow('k', 2, 3, 1000)).toEqual({ ok: false, retryAfterS: 1, remaining: 1 })
    expect(l.takeNow('k', 1, 3, 1000)).toEqual({ ok: true, retryAfterS: 0, remaining: 0 })
    expect(l.takeNow('new', 5, 3, 1000)).toEqual({ ok: false, retryAfterS: 1, remaining: 0 })
    expect(l.size).toBe(1)
  })
  it('memory is bounded: past maxKeys ended windows go first, then the oldest', () => {
    let now = 0
    const l = new MemoryRateLimiter({ maxKeys: 100, now: () => now })
    for (let i = 0; i < 50; i++) l.takeNow(`short${i}`, 1, 1, 1000)
    for (let i = 0; i < 50; i++) l.takeNow(`long${i}`, 1, 1, 60_000)
    now = 2000 // the short windows ended
    l.takeNow('fresh', 1, 1, 60_000)
    expect(l.size).toBeLessThanOrEqual(100)
    expect(l.takeNow('long0', 1, 1, 60_000).ok).toBe(false) // a live window was kept
    for (let i = 0; i < 10_000; i++) l.takeNow(`flood${i}`, 1, 1, 60_000)
    expect(l.size).toBe(100)
  })
})

describe('chargeRequest', () => {
  it('charges the caller budget and matching tool budgets; names the one that refused', async () => {
    const l = new MemoryRateLimiter({ now: () => 0 })
    const rl = parseRateLimits('3/min,search_*=1/min')
    expect(await chargeRequest(l, rl, 'alice', 'search_docs')).toEqual({ ok: true, refusedBy: null, retryAfterS: 0 })
    expect(await chargeRequest(l, rl, 'alice', 'search_docs')).toEqual({ ok: false, refusedBy: 'search_*=1/min', retryAfterS: 60 })
    expect((await chargeRequest(l, rl, 'alice', 'echo')).ok).toBe(true)
    expect(await chargeRequest(l, rl, 'alice', null)).toEqual({ ok: false, refusedBy: '3/min', retryAfterS: 60 })
    expect((await chargeRequest(l, rl, 'bob', 'search_docs')).ok).toBe(true) // per caller
  })
})
