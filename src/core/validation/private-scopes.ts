/**
 * @module core/validation/private-scopes
 * The bound of private tool-list scopes (docs/scope.md "Bounds"): each caller of an origin whose
 * list is private gets its own scope (`u-<digest>`, caller-scope.ts), so without a bound every
 * distinct caller adds records that never go (4,000 callers had made 4,000 records, a 2.5 MB
 * store file, +51 MB RSS). Two bounds hold:
 * - a TTL: every key of a private scope is written with `expirationTtl` = `PRIVATE_SCOPE_TTL_S`
 *   (the store drops it on its own: Workers KV, Redis `EX`, the file store on its next write);
 * - a count per origin, `MAX_PRIVATE_SCOPES`, least recently used first out:
 *   - in memory: the scopes this isolate holds, a CLOCK LRU (bounded-map.ts) touched by every
 *     read; the memory entries of a scope it dropped are no longer served (they age out of the
 *     registry's own bounded memory). A scope this isolate wrote into and dropped is deleted from
 *     the store at once (in the same group commit as the write that displaced it, on the file
 *     store): one edge alone keeps the store at the bound;
 *   - for what one isolate does not know (scopes of an earlier process, of other edges on a
 *     shared Redis, of other Worker isolates): each write into a private scope also writes its marker
 *     (`scopes:<origin>:<scope>`, tool-store.ts, expiring after twice the TTL). After every
 *     {@link sweepEvery} scopes new to this isolate, a sweep lists the origin's markers and removes
 *     the scopes beyond the bound, oldest write first, and the leftovers of scopes whose TTL is
 *     over (a file store's memory, Redis's key index); writes into further new scopes wait for it.
 *     So the store holds at most `MAX_PRIVATE_SCOPES` + {@link sweepEvery} private scopes per
 *     origin, plus the writes into new scopes in flight, per edge writing to it.
 * A store without `list` gets the TTL only. Pure over the {@link KvStore} port.
 */
import type { KvStore, LogRecord } from '../ports'
import { BoundedMap } from './bounded-map'
import { listScopeMarkers, putScopeMarker, scopeKeys, scopeMarkerKey } from './tool-store'

/** Scopes removed by one sweep at most (a Worker invocation may make about 1,000 KV calls; each scope costs a few). */
export const MAX_SWEPT_PER_RUN = 100

/** Sweeps run back to back at most by one trigger, while new scopes keep coming or a run was cut at {@link MAX_SWEPT_PER_RUN}. */
const MAX_RUNS_PER_SWEEP = 5

/** Options of {@link PrivateScopes}. */
export interface PrivateScopeOptions {
  kv: KvStore
  /** `PRIVATE_SCOPE_TTL_S`: seconds a private scope's keys live after their last write (at least 60, Workers KV's minimum). */
  ttlS: number
  /** `MAX_PRIVATE_SCOPES`: private scopes per origin, in memory and in the store (at least 1). */
  maxPerOrigin: number
  /** The clock, epoch ms. */
  now: () => number
  /** Receives `registry.private_scopes_swept` (`origin`, `evicted`, `expired`, `kept`). Must not throw. */
  onEvent?: (record: LogRecord) => void
}

interface HeldScope {
  used?: boolean
  /** True once this isolate wrote into the scope (its marker is in the store). */
  stored?: boolean
}

/** Scopes new to this isolate after which a sweep runs: a tenth of the bound, from 1 to 20. */
export function sweepEvery(maxPerOrigin: number): number {
  return Math.max(1, Math.min(20, Math.ceil(maxPerOrigin / 10)))
}

/** The private scopes of every origin: see the module comment. */
export class PrivateScopes {
  private readonly held = new Map<string, BoundedMap<string, HeldScope>>()
  /** Scopes this isolate stored into for the first time since the origin's last sweep. */
  private readonly fresh = new Map<string, number>()
  private readonly sweeps = new Map<string, Promise<void>>()
  /** Deletions of scopes dropped from memory, per origin (a write into a new scope waits for them to be issued with it). */
  private readonly dropping = new Map<string, Promise<void>>()
  /** `originId\nscope` of the scopes being deleted by {@link drop} (a sweep leaves them to it). */
  private readonly droppingScopes = new Set<string>()
  /** Scopes removed from the store for the count bound, and leftovers of expired scopes removed; sweeps run. */
  readonly stats = { evicted: 0, expired: 0, sweeps: 0 }

  constructor(private readonly opts: PrivateScopeOptions) {}

  /** Options of a `put` into a private scope. */
  get putOptions(): { expirationTtl: number } {
    return { expirationTtl: this.opts.ttlS }
  }

  /** The latest epoch ms a memory entry of a private scope may be held until, from `now`. */
  holdUntil(now: number): number {
    return now + this.opts.ttlS * 1000
  }

  private scopesOf(originId: string): BoundedMap<string, HeldScope> {
    let m = this.held.get(originId)
    if (!m)
      this.held.set(
        originId,
        (m = new BoundedMap(this.opts.maxPerOrigin, (scope, held) => {
          if (held.stored) this.drop(originId, scope)
        }))
      )
    return m
  }

  /** True when this isolate holds `scope` of `originId` (and marks it recently used). */
  isHeld(originId: string, scope: string): boolean {
    const s = this.held.get(originId)?.get(scope)
    if (!s) return false
    s.used = true
    return true
  }

  /** Holds `scope` (a read found it): it becomes the most recently added; may drop the least recently used. */
  touch(originId: string, scope: string): void {
    const m = this.scopesOf(originId)
    const s = m.get(scope)
    if (s) s.used = true
    else m.set(scope, {})
  }

  /**
   * Called with a write into `scope`: the scope becomes this isolate's most recent one (the least
   * recently used one beyond the bound is dropped, and deleted from the store); when the scope is
   * new to this isolate it is counted, and after {@link sweepEvery} new scopes a sweep of the
   * origin runs.
   * @returns when the deletions and the sweep it started are over; never rejects (a failed sweep is tried again later)
   */
  async admit(originId: string, scope: string): Promise<void> {
    const m = this.scopesOf(originId)
    const s = m.get(scope)
    if (s?.stored) {
      s.used = true
      return this.dropping.get(originId)
    }
    if (s) {
      s.used = true
      s.stored = true
    } else m.set(scope, { stored: true })
    const n = (this.fresh.get(originId) ?? 0) + 1
    this.fresh.set(originId, n)
    const dropping = this.dropping.get(originId)
    if (n >= sweepEvery(this.opts.maxPerOrigin)) await this.sweep(originId)
    await dropping
  }

  /** Deletes from the store a scope this isolate wrote into and just dropped from memory. Never rejects. */
  private drop(originId: string, scope: string): void {
    const id = `${originId}\n${scope}`
    this.droppingScopes.add(id)
    const p = (async () => {
      const keys = await scopeKeys(this.opts.kv, originId, scope)
      await Promise.all(keys.map((k) => this.opts.kv.delete(k)))
      await this.opts.kv.delete(scopeMarkerKey(originId, scope))
      this.stats.evicted++
    })()
      .catch(() => {
        // The store failed: the marker stays, and a sweep finds the scope again (the TTL bounds it anyway).
      })
      .finally(() => this.droppingScopes.delete(id))
    const before = this.dropping.get(originId)
    const all = before ? Promise.all([before, p]).then(() => undefined) : p
    this.dropping.set(originId, all)
    void all.finally(() => {
      if (this.dropping.get(originId) === all) this.dropping.delete(originId)
    })
  }

  /** Resolves when every store deletion started so far (drops and sweeps) is over; for tests and shutdown. */
  async settled(): Promise<void> {
    await Promise.all([...this.dropping.values(), ...this.sweeps.values()])
  }

  /**
   * Writes the marker of `scope` after a write into it (its last write, for the store-side LRU).
   * @throws the store's error when the marker cannot be written
   */
  async stored(originId: string, scope: string): Promise<void> {
    await putScopeMarker(this.opts.kv, originId, scope, this.opts.now(), 2 * this.opts.ttlS)
  }

  /**
   * Removes from the store the private scopes of `originId` beyond the bound (oldest write first)
   * and what is left of scopes past their TTL; at most {@link MAX_SWEPT_PER_RUN} per run. One
   * sweep per origin at a time (a second caller shares it). Never throws.
   */
  sweep(originId: string): Promise<void> {
    const running = this.sweeps.get(originId)
    if (running) return running
    const every = sweepEvery(this.opts.maxPerOrigin)
    const p = (async () => {
      // New scopes stored while a run lists and deletes are swept by the next run.
      for (let run = 0; run < MAX_RUNS_PER_SWEEP; run++) {
        this.fresh.set(originId, 0)
        let cut: boolean
        try {
          cut = await this.runSweep(originId)
        } catch {
          // The store failed: the next write into a new scope tries again (the TTL still bounds what stays).
          this.fresh.set(originId, every)
          return
        }
        if (!cut && (this.fresh.get(originId) ?? 0) < every) return
      }
    })().finally(() => this.sweeps.delete(originId))
    this.sweeps.set(originId, p)
    return p
  }

  /** One run of {@link sweep}. @returns true when it was cut at {@link MAX_SWEPT_PER_RUN} (more to remove) */
  private async runSweep(originId: string): Promise<boolean> {
    const kv = this.opts.kv
    if (typeof kv.list !== 'function') return false
    this.stats.sweeps++
    const markers = (await listScopeMarkers(kv, originId)).filter((m) => !this.droppingScopes.has(`${originId}\n${m.scope}`))
    // A marker expires a TTL after its scope's keys: past `expiration - TTL` the keys are gone.
    const nowS = this.opts.now() / 1000
    const expired = markers.filter((m) => m.expiration - this.opts.ttlS <= nowS)
    // Oldest write first. Expirations are whole seconds: within one second, the scopes this isolate
    // holds rank by its own recency (its LRU order; the scope just stored is the newest), the
    // scopes it does not hold before them.
    const rank = new Map<string, number>()
    let r = 0
    for (const k of this.held.get(originId)?.keys() ?? []) rank.set(k, ++r)
    const live = markers.filter((m) => m.expiration - this.opts.ttlS > nowS).sort((a, b) => a.expiration - b.expiration || (rank.get(a.scope) ?? 0) - (rank.get(b.scope) ?? 0))
    const evicted = live.slice(0, Math.max(0, live.length - this.opts.maxPerOrigin))
    const victims = [...evicted.map((m) => ({ ...m, evicted: true })), ...expired.map((m) => ({ ...m, evicted: false }))].slice(0, MAX_SWEPT_PER_RUN)
    if (victims.length === 0) return false
    const held = this.held.get(originId)
    for (const v of victims) held?.delete(v.scope)
    // Every key of every victim is deleted at once (the file store writes them in one group
    // commit), the markers last: a run cut short finds its scopes again.
    const keys = (await Promise.all(victims.map((v) => scopeKeys(kv, originId, v.scope)))).flat()
    await Promise.all(keys.map((k) => kv.delete(k)))
    await Promise.all(victims.map((v) => kv.delete(scopeMarkerKey(originId, v.scope))))
    for (const v of victims) {
      if (v.evicted) this.stats.evicted++
      else this.stats.expired++
    }
    this.event({
      level: 'info',
      msg: 'registry.private_scopes_swept',
      origin: originId,
      evicted: victims.filter((v) => v.evicted).length,
      expired: victims.filter((v) => !v.evicted).length,
      kept: live.length - evicted.length,
    })
    return victims.length === MAX_SWEPT_PER_RUN && markers.length - victims.length > this.opts.maxPerOrigin
  }

  private event(record: LogRecord): void {
    try {
      this.opts.onEvent?.(record)
    } catch {
      // a failing log sink must not fail a sweep
    }
  }
}
