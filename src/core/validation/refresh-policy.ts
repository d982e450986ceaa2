/**
 * @module core/validation/refresh-policy
 * When the registry may pull an origin's tool list (docs/design.md D7, docs/reliability.md): one pull at a
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
   * `originId:scope` -> the names the last successful pull of that scope listed, while its
   * interval lasts (oldest first; entries past their interval are dropped as new ones come).
   * Only needed inside the interval: past it a refresh pulls anyway.
   */
  private readonly listed = new Map<string, { at: number; names: ReadonlySet<string> }>()

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
   * @param pull the work; it rejects when the pull failed, and may resolve with the tool names the
   *   origin listed (kept for {@link listedByLastPull} while the interval lasts)
   * @returns true when a pull succeeded (now or recently), false when it failed or was refused
   */
  run(originId: string, scope: string, pull: () => Promise<void | readonly string[]>): Promise<boolean> {
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
        const names = await pull()
        const at = this.now()
        this.lastRefresh.set(k, { at, ok: true })
        this.listed.delete(k)
        if (names) this.listed.set(k, { at, names: new Set(names) })
        this.forgetOldLists(at)
        return true
      } catch (e) {
        this.stats.refreshFailures = (this.stats.refreshFailures ?? 0) + 1
        this.lastRefresh.set(k, { at: this.now(), ok: false })
        this.listed.delete(k)
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
      for (const k of this.listed.keys()) if (k.startsWith(`${originId}:`)) this.listed.delete(k)
    } else {
      this.lastRefresh.delete(`${originId}:${scope}`)
      this.listed.delete(`${originId}:${scope}`)
    }
  }

  /**
   * True when the last pull of `originId` for `scope` succeeded within the interval and listed
   * `name`. The registry asks when the store has no usable record of `name`: the origin lists the
   * tool, so the record was lost (Redis restarted empty, a corrupt record) and the interval must
   * not hold the refresh back (it would answer "Unknown tool" until the interval ends).
   */
  listedByLastPull(originId: string, scope: string, name: string): boolean {
    const held = this.listed.get(`${originId}:${scope}`)
    return held !== undefined && this.now() - held.at < this.opts.refreshMinIntervalMs && held.names.has(name)
  }

  /** Drops the name lists whose interval is over (they are in time order): at most the lists of one interval are held. */
  private forgetOldLists(now: number): void {
    for (const [k, v] of this.listed) {
      if (now - v.at < this.opts.refreshMinIntervalMs && this.listed.size <= MAX_REFRESH_ENTRIES) break
      this.listed.delete(k)
    }
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
