/** src/core/access/verified-token-cache.ts: one verification per token, never past the token's exp or maxAge, refusals not kept, bounded, concurrent checks shared. */
import { describe, expect, it } from 'vitest'
import type { TokenVerifier } from '../../../src/core/access/bearer'
import { cachedVerifier, jwtExpiry } from '../../../src/core/access/verified-token-cache'

const b64 = (o: unknown) => btoa(JSON.stringify(o)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')
const jwt = (payload: unknown) => `${b64({ alg: 'RS256' })}.${b64(payload)}.sig`

/** A verifier that accepts tokens whose payload has `ok: true` and counts its calls. */
function counting() {
  let calls = 0
  const v: TokenVerifier = {
    async verify(token) {
      calls++
      await new Promise((r) => setTimeout(r, 1))
      const p = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { ok?: boolean; sub?: string }
      return p.ok ? { ok: true, identity: { sub: p.sub ?? 's', clientId: null, scopes: new Set(['a']) } } : { ok: false, failure: { code: 'bad_signature', message: 'no' } }
    },
  }
  return { v, calls: () => calls }
}

describe('cachedVerifier', () => {
  it('one verification per accepted token; 10 concurrent checks share it; the identity is a copy', async () => {
    let now = 1_000_000_000_000
    const inner = counting()
    const c = cachedVerifier(inner.v, { now: () => now })
    const t = jwt({ ok: true, exp: now / 1000 + 60 })
    const all = await Promise.all(Array.from({ length: 10 }, () => c.verify(t)))
    expect(all.every((r) => r.ok)).toBe(true)
    expect(inner.calls()).toBe(1)
    const r = await c.verify(t)
    if (r.ok) r.identity.scopes.add('mine')
    const again = await c.verify(t)
    expect(again.ok && [...again.identity.scopes]).toEqual(['a'])
    expect(inner.calls()).toBe(1)
    now += 61_000 // past exp: checked again (and refused by the inner verifier in real life)
    await c.verify(t)
    expect(inner.calls()).toBe(2)
  })

  it('maxAge bounds trust in a long-lived token', async () => {
    let now = 1_000_000_000_000
    const inner = counting()
    const c = cachedVerifier(inner.v, { now: () => now, maxAgeMs: 1000 })
    const t = jwt({ ok: true, exp: now / 1000 + 3600 })
    await c.verify(t)
    now += 1001
    await c.verify(t)
    expect(inner.calls()).toBe(2)
  })

  it('refusals, tokens without exp and long tokens are not kept', async () => {
    const inner = counting()
    const c = cachedVerifier(inner.v, { maxTokenLength: 200 })
    const bad = jwt({ ok: false, exp: Date.now() / 1000 + 60 })
    await c.verify(bad)
    await c.verify(bad)
    const noExp = jwt({ ok: true })
    await c.verify(noExp)
    await c.verify(noExp)
    const long = jwt({ ok: true, exp: Date.now() / 1000 + 60, pad: 'x'.repeat(300) })
    await c.verify(long)
    await c.verify(long)
    expect(inner.calls()).toBe(6)
    expect(c.size).toBe(0)
  })

  it('bounded: the oldest entry goes first', async () => {
    const inner = counting()
    const c = cachedVerifier(inner.v, { maxEntries: 3 })
    const tokens = Array.from({ length: 5 }, (_, i) => jwt({ ok: true, sub: `u${i}`, exp: Date.now() / 1000 + 60 }))
    for (const t of tokens) await c.verify(t)
    expect(c.size).toBe(3)
    await c.verify(tokens[4]!)
    expect(inner.calls()).toBe(5)
    await c.verify(tokens[0]!)
    expect(inner.calls()).toBe(6)
  })

  it('jwtExpiry', () => {
    expect(jwtExpiry(jwt({ exp: 5 }))).toBe(5)
    expect(jwtExpiry(jwt({ exp: '5' }))).toBeNull()
    expect(jwtExpiry('x')).toBeNull()
    expect(jwtExpiry('a.!!!.c')).toBeNull()
  })
})
