/**
 * @module core/pinning/apply-pins
 * Tool pinning wired into the data path (docs/pinning.md): the per-instance {@link PinBook} (what
 * this edge holds of each origin's pins, one record whatever scope a list comes in, and of the list
 * each (origin, scope) was served; read from and written to the pin store), and the two functions
 * the pipeline calls, each from one place:
 *
 * - {@link holdToolsList}: one relayed `tools/list` response (JSON body, SSE event, batch element,
 *   any page). `off`: untouched. `audit`: untouched, the decision is made in the background
 *   (`defer`), each change logged once and counted. `enforce`: the response is held until its
 *   digests are computed (Web Crypto is async; `DigestMemo` skips tools already hashed), then the
 *   `changed` and `pending` tools are left out and `_meta["io.mcp-edge/catalogDigest"]` is added,
 *   every kept tool relayed as the origin's own bytes; when the pins cannot be read the response
 *   becomes a JSON-RPC -32603 error (fail closed).
 * - {@link gateToolsCall}: one `tools/call` by tool name. Synchronous when the pins are held (a Map
 *   lookup and `decideCall`, no digest: the cost bound is 2 us of CPU per forwarded call); a
 *   promise only on first use of an (origin, scope), after `list_changed`, or for a name the held
 *   list does not know (then one pull of the list, so the edge's usual refresh of an unknown tool
 *   is also a pin decision over the complete list).
 *
 * The access gate (TOOLS_ALLOW/TOOLS_DENY) runs first, then this one. Sits below the exchange in
 * the core's layers, so it takes what it needs as plain values (origin id, scope, era) and
 * structural ports ({@link PinBookOptions}). Never throws to the pipeline.
 */
import { errorText, responseText, type RawId } from '../jsonrpc/jsonrpc'
import { isModern, type ProtocolVersion } from '../jsonrpc/versions'
import { scanJsonText, type JsonScan } from '../jsonrpc/json-scan'
import { DigestMemo, type ToolDigest } from './tool-digest'
import { catalogDigest, definitionsOf, evaluatePins, servedTools, type ServedTool, type SetEvaluation } from './pin-state'
import { decideCall, denialText, filterToolsListResult, type CallPinVerdict, type PinDenial, type PinDenialReason, type PinningMode, type PinView } from './pin-filter'
import { scanToolDefinition } from './advisory-scan'
import {
  parsePinKey,
  pinSetOf,
  readPinRecordReusing,
  readServedInstructions,
  readServedSnapshot,
  storedFields,
  writeServedInstructions,
  type ServedInstructions,
  type DecodedPinText,
  type ServedSnapshot,
  updatePinRecord,
  writeServedSnapshot,
  type PinKv,
  type PinRecord,
  type StoredPin,
} from './pin-store'

/** The public scope's name (core/validation caller scopes). */
const PUBLIC = 'public'

/**
 * Milliseconds a held pin record is used without asking the store again, on stores that cannot
 * say when another process changed it (file, Workers KV); Redis tells at once (its change channel).
 * The reload runs in the background: a call never waits for it.
 */
export const PIN_RELOAD_MS = 10_000
/** After a failed read of the pins, how long (ms) calls are refused before the store is asked again. */
export const PIN_RETRY_MS = 1_000
/** Least time (ms) between two pulls of a list for calls to names the held list does not know. */
export const PIN_PULL_MIN_MS = 1_000
/**
 * (origin, scope) pairs one instance holds at most (each caller with a private list is a scope of
 * its own, and an origin's private ones are also bounded by `MAX_PRIVATE_SCOPES`): past it the
 * least recently created is dropped and read from the store again when needed.
 */
export const MAX_PIN_SCOPES = 10_000
/** Distinct (tool, state, digest) changes remembered per (origin, scope) for logging each change once. */
const MAX_LOGGED = 10_000

/** The metrics port's pin series (core/ports.ts `EdgeMetrics`); optional, as embedders' ports may lack them. */
export interface PinMetrics {
  /** `mcp_edge_tool_pins{origin,state}`: names per state, summed over the scopes this instance holds. */
  setToolPins?(origin: string, state: 'approved' | 'changed' | 'pending' | 'removed', n: number): void
  /** `mcp_edge_tool_pin_blocks_total{origin,reason}`: one refused call or list. */
  countPinBlock?(origin: string, reason: string): void
}

/** What a {@link PinBook} needs. */
export interface PinBookOptions {
  /** The store (the tool schemas' namespace); undefined when it is missing (reads then fail: enforce fails closed). */
  kv: PinKv | undefined
  mode: PinningMode
  log: (record: Record<string, unknown>) => void
  metrics: PinMetrics
  /** Runs background work (Workers `waitUntil`). */
  defer: (p: Promise<unknown>) => void
  now?: () => number
  /**
   * The store's propagation bound in ms: `effectiveFrom` = `approvedAt` + this. Default: 1 s with
   * a change channel (Redis), else {@link PIN_RELOAD_MS}; the Workers entry adds Workers KV's 60 s.
   */
  propagationMs?: number
  /**
   * `PRIVATE_SCOPE_TTL_S`: the served snapshot of a private scope (`pinserved:<origin>:u-...`) is
   * written with this `expirationTtl`, like the scope's tool records (default 3600).
   */
  privateScopeTtlS?: number
  /** `MAX_PRIVATE_SCOPES`: private scopes of one origin this instance holds in memory at most (default 1000). */
  maxPrivateScopes?: number
}

/** Fetches the origin's whole tool list (every page) for one caller. */
export type PinListPull = () => Promise<{ tools: unknown[] }>

interface ScopeState {
  /** The origin's pin record as this scope last read it (the pins are the origin's, one record for every scope). */
  record: PinRecord | null
  /** Epoch ms of the last read (or write) of {@link record}. */
  readAt: number
  /** The last complete list served, as served, and its digests. */
  served: unknown[] | null
  servedTools: ServedTool[] | null
  /** The decision for calls (over the last complete list), or the read failure. */
  view: PinView | null
  failedAt: number
  /** `list_changed` seen: the next call re-reads the list first. */
  recheck: boolean
  pulledAt: number
  /** name -> `state|served digest` last logged. */
  logged: Map<string, string>
  /** Digests joined, of the snapshot last written. */
  snapshotSig: string | null
  counts: Record<'approved' | 'changed' | 'pending' | 'removed', number>
  loading: Promise<void> | null
  /** Approved definitions compiled for validation, by name (the caller's compile, tagged with its digest). */
  compiled: Map<string, { digest: ToolDigest; value: unknown }>
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A record with neither a baseline nor a tool pin: what a store that lost the pins answers (its tools have no baseline). */
function isEmptyRecord(r: PinRecord): boolean {
  return !r.baseline && r.pins.size === 0
}

/** A record that holds nothing at all: no baseline, no tool pin, no instructions pin. */
function holdsNothing(r: PinRecord): boolean {
  return isEmptyRecord(r) && r.instructions === undefined
}

/**
 * The pins this edge instance holds, on the data path. The pins are the origin's (one record,
 * `pins:<origin>:public`), whatever scope a list comes in; what is held per (origin, scope) is the
 * list that scope was served and the decision over it. The operator's actions (approve, reject,
 * manifests, the admin API's views) are pin-operations.ts, over the public methods of this class
 * ({@link PinBook.readRecord}, {@link PinBook.updateRecord}, {@link PinBook.evaluate}, ...).
 */
export class PinBook {
  readonly mode: PinningMode
  private readonly states = new Map<string, ScopeState>()
  /** The private scopes held, per origin, oldest first (bounded by `maxPrivateScopes`). */
  private readonly privateHeld = new Map<string, Set<string>>()
  /** The last pin record of each origin this instance read or wrote: what it keeps enforcing if the store comes back without it. */
  private readonly originRecords = new Map<string, PinRecord>()
  /** Per origin, the last stored text of its record and the record decoded from it (decoded again only when the text changes). */
  private readonly decodedRecords = new Map<string, DecodedPinText>()
  private readonly reloading = new Set<string>()
  /** Per origin, name -> digest of the definitions first sight did not approve because the advisory scan flags them. */
  private readonly firstSightFlagged = new Map<string, Map<string, ToolDigest>>()
  private readonly memo = new DigestMemo()
  /**
   * Per origin, what the instructions step (instructions-pin.ts) last logged and last wrote as served
   * (each a `state|served digest|approved digest` signature), so each change is logged and kept once.
   */
  readonly instructionsSeen = new Map<string, { logged?: string; written?: string }>()
  private readonly now: () => number
  /** The store's propagation bound in ms ({@link PinBookOptions.propagationMs}): `effectiveFrom` = `approvedAt` + this. */
  readonly propagationMs: number
  private readonly maxPrivate: number

  constructor(private readonly opts: PinBookOptions) {
    this.mode = opts.mode
    this.now = opts.now ?? Date.now
    this.propagationMs = opts.propagationMs ?? (opts.kv?.subscribe ? 1_000 : PIN_RELOAD_MS)
    this.maxPrivate = Math.max(1, opts.maxPrivateScopes ?? 1_000)
    if (this.mode !== 'off') opts.kv?.subscribe?.((key) => this.changedElsewhere(key))
  }

  private key(originId: string, scope: string): string {
    return originId + '\u0000' + scope
  }

  private state(originId: string, scope: string): ScopeState {
    const k = this.key(originId, scope)
    let s = this.states.get(k)
    if (!s) {
      s = {
        record: null,
        readAt: 0,
        served: null,
        servedTools: null,
        view: null,
        failedAt: 0,
        recheck: false,
        pulledAt: 0,
        logged: new Map(),
        snapshotSig: null,
        counts: { approved: 0, changed: 0, pending: 0, removed: 0 },
        loading: null,
        compiled: new Map(),
      }
      if (this.states.size >= MAX_PIN_SCOPES) this.forget(this.states.keys().next().value as string)
      if (scope !== PUBLIC) {
        let held = this.privateHeld.get(originId)
        if (!held) this.privateHeld.set(originId, (held = new Set()))
        // A private scope is one caller's: as many as the schema store keeps, oldest out first.
        if (held.size >= this.maxPrivate) this.forget(held.values().next().value as string)
        held.add(k)
      }
      this.states.set(k, s)
    }
    return s
  }

  /** Drops what this instance holds of one (origin, scope) (it is read from the store again when needed). */
  private forget(k: string): void {
    this.states.delete(k)
    const at = k.indexOf('\u0000')
    this.privateHeld.get(k.slice(0, at))?.delete(k)
  }

  /** The (origin, scope) keys this instance holds of one origin. */
  private keysOf(originId: string): string[] {
    const prefix = originId + '\u0000'
    return [...this.states.keys()].filter((k) => k.startsWith(prefix))
  }

  /** Another edge changed a pin record (Redis change channel): it is read again now; null: every record is. */
  private changedElsewhere(key: string | null): void {
    if (key === null) {
      for (const o of new Set([...this.states.keys()].map((k) => k.slice(0, k.indexOf('\u0000'))))) this.reload(o)
      return
    }
    const p = parsePinKey(key)
    if (p && this.keysOf(p.originId).length > 0) this.reload(p.originId)
  }

  /** Reads the origin's record again in the background and decides every held list of the origin with it. */
  private reload(originId: string): void {
    if (this.reloading.has(originId)) return
    this.reloading.add(originId)
    this.opts.defer(
      this.readRecord(originId)
        .then(
          (r) => this.adopt(originId, r),
          () => {
            // One line for the origin's record, however many scopes of it this instance holds.
            this.keysOf(originId).forEach((k, i) => this.failed(originId, k.slice(originId.length + 1), i > 0))
          }
        )
        .finally(() => this.reloading.delete(originId))
    )
  }

  /**
   * Reads the origin's pins (`pins:<origin>:public`; the pins are the origin's whatever scope a list
   * comes in). A store that answers no pins at all while this instance holds some has lost them
   * (Redis restarted empty, FLUSHDB, a failover to an empty replica): the held record stays in
   * force, is written back, and a `warn` line says so; a store that lost the pins never sets a
   * new baseline from what the origin serves now (that would re-trust what the edge refused).
   * @throws the store's errors; PinRecordUnreadableError
   */
  async readRecord(originId: string): Promise<PinRecord> {
    const kv = this.opts.kv
    if (!kv) throw new Error('no store')
    const decoded = await readPinRecordReusing(
      kv,
      originId,
      PUBLIC,
      () => this.decodedRecords.get(originId),
      (d) => this.decodedRecords.set(originId, d)
    )
    const r = decoded.record
    const held = this.originRecords.get(originId)
    if (!isEmptyRecord(r) && held?.baseline && r.baseline) {
      // Once an origin has a baseline only an operator or a manifest adds or replaces a pin, so a
      // first-use pin newer than the baseline this instance holds, for a name it holds no such pin
      // for, was set by another edge that found the store empty (FLUSHDB, then a restart or a new
      // replica): keep what is held for those names. The older baseline wins, so the edge that set
      // the newer one adopts the restored record at its next read instead of restoring its own.
      const heldTofu = [...held.pins.values()].filter((p) => p.source === 'tofu').map((p) => p.approvedAt)
      const baselineAt = heldTofu.length > 0 ? heldTofu.reduce((a, b) => (a < b ? a : b)) : null
      const rebased = [...r.pins]
        .filter(([name, p]) => p.source === 'tofu' && held.pins.get(name)?.digest !== p.digest && baselineAt !== null && p.approvedAt > baselineAt)
        .map(([name]) => name)
      if (rebased.length > 0) {
        const fixed = (now: PinRecord): PinRecord => {
          const pins = new Map(now.pins)
          for (const name of rebased) {
            const mine = held.pins.get(name)
            if (pins.get(name)?.source !== 'tofu') continue
            if (mine) pins.set(name, mine)
            else pins.delete(name)
          }
          return { ...now, baseline: true, pins }
        }
        const merged = fixed(r)
        let rewritten = true
        try {
          await updatePinRecord(kv, originId, PUBLIC, fixed)
        } catch {
          rewritten = false
        }
        this.opts.log({ level: 'warn', msg: 'pin.store_rebaselined', origin: originId, tools: rebased, rewritten, mode: this.mode })
        this.originRecords.set(originId, merged)
        return merged
      }
    }
    // Lost: the tool pins (none answered while this instance holds some), or everything (the
    // instructions pin of an origin with no tool pins). A record holding only instructions is
    // the store's own when this instance holds no tool pins (an operator's approval elsewhere).
    const lost = (now: PinRecord, h: PinRecord) => (isEmptyRecord(now) && !isEmptyRecord(h)) || (h.instructions !== undefined && holdsNothing(now))
    if (!held || !lost(r, held)) {
      this.originRecords.set(originId, r)
      return r
    }
    let rewritten = true
    try {
      await updatePinRecord(kv, originId, PUBLIC, (now) => (lost(now, held) ? held : null))
    } catch {
      rewritten = false
    }
    this.opts.log({ level: 'warn', msg: 'pin.store_lost', origin: originId, pins: held.pins.size, rewritten, mode: this.mode })
    return held
  }

  /** The origin's record read or written: held, and every held list of the origin decided with it again (no hashing). */
  private adopt(originId: string, r: PinRecord): void {
    this.originRecords.set(originId, r)
    for (const k of this.keysOf(originId)) {
      const scope = k.slice(originId.length + 1)
      const s = this.states.get(k)!
      s.record = r
      s.readAt = this.now()
      s.compiled.clear()
      if (s.servedTools) {
        const ev = this.evaluate(originId, r, s.servedTools, true)
        // The catalog digest is only for lists; calls need the decision.
        s.view = { ok: true, evaluation: ev, catalogDigest: null }
        this.report(originId, scope, ev)
      } else if (!s.view || !s.view.ok) {
        s.view = { ok: true, evaluation: this.evaluate(originId, r, [], false), catalogDigest: null }
      }
    }
  }

  /** The pins of (origin, scope) could not be read: calls are refused for {@link PIN_RETRY_MS} (enforce); one error line unless `quiet`. */
  private failed(originId: string, scope: string, quiet = false): void {
    const s = this.state(originId, scope)
    s.view = { ok: false }
    s.failedAt = this.now()
    if (!quiet) this.opts.log({ level: 'error', msg: 'pin.store_unavailable', origin: originId, scope: scope === PUBLIC ? 'public' : 'private', mode: this.mode })
  }

  /** Runs background work (the entry's `defer`). */
  defer(p: Promise<unknown>): void {
    this.opts.defer(p)
  }

  /** Writes one line to the edge's log (the entry's `log`). */
  log(record: Record<string, unknown>): void {
    this.opts.log(record)
  }

  /** The time now as RFC 3339 UTC (the book's clock). */
  nowIso(): string {
    return iso(this.now())
  }

  /** Digests the tools of a list (pin-state.ts `servedTools`, with this book's memo of digests already computed). */
  servedOf(tools: readonly unknown[]): Promise<ServedTool[]> {
    return servedTools(tools, this.memo)
  }

  /** The last complete list served in (origin, scope) as the store holds it; null when none. @throws the store's errors (also when there is no store) */
  async readServed(originId: string, scope: string): Promise<ServedSnapshot | null> {
    const kv = this.opts.kv
    if (!kv) throw new Error('no store')
    return readServedSnapshot(kv, originId, scope)
  }

  /** The last server instructions the origin served, as the store holds them; null when none. @throws the store's errors (also when there is no store) */
  async readServedInstructions(originId: string): Promise<ServedInstructions | null> {
    const kv = this.opts.kv
    if (!kv) throw new Error('no store')
    return readServedInstructions(kv, originId)
  }

  /** Keeps the server instructions the origin serves now, for the operator (pin-store.ts `pininstructions:`). @throws the store's errors (also when there is no store) */
  async writeServedInstructions(originId: string, served: ServedInstructions): Promise<void> {
    const kv = this.opts.kv
    if (!kv) throw new Error('no store')
    await writeServedInstructions(kv, originId, served)
  }

  /**
   * Changes the origin's pin record (the operator's writes: an approval, a rejection, a manifest):
   * reads it first (so a store that lost the pins gets them back, {@link readRecord}), then
   * read-change-write in the store (pin-store.ts `updatePinRecord`), then holds the record written
   * and decides every held list of the origin with it.
   * @returns the record written
   * @throws the store's errors (also when there is no store); PinRecordUnreadableError
   */
  async updateRecord(originId: string, change: (r: PinRecord) => PinRecord | null): Promise<PinRecord> {
    await this.readRecord(originId)
    const kv = this.opts.kv
    if (!kv) throw new Error('no store')
    const r = await updatePinRecord(kv, originId, PUBLIC, change)
    this.adopt(originId, r)
    return r
  }

  /** `notifications/tools/list_changed` from an origin: the next call of each of its scopes re-checks the list first. */
  listChanged(originId: string): void {
    if (this.mode === 'off') return
    const prefix = originId + '\u0000'
    for (const [k, s] of this.states) if (k.startsWith(prefix)) s.recheck = true
  }

  /**
   * Decides one served list (a page, or the complete list) of (origin, scope) against the origin's
   * pins: digests it, reads the pins, sets the origin's baseline on first sight of a complete list
   * when the origin has none (trust on first use, whatever the list's scope; a definition the
   * advisory scan flags is left `pending`), keeps the complete list for calls and for the admin API
   * (the served snapshot of the scope; a private scope's expires like its tool records), logs each
   * change once. A list never sets a pin for a name the origin already has one for.
   * @returns the view to filter this list with; `{ ok: false }` when the pins cannot be read
   */
  async onList(originId: string, scope: string, tools: readonly unknown[], complete: boolean, fromSnapshot = false): Promise<PinView> {
    const s = this.state(originId, scope)
    const served = await servedTools(tools, this.memo)
    let record: PinRecord
    try {
      record = await this.readRecord(originId)
    } catch {
      this.failed(originId, scope)
      return { ok: false }
    }
    const nowIso = iso(this.now())
    if (complete && isEmptyRecord(record)) this.flagged(originId, scope, tools, served)
    let ev = this.evaluate(originId, record, served, complete)
    if (ev.establishesBaseline) {
      const defs = definitionsOf(tools)
      const tofu = new Map<string, StoredPin>()
      for (const [name, pin] of ev.newPins) {
        const def = defs.get(name)
        tofu.set(name, { ...pin, effectiveFrom: iso(Date.parse(pin.approvedAt) + this.propagationMs), fields: storedFields(await this.memo.fields(def)), definition: def ?? null })
      }
      try {
        record = await updatePinRecord(this.opts.kv!, originId, PUBLIC, (r) => (r.baseline || r.pins.size > 0 ? null : { ...r, baseline: true, pins: tofu }))
      } catch {
        // The baseline holds in memory; the next complete list writes it again.
        record = { ...record, baseline: true, pins: tofu }
        this.opts.log({ level: 'warn', msg: 'pin.baseline_not_stored', origin: originId, scope: scope === PUBLIC ? 'public' : 'private' })
      }
      this.originRecords.set(originId, record)
      // Another edge may have set the baseline first: decide with what the store holds.
      ev = this.evaluate(originId, record, served, complete)
      if (ev.newPins.size === 0 && record.pins.size > 0)
        this.opts.log({ level: 'info', msg: 'pin.baseline', origin: originId, scope: scope === PUBLIC ? 'public' : 'private', tools: record.pins.size })
    }
    s.record = record
    s.readAt = this.now()
    s.compiled.clear()
    const view: PinView = { ok: true, evaluation: ev, catalogDigest: await catalogDigest(ev.approvedSet) }
    if (complete) {
      s.served = [...tools]
      s.servedTools = served
      s.view = view
      s.recheck = false
      const sig = served.map((t) => `${t.name}\u0000${t.digest ?? '-'}`).join('\n')
      // A private scope's snapshot is written only when it serves something to review (a changed
      // or pending definition, which an operator approves where that caller's list is shown): a
      // list the origin's pins approve needs none (calls fall back on the pins), so callers of an
      // origin whose private lists hold approved tools leave no per-caller pin record at all.
      const toReview = scope === PUBLIC || [...ev.tools.values()].some((e) => e.state !== 'approved')
      if (!fromSnapshot && toReview && sig !== s.snapshotSig && this.opts.kv) {
        try {
          // A private scope's snapshot is one caller's: it expires with the scope's tool records (and goes with them).
          await writeServedSnapshot(
            this.opts.kv,
            originId,
            scope,
            { at: nowIso, tools: [...tools] },
            scope === PUBLIC ? undefined : { expirationTtl: this.opts.privateScopeTtlS ?? 3_600 }
          )
          s.snapshotSig = sig
        } catch {
          // the next complete list writes it
        }
      } else if (fromSnapshot) s.snapshotSig = sig
    } else {
      // One page: calls are decided on the last complete list with this page's definitions in
      // place of the ones it names (a page that reveals a change holds the calls at once).
      const onPage = new Set(served.map((t) => t.name))
      const merged = s.servedTools ? [...s.servedTools.filter((t) => !onPage.has(t.name)), ...served] : served
      s.view = { ok: true, evaluation: this.evaluate(originId, record, merged, s.servedTools !== null && !isEmptyRecord(record)), catalogDigest: null }
    }
    this.report(originId, scope, ev)
    return view
  }

  /** {@link evaluatePins} over the origin's pins, with the definitions first sight did not approve (flagged) named. */
  evaluate(originId: string, record: PinRecord, served: readonly ServedTool[], complete: boolean): SetEvaluation {
    const flagged = this.firstSightFlagged.get(originId)
    let untrusted: Set<string> | undefined
    if (flagged) for (const t of served) if (t.digest !== null && flagged.get(t.name) === t.digest) (untrusted ??= new Set()).add(t.name)
    return evaluatePins(pinSetOf(record), served, { complete, now: iso(this.now()), ...(untrusted ? { untrusted } : {}) })
  }

  /**
   * Records the definitions of a first-seen list (the origin has no pins) that the advisory scan
   * flags (advisory-scan.ts): first sight does not approve them. One `warn` line per such tool,
   * naming the finding kinds and where they are (never the definition's text).
   */
  private flagged(originId: string, scope: string, tools: readonly unknown[], served: readonly ServedTool[]): void {
    const digests = new Map(served.map((t) => [t.name, t.digest] as const))
    for (const [name, def] of definitionsOf(tools)) {
      const findings = scanToolDefinition(def).findings
      const digest = digests.get(name)
      if (findings.length === 0 || !digest) continue
      let m = this.firstSightFlagged.get(originId)
      if (!m) this.firstSightFlagged.set(originId, (m = new Map()))
      if (m.size < MAX_LOGGED) m.set(name, digest)
      this.opts.log({
        level: 'warn',
        msg: 'pin.first_sight_flagged',
        origin: originId,
        scope: scope === PUBLIC ? 'public' : 'private',
        tool: name.length > 64 ? name.slice(0, 64) : name,
        findings: findings.slice(0, 10).map((f) => `${f.kind} at ${f.pointer}`),
        mode: this.mode,
      })
    }
  }

  /** One log line per change (tool, state, served digest), and the gauge. */
  private report(originId: string, scope: string, ev: SetEvaluation): void {
    const s = this.state(originId, scope)
    const line = (tool: string, state: string, approved: ToolDigest | null, served: ToolDigest | null) => {
      const sig = `${state}|${served ?? '-'}|${approved ?? '-'}`
      if (s.logged.get(tool) === sig) return
      const was = s.logged.get(tool)
      if (state === 'approved' && was === undefined) return void (s.logged.size < MAX_LOGGED && s.logged.set(tool, sig))
      if (s.logged.size >= MAX_LOGGED && was === undefined) return
      s.logged.set(tool, sig)
      this.opts.log({
        level: state === 'approved' ? 'info' : 'warn',
        msg: 'pin.change',
        origin: originId,
        scope: scope === PUBLIC ? 'public' : 'private',
        tool: tool.length > 64 ? tool.slice(0, 64) : tool,
        state,
        approvedDigest: approved,
        servedDigest: served,
        mode: this.mode,
      })
    }
    for (const e of ev.tools.values()) line(e.name, e.state, e.pin?.digest ?? null, e.served)
    for (const name of ev.removed) line(name, 'removed', ev.approvedSet.get(name)?.digest ?? null, null)
    if (ev.removed.length > 0 || ev.tools.size > 0) {
      s.counts = { ...ev.counts }
      this.gauge(originId)
    }
  }

  private gauge(originId: string): void {
    const set = this.opts.metrics.setToolPins
    if (!set) return
    const sum = { approved: 0, changed: 0, pending: 0, removed: 0 }
    const prefix = originId + '\u0000'
    for (const [k, s] of this.states) if (k.startsWith(prefix)) for (const st of ['approved', 'changed', 'pending', 'removed'] as const) sum[st] += s.counts[st]
    for (const st of ['approved', 'changed', 'pending', 'removed'] as const) set.call(this.opts.metrics, originId, st, sum[st])
  }

  /** Counts one refused call or list (`mcp_edge_tool_pin_blocks_total`). */
  countBlock(originId: string, reason: string): void {
    this.opts.metrics.countPinBlock?.call(this.opts.metrics, originId, reason)
  }

  /** The held state for a caller: its own private scope when this edge holds one, else `public`. */
  private held(originId: string, scope: string): ScopeState | undefined {
    if (scope !== PUBLIC) {
      const own = this.states.get(this.key(originId, scope))
      if (own) return own
    }
    return this.states.get(this.key(originId, PUBLIC))
  }

  /**
   * The verdict on a call to `name` (pin-filter.ts `decideCall`). Synchronous when the pins are
   * held and current; else a promise (first use: the pins and the served snapshot are read from
   * the store; after `list_changed`: the list is pulled; a name the held list does not know: one
   * pull, at most every {@link PIN_PULL_MIN_MS}).
   */
  gate(originId: string, scope: string, name: string, pull: PinListPull): CallPinVerdict | Promise<CallPinVerdict> {
    if (this.mode === 'off') return { kind: 'allow' }
    const s = this.held(originId, scope)
    if (s && s.view && !s.recheck && (s.view.ok || this.now() - s.failedAt < PIN_RETRY_MS)) {
      const v = decideCall(name, s.view, this.mode)
      if (v.kind !== 'unknown') {
        if (!this.opts.kv?.subscribe && this.now() - s.readAt > PIN_RELOAD_MS) this.reload(originId)
        return v
      }
    }
    return this.gateSlow(originId, s && s !== this.states.get(this.key(originId, PUBLIC)) ? scope : PUBLIC, name, pull)
  }

  private async gateSlow(originId: string, scope: string, name: string, pull: PinListPull): Promise<CallPinVerdict> {
    const s = this.state(originId, scope)
    let pulled = false
    const pullNow = async () => {
      pulled = true
      s.pulledAt = this.now()
      try {
        const list = await pull()
        await this.onList(originId, scope, list.tools, true)
        return true
      } catch {
        return false
      }
    }
    if (s.recheck) {
      if (!(await pullNow())) s.recheck = false
    }
    if (!s.view || (!s.view.ok && this.now() - s.failedAt >= PIN_RETRY_MS) || (s.view.ok && s.record === null)) {
      s.loading ??= this.load(originId, scope).finally(() => (s.loading = null))
      await s.loading
    }
    if (!s.view) return this.mode === 'enforce' ? decideCall(name, { ok: false }, this.mode) : { kind: 'allow', state: 'unavailable' }
    let v = decideCall(name, s.view, this.mode)
    if (v.kind === 'unknown' && !pulled && this.now() - s.pulledAt >= PIN_PULL_MIN_MS) {
      await pullNow()
      v = decideCall(name, s.view, this.mode)
    }
    return v
  }

  /** First use on this instance: the pins and the last served list, from the store. */
  private async load(originId: string, scope: string): Promise<void> {
    const kv = this.opts.kv
    let snapshot = null
    try {
      if (!kv) throw new Error('no store')
      snapshot = await readServedSnapshot(kv, originId, scope)
    } catch {
      return this.failed(originId, scope)
    }
    if (snapshot) await this.onList(originId, scope, snapshot.tools, true, true)
    else {
      try {
        const r = await this.readRecord(originId)
        this.state(originId, scope)
        this.adopt(originId, r)
      } catch {
        this.failed(originId, scope)
      }
    }
  }

  /**
   * The approved definition of `name` for validation under `enforce`, compiled once by `compile`
   * and kept per digest: the pin's stored definition, or (a manifest pin) the served one when it
   * has the approved digest. Undefined when none is held.
   */
  approvedTool<T>(originId: string, scope: string, name: string, digest: ToolDigest, compile: (definition: Record<string, unknown>) => T): T | undefined {
    const s = this.held(originId, scope)
    if (!s) return undefined
    const hit = s.compiled.get(name)
    if (hit && hit.digest === digest) return hit.value as T
    const pin = s.record?.pins.get(name)
    if (!pin || pin.digest !== digest) return undefined
    let def = pin.definition
    if (!isRecord(def) && s.servedTools && s.served) {
      const i = s.servedTools.findIndex((t) => t.name === name && t.digest === digest)
      if (i >= 0) def = definitionsOf(s.served).get(name)
    }
    if (!isRecord(def)) return undefined
    const value = compile(def)
    s.compiled.set(name, { digest, value })
    return value
  }
}

// ------------------------------------------------------------ tools/list

/** One relayed tools/list response, as {@link holdToolsList} takes it. */
export interface ListReply {
  originId: string
  /** The scope the list belongs to (its `cacheScope`, else the caller's); null when it has none (a private list of an unknown caller). */
  scope: string | null
  id: RawId
  /** The request carried a `cursor` (a later page): never complete. */
  paged: boolean
  /** Pulls the whole list (every page), for a page of an (origin, scope) that has no baseline yet (`enforce`). */
  pull?: PinListPull
  /** The parsed response and its exact text. */
  msg: Record<string, unknown>
  source: string
  /**
   * Records one block of this list (`list-omitted`, or the reason it was refused): the edge's one
   * denial recorder (guards/denial.ts); unset: {@link PinBook.countBlock}.
   */
  block?: (reason: PinDenialReason | 'list-omitted') => void
}

/**
 * The text to relay for one tools/list response (module comment): the origin's text as it came
 * (`off`, `audit`, an error response), or under `enforce` a promise of the filtered text. Never rejects.
 */
export function holdToolsList(book: PinBook, r: ListReply): string | Promise<string> {
  if (book.mode === 'off') return r.source
  const result = r.msg.result
  if ('error' in r.msg && r.msg.error !== undefined && r.msg.error !== null) return r.source
  const tools = isRecord(result) && Array.isArray(result.tools) ? (result.tools as unknown[]) : null
  const complete = !r.paged && isRecord(result) && (result.nextCursor === undefined || result.nextCursor === null)
  if (book.mode === 'audit') {
    if (tools && r.scope !== null) book.defer(book.onList(r.originId, r.scope, tools, complete).catch(() => undefined))
    return r.source
  }
  return enforceList(book, r, result, tools, complete).catch(() => refusedText(book, r, { ok: false }, result))
}

async function enforceList(book: PinBook, r: ListReply, result: unknown, tools: unknown[] | null, complete: boolean): Promise<string> {
  let view: PinView =
    tools && r.scope !== null
      ? await book.onList(r.originId, r.scope, tools, complete)
      : r.scope === null
        ? { ok: false }
        : { ok: true, evaluation: emptyEvaluation(), catalogDigest: null }
  // One page of an (origin, scope) with no baseline: only a complete list may set it, so the
  // whole list is pulled once, and this page is decided against the baseline that gives.
  if (tools && r.scope !== null && r.pull && view.ok && [...view.evaluation.tools.values()].some((e) => e.reason === 'awaiting-baseline')) {
    try {
      await book.onList(r.originId, r.scope, (await r.pull()).tools, true)
      view = await book.onList(r.originId, r.scope, tools, false)
    } catch {
      // the pull failed: this page stays awaiting its baseline (its tools are left out)
    }
  }
  const out = filterToolsListResult(result, view, 'enforce')
  if (out.kind === 'unchanged') return r.source
  if (out.kind === 'refused') return refusedText(book, r, view, result)
  if (out.dropped.length > 0) blockList(book, r, 'list-omitted')
  return spliceList(r, out.result, out.dropped.length + out.droppedUnnamed === 0) ?? JSON.stringify({ ...r.msg, result: out.result })
}

function blockList(book: PinBook, r: ListReply, reason: PinDenialReason | 'list-omitted'): void {
  if (r.block) r.block(reason)
  else book.countBlock(r.originId, reason)
}

function emptyEvaluation(): SetEvaluation {
  return evaluatePins({ baseline: false, pins: new Map() }, [], { complete: false, now: new Date(0).toISOString() })
}

function refusedText(book: PinBook, r: ListReply, view: PinView, result: unknown): string {
  const out = filterToolsListResult(result, view, 'enforce')
  const d: PinDenial | undefined = out.kind === 'refused' ? out.denial : undefined
  const denial = d ?? (filterToolsListResult(result, { ok: false }, 'enforce') as { denial: PinDenial }).denial
  blockList(book, r, denial.reason)
  return errorText(r.id, { code: denial.rpcCode, message: denialText(denial), data: denialData(denial) })
}

/**
 * The filtered response as the origin's text with two edits: the `tools` array holds the kept
 * entries' own bytes, and `_meta` is set or added. Null when the text cannot be edited safely (a
 * member name repeated, or spans not found): the caller serializes instead.
 * @param keptAll every tool kept: the `tools` array is left as it came
 */
function spliceList(r: ListReply, filtered: Record<string, unknown>, keptAll: boolean): string | null {
  const top = scanJsonText(r.source)
  const el = top.elements[0]
  const rs = el?.members?.get('result')
  if (!el || el.duplicateNames || !rs) return null
  const resultText = r.source.slice(rs.start, rs.end)
  const inner: JsonScan = scanJsonText(resultText)
  const res = inner.elements[0]
  const ts = res?.members?.get('tools')
  if (!res || res.duplicateNames || !ts) return null
  const edits: { start: number; end: number; text: string }[] = []
  if (!keptAll) {
    const arrText = resultText.slice(ts.start, ts.end)
    const arr = scanJsonText(arrText)
    const origTools = (r.msg.result as { tools: unknown[] }).tools
    if (!arr.isArray || arr.elements.length !== origTools.length) return null
    const keep = new Set(filtered.tools as unknown[])
    const parts: string[] = []
    origTools.forEach((t, i) => {
      if (keep.has(t)) parts.push(arrText.slice(arr.elements[i]!.start, arr.elements[i]!.end))
    })
    edits.push({ start: ts.start, end: ts.end, text: `[${parts.join(',')}]` })
  }
  const meta = filtered._meta
  if (meta !== undefined && meta !== (r.msg.result as Record<string, unknown>)._meta) {
    const ms = res.members!.get('_meta')
    if (ms) edits.push({ start: ms.start, end: ms.end, text: JSON.stringify(meta) })
    else {
      const close = resultText.lastIndexOf('}')
      if (close < 0) return null
      edits.push({ start: close, end: close, text: `,"_meta":${JSON.stringify(meta)}` })
    }
  }
  let text = resultText
  for (const e of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end)
  return r.source.slice(0, rs.start) + text + r.source.slice(rs.end)
}

/** The `data` of a denial's JSON-RPC error (edge-written fields only). */
function denialData(d: PinDenial): Record<string, unknown> {
  const data: Record<string, unknown> = { code: d.code, class: d.class, reason: d.reason }
  if (d.tool !== undefined) data.tool = d.tool
  if (d.servedDigest !== undefined) data.servedDigest = d.servedDigest
  if (d.approvedDigest !== undefined) data.approvedDigest = d.approvedDigest
  return data
}

// ------------------------------------------------------------ tools/call

/** One tools/call, as {@link gateToolsCall} takes it. */
export interface CallToGate {
  originId: string
  scope: string
  era: ProtocolVersion
  id: RawId
  /** The body's `params.name` (absent or not a string: nothing to gate; validation answers it). */
  name: unknown
  /** The 2026-07-28 `Mcp-Name` header, when sent. */
  headerName?: string | null
  /**
   * A denial is answered as an `isError` result (true) or a JSON-RPC error: the rule of invalid
   * arguments (`INVALID_ARGS`, the era, task augmentation), decided by the pin guard
   * (guards/denial.ts `denialAnswerKind`).
   */
  asToolError: boolean
  pull: PinListPull
}

/**
 * The gate's outcome: go on (with the approved pin's digest under enforce), or answer with `text`;
 * `blocked` is the reason the caller records (`mcp_edge_tool_pin_blocks_total`, guards/denial.ts).
 */
export type CallGate =
  | { kind: 'pass'; approvedDigest?: ToolDigest }
  | { kind: 'answer'; id: RawId; tool: string; text: string; blocked: PinDenialReason | 'unknown'; code?: number; isError?: boolean; unknownTool?: boolean }

const PASS: CallGate = { kind: 'pass' }

/**
 * Gates one tools/call (module comment). Under `enforce` a call to a `changed` or `pending` tool,
 * or any call while the pins cannot be read, is answered here with the denial text: an `isError`
 * result from 2025-11-25 on, a JSON-RPC error with the denial's code up to 2025-06-18 (the rule of
 * invalid arguments, `INVALID_ARGS` included); a name neither served nor approved is an unknown
 * tool (-32602), never forwarded. Under `audit` every call passes.
 */
export function gateToolsCall(book: PinBook, c: CallToGate): CallGate | Promise<CallGate> {
  if (book.mode === 'off' || typeof c.name !== 'string' || c.name === '') return PASS
  const names = c.headerName && c.headerName !== c.name ? [c.name, c.headerName] : [c.name]
  const verdicts = names.map((n) => book.gate(c.originId, c.scope, n, c.pull))
  if (verdicts.every((v) => !(v instanceof Promise))) return combine(book, c, names, verdicts as CallPinVerdict[])
  return Promise.all(verdicts.map((v) => Promise.resolve(v))).then(
    (v) => combine(book, c, names, v),
    () => combine(book, c, names, [decideCall(c.name as string, { ok: false }, book.mode)])
  )
}

function combine(book: PinBook, c: CallToGate, names: string[], verdicts: CallPinVerdict[]): CallGate {
  for (let i = 0; i < verdicts.length; i++) {
    const v = verdicts[i]!
    if (v.kind === 'block') return denialAnswer(c, names[i]!, v.denial)
    if (v.kind === 'unknown') {
      const n = names[i]!.length > 64 ? names[i]!.slice(0, 64) + '…' : names[i]!
      return {
        kind: 'answer',
        id: c.id,
        tool: names[i]!,
        blocked: 'unknown',
        code: -32602,
        unknownTool: true,
        text: errorText(c.id, { code: -32602, message: `Unknown tool: "${n}". Call tools/list to see the tools this server offers.`, data: { tool: n } }),
      }
    }
  }
  const first = verdicts[0]!
  return first.kind === 'allow' && first.pin && book.mode === 'enforce' ? { kind: 'pass', approvedDigest: first.pin.digest } : PASS
}

function denialAnswer(c: CallToGate, name: string, d: PinDenial): CallGate {
  if (c.asToolError) {
    const result: Record<string, unknown> = { content: [{ type: 'text', text: denialText(d) }], isError: true, _meta: { 'io.mcp-edge/denial': denialData(d) } }
    if (isModern(c.era)) result.resultType = 'complete'
    return { kind: 'answer', id: c.id, tool: name, blocked: d.reason, isError: true, text: responseText(c.id, 'result', JSON.stringify(result)) }
  }
  return { kind: 'answer', id: c.id, tool: name, blocked: d.reason, code: d.rpcCode, text: errorText(c.id, { code: d.rpcCode, message: denialText(d), data: denialData(d) }) }
}
