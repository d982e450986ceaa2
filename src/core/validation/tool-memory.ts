/**
 * @module core/validation/tool-memory
 * The tools one process or isolate holds in memory, the registry's first read: per store key
 * (`tools:<originId>:<scope>:<name>`, tool-store.ts) the resolved tool, or null for a remembered
 * miss (the store has no such tool), until the entry's `expiresAt` (epoch ms). At most
 * {@link MAX_MEMORY_ENTRIES} entries (or `VALIDATOR_CACHE_SIZE`, the lower), the least recently
 * used out first (CLOCK, bounded-map.ts). Reads here never do I/O and never throw; what fills the
 * entries is store-reads.ts and tool-learning.ts, what drops them is tool-invalidation.ts.
 */
import { BoundedMap } from './bounded-map'
import { PUBLIC_SCOPE } from './caller-scope'
import type { Freshness } from './freshness'
import type { PrivateScopes } from './private-scopes'
import type { ResolvedTool, ToolRecord } from './tool-record'
import { toolKey, toolPrefix } from './tool-store'

/**
 * Upper bound of tool entries held in memory per isolate (known tools and remembered misses). A
 * caller sending random tool names cannot grow memory past it: the oldest entries go first.
 */
export const MAX_MEMORY_ENTRIES = 10_000

/** One held tool (null: the store has none) and the epoch ms it is held until. */
interface MemoryEntry {
  tool: ResolvedTool | null
  expiresAt: number
  /** Read since the last eviction pass (see BoundedMap). */
  used?: boolean
}

/** Slots of {@link ToolMemory}'s recent lookups. */
const RECENT_SLOTS = 4

/** One recent lookup of {@link ToolMemory}. */
interface RecentEntry {
  originId: string
  scope: string
  name: string
  entry: MemoryEntry
}

/** The registry's memory cache: see the module comment. */
export class ToolMemory {
  /** Tool entries (they reference compiled validators): bounded like the compiled-validator LRU. */
  private readonly entries: BoundedMap<string, MemoryEntry>
  /** Bumped by each change from another edge: a store read that started before it is not held. */
  private changes = 0
  /**
   * The last entries {@link get} found, with the names they were found under (a few slots, the
   * oldest replaced first); emptied by every change of `entries`. A call without credentials
   * reads its private scope (a remembered miss) and then `public`, and the elements of a batch
   * name one tool in turn: the two key strings and Map lookups per call showed as a tenth of a
   * batch's CPU in a profile.
   */
  private recent: RecentEntry[] = []
  private nextSlot = 0

  /**
   * @param validatorCacheSize `VALIDATOR_CACHE_SIZE`; the bound is the lower of it and {@link MAX_MEMORY_ENTRIES}
   * @param freshness marks what comes out of memory `stale` when past its freshness
   * @param privateScopes says whether a private scope is still held (a dropped one is not served)
   * @param stats the registry's counters: `memoryHits` counts the lookups memory answered
   * @param now the clock, epoch ms
   */
  constructor(
    validatorCacheSize: number,
    private readonly freshness: Freshness,
    private readonly privateScopes: PrivateScopes,
    private readonly stats: { memoryHits: number },
    private readonly now: () => number
  ) {
    this.entries = new BoundedMap(Math.min(MAX_MEMORY_ENTRIES, validatorCacheSize))
  }

  /** Number of tool entries held (bounded, see the module comment). */
  get size(): number {
    return this.entries.size
  }

  /** A token for {@link holdUnlessChanged}: take it before a store read starts. */
  get generation(): number {
    return this.changes
  }

  /**
   * What memory alone says about a tool (the hot path of every validated call): the tool, null
   * when memory knows the store has none, undefined when memory cannot tell (never read, or past
   * the entry's expiry). The caller's private `scope` first, then `public`. Counts a memory hit
   * when it can tell.
   */
  cached(originId: string, scope: string, name: string): ResolvedTool | null | undefined {
    const now = this.now()
    let tool: ResolvedTool | null | undefined = null
    if (scope !== PUBLIC_SCOPE) tool = this.get(originId, scope, name, now)
    if (tool === null) tool = this.get(originId, PUBLIC_SCOPE, name, now)
    if (tool !== undefined) this.stats.memoryHits++
    return tool
  }

  /**
   * {@link cached} in exactly one scope at `now` (epoch ms), without counting: the tool (marked
   * `stale` when past its freshness), null for a remembered miss, undefined when not held.
   */
  get(originId: string, scope: string, name: string, now: number): ResolvedTool | null | undefined {
    const hit = this.find(originId, scope, name)
    if (!hit || hit.expiresAt <= now) return undefined
    // A tool of a private scope this isolate no longer holds (MAX_PRIVATE_SCOPES) is not served
    // from memory; a remembered miss is (a caller whose scope has no list costs no KV read per call).
    if (hit.tool && scope !== PUBLIC_SCOPE && !this.privateScopes.isHeld(originId, scope)) return undefined
    hit.used = true // LRU (CLOCK): kept on the next eviction pass
    return this.withFreshness(hit.tool, originId, scope, now)
  }

  /** The entry held under the names, through {@link recent}. */
  private find(originId: string, scope: string, name: string): MemoryEntry | undefined {
    const recent = this.recent
    for (let i = 0; i < recent.length; i++) {
      const r = recent[i]!
      if (r.name === name && r.scope === scope && r.originId === originId) return r.entry
    }
    const entry = this.entries.get(toolKey(originId, scope, name))
    if (entry) {
      const slot: RecentEntry = { originId, scope, name, entry }
      if (recent.length < RECENT_SLOTS) recent.push(slot)
      else {
        recent[this.nextSlot] = slot
        this.nextSlot = (this.nextSlot + 1) % RECENT_SLOTS
      }
    }
    return entry
  }

  /** Empties {@link recent}: called by every change of `entries`. */
  private forget(): void {
    if (this.recent.length > 0) this.recent = []
  }

  /**
   * The tool as held, past its expiry too (for grading a reply to a call that was just
   * validated): the caller's private scope first (while this isolate holds it), then `public`.
   * Null when not held.
   */
  peek(originId: string, scope: string, name: string): ResolvedTool | null {
    const own = scope !== PUBLIC_SCOPE && this.privateScopes.isHeld(originId, scope) ? this.entries.get(toolKey(originId, scope, name))?.tool : undefined
    return own ?? this.entries.get(toolKey(originId, PUBLIC_SCOPE, name))?.tool ?? null
  }

  /** The record held for one tool in one scope, whatever its expiry; undefined when none is held. */
  heldRecord(originId: string, scope: string, name: string): ToolRecord | undefined {
    return this.entries.get(toolKey(originId, scope, name))?.tool?.record
  }

  /** `tool` marked `stale: true` or `false` as {@link Freshness.isStale} says at `now`; a copy only when the mark changes. */
  withFreshness(tool: ResolvedTool | null, originId: string, scope: string, now: number): ResolvedTool | null {
    if (!tool) return null
    const stale = this.freshness.isStale(tool.record, originId, scope, now)
    return stale === Boolean(tool.stale) ? tool : { ...tool, stale }
  }

  /** Holds `tool` (null: a remembered miss) for one tool name until `expiresAt` (epoch ms), replacing what was held. */
  hold(originId: string, scope: string, name: string, tool: ResolvedTool | null, expiresAt: number): void {
    this.forget()
    this.entries.set(toolKey(originId, scope, name), { tool, expiresAt })
  }

  /**
   * {@link hold}, unless another edge changed a record since `generation` was taken: what a store
   * read returned may then be older than the change, so it is not held (the next call reads again).
   */
  holdUnlessChanged(generation: number, originId: string, scope: string, name: string, tool: ResolvedTool | null, expiresAt: number): void {
    if (generation === this.changes) this.hold(originId, scope, name, tool, expiresAt)
  }

  /** Drops the entry of one tool in one scope. */
  drop(originId: string, scope: string, name: string): void {
    this.forget()
    this.entries.delete(toolKey(originId, scope, name))
  }

  /** Drops every entry of `originId` in one scope, or in every scope when `scope` is omitted. */
  dropScope(originId: string, scope?: string): void {
    const prefix = toolPrefix(originId, scope)
    this.forget()
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key)
  }

  /**
   * A store key another edge changed: its entry goes (null: changes may have been missed, every
   * entry goes), and store reads in flight are not held ({@link holdUnlessChanged}).
   */
  changedElsewhere(key: string | null): void {
    this.changes++
    this.forget()
    if (key === null) this.entries.clear()
    else this.entries.delete(key)
  }
}
