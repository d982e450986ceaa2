/**
 * @module core/validation/tool-registry
 * Tool schemas per origin: a KV namespace behind a per-isolate memory cache (docs/design.md §7).
 * The registry reads, learns and forgets records; its parts each hold one concern:
 * - ./tool-store.ts: the KV layout, the record codec and every store read and write;
 * - ./compiled-validators.ts: the LRU of compiled validators (once per dialect and schema text);
 * - ./freshness.ts: when a record is stale (TTL, the origin's `ttlMs`, `list_changed`) or a
 *   rejection must be rechecked;
 * - ./refresh-policy.ts: single flight, rate limit and budget of pulls (D7);
 * - ./bounded-map.ts: the bounded memory (CLOCK);
 * - ./private-scopes.ts: the TTL and the per-origin count (LRU) of private scopes, in memory and in the store.
 * `scope` is `public`, or `u-<SHA-256 of the caller's Authorization>` for private tool lists
 * (./caller-scope.ts). Reads with a caller's private scope fall back to `public` (a public list serves
 * every caller); a pull stores its list where the origin's `cacheScope` says (docs/scope.md).
 *
 * Reads: KV at most once per tool per TTL per isolate (memory entries expire after the TTL).
 * A full pull also deletes the KV records of tools the origin no longer lists.
 * Shared stores: when the store can {@link KvStore.subscribe} (Redis), a record another edge put or
 * deleted drops this isolate's memory entry, so the next call reads the new one (docs/stores.md).
 */
import type { ValidationCost } from './schema-portability'
import type { Config } from '../config'
import type { ProtocolVersion } from '../jsonrpc/versions'
import type { KvStore, LogRecord, ValidatorEngine } from '../ports'
import { listScope, PUBLIC_SCOPE } from './caller-scope'
import { BoundedMap } from './bounded-map'
import { CompiledValidators } from './compiled-validators'
import { Freshness } from './freshness'
import { RefreshPolicy } from './refresh-policy'
import { PrivateScopes } from './private-scopes'
import { adminListKey, getStoredTool, putPulledList, putStoredTool, readNames, sourceTag, toolKey, toolPrefix, toToolRecord } from './tool-store'
import type { ResolvedTool, ToolRecord } from './tool-record'
import { EdgeError, PullError } from '../errors'
export type { ResolvedTool, ToolRecord } from './tool-record'

/** The KV namespace failed (binding missing, outage): no schema can be known for now (D8). */
export class StoreUnavailableError extends EdgeError {
  override readonly name = 'StoreUnavailableError'
  override readonly code = 'EDGE_ERR_STORE_UNAVAILABLE'
  constructor() {
    super('the tool schema store is unavailable')
  }
}

/**
 * Upper bound of tool entries held in memory per isolate (known tools and remembered misses). A
 * caller sending random tool names cannot grow memory past it: the oldest entries go first.
 */
export const MAX_MEMORY_ENTRIES = 10_000

/** Options of {@link ToolRegistry}. Units: seconds and milliseconds as named. */
export interface ToolRegistryOptions {
  kv: KvStore
  engine: ValidatorEngine
  schemaTtlS: number
  validatorCacheSize: number
  refreshMinIntervalMs: number
  /**
   * Pulls one origin may be sent per minute, whoever asks (every caller scope together); past it a
   * refresh is refused like a rate-limited one. Unset: no budget.
   */
  refreshBudgetPerMin?: number
  /** `PRIVATE_SCOPE_TTL_S`: seconds the keys of a private scope live after their last write (at least 60); default 3600. */
  privateScopeTtlS?: number
  /** `MAX_PRIVATE_SCOPES`: private scopes kept per origin, in memory and in the store, least recently used out first; default 1000. */
  maxPrivateScopes?: number
  now?: () => number
  /**
   * A stable tag of the origin an `originId` stands for now (e.g. a hash of its URL). Learned
   * records carry it; a record learned from another origin under the same name (ORIGIN_URL was
   * changed, the store outlived a restart) is treated as absent. Operator-pushed records without a
   * tag are accepted.
   */
  sourceOf?: (originId: string) => string | undefined
  /**
   * Receives the registry's events as log records (docs/observability.md): `registry.refresh`
   * (a pull ended: `ok`, `tools`, `ms`, and on failure `cause`/`causeText`),
   * `registry.refresh_refused` (the per-origin budget is spent), `registry.private_scopes_swept`
   * (private scopes removed from the store: `evicted`, `expired`, `kept`), `registry.schema_unusable` and
   * `registry.compile_failed` (a schema the edge cannot validate with: `tool`, `schema`, `reason`).
   * Never the schema text, never a caller's scope digest (only `public` or `private`). Must not throw.
   */
  onEvent?: (record: LogRecord) => void
}

interface MemoryEntry {
  tool: ResolvedTool | null
  expiresAt: number
  /** Read since the last eviction pass (see BoundedMap). */
  used?: boolean
}

/**
 * Fetches an origin's whole tool list (all pages) with the edge's own client session, on behalf of
 * one caller (its authorization). `cacheScope` is the origin's hint as found on the pages
 * (docs/protocol-rules.md M39): it decides where the list is stored.
 */
export type ToolListPuller = () => Promise<{ tools: unknown[]; era: ProtocolVersion; ttlMs?: number; cacheScope?: unknown }>

/** Holds and refreshes tool schemas; see the module comment for the KV layout. */
export class ToolRegistry {
  /** Tool entries (they reference compiled validators): bounded like the compiled-validator LRU. */
  private readonly memory: BoundedMap<string, MemoryEntry>
  private readonly validators: CompiledValidators
  private readonly freshness: Freshness
  private readonly policy: RefreshPolicy
  private readonly now: () => number
  /**
   * Counters for tests and metrics (docs/observability.md): KV reads and writes of tool records,
   * lookups answered from memory, compiles and the schemas that proved unusable, refreshes
   * started, failed, and refused by the budget, changes from other edges.
   */
  readonly stats = { kvReads: 0, kvWrites: 0, memoryHits: 0, compiles: 0, schemaErrors: 0, refreshes: 0, refreshFailures: 0, refreshesRefused: 0, remoteChanges: 0 }
  /** The bounds of private scopes (TTL, count per origin); its `stats` count what sweeps removed. */
  readonly privateScopes: PrivateScopes
  /** Bumped by each change from another edge: a KV read that started before it is not cached. */
  private generation = 0

  /** When this registry (the process or isolate) started, in epoch ms. */
  readonly startedAt: number

  constructor(private readonly opts: ToolRegistryOptions) {
    this.now = opts.now ?? Date.now
    this.freshness = new Freshness(opts.schemaTtlS, this.now)
    this.startedAt = this.freshness.startedAt
    this.memory = new BoundedMap(Math.min(MAX_MEMORY_ENTRIES, opts.validatorCacheSize))
    this.validators = new CompiledValidators(opts.engine, opts.validatorCacheSize, this.stats, opts.onEvent)
    this.policy = new RefreshPolicy(opts, this.now, this.stats, opts.onEvent)
    this.privateScopes = new PrivateScopes({
      kv: opts.kv,
      ttlS: opts.privateScopeTtlS ?? 3600,
      maxPerOrigin: opts.maxPrivateScopes ?? 1000,
      now: this.now,
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    })
    // `kv` is undefined when the Worker's TOOL_SCHEMAS binding is missing (D8: every read fails open).
    ;(opts.kv as KvStore | undefined)?.subscribe?.((key) => this.changedElsewhere(key))
  }

  /** A store key another edge changed (null: changes may have been missed): its memory entry goes. */
  private changedElsewhere(key: string | null): void {
    this.generation++
    this.stats.remoteChanges++
    if (key === null) this.memory.clear()
    else this.memory.delete(key)
  }

  /**
   * True when a rejection by `tool` must first be checked against a fresh tool list: its record
   * was learned from the origin (it has `fetchedAt`) more than `recheckMs` ago, or before this
   * process or isolate started (a persisted store outlives the origin's changes). Records pushed
   * by hand without `fetchedAt` are the operator's word and are never rechecked. A true answer
   * marks the entry as rechecked now (`recheckedAt`): the caller is expected to refresh.
   */
  needsRecheck(tool: ResolvedTool, recheckMs: number): boolean {
    return this.freshness.needsRecheck(tool, recheckMs)
  }

  /** The KV namespace the records live in (the admin API reads and writes it through tool-store.ts). */
  get kv(): KvStore {
    return this.opts.kv
  }

  /** The source tag records of `originId` carry now ({@link ToolRegistryOptions.sourceOf}). */
  sourceOf(originId: string): string | undefined {
    return this.opts.sourceOf?.(originId)
  }

  /**
   * Drops this isolate's memory entry of one tool (after an operator deleted or replaced its
   * record), without marking anything stale: the next call reads the store again.
   */
  forget(originId: string, scope: string, name: string): void {
    this.memory.delete(toolKey(originId, scope, name))
  }

  /** The engine's name (`ajv` or `cfworker`). */
  get engineName(): string {
    return this.opts.engine.name
  }

  /** Freshness in ms ({@link Freshness.ttlMs}). */
  private ttlMs(record?: ToolRecord | null): number {
    return this.freshness.ttlMs(record)
  }

  private isStale(record: ToolRecord, originId: string, scope: string, now: number): boolean {
    return this.freshness.isStale(record, originId, scope, now)
  }

  /**
   * Looks a tool up: memory, then KV (at most one KV read per tool per TTL). Returns null when the
   * origin's store has no such tool; an unreadable record counts as "not known". A record past its
   * freshness comes back with `stale: true`.
   * @param scope the caller's scope: a private scope is read first, then `public` (a public list
   *   serves every caller; a private one only its own authorization context)
   * @throws StoreUnavailableError when the KV namespace itself fails (the caller fails open, D8)
   */
  async lookup(originId: string, scope: string, name: string): Promise<ResolvedTool | null> {
    const reads = this.stats.kvReads
    let tool: ResolvedTool | null = null
    if (scope !== PUBLIC_SCOPE) tool = await this.lookupIn(originId, scope, name)
    if (!tool) tool = await this.lookupIn(originId, PUBLIC_SCOPE, name)
    if (this.stats.kvReads === reads) this.stats.memoryHits++
    // No usable record of a tool the last pull (within the interval) listed: the store lost it
    // (Redis came back empty, a corrupt record). That is a miss to refresh, not an unknown tool:
    // the interval is lifted for this scope, so the caller's next refresh pulls (single flight and
    // the per-origin budget still hold).
    if (!tool && this.policy.listedByLastPull(originId, scope, name)) this.policy.forget(originId, scope)
    return tool
  }

  /**
   * What memory alone says about a tool, without any I/O (the hot path of every validated call):
   * the tool as {@link lookup} would return it, null when memory knows the store has none, or
   * undefined when memory cannot tell (never read, or past its freshness): then call
   * {@link lookup}. Scopes as in {@link lookup}.
   */
  cached(originId: string, scope: string, name: string): ResolvedTool | null | undefined {
    const now = this.now()
    let tool: ResolvedTool | null | undefined = null
    if (scope !== PUBLIC_SCOPE) tool = this.fromMemory(originId, scope, name, now)
    if (tool === null) tool = this.fromMemory(originId, PUBLIC_SCOPE, name, now)
    if (tool !== undefined) this.stats.memoryHits++
    return tool
  }

  private fromMemory(originId: string, scope: string, name: string, now: number): ResolvedTool | null | undefined {
    const hit = this.memory.get(toolKey(originId, scope, name))
    if (!hit || hit.expiresAt <= now) return undefined
    // A tool of a private scope this isolate no longer holds (MAX_PRIVATE_SCOPES) is not served
    // from memory; a remembered miss is (a caller whose scope has no list costs no KV read per call).
    if (hit.tool && scope !== PUBLIC_SCOPE && !this.privateScopes.isHeld(originId, scope)) return undefined
    hit.used = true // LRU (CLOCK): kept on the next eviction pass
    return this.withFreshness(hit.tool, originId, scope, now)
  }

  /** {@link lookup} in exactly one scope. */
  private async lookupIn(originId: string, scope: string, name: string): Promise<ResolvedTool | null> {
    const key = toolKey(originId, scope, name)
    const now = this.now()
    const held = this.fromMemory(originId, scope, name, now)
    if (held !== undefined) return held
    let record: ToolRecord | null = null
    const generation = this.generation
    try {
      this.stats.kvReads++
      // A name whose key no store accepts (over 512 UTF-8 bytes) cannot be in the store: "not
      // known", not a store outage; an unreadable record is not known either (tool-store.ts).
      record = await getStoredTool(this.opts.kv, originId, name, scope)
    } catch {
      // Not cached: the next call tries the store again.
      throw new StoreUnavailableError()
    }
    const source = this.opts.sourceOf?.(originId)
    if (record?.source !== undefined && source !== undefined && record.source !== source) record = null
    const tool = record ? this.resolve(record) : null
    // Memory holds the entry until the record's own freshness ends (so KV is not read again first),
    // a private one no longer than the store keeps it (PRIVATE_SCOPE_TTL_S).
    let until = record && typeof record.fetchedAt === 'number' ? Math.max(record.fetchedAt + this.ttlMs(record), now + 1000) : now + this.ttlMs(record)
    if (scope !== PUBLIC_SCOPE) {
      until = Math.min(until, this.privateScopes.holdUntil(now))
      // Only a scope that has a list is held: callers with random Authorization values that have
      // none cannot push real scopes out of the LRU (and out of the store).
      if (record) this.privateScopes.touch(originId, scope)
    }
    // A change from another edge during the read may be newer than what was read: not cached.
    if (generation === this.generation) this.memory.set(key, { tool, expiresAt: until })
    return this.withFreshness(tool, originId, scope, now)
  }

  private withFreshness(tool: ResolvedTool | null, originId: string, scope: string, now: number): ResolvedTool | null {
    if (!tool) return null
    const stale = this.isStale(tool.record, originId, scope, now)
    return stale === Boolean(tool.stale) ? tool : { ...tool, stale }
  }

  /**
   * The tool as this isolate holds it in memory, without any I/O (for grading a reply to a call
   * that was just validated, e.g. the D12 output check). Null when not held. Scopes as in
   * {@link lookup}: the caller's own first, then `public`.
   */
  peek(originId: string, scope: string, name: string): ResolvedTool | null {
    const own = scope !== PUBLIC_SCOPE && this.privateScopes.isHeld(originId, scope) ? this.memory.get(toolKey(originId, scope, name))?.tool : undefined
    return own ?? this.memory.get(toolKey(originId, PUBLIC_SCOPE, name))?.tool ?? null
  }

  /** Compiles (or takes from the LRU) the validators of a record ({@link CompiledValidators}). Never throws. */
  resolve(record: ToolRecord): ResolvedTool {
    return this.validators.resolve(record)
  }

  /** Number of tool entries held in memory (bounded by {@link MAX_MEMORY_ENTRIES}). */
  get heldCount(): number {
    return this.memory.size
  }

  /** Number of compiled validators held (bounded by `validatorCacheSize`). */
  get compiledCount(): number {
    return this.validators.size
  }

  /**
   * Stores the tools of one `tools/list` result page (learned in passing or pulled).
   * @param tools the `result.tools` array; malformed entries are skipped
   * @param era the protocol version the list was fetched in (decides the default dialect)
   * @param ttlMs the origin's freshness hint, if any
   * In a private scope every key is written with `expirationTtl` (`PRIVATE_SCOPE_TTL_S`) and the
   * scope counts toward `MAX_PRIVATE_SCOPES` (private-scopes.ts); the promise also covers the
   * store deletions and the sweep that may cause.
   * @param options `mustStore`: every record is written (none skipped as unchanged) and a failed
   *   write rejects (`mcp-edge schemas push` against a store acknowledges a push only once it is stored,
   *   docs/stores.md); otherwise a failed write is ignored (the next list writes it again)
   * @returns the names stored
   * @throws StoreUnavailableError with `mustStore` when a write failed
   */
  async learn(originId: string, scope: string, tools: unknown[], era: ProtocolVersion, ttlMs?: number, options: { mustStore?: boolean } = {}): Promise<string[]> {
    let failed = false
    const now = this.now()
    const names: string[] = []
    const writes: Promise<void>[] = []
    // A private scope: every key expires (PRIVATE_SCOPE_TTL_S), and the scope counts toward MAX_PRIVATE_SCOPES.
    const isPrivate = scope !== PUBLIC_SCOPE
    const putOptions = isPrivate ? this.privateScopes.putOptions : undefined
    const heldScope = !isPrivate || this.privateScopes.isHeld(originId, scope)
    const source = this.opts.sourceOf?.(originId)
    // What an operator pushed (PUT /admin/tools) is theirs: the origin's schema never replaces it.
    // Read once per list that has a record to write (unknown when the store is down: those writes fail too).
    let pushed: Set<string> | undefined
    const isPushed = async (name: string) => {
      pushed ??= new Set(await readNames(this.opts.kv, adminListKey(originId, scope)).catch(() => [] as string[]))
      return pushed.has(name)
    }
    for (const t of tools) {
      const record = toToolRecord(t, era, now, source, ttlMs)
      if (!record) continue
      names.push(record.name)
      const key = toolKey(originId, scope, record.name)
      // Every client session lists the tools: an unchanged record still in its first half-life is
      // not written again (KV writes are slow and billed; Workers KV allows 1 write/s per key).
      const held = heldScope ? this.memory.get(key)?.tool?.record : undefined
      if (
        !options.mustStore &&
        held &&
        this.sameRecord(held, record) &&
        typeof held.fetchedAt === 'number' &&
        now - held.fetchedAt < this.ttlMs(record) / 2 &&
        !this.isStale(held, originId, scope, now)
      )
        continue
      if (await isPushed(record.name)) {
        this.memory.delete(key)
        continue
      }
      this.memory.set(key, { tool: this.resolve(record), expiresAt: isPrivate ? Math.min(now + this.ttlMs(record), this.privateScopes.holdUntil(now)) : now + this.ttlMs(record) })
      this.stats.kvWrites++
      writes.push(
        (async () => putStoredTool(this.opts.kv, originId, scope, record, putOptions))().catch(() => {
          failed = true
        })
      )
    }
    // The scope's marker goes with its records; the scope becomes this isolate's latest (the least
    // recently used one past MAX_PRIVATE_SCOPES is deleted, in the same group commit on the file
    // store), and every few new scopes a sweep removes the store's oldest ones.
    if (isPrivate && writes.length > 0) {
      writes.push(
        this.privateScopes.stored(originId, scope).catch(() => {
          failed = true
        })
      )
      writes.push(this.privateScopes.admit(originId, scope))
    }
    await Promise.all(writes)
    if (failed && options.mustStore) throw new StoreUnavailableError()
    return names
  }

  private sameRecord(a: ToolRecord, b: ToolRecord): boolean {
    return (
      a.hash === b.hash &&
      a.dialect === b.dialect &&
      a.ttlMs === b.ttlMs &&
      JSON.stringify(a.inputSchema) === JSON.stringify(b.inputSchema) &&
      JSON.stringify(a.outputSchema) === JSON.stringify(b.outputSchema)
    )
  }

  /**
   * `notifications/tools/list_changed` for one origin: drops the memory entries, and marks every
   * record fetched before now as stale in this isolate, so the next call to any of its tools
   * refreshes the list first (other isolates catch up at their TTL).
   * @param scope one scope only; omitted: every scope of the origin (what the edge does for a
   *   notification from the origin, which does not say whose list changed)
   */
  invalidate(originId: string, scope?: string): void {
    const prefix = toolPrefix(originId, scope)
    for (const key of this.memory.keys()) if (key.startsWith(prefix)) this.memory.delete(key)
    this.policy.forget(originId, scope)
    this.freshness.changed(originId, scope)
  }

  /**
   * Refreshes an origin's tool list once (D7): concurrent callers share one pull; a pull is not
   * repeated within `refreshMinIntervalMs`. Resolves true when a pull succeeded (now or recently),
   * false when the pull failed or was rate-limited away (D16: callers fail open).
   * On top of that, every origin has a budget of `refreshBudgetPerMin` pulls per minute over all
   * caller scopes together: a caller who sends a new Authorization value with each call (a new
   * scope each time) cannot make the edge pull once per call (10,000 such calls had become
   * 30,000 origin requests). A refresh past the budget is refused like a rate-limited one.
   * @param scope the caller's scope (single flight and rate limit are per origin and caller, since
   *   the pull carries the caller's authorization); the list is stored under `public` or under this
   *   scope as its `cacheScope` says ({@link listScope}). A private list pulled for the `public`
   *   scope has nowhere to go: it is not stored and the refresh counts as failed.
   */
  refresh(originId: string, scope: string, pull: ToolListPuller): Promise<boolean> {
    const started = this.now()
    return this.policy.run(originId, scope, async () => {
      const { tools, era, ttlMs, cacheScope } = await pull()
      const dest = listScope(cacheScope, era, scope === PUBLIC_SCOPE ? undefined : scope)
      if (dest === null) throw new PullError('private-without-scope')
      // Forget every cached entry of this origin and caller first, so negative entries do not outlive the pull.
      for (const s of new Set([scope, dest])) {
        const prefix = toolPrefix(originId, s)
        for (const key of this.memory.keys()) if (key.startsWith(prefix)) this.memory.delete(key)
      }
      const names = await this.learn(originId, dest, tools, era, ttlMs)
      // The list's record, and the deletion of the records of tools it no longer names.
      await putPulledList(this.opts.kv, originId, dest, names, this.now(), ttlMs, dest === PUBLIC_SCOPE ? undefined : this.privateScopes.putOptions)
      // A failed or refused pull is logged by the policy (refresh-policy.ts).
      this.event({
        level: 'info',
        msg: 'registry.refresh',
        origin: originId,
        scope: dest === PUBLIC_SCOPE ? 'public' : 'private',
        ok: true,
        tools: names.length,
        ms: this.now() - started,
      })
      return names
    })
  }

  /** Sends one event to {@link ToolRegistryOptions.onEvent}, never throwing. */
  private event(record: LogRecord): void {
    try {
      this.opts.onEvent?.(record)
    } catch {
      // a failing log sink must not fail a pull
    }
  }
}

/**
 * The registry an entry builds from its configuration: records are tagged with a hash of the URL
 * their origin name stands for, so schemas never cross from one origin URL to another.
 */
export function createToolRegistry(config: Config, kv: KvStore, engine: ValidatorEngine, onEvent?: (record: LogRecord) => void): ToolRegistry {
  return new ToolRegistry({
    ...(onEvent ? { onEvent } : {}),
    kv,
    engine,
    schemaTtlS: config.schemaTtlS,
    validatorCacheSize: config.validatorCacheSize,
    refreshMinIntervalMs: config.refreshMinIntervalMs,
    refreshBudgetPerMin: config.refreshBudgetPerMin,
    privateScopeTtlS: config.privateScopeTtlS,
    maxPrivateScopes: config.maxPrivateScopes,
    sourceOf: (id) => sourceTag(config, id),
  })
}
