/**
 * @module adapters/workers/rate-limit-binding
 * The {@link RateLimiter} port on Cloudflare's Workers Rate Limiting binding
 * (`[[ratelimits]]` in wrangler.toml; `env.X.limit({ key })` resolves to `{ success }`). The
 * binding's limit and period (10 or 60 s) are set in wrangler.toml, not per call, and it counts
 * per Cloudflare location, so it is the Workers counterpart of the in-memory limiter's fixed
 * windows with looser accuracy (Cloudflare documents it as permissive and eventually consistent).
 *
 * Each budget of RATE_LIMIT needs a binding configured with the same rate: `60/min` a binding
 * with `simple = { limit = 60, period = 60 }`; a per-second budget `n/s` a binding with
 * `period = 10` and `limit = 10 * n` (the binding knows no 1 s period: the same average rate, with
 * bursts of up to 10 n). {@link bindingFor} finds it, or says which binding is missing.
 * The binding says nothing of the units left or the time to wait: `remaining` is null and a
 * refusal's `retryAfterS` is the binding's period (an upper bound).
 */
import type { RateDecision, RateLimiter } from '../../core/access/rate-limit'
import { ConfigError } from '../../core/config-rules'

/** The binding's runtime API (workers-types `RateLimit`). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>
}

/** A binding and the figures it is configured with in wrangler.toml. */
export interface ConfiguredBinding {
  /** The binding's name in `env`, for messages, e.g. `RATE_LIMITER`. */
  name: string
  binding: RateLimitBinding
  /** `simple.limit` */
  limit: number
  /** `simple.period`, seconds: 10 or 60. */
  periodS: 10 | 60
}

/** The wrangler.toml text that configures a binding for `limit` per `windowMs` (for error messages). */
export function bindingConfigFor(limit: number, windowMs: number): { limit: number; periodS: 10 | 60 } {
  return windowMs >= 60_000 ? { limit: Math.round((limit * 60_000) / windowMs), periodS: 60 } : { limit: Math.round((limit * 10_000) / windowMs), periodS: 10 }
}

/**
 * The binding that counts `limit` per `windowMs`: same rate and the period {@link bindingConfigFor} picks.
 * @throws Error naming the binding to add (`RATE_LIMIT 60/min needs a Rate Limiting binding with simple = { limit = 60, period = 60 } ...`)
 */
export function bindingFor(bindings: readonly ConfiguredBinding[], limit: number, windowMs: number): ConfiguredBinding {
  const want = bindingConfigFor(limit, windowMs)
  const b = bindings.find((x) => x.limit === want.limit && x.periodS === want.periodS)
  if (b) return b
  const rate = windowMs === 1000 ? `${limit}/s` : windowMs === 60_000 ? `${limit}/min` : `${limit} per ${windowMs} ms`
  throw new Error(
    `RATE_LIMIT ${rate} needs a Workers Rate Limiting binding with simple = { limit = ${want.limit}, period = ${want.periodS} } in wrangler.toml ([[ratelimits]]); configured: ${
      bindings.map((x) => `${x.name} (${x.limit} per ${x.periodS} s)`).join(', ') || 'none'
    }`
  )
}

/**
 * The limiter over one or more bindings. `take(key, cost, limit, windowMs)` calls the binding
 * configured for that rate `cost` times with the key (the binding charges one per call; the edge
 * charges one per request, so cost is 1 in practice), and refuses as soon as one call does.
 * @throws (from `take`) the {@link bindingFor} error when no binding has the rate; rejects when the binding does
 */
export class WorkersRateLimiter implements RateLimiter {
  constructor(private readonly bindings: readonly ConfiguredBinding[]) {}

  async take(key: string, cost: number, limit: number, windowMs: number): Promise<RateDecision> {
    const b = bindingFor(this.bindings, limit, windowMs)
    for (let i = 0; i < cost; i++) {
      const { success } = await b.binding.limit({ key })
      if (!success) return { ok: false, retryAfterS: b.periodS, remaining: 0 }
    }
    return { ok: true, retryAfterS: 0, remaining: null }
  }
}

/** The binding names the standalone Worker reads: `RATE_LIMITER_<limit>_PER_<period>S`, e.g. `RATE_LIMITER_60_PER_60S` for `60/min`, `RATE_LIMITER_20_PER_10S` for `2/s`. */
export const BINDING_NAME = /^RATE_LIMITER_(\d+)_PER_(10|60)S$/

/** The binding name {@link bindingsFromEnv} looks for, for one budget (`60/min` -> `RATE_LIMITER_60_PER_60S`). */
export function bindingNameFor(limit: number, windowMs: number): string {
  const c = bindingConfigFor(limit, windowMs)
  return `RATE_LIMITER_${c.limit}_PER_${c.periodS}S`
}

/**
 * The Rate Limiting bindings of a Worker's `env`, found by name ({@link BINDING_NAME}: the name
 * carries the `simple = { limit, period }` it is configured with, which the binding's API does
 * not tell), checked against the budgets of RATE_LIMIT.
 * @param budgets the `limit` and `windowMs` of every RATE_LIMIT budget
 * @throws ConfigError naming the binding (and its wrangler.toml) a budget needs and does not find
 */
export function bindingsFromEnv(env: Record<string, unknown>, budgets: readonly { limit: number; windowMs: number; source: string }[]): ConfiguredBinding[] {
  const found: ConfiguredBinding[] = []
  for (const [name, value] of Object.entries(env)) {
    const m = BINDING_NAME.exec(name)
    if (!m || typeof (value as RateLimitBinding | null)?.limit !== 'function') continue
    found.push({ name, binding: value as RateLimitBinding, limit: Number(m[1]), periodS: Number(m[2]) as 10 | 60 })
  }
  for (const b of budgets) {
    try {
      bindingFor(found, b.limit, b.windowMs)
    } catch {
      const c = bindingConfigFor(b.limit, b.windowMs)
      const name = bindingNameFor(b.limit, b.windowMs)
      throw new ConfigError(
        `RATE_LIMIT budget ${b.source} needs the Workers Rate Limiting binding ${name}: add [[ratelimits]] name = "${name}", namespace_id = "<a number>", simple = { limit = ${c.limit}, period = ${c.periodS} } to wrangler.toml (found: ${found.map((f) => f.name).join(', ') || 'none'})`,
        'RATE_LIMIT'
      )
    }
  }
  return found
}
