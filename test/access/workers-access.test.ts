/**
 * The access building blocks inside workerd (plain Miniflare 4, which implements the Rate
 * Limiting binding as `ratelimits: { NAME: { simple: { limit, period } } }`, counting per fixed
 * period in memory): the binding adapter behind the limiter port, RATE_LIMIT budgets charged
 * through it per caller and per tool, a missing binding named in the error, the in-memory
 * limiter inside an isolate, and the jose
 * verifier reading a JWKS served on loopback (jose runs on Workers).
 */
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WORKER_BUILD } from '../helpers/build-worker'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'

const AUD = 'https://edge.example/mcp'
const OUT = resolve(import.meta.dirname, '../../dist/test/access-worker.js')
let mf: Miniflare
let base: string
let iss: TokenIssuer

beforeAll(async () => {
  iss = await startTokenIssuer({ alg: 'ES256' })
  mkdirSync(resolve(OUT, '..'), { recursive: true })
  await build({ entryPoints: [resolve(import.meta.dirname, '../helpers/access-worker.ts')], outfile: OUT, ...WORKER_BUILD, logLevel: 'warning' })
  mf = new Miniflare({
    modules: true,
    scriptPath: OUT,
    compatibilityDate: '2026-04-20',
    ratelimits: { RL_MIN: { simple: { limit: 3, period: 60 } }, RL_10S: { simple: { limit: 20, period: 10 } } },
    bindings: { RATE_LIMIT: '3/min,search_*=2/s', AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: AUD, AUTH_JWKS_URL: iss.jwksUrl },
    host: '127.0.0.1',
    port: 0,
  })
  base = (await mf.ready).href
})
afterAll(async () => {
  await mf?.dispose()
  await iss?.stop()
})

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(new URL(path, base), { method: 'POST', body: JSON.stringify(body) })
  return (await res.json()) as Record<string, unknown>
}

/**
 * Runs `burst` inside one fixed period of the bindings: Miniflare's emulated binding counts per
 * period (`floor(Date.now() / period)`) and forgets every key when the next one starts, so a burst
 * that crosses a period boundary is counted in two (a 21-call burst on a loaded CI run had 21
 * calls pass where the binding allows 20). A burst a boundary fell inside is run again once, on
 * keys of its own (`attempt` 1), which the next period counts from zero.
 */
async function inOnePeriod(periodsS: number[], burst: (attempt: number) => Promise<void>): Promise<void> {
  const epochs = () => periodsS.map((p) => Math.floor(Date.now() / (p * 1000))).join()
  const before = epochs()
  try {
    await burst(0)
    return
  } catch (e) {
    if (epochs() === before) throw e
  }
  await burst(1)
}

describe('the Workers Rate Limiting binding behind the limiter port', () => {
  it('3/min: three calls pass, the fourth is refused with the period as Retry-After; keys are separate', async () => {
    const take = (key: string) => post('/take', { key, cost: 1, limit: 3, windowMs: 60_000 })
    await inOnePeriod([60], async (n) => {
      const r = [await take(`alice${n}`), await take(`alice${n}`), await take(`alice${n}`), await take(`alice${n}`)]
      expect(r).toEqual([
        { ok: true, retryAfterS: 0, remaining: null },
        { ok: true, retryAfterS: 0, remaining: null },
        { ok: true, retryAfterS: 0, remaining: null },
        { ok: false, retryAfterS: 60, remaining: 0 },
      ])
      expect((await take(`bob${n}`)).ok).toBe(true)
    })
  })

  it('a per-second budget uses the 10 s binding at ten times the count (2/s -> 20 per 10 s)', async () => {
    await inOnePeriod([10], async (n) => {
      const results = []
      for (let i = 0; i < 21; i++) results.push(await post('/take', { key: `fast${n}`, cost: 1, limit: 2, windowMs: 1000 }))
      expect(results.filter((r) => r.ok)).toHaveLength(20)
      expect(results[20]).toEqual({ ok: false, retryAfterS: 10, remaining: 0 })
    })
  })

  it('a budget without a matching binding is named with the wrangler.toml it needs', async () => {
    expect(await post('/take', { key: 'k', cost: 1, limit: 100, windowMs: 60_000 })).toEqual({
      error:
        'RATE_LIMIT 100/min needs a Workers Rate Limiting binding with simple = { limit = 100, period = 60 } in wrangler.toml ([[ratelimits]]); configured: RL_MIN (3 per 60 s), RL_10S (20 per 10 s)',
    })
  })

  it('RATE_LIMIT budgets per caller and per tool through the binding', async () => {
    const charge = (caller: string, tool: string | null) => post('/charge', { caller, tool })
    await inOnePeriod([60, 10], async (n) => {
      expect(await charge(`carol${n}`, 'search_docs')).toEqual({ ok: true, refusedBy: null, retryAfterS: 0 })
      expect((await charge(`carol${n}`, 'echo')).ok).toBe(true)
      expect((await charge(`carol${n}`, null)).ok).toBe(true)
      expect(await charge(`carol${n}`, 'search_docs')).toEqual({ ok: false, refusedBy: '3/min', retryAfterS: 60 })
      expect((await charge(`dave${n}`, 'search_docs')).ok).toBe(true)
    })
  })
})

describe('the in-memory limiter in workerd', () => {
  it('2 per minute per key, then refused with the time left', async () => {
    const take = (key: string) => post('/memory', { key, cost: 1, limit: 2, windowMs: 60_000 })
    expect([await take('m'), await take('m')]).toEqual([
      { ok: true, retryAfterS: 0, remaining: 1 },
      { ok: true, retryAfterS: 0, remaining: 0 },
    ])
    const refused = await take('m')
    expect(refused.ok).toBe(false)
    expect(refused.retryAfterS).toBeGreaterThanOrEqual(1)
    expect(refused.retryAfterS).toBeLessThanOrEqual(60)
  })
})

describe('the jose verifier in workerd against a loopback JWKS', () => {
  it('valid, wrong audience, alg none', async () => {
    expect(await post('/verify', { token: await iss.issue(AUD, { claims: { scope: 'b a' } }) })).toEqual({ ok: true, sub: 'user-1', clientId: 'client-1', scopes: ['a', 'b'] })
    expect(((await post('/verify', { token: await iss.issue('https://other/mcp') })).failure as { code: string }).code).toBe('wrong_audience')
    expect(((await post('/verify', { token: iss.unsecured(AUD) })).failure as { code: string }).code).toBe('alg_not_allowed')
    expect(iss.jwksRequests()).toBe(1)
  })
})
