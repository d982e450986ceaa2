/**
 * @module core/validation/tool-learning
 * Learning from `tools/list`: each page of a list (one passing through the edge, the edge's own
 * pull, or an operator's push) becomes tool records (tool-store.ts `toToolRecord`; malformed
 * entries are skipped), held in memory (tool-memory.ts) and written to the store. An unchanged
 * record still in its first half-life is not written again. In a private scope every key expires
 * (`PRIVATE_SCOPE_TTL_S`) and the scope counts toward `MAX_PRIVATE_SCOPES` (private-scopes.ts).
 * A failed write is ignored (the next list writes it again), unless the caller needs the records
 * stored: then it rejects with {@link StoreUnavailableError}.
 */
import { yieldToLoop } from '../work-slices'
import type { KvStore } from '../ports'
import type { ProtocolVersion } from '../jsonrpc/versions'
import { PUBLIC_SCOPE } from './caller-scope'
import type { CompiledValidators } from './compiled-validators'
import type { Freshness } from './freshness'
import type { PrivateScopes } from './private-scopes'
import { StoreUnavailableError } from './store-reads'
import type { ToolMemory } from './tool-memory'
import type { ToolRecord } from './tool-record'
import { adminListKey, putStoredTool, readNames, toToolRecord } from './tool-store'

/** What {@link ToolLearning} writes into and with. */
export interface ToolLearningParts {
  kv: KvStore
  memory: ToolMemory
  validators: CompiledValidators
  freshness: Freshness
  privateScopes: PrivateScopes
  /** The source tag learned records of an origin get (`ToolRegistryOptions.sourceOf`); unset: none. */
  sourceOf?: ((originId: string) => string | undefined) | undefined
  /** The clock, epoch ms (a record's `fetchedAt`). */
  now: () => number
  /** The registry's counters: `kvWrites` counts the tool records written. */
  stats: { kvWrites: number }
}

/** True when two records of one tool validate alike (same schemas, dialect and freshness hint). */
function sameRecord(a: ToolRecord, b: ToolRecord): boolean {
  return (
    a.hash === b.hash &&
    a.dialect === b.dialect &&
    a.ttlMs === b.ttlMs &&
    JSON.stringify(a.inputSchema) === JSON.stringify(b.inputSchema) &&
    JSON.stringify(a.outputSchema) === JSON.stringify(b.outputSchema)
  )
}

/** Tools of one list checked between two yields to the event loop (a few microseconds each when unchanged). */
const LEARN_SLICE = 100

/** Stores the tools of `tools/list` pages: see the module comment. */
export class ToolLearning {
  constructor(private readonly parts: ToolLearningParts) {}

  /**
   * Stores the tools of one `tools/list` result page (learned in passing or pulled).
   * @param tools the `result.tools` array; malformed entries are skipped
   * @param era the protocol version the list was fetched in (decides the default dialect)
   * @param ttlMs the origin's freshness hint in ms, if any
   * In a private scope the promise also covers the store deletions and the sweep the scope's
   * admission may cause (private-scopes.ts).
   * @param options `mustStore`: every record is written (none skipped as unchanged) and a failed
   *   write rejects (`mcp-edge schemas push` against a store acknowledges a push only once it is stored,
   *   docs/stores.md); otherwise a failed write is ignored (the next list writes it again)
   * @returns the names stored
   * @throws StoreUnavailableError with `mustStore` when a write failed
   */
  async learn(originId: string, scope: string, tools: unknown[], era: ProtocolVersion, ttlMs?: number, options: { mustStore?: boolean } = {}): Promise<string[]> {
    const { kv, memory, validators, freshness, privateScopes, stats } = this.parts
    let failed = false
    const now = this.parts.now()
    const names: string[] = []
    const writes: Promise<void>[] = []
    // A private scope: every key expires (PRIVATE_SCOPE_TTL_S), and the scope counts toward MAX_PRIVATE_SCOPES.
    const isPrivate = scope !== PUBLIC_SCOPE
    const putOptions = isPrivate ? privateScopes.putOptions : undefined
    const heldScope = !isPrivate || privateScopes.isHeld(originId, scope)
    const source = this.parts.sourceOf?.(originId)
    // What an operator pushed (PUT /admin/tools) is theirs: the origin's schema never replaces it.
    // Read once per list that has a record to write (unknown when the store is down: those writes
    // fail too). A write that must be stored (`mcp-edge schemas push` into a store) is the operator's own.
    let pushed: Set<string> | undefined
    const isPushed = async (name: string) => {
      pushed ??= new Set(await readNames(kv, adminListKey(originId, scope)).catch(() => [] as string[]))
      return pushed.has(name)
    }
    for (let i = 0; i < tools.length; i++) {
      // A long list is learned in slices: the records of a 700-tool list, checked in one go, held other clients.
      if (i > 0 && i % LEARN_SLICE === 0) await yieldToLoop()
      const t = tools[i]
      const record = toToolRecord(t, era, now, source, ttlMs)
      if (!record) continue
      names.push(record.name)
      // Every client session lists the tools: an unchanged record still in its first half-life is
      // not written again (KV writes are slow and billed; Workers KV allows 1 write/s per key).
      const held = heldScope ? memory.heldRecord(originId, scope, record.name) : undefined
      if (
        !options.mustStore &&
        held &&
        sameRecord(held, record) &&
        typeof held.fetchedAt === 'number' &&
        now - held.fetchedAt < freshness.ttlMs(record) / 2 &&
        !freshness.isStale(held, originId, scope, now)
      )
        continue
      if (!options.mustStore && (await isPushed(record.name))) {
        memory.drop(originId, scope, record.name)
        continue
      }
      const until = isPrivate ? Math.min(now + freshness.ttlMs(record), privateScopes.holdUntil(now)) : now + freshness.ttlMs(record)
      memory.hold(originId, scope, record.name, validators.resolve(record), until)
      stats.kvWrites++
      writes.push(
        (async () => putStoredTool(kv, originId, scope, record, putOptions))().catch(() => {
          failed = true
        })
      )
    }
    // The scope's marker goes with its records; the scope becomes this isolate's latest (the least
    // recently used one past MAX_PRIVATE_SCOPES is deleted, in the same group commit on the file
    // store), and every few new scopes a sweep removes the store's oldest ones.
    if (isPrivate && writes.length > 0) {
      writes.push(
        privateScopes.stored(originId, scope).catch(() => {
          failed = true
        })
      )
      writes.push(privateScopes.admit(originId, scope))
    }
    await Promise.all(writes)
    if (failed && options.mustStore) throw new StoreUnavailableError()
    return names
  }
}
