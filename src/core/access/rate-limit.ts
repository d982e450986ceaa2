/**
 * @module core/access/rate-limit
 * Rate limits per caller, optionally per tool: the `RATE_LIMIT` syntax, the limiter port every
 * backend implements (memory here; Redis in src/stores/redis-rate-limit.ts; the Workers Rate
 * Limiting binding in src/adapters/workers/rate-limit-binding.ts) and the in-memory limiter.
 *
 * Syntax: comma-separated budgets, each `<n>/s` or `<n>/min`, the ones for tools prefixed with a
 * tool name or glob and `=`: `RATE_LIMIT=60/min,search_*=10/min,export_report=1/s`.
 * - The budget without a tool (at most one) counts every JSON-RPC message a caller sends to the
 *   origin (each batch element on its own; requests, notifications and responses alike: a caller
 *   over its budget reaches the origin with nothing; guards/request/rate-budget.ts).
 * - A tool budget counts the caller's `tools/call` requests to tools its pattern matches, as
 *   written or by the name's fold (core/patterns/tool-glob.ts `foldToolName`), so `SEARCH` is charged to
 *   `search=10/min`. Every
 *   budget that applies to a call is charged (the default one and each matching tool budget), in
 *   the order written; the first that refuses refuses the call, and budgets charged before it
 *   keep the charge (a refused call still cost those budgets: the simple, conservative side).
 * Each caller has its own counters (the token's `sub` with auth on, the caller scope without).
 *
 * Algorithm: a fixed window per key, started by the key's first request and lasting the budget's
 * window (1 s or 60 s). Chosen over GCRA or a token bucket because the same rule is then exactly
 * what every backend does: Redis with one atomic script (one key, INCRBY and PEXPIRE), and the
 * Workers binding, which counts per fixed period itself; `60/min` means the same thing on Node,
 * on several edges sharing Redis and on Workers. The known cost of fixed windows: a caller can
 * spend a budget at the end of one window and again at the start of the next, so up to 2n calls
 * in any span of one window. `Retry-After` is the time left in the window, rounded up to seconds.
 * Pure and runtime-neutral (the clock is passed in).
 */
import { ConfigError, showValue } from '../config-rules'
import { compilePattern, foldToolName, patternProblem, type ToolPattern } from '../patterns/tool-glob'

/** One budget: at most `limit` units per `windowMs`. */
export interface RateBudget {
  /** Units per window, >= 1. */
  readonly limit: number
  /** Window length in ms: 1000 (`/s`) or 60000 (`/min`). */
  readonly windowMs: number
  /** The tool pattern this budget is for; null for the caller's budget over all requests. */
  readonly tool: ToolPattern | null
  /** The budget as written, e.g. `search_*=10/min` (also the counter's key suffix). */
  readonly source: string
}

/** The parsed RATE_LIMIT. */
export interface RateLimits {
  /** Every budget in the order written; the one without a tool, if any, first. */
  readonly budgets: readonly RateBudget[]
  /** True when there are no budgets (rate limiting off). */
  readonly empty: boolean
  /**
   * The budgets that apply to one request: the caller's budget, plus each tool budget whose
   * pattern matches `toolName` (a `tools/call`'s `params.name`; null for other methods).
   */
  budgetsFor(toolName: string | null): RateBudget[]
}

/** Largest `<n>` accepted. */
export const MAX_RATE = 1_000_000_000

/** Most budgets in one RATE_LIMIT. */
export const MAX_BUDGETS = 100

const EXPECTED = '<n>/s or <n>/min, optionally followed by per-tool budgets <tool or glob>=<n>/s|min, such as 60/min,search_*=10/min'

const UNITS: Record<string, number> = { s: 1000, min: 60_000 }

/**
 * Parses RATE_LIMIT. Unset or blank: no limits.
 * @param variable the setting's name for messages (default `RATE_LIMIT`)
 * @throws ConfigError naming the variable and the bad entry (`RATE_LIMIT: entry 2 (search_*=10/hour): the unit is not s or min; expected ...`)
 */
export function parseRateLimits(value: string | undefined, variable = 'RATE_LIMIT'): RateLimits {
  if (value === undefined || value.trim() === '') return rateLimits([])
  const entries = value.split(',').map((e) => e.trim())
  if (entries.length > MAX_BUDGETS) throw ConfigError.bad(variable, value, `at most ${MAX_BUDGETS} budgets (${entries.length} given); ${EXPECTED}`)
  const budgets: RateBudget[] = []
  const seen = new Set<string>()
  entries.forEach((entry, i) => {
    const fail = (why: string) =>
      new ConfigError(`${variable}: entry ${i + 1} (${entry === '' ? 'empty' : showValue(entry)}) ${why}; expected ${EXPECTED}`, variable, showValue(value), EXPECTED)
    if (entry === '') throw fail('is empty')
    const eq = entry.lastIndexOf('=')
    const toolPart = eq >= 0 ? entry.slice(0, eq).trim() : null
    const rate = (eq >= 0 ? entry.slice(eq + 1) : entry).trim()
    const m = /^(\d+)\s*\/\s*([a-z]+)$/.exec(rate)
    if (!m) throw fail('is not <n>/s or <n>/min')
    const n = Number(m[1])
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_RATE) throw fail(`has a count that is not an integer from 1 to ${MAX_RATE}`)
    const windowMs = UNITS[m[2]!]
    if (windowMs === undefined) throw fail('has a unit that is not s or min')
    if (toolPart !== null) {
      const problem = patternProblem(toolPart)
      if (problem) throw fail(`has a tool pattern that is ${problem}`)
    }
    const key = toolPart ?? ''
    if (seen.has(key)) throw fail(toolPart === null ? 'is a second budget without a tool (there is one per caller)' : `is a second budget for ${showValue(toolPart)}`)
    seen.add(key)
    budgets.push({ limit: n, windowMs, tool: toolPart === null ? null : compilePattern(toolPart), source: toolPart === null ? `${n}/${m[2]}` : `${toolPart}=${n}/${m[2]}` })
  })
  return rateLimits(budgets)
}

/** Builds {@link RateLimits} from budgets already checked; the budget without a tool goes first. */
export function rateLimits(budgets: readonly RateBudget[]): RateLimits {
  const ordered = [...budgets.filter((b) => b.tool === null), ...budgets.filter((b) => b.tool !== null)]
  const caller = ordered.filter((b) => b.tool === null)
  const tools = ordered.filter((b) => b.tool !== null)
  return {
    budgets: ordered,
    empty: ordered.length === 0,
    budgetsFor(toolName) {
      if (toolName === null || tools.length === 0) return caller
      const folded = foldToolName(toolName)
      return [...caller, ...tools.filter((b) => b.tool!.matches(toolName, folded))]
    },
  }
}

/** What a limiter says about one request. */
export interface RateDecision {
  /** True when the units were taken (the request may go on). */
  ok: boolean
  /** Seconds until the budget has room again, rounded up, >= 1 when refused; 0 when ok. */
  retryAfterS: number
  /** Units left in the current window after this request; null when the backend does not say (the Workers binding). */
  remaining: number | null
}

/**
 * The limiter port: takes `cost` units from the budget of `key` (at most `limit` per `windowMs`).
 * A refused request takes nothing. Implementations: {@link MemoryRateLimiter} (one process or
 * isolate), RedisRateLimiter (src/stores/redis-rate-limit.ts, shared by several edges) and the
 * Workers Rate Limiting binding adapter. Rejects when the backend cannot be reached; the caller
 * decides whether that fails open or closed.
 */
export interface RateLimiter {
  take(key: string, cost: number, limit: number, windowMs: number): Promise<RateDecision>
}

/** Options of {@link MemoryRateLimiter}. */
export interface MemoryRateLimiterOptions {
  /** Most keys kept; past it the oldest window is dropped first (default 10,000, about 1 MB). */
  maxKeys?: number
  /** The clock, ms since the epoch (default `Date.now`). */
  now?: () => number
}

/** Windows looked at per insert when the limiter is full. */
const SWEEP = 64

interface Window {
  count: number
  /** When this window ends, ms since the epoch. */
  resetAt: number
}

/**
 * The in-memory limiter (Node process or Workers isolate; on Workers each isolate counts on its
 * own, so use the binding there). Fixed windows (see the module comment). Memory is bounded by
 * `maxKeys`: a Map in the order windows started; when a new key would pass the bound, the ended
 * windows at the front are dropped, then the oldest live one (that caller's count restarts: the
 * cap trades exactness for memory under a flood of distinct callers). Each `take` is O(1)
 * amortized.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>()
  private readonly maxKeys: number
  private readonly now: () => number

  constructor(opts: MemoryRateLimiterOptions = {}) {
    this.maxKeys = Math.max(1, opts.maxKeys ?? 10_000)
    this.now = opts.now ?? Date.now
  }

  /** Keys currently held (for tests and metrics). */
  get size(): number {
    return this.windows.size
  }

  /** See {@link RateLimiter.take}; never rejects. */
  take(key: string, cost: number, limit: number, windowMs: number): Promise<RateDecision> {
    return Promise.resolve(this.takeNow(key, cost, limit, windowMs))
  }

  /** {@link take} without the promise (the in-memory answer is immediate). */
  takeNow(key: string, cost: number, limit: number, windowMs: number): RateDecision {
    const now = this.now()
    let w = this.windows.get(key)
    if (w && w.resetAt <= now) {
      this.windows.delete(key)
      w = undefined
    }
    if (!w) {
      if (cost > limit) return { ok: false, retryAfterS: Math.max(1, Math.ceil(windowMs / 1000)), remaining: 0 }
      w = { count: 0, resetAt: now + windowMs }
      this.makeRoom(now)
      this.windows.set(key, w)
    }
    if (w.count + cost > limit) return { ok: false, retryAfterS: Math.max(1, Math.ceil((w.resetAt - now) / 1000)), remaining: limit - w.count }
    w.count += cost
    return { ok: true, retryAfterS: 0, remaining: limit - w.count }
  }

  /**
   * Called before a new key is added: when the map is full, drops the ended windows among the
   * oldest {@link SWEEP} (windows of different lengths interleave, so an ended one may sit behind
   * a live one; a bounded sweep keeps each insert O(1)), then the oldest window if still full.
   */
  private makeRoom(now: number): void {
    if (this.windows.size < this.maxKeys) return
    let scanned = 0
    for (const [k, w] of this.windows) {
      if (w.resetAt <= now) this.windows.delete(k)
      if (++scanned >= SWEEP) break
    }
    if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value as string)
  }
}

/** The outcome of charging every budget of one request. */
export interface RateCheck {
  ok: boolean
  /** The budget that refused (as written in RATE_LIMIT); null when ok. */
  refusedBy: string | null
  /** Seconds to wait when refused (`Retry-After`), else 0. */
  retryAfterS: number
}

/**
 * Charges one request to every budget that applies (see {@link RateLimits.budgetsFor}), in order,
 * stopping at the first refusal. The counter key is `caller` + a newline + the budget's source,
 * so budgets never share a counter.
 * @param caller the caller's identity (token `sub`, or the caller scope), never a raw token
 * @param toolName `params.name` of a `tools/call`; null for any other request
 * @throws what the limiter throws (backend down)
 */
export async function chargeRequest(limiter: RateLimiter, limits: RateLimits, caller: string, toolName: string | null): Promise<RateCheck> {
  for (const b of limits.budgetsFor(toolName)) {
    const d = await limiter.take(caller + '\n' + b.source, 1, b.limit, b.windowMs)
    if (!d.ok) return { ok: false, refusedBy: b.source, retryAfterS: d.retryAfterS }
  }
  return { ok: true, refusedBy: null, retryAfterS: 0 }
}
