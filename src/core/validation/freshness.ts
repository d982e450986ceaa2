/**
 * @module core/validation/freshness
 * When a tool record is fresh (docs/design.md §7; MCP 2026-07-28 caching):
 * - for the origin's `ttlMs` when that is a positive number, otherwise for `SCHEMA_TTL_S`
 *   (0, negative or absent = the edge's own policy);
 * - never after a `notifications/tools/list_changed` for its origin (one scope, or every scope)
 *   seen by this isolate;
 * - a record without `fetchedAt` (pushed by hand with `wrangler kv`) never goes stale.
 * And when a rejection must be confirmed by a fresh list first (`SCHEMA_RECHECK_MS`, docs/reliability.md).
 * Per isolate; no I/O.
 */
import type { ResolvedTool, ToolRecord } from './tool-record'

/** The freshness rules of one registry, with what this isolate saw of `list_changed`. */
export class Freshness {
  /** `originId:scope` (or `originId:*` for every scope) -> when this isolate last saw `notifications/tools/list_changed` (ms). */
  private readonly changedAt = new Map<string, number>()
  /** When this registry (the process or isolate) started, in epoch ms. */
  readonly startedAt: number

  /**
   * @param schemaTtlS `SCHEMA_TTL_S`, in seconds
   * @param now the clock, epoch ms
   */
  constructor(
    private readonly schemaTtlS: number,
    private readonly now: () => number
  ) {
    this.startedAt = now()
  }

  /** Freshness in ms: the origin's positive `ttlMs`, else `SCHEMA_TTL_S`. */
  ttlMs(record?: ToolRecord | null): number {
    const hint = record?.ttlMs
    return typeof hint === 'number' && hint > 0 ? hint : this.schemaTtlS * 1000
  }

  /** True when `record`, held for `originId` in `scope`, is past its freshness at `now` (ms). */
  isStale(record: ToolRecord, originId: string, scope: string, now: number): boolean {
    if (typeof record.fetchedAt !== 'number') return false
    if (this.changedAt.size === 0) return record.fetchedAt + this.ttlMs(record) <= now
    const changed = this.changedAt.get(`${originId}:${scope}`)
    if (changed !== undefined && record.fetchedAt < changed) return true
    const changedAll = this.changedAt.get(`${originId}:*`)
    if (changedAll !== undefined && record.fetchedAt < changedAll) return true
    return record.fetchedAt + this.ttlMs(record) <= now
  }

  /**
   * True when this isolate saw `notifications/tools/list_changed` for `originId` (any scope) at or
   * after `at` (epoch ms): a list pulled from `at` on may already be out of date.
   */
  changedSince(originId: string, at: number): boolean {
    for (const [key, t] of this.changedAt) if (t >= at && key.startsWith(`${originId}:`)) return true
    return false
  }

  /** `notifications/tools/list_changed` for `originId` (one scope, or every scope when omitted): what was fetched before now is stale. */
  changed(originId: string, scope?: string): void {
    this.changedAt.set(`${originId}:${scope ?? '*'}`, this.now())
  }

  /**
   * True when a rejection by `tool` must first be checked against a fresh tool list: its record
   * was learned from the origin (it has `fetchedAt`) more than `recheckMs` ago, or before this
   * process or isolate started (a persisted store outlives the origin's changes). Records pushed
   * by hand without `fetchedAt` are the operator's word and are never rechecked. A true answer
   * marks the entry as rechecked now (`recheckedAt`): the caller is expected to refresh.
   */
  needsRecheck(tool: ResolvedTool, recheckMs: number): boolean {
    const at = tool.record.fetchedAt
    if (typeof at !== 'number') return false
    const now = this.now()
    // One recheck per tool entry per bound: when the pull fails (or is refused), the held copy
    // stands until then instead of a pull attempt with every rejection.
    if (tool.recheckedAt !== undefined && now - tool.recheckedAt <= recheckMs) return false
    if (at >= this.startedAt && now - at <= recheckMs) return false
    tool.recheckedAt = now
    return true
  }
}
