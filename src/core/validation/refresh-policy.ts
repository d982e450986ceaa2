/**
 * @module core/validation/refresh-policy
 * When the registry may pull an origin's tool list (docs/design.md D7, issue 17): one pull at a
 * time per origin and caller scope (single flight), none again within `REFRESH_MIN_INTERVAL_MS`,
 * and at most `REFRESH_BUDGET_PER_MIN` per origin per minute over every scope together. Per
 * isolate; the pull itself is the caller's.
 */

import type { LogRecord } from '../ports'
import { originCause } from '../observe/origin-cause'
import { PUBLIC_SCOPE } from './caller-scope'

/** Entries of the per-scope rate limit kept before old ones are pruned (each caller scope adds one). */
const MAX_REFRESH_ENTRIES = 1_000

/** Options of {@link RefreshPolicy}, in milliseconds and pulls per minute. */
export interface RefreshPolicyOptions {
  refreshMinIntervalMs: number
  /** Pulls one origin may be sent per minute, whoever asks; unset: no budget. */
  refreshBudgetPerMin?: number
}

/** Single flight, rate limit and budget of tool-list pulls. */
export class RefreshPolicy {
  private readonly inflight = new Map<string, Promise<boolean>>()
  private readonly lastRefresh = new Map<string, { at: number; ok: boolean }>()
  /** `originId` -> start times (ms) of the pulls of the last minute, oldest first: the budget. */
  private readonly pullStarts = new Map<string, number[]>()

  /**
   * @param stats the registry's counters: `refreshes` counts pulls started, `refreshFailures` pulls that failed, `refreshesRefused` pulls refused by the budget
   * @param onEvent receives `registry.refresh` for a failed pull (with its cause) and `registry.refresh_refused` (docs/observability.md)
   */
  constructor(
    private readonly opts: RefreshPolicyOptions,
    private readonly now: () => number,
    private readonly stats: { refreshes: number; refreshFailures?: number; refreshesRefused: number },
    private readonly onEvent?: (record: LogRecord) => void
  ) {}

  /** Sends one event, never throwing. */
  private event(record: LogRecord): void {
    try {
      this.onEvent?.(record)
    } catch {
      // a failing log sink must not fail a call
    }
  }

  /**
   * Runs `pull` for `originId` and `scope` unless the policy says otherwise: a pull already
   * running is shared; within the interval the last outcome is repeated; past the budget the last
   * outcome (or false) is returned without pulling.
   * @param pull the work; it rejects when the pull failed
   * @returns true when a pull succeeded (now or recently), false when it failed or was refused
   */
  run(originId: string, scope: string, pull: () => Promise<void>): Promise<boolean> {
    const k = `${originId}:${scope}`
    const running = this.inflight.get(k)
    if (running) return running
    const now = this.now()
    const last = this.lastRefresh.get(k)
    if (last !== undefined && now - last.at < this.opts.refreshMinIntervalMs) return Promise.resolve(last.ok)
    if (!this.takeBudget(originId, now)) {
      this.stats.refreshesRefused++
      this.event({
        level: 'warn',
        msg: 'registry.refresh_refused',
        origin: originId,
        scope: scope === PUBLIC_SCOPE ? 'public' : 'private',
        budgetPerMin: this.opts.refreshBudgetPerMin,
      })
      return Promise.resolve(last?.ok ?? false)
    }
    this.forgetOldRefreshes(now)
    this.stats.refreshes++
    const p = (async () => {
      try {
        await pull()
        this.lastRefresh.set(k, { at: this.now(), ok: true })
        return true
      } catch (e) {
        this.stats.refreshFailures = (this.stats.refreshFailures ?? 0) + 1
        this.lastRefresh.set(k, { at: this.now(), ok: false })
        // Never the caller's scope digest: only whether the pull was for a private scope.
        const cause = originCause(e)
        this.event({
          level: 'warn',
          msg: 'registry.refresh',
          origin: originId,
          scope: scope === PUBLIC_SCOPE ? 'public' : 'private',
          ok: false,
          ms: this.now() - now,
          cause: cause.code,
          causeText: cause.text,
        })
        return false
      } finally {
        this.inflight.delete(k)
      }
    })()
    this.inflight.set(k, p)
    return p
  }

  /** Lifts the interval for `originId` in one scope, or in every scope when `scope` is omitted (after `list_changed`). */
  forget(originId: string, scope?: string): void {
    if (scope === undefined) {
      for (const k of this.lastRefresh.keys()) if (k.startsWith(`${originId}:`)) this.lastRefresh.delete(k)
    } else this.lastRefresh.delete(`${originId}:${scope}`)
  }

  /** Takes one pull from `originId`'s budget of the last minute; false when it is spent. */
  private takeBudget(originId: string, now: number): boolean {
    const budget = this.opts.refreshBudgetPerMin
    if (budget === undefined) return true
    let starts = this.pullStarts.get(originId)
    if (!starts) this.pullStarts.set(originId, (starts = []))
    while (starts.length > 0 && now - starts[0]! >= 60_000) starts.shift()
    if (starts.length >= budget) return false
    starts.push(now)
    return true
  }

  /**
   * Bounds the per-scope rate-limit memory: every caller scope leaves an entry, so past
   * {@link MAX_REFRESH_ENTRIES} the entries whose interval is over are dropped (they no longer limit anything).
   */
  private forgetOldRefreshes(now: number): void {
    if (this.lastRefresh.size < MAX_REFRESH_ENTRIES) return
    for (const [k, v] of this.lastRefresh) if (now - v.at >= this.opts.refreshMinIntervalMs) this.lastRefresh.delete(k)
  }
}
