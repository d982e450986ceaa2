/**
 * @module core/validation/tool-registry
 * Tool schemas per origin: a KV namespace behind a per-isolate memory cache (docs/design.md §7).
 * {@link ToolRegistry} is a facade: it builds the units below and hands each call to the one
 * whose job it is, so the stages (tools-call, output grading, the admin API) see one object.
 * - ./tool-memory.ts: the memory cache (held tools and remembered misses, no I/O; the hot path);
 * - ./store-reads.ts: lookups through memory to the store, {@link StoreUnavailableError};
 * - ./tool-learning.ts: learning from `tools/list` pages (records held and written);
 * - ./pulled-lists.ts: whole-list bookkeeping (a pull's list record, lost records);
 * - ./tool-invalidation.ts: what makes the registry forget (`list_changed`, an operator's
 *   change, another edge's change, a pull);
 * - ./tool-refresh.ts: pulls under ./refresh-policy.ts (single flight, rate limit, budget; D7);
 * and below them: ./tool-store.ts (the KV layout, the record codec and every store read and
 * write), ./compiled-validators.ts (the LRU of compiled validators), ./freshness.ts (TTL,
 * the origin's `ttlMs`, `list_changed`, rechecks), ./private-scopes.ts (the bounds of private
 * scopes), ./bounded-map.ts (CLOCK).
 * `scope` is `public`, or `u-<SHA-256 of the caller's Authorization>` for private tool lists
 * (./caller-scope.ts). Reads with a caller's private scope fall back to `public` (a public list serves
 * every caller); a pull stores its list where the origin's `cacheScope` says (docs/scope.md).
 *
 * Reads: KV at most once per tool per TTL per isolate (memory entries expire after the TTL).
 * A full pull also deletes the KV records of tools the origin no longer lists.
 * Shared stores: when the store can {@link KvStore.subscribe} (Redis), a record another edge put or
 * deleted drops this isolate's memory entry, so the next call reads the new one (docs/stores.md).
 */
import type { Config } from '../config'
import type { ProtocolVersion } from '../jsonrpc/versions'
import type { KvStore, LogRecord, ValidatorEngine } from '../ports'
import { CompiledValidators } from './compiled-validators'
import { Freshness } from './freshness'
import { PrivateScopes } from './private-scopes'
import { PulledLists } from './pulled-lists'
import { RefreshPolicy } from './refresh-policy'
import { StoreReads } from './store-reads'
import { ToolInvalidation } from './tool-invalidation'
import { ToolLearning } from './tool-learning'
import { ToolMemory } from './tool-memory'
import type { ResolvedTool, ToolRecord } from './tool-record'
import { ToolRefresh, type ToolListPuller } from './tool-refresh'
import { sourceTag } from './tool-store'
export type { ResolvedTool, ToolRecord } from './tool-record'
export { StoreUnavailableError } from './store-reads'
export { MAX_MEMORY_ENTRIES } from './tool-memory'
export type { ToolListPuller } from './tool-refresh'

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

/** Holds and refreshes tool schemas; see the module comment for its units and the KV layout. */
export class ToolRegistry {
  /** The memory cache (its `size` is {@link heldCount}). */
  private readonly memory: ToolMemory
  private readonly validators: CompiledValidators
  private readonly freshness: Freshness
  private readonly reads: StoreReads
  private readonly learning: ToolLearning
  private readonly lists: PulledLists
  private readonly invalidation: ToolInvalidation
  private readonly refreshes: ToolRefresh
  /**
   * Counters for tests and metrics (docs/observability.md): KV reads and writes of tool records,
   * lookups answered from memory, compiles and the schemas that proved unusable, refreshes
   * started, failed, and refused by the budget, changes from other edges. One object, shared by the units.
   */
  readonly stats = { kvReads: 0, kvWrites: 0, memoryHits: 0, compiles: 0, schemaErrors: 0, refreshes: 0, refreshFailures: 0, refreshesRefused: 0, remoteChanges: 0 }
  /** The bounds of private scopes (TTL, count per origin); its `stats` count what sweeps removed. */
  readonly privateScopes: PrivateScopes

  /** When this registry (the process or isolate) started, in epoch ms. */
  readonly startedAt: number

  constructor(private readonly opts: ToolRegistryOptions) {
    const now = opts.now ?? Date.now
    const { kv, sourceOf } = opts
    const stats = this.stats
    const freshness = (this.freshness = new Freshness(opts.schemaTtlS, now))
    this.startedAt = freshness.startedAt
    const validators = (this.validators = new CompiledValidators(opts.engine, opts.validatorCacheSize, stats, opts.onEvent))
    const policy = new RefreshPolicy(opts, now, stats, opts.onEvent)
    const privateScopes = (this.privateScopes = new PrivateScopes({
      kv,
      ttlS: opts.privateScopeTtlS ?? 3600,
      maxPerOrigin: opts.maxPrivateScopes ?? 1000,
      now,
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    }))
    const memory = (this.memory = new ToolMemory(opts.validatorCacheSize, freshness, privateScopes, stats, now))
    this.reads = new StoreReads({ kv, memory, validators, freshness, privateScopes, sourceOf, now, stats })
    const learning = (this.learning = new ToolLearning({ kv, memory, validators, freshness, privateScopes, sourceOf, now, stats }))
    const lists = (this.lists = new PulledLists(kv, policy, privateScopes))
    const invalidation = (this.invalidation = new ToolInvalidation(memory, policy, freshness, stats))
    this.refreshes = new ToolRefresh({ policy, invalidation, learning, lists, now, onEvent: opts.onEvent })
    // `kv` is undefined when the Worker's TOOL_SCHEMAS binding is missing (D8: every read fails open).
    ;(kv as KvStore | undefined)?.subscribe?.((key) => invalidation.changedElsewhere(key))
  }

  /**
   * True when a rejection by `tool` must first be checked against a fresh tool list
   * ({@link Freshness.needsRecheck}: learned more than `recheckMs` ago, or before this process or
   * isolate started). A true answer marks the entry as rechecked now: the caller is expected to refresh.
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
    this.invalidation.recordChanged(originId, scope, name)
  }

  /** The engine's name (`ajv` or `cfworker`). */
  get engineName(): string {
    return this.opts.engine.name
  }

  /**
   * Looks a tool up: memory, then KV (at most one KV read per tool per TTL; store-reads.ts).
   * Returns null when the origin's store has no such tool; an unreadable record counts as "not
   * known". A record past its freshness comes back with `stale: true`. A miss of a tool the last
   * pull listed lifts the refresh interval (pulled-lists.ts).
   * @param scope the caller's scope: a private scope is read first, then `public` (a public list
   *   serves every caller; a private one only its own authorization context)
   * @throws StoreUnavailableError when the KV namespace itself fails (the caller fails open, D8)
   */
  async lookup(originId: string, scope: string, name: string): Promise<ResolvedTool | null> {
    const tool = await this.reads.lookup(originId, scope, name)
    if (!tool) this.lists.missed(originId, scope, name)
    return tool
  }

  /**
   * What memory alone says about a tool, without any I/O (the hot path of every validated call;
   * tool-memory.ts): the tool as {@link lookup} would return it, null when memory knows the store
   * has none, or undefined when memory cannot tell (never read, or past its freshness): then call
   * {@link lookup}. Scopes as in {@link lookup}.
   */
  cached(originId: string, scope: string, name: string): ResolvedTool | null | undefined {
    return this.memory.cached(originId, scope, name)
  }

  /**
   * The tool as this isolate holds it in memory, without any I/O (for grading a reply to a call
   * that was just validated, e.g. the D12 output check). Null when not held. Scopes as in
   * {@link lookup}: the caller's own first, then `public`.
   */
  peek(originId: string, scope: string, name: string): ResolvedTool | null {
    return this.memory.peek(originId, scope, name)
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
   * Stores the tools of one `tools/list` result page, learned in passing or pulled
   * ({@link ToolLearning.learn}: parameters, private scopes, `mustStore`).
   * @returns the names stored
   * @throws StoreUnavailableError with `mustStore` when a write failed
   */
  learn(originId: string, scope: string, tools: unknown[], era: ProtocolVersion, ttlMs?: number, options: { mustStore?: boolean } = {}): Promise<string[]> {
    return this.learning.learn(originId, scope, tools, era, ttlMs, options)
  }

  /**
   * `notifications/tools/list_changed` for one origin: drops the memory entries, and marks every
   * record fetched before now as stale in this isolate, so the next call to any of its tools
   * refreshes the list first (other isolates catch up at their TTL; tool-invalidation.ts).
   * @param scope one scope only; omitted: every scope of the origin (what the edge does for a
   *   notification from the origin, which does not say whose list changed)
   */
  invalidate(originId: string, scope?: string): void {
    this.invalidation.listChanged(originId, scope)
  }

  /**
   * True when this isolate saw `notifications/tools/list_changed` for `originId` (any scope, from
   * any path: the origin's own route, a call's stream, a virtual server's stream) at or after
   * `at` (epoch ms). A copy of the origin's list made from a pull started at `at` is then stale.
   */
  listChangedSince(originId: string, at: number): boolean {
    return this.freshness.changedSince(originId, at)
  }

  /**
   * Refreshes an origin's tool list once (D7; tool-refresh.ts): concurrent callers share one pull;
   * a pull is not repeated within `refreshMinIntervalMs`. Resolves true when a pull succeeded (now
   * or recently), false when the pull failed or was rate-limited away (D16: callers fail open).
   * On top of that, every origin has a budget of `refreshBudgetPerMin` pulls per minute over all
   * caller scopes together: a caller who sends a new Authorization value with each call (a new
   * scope each time) cannot make the edge pull once per call (10,000 such calls had become
   * 30,000 origin requests). A refresh past the budget is refused like a rate-limited one.
   * @param scope the caller's scope (single flight and rate limit are per origin and caller, since
   *   the pull carries the caller's authorization); the list is stored under `public` or under this
   *   scope as its `cacheScope` says (caller-scope.ts `listScope`). A private list pulled for the
   *   `public` scope has nowhere to go: it is not stored and the refresh counts as failed.
   */
  refresh(originId: string, scope: string, pull: ToolListPuller): Promise<boolean> {
    return this.refreshes.refresh(originId, scope, pull)
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
