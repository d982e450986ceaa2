/**
 * @module core/validation/store-reads
 * The registry's lookups that may read the store: memory first (tool-memory.ts), then the KV
 * namespace, at most one KV read per tool per freshness period per isolate, and what was read
 * (the resolved tool, or a miss) is held in memory for the record's own freshness. The caller's
 * private scope is read first, then `public` (a public list serves every caller; docs/scope.md).
 * A record learned from another origin under the same name (its `source` tag differs) counts as
 * absent; an unreadable record counts as "not known". When the store itself fails, a lookup
 * throws {@link StoreUnavailableError} and nothing is held (the next call tries again).
 */
import { EdgeError } from '../errors'
import type { KvStore } from '../ports'
import { PUBLIC_SCOPE } from './caller-scope'
import type { CompiledValidators } from './compiled-validators'
import type { Freshness } from './freshness'
import type { PrivateScopes } from './private-scopes'
import type { ToolMemory } from './tool-memory'
import type { ResolvedTool, ToolRecord } from './tool-record'
import { getStoredTool } from './tool-store'

/** The KV namespace failed (binding missing, outage): no schema can be known for now (D8). */
export class StoreUnavailableError extends EdgeError {
  override readonly name = 'StoreUnavailableError'
  override readonly code = 'EDGE_ERR_STORE_UNAVAILABLE'
  constructor() {
    super('the tool schema store is unavailable')
  }
}

/** What {@link StoreReads} reads through and with. */
export interface StoreReadsParts {
  kv: KvStore
  memory: ToolMemory
  validators: CompiledValidators
  freshness: Freshness
  privateScopes: PrivateScopes
  /** The source tag records of an origin carry now (`ToolRegistryOptions.sourceOf`); unset: any tag is accepted. */
  sourceOf?: ((originId: string) => string | undefined) | undefined
  /** The clock, epoch ms. */
  now: () => number
  /** The registry's counters: `kvReads` counts store reads, `memoryHits` the lookups memory answered. */
  stats: { kvReads: number; memoryHits: number }
}

/** Lookups through memory to the store: see the module comment. */
export class StoreReads {
  constructor(private readonly parts: StoreReadsParts) {}

  /**
   * Looks a tool up: the caller's private `scope` (when it is one), then `public`; in each, memory
   * first, then the store. A record past its freshness comes back with `stale: true`.
   * @returns the tool, or null when the store has no usable record of it
   * @throws StoreUnavailableError when the KV namespace itself fails (the caller fails open, D8)
   */
  async lookup(originId: string, scope: string, name: string): Promise<ResolvedTool | null> {
    const stats = this.parts.stats
    const reads = stats.kvReads
    let tool: ResolvedTool | null = null
    if (scope !== PUBLIC_SCOPE) tool = await this.lookupIn(originId, scope, name)
    if (!tool) tool = await this.lookupIn(originId, PUBLIC_SCOPE, name)
    if (stats.kvReads === reads) stats.memoryHits++
    return tool
  }

  /** {@link lookup} in exactly one scope. */
  private async lookupIn(originId: string, scope: string, name: string): Promise<ResolvedTool | null> {
    const { kv, memory, validators, freshness, privateScopes, stats } = this.parts
    const now = this.parts.now()
    const held = memory.get(originId, scope, name, now)
    if (held !== undefined) return held
    let record: ToolRecord | null = null
    const generation = memory.generation
    try {
      stats.kvReads++
      // A name whose key no store accepts (over 512 UTF-8 bytes) cannot be in the store: "not
      // known", not a store outage; an unreadable record is not known either (tool-store.ts).
      record = await getStoredTool(kv, originId, name, scope)
    } catch {
      // Not held: the next call tries the store again.
      throw new StoreUnavailableError()
    }
    const source = this.parts.sourceOf?.(originId)
    if (record?.source !== undefined && source !== undefined && record.source !== source) record = null
    const tool = record ? validators.resolve(record) : null
    // Memory holds the entry until the record's own freshness ends (so KV is not read again first),
    // a private one no longer than the store keeps it (PRIVATE_SCOPE_TTL_S).
    let until = record && typeof record.fetchedAt === 'number' ? Math.max(record.fetchedAt + freshness.ttlMs(record), now + 1000) : now + freshness.ttlMs(record)
    if (scope !== PUBLIC_SCOPE) {
      until = Math.min(until, privateScopes.holdUntil(now))
      // Only a scope that has a list is held: callers with random Authorization values that have
      // none cannot push real scopes out of the LRU (and out of the store).
      if (record) privateScopes.touch(originId, scope)
    }
    // A change from another edge during the read may be newer than what was read: not held.
    memory.holdUnlessChanged(generation, originId, scope, name, tool, until)
    return memory.withFreshness(tool, originId, scope, now)
  }
}
