/**
 * @module core/validation/tool-invalidation
 * What makes the registry forget, in one place: `notifications/tools/list_changed` (memory entries
 * dropped, the refresh interval lifted, records fetched before now marked stale in this isolate),
 * an operator's change to one record (its memory entry dropped, nothing marked stale), a change
 * another edge made in a shared store (KvStore `subscribe`, docs/stores.md), and a pull about to
 * store a fresh list (the scopes' entries dropped first, so remembered misses do not outlive it).
 * Per isolate; no I/O, never throws.
 */
import type { Freshness } from './freshness'
import type { RefreshPolicy } from './refresh-policy'
import type { ToolMemory } from './tool-memory'

/** The registry's invalidations: see the module comment. */
export class ToolInvalidation {
  /** @param stats the registry's counters: `remoteChanges` counts changes from other edges */
  constructor(
    private readonly memory: ToolMemory,
    private readonly policy: RefreshPolicy,
    private readonly freshness: Freshness,
    private readonly stats: { remoteChanges: number }
  ) {}

  /**
   * `notifications/tools/list_changed` for one origin: the next call to any of its tools refreshes
   * the list first (other isolates catch up at their TTL).
   * @param scope one scope only; omitted: every scope of the origin (what the edge does for a
   *   notification from the origin, which does not say whose list changed)
   */
  listChanged(originId: string, scope?: string): void {
    this.memory.dropScope(originId, scope)
    this.policy.forget(originId, scope)
    this.freshness.changed(originId, scope)
  }

  /** An operator deleted or replaced one tool's record: the next call reads the store again. */
  recordChanged(originId: string, scope: string, name: string): void {
    this.memory.drop(originId, scope, name)
  }

  /** A store key another edge changed (null: changes may have been missed, every entry goes). */
  changedElsewhere(key: string | null): void {
    this.stats.remoteChanges++
    this.memory.changedElsewhere(key)
  }

  /** A pull of `originId`'s list is about to store it: the entries of these scopes go first. */
  pulled(originId: string, scopes: Iterable<string>): void {
    for (const s of scopes) this.memory.dropScope(originId, s)
  }
}
