/**
 * @module core/pinning/pin-operations
 * The operator's side of tool pinning (docs/pinning.md "Operator flow"; docs/admin-api.md
 * `/admin/pins/:origin...`, which `mcp-edge tools` drives): the views of an origin's pins (status,
 * a tool's diff, the manifest) and the operator's writes (approve, approve every cosmetic-only
 * change, reject, import a manifest). Built over the data path's public surface (apply-pins.ts
 * {@link PinBook}: `readRecord`, `readServed`, `evaluate`, `updateRecord`), so an operator's write
 * is held and enforced by this instance at once, and by the others through the store. Nothing here
 * runs on the data path. Errors are the store's own (the admin API answers them 503).
 */
import { classifyChange, fieldDigests, type ToolDigest } from './tool-digest'
import { catalogDigest, definitionsOf, type SetEvaluation } from './pin-state'
import type { PinningMode } from './pin-filter'
import { decideApproval, isCosmeticOnly } from './approval'
import { scanInstructions, scanToolDefinition, type AdvisoryFinding } from './advisory-scan'
import { decideInstructions, type InstructionsState } from './instructions-pin'
import { buildManifest, manifestPins, parseManifest, type ManifestError, type PinManifest } from './manifest'
import { fieldDigestsOf, storedFields, type PinRecord, type StoredPin } from './pin-store'
import type { PinBook } from './apply-pins'

/** What the admin API says of one pinned thing (a tool, or an origin's server instructions): its approval and what is served. */
export interface PinDecisionStatus {
  approvedDigest: ToolDigest | null
  /** Null when none was served (for instructions also when the served text has no digest: a lone surrogate, never approvable). */
  servedDigest: ToolDigest | null
  /** RFC 3339 time of the approval, null when none. */
  approvedAt: string | null
  /** RFC 3339 time the approval holds on every replica (`approvedAt` plus the store's propagation bound), null when none. */
  effectiveFrom: string | null
  source: 'tofu' | 'manifest' | 'operator' | null
  /** The operator's rejection of a served digest, when one is recorded. */
  rejectedDigest: ToolDigest | null
  advisories: AdvisoryFinding[]
}

/** One tool in the admin API's status (docs/admin-api.md `GET /admin/pins/:origin`). */
export interface PinStatusTool extends PinDecisionStatus {
  name: string
  state: 'approved' | 'changed' | 'pending' | 'removed'
}

/** The admin API's view of an origin's server instructions (docs/admin-api.md `GET /admin/pins/:origin/instructions`). */
export interface InstructionsStatus extends PinDecisionStatus {
  origin: string
  mode: PinningMode
  state: InstructionsState
  /** RFC 3339 time the served instructions were last kept, null when none were. */
  servedAt: string | null
  /** The approved text and the served text (null when none), for the operator to compare. */
  approved: string | null
  served: string | null
}

/** What the admin API reads of one (origin, scope): the pins and the last served list, decided. */
interface Inspection {
  record: PinRecord
  /** RFC 3339 time of the last complete list served, null when none was seen. */
  servedAt: string | null
  definitions: Map<string, unknown>
  evaluation: SetEvaluation
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}

/**
 * The operator's actions on the pins one {@link PinBook} holds (module comment). Cheap to make: it
 * holds nothing of its own, so an admin request may build one over the instance's book.
 */
export class PinOperations {
  constructor(private readonly book: PinBook) {}

  /** Reads the pins and the last served list of (origin, scope) from the store and decides them (nothing written). @throws the store's errors */
  private async inspect(originId: string, scope: string): Promise<Inspection> {
    // The pins are the origin's; the scope chooses the served list they are held against.
    const [record, snapshot] = await Promise.all([this.book.readRecord(originId), this.book.readServed(originId, scope)])
    const tools = snapshot?.tools ?? []
    const served = await this.book.servedOf(tools)
    const evaluation = this.book.evaluate(originId, record, served, snapshot !== null)
    return { record, servedAt: snapshot?.at ?? null, definitions: definitionsOf(tools), evaluation }
  }

  private toolStatus(i: Inspection, name: string): PinStatusTool {
    const e = i.evaluation.tools.get(name)
    const pin = i.record.pins.get(name) ?? (e?.pin as StoredPin | undefined)
    const def = i.definitions.get(name)
    return {
      name,
      state: e ? e.state : 'removed',
      approvedDigest: pin?.digest ?? null,
      servedDigest: e?.served ?? null,
      approvedAt: pin?.approvedAt ?? null,
      effectiveFrom: pin ? (pin.effectiveFrom ?? pin.approvedAt) : null,
      source: pin?.source ?? null,
      rejectedDigest: i.record.rejected.get(name)?.digest ?? null,
      advisories: def === undefined ? [] : scanToolDefinition(def).findings,
    }
  }

  /** `GET /admin/pins/:origin`: every served and every pinned name. @throws the store's errors */
  async status(
    originId: string,
    scope: string
  ): Promise<{ origin: string; scope: string; mode: PinningMode; catalogDigest: ToolDigest | null; servedAt: string | null; tools: PinStatusTool[] }> {
    const i = await this.inspect(originId, scope)
    const names = [...i.evaluation.tools.keys()]
    for (const n of [...i.record.pins.keys()].sort()) if (!i.evaluation.tools.has(n)) names.push(n)
    return {
      origin: originId,
      scope,
      mode: this.book.mode,
      catalogDigest: i.record.pins.size > 0 || i.record.baseline ? await catalogDigest(i.record.pins) : null,
      servedAt: i.servedAt,
      tools: names.map((n) => this.toolStatus(i, n)),
    }
  }

  /** `GET /admin/pins/:origin/:tool/diff`; null for a name neither served nor pinned. @throws the store's errors */
  async diff(originId: string, scope: string, name: string) {
    const i = await this.inspect(originId, scope)
    const e = i.evaluation.tools.get(name)
    const pin = i.record.pins.get(name)
    if (!e && !pin) return null
    const def = i.definitions.get(name)
    const served = def === undefined ? new Map<string, ToolDigest | null>() : await fieldDigests(def)
    const approved = pin ? fieldDigestsOf(pin.fields) : new Map<string, ToolDigest | null>()
    const change = classifyChange(approved, served)
    // Each changed member's value on either side, when known (a manifest pin keeps no definition
    // until the origin serves its digest), so an operator reads the change, not only its digests.
    const member = (d: unknown, field: string) =>
      typeof d === 'object' && d !== null && !Array.isArray(d) && Object.hasOwn(d, field) ? { value: (d as Record<string, unknown>)[field] } : undefined
    return {
      name,
      state: e ? e.state : ('removed' as const),
      approvedDigest: pin?.digest ?? null,
      servedDigest: e?.served ?? null,
      class: pin ? change.class : ('material' as const),
      changes: change.fields.map((f) => {
        const a = member(pin?.definition, f.field)
        const s = member(def, f.field)
        return {
          field: f.field,
          change: f.change,
          class: f.class,
          approved: f.approved ?? null,
          served: f.served ?? null,
          ...(a ? { approvedValue: a.value } : {}),
          ...(s ? { servedValue: s.value } : {}),
        }
      }),
      advisories: def === undefined ? [] : scanToolDefinition(def).findings,
    }
  }

  /** Writes pins (an approval) and holds the record written. */
  private async writePins(originId: string, scope: string, pins: Map<string, StoredPin>): Promise<PinRecord> {
    return this.book.updateRecord(originId, (rec) => {
      for (const [n, p] of pins) {
        rec.pins.set(n, p)
        rec.rejected.delete(n)
      }
      rec.baseline = true
      return rec
    })
  }

  private async storedPin(i: Inspection, name: string, digest: ToolDigest, approvedAt: string): Promise<StoredPin> {
    const def = i.definitions.get(name)
    return {
      digest,
      approvedAt,
      effectiveFrom: iso(Date.parse(approvedAt) + this.book.propagationMs),
      source: 'operator',
      fields: storedFields(await fieldDigests(def)),
      definition: def ?? null,
    }
  }

  /**
   * `POST /admin/pins/:origin/:tool/approve`: only the exact digest served now is accepted.
   * @returns the approval, or why not: `unknown` (not served now), `refused` (stale or wrong digest,
   *   or a definition without a digest; `servedDigest` the current one)
   * @throws the store's errors
   */
  async approve(
    originId: string,
    scope: string,
    name: string,
    digest: ToolDigest
  ): Promise<
    | { ok: true; name: string; digest: ToolDigest; approvedAt: string; effectiveFrom: string }
    | { ok: false; reason: 'unknown' | 'refused'; message: string; servedDigest: ToolDigest | null }
  > {
    const i = await this.inspect(originId, scope)
    const d = decideApproval(i.evaluation, name, digest, this.book.nowIso())
    if (!d.ok) return { ok: false, reason: d.reason === 'not-served' ? 'unknown' : 'refused', message: d.message, servedDigest: d.servedDigest ?? null }
    if (d.unchanged) {
      const p = i.record.pins.get(name)
      const at = p?.approvedAt ?? d.pin.approvedAt
      return { ok: true, name, digest, approvedAt: at, effectiveFrom: p?.effectiveFrom ?? at }
    }
    const pin = await this.storedPin(i, name, digest, d.pin.approvedAt)
    await this.writePins(originId, scope, new Map([[name, pin]]))
    this.book.log({ level: 'info', msg: 'pin.approved', origin: originId, scope: scope === 'public' ? 'public' : 'private', tool: name.slice(0, 64), digest })
    return { ok: true, name, digest, approvedAt: pin.approvedAt, effectiveFrom: pin.effectiveFrom! }
  }

  /** `POST /admin/pins/:origin/approve-cosmetic`: every `changed` tool whose change is cosmetic only, at its served digest. @throws the store's errors */
  async approveCosmetic(originId: string, scope: string): Promise<string[]> {
    const i = await this.inspect(originId, scope)
    const pins = new Map<string, StoredPin>()
    const now = this.book.nowIso()
    for (const e of i.evaluation.tools.values()) {
      const pin = i.record.pins.get(e.name)
      const def = i.definitions.get(e.name)
      if (e.state !== 'changed' || e.served === null || !pin || def === undefined) continue
      if (!isCosmeticOnly(fieldDigestsOf(pin.fields), await fieldDigests(def))) continue
      pins.set(e.name, await this.storedPin(i, e.name, e.served, now))
    }
    if (pins.size > 0) await this.writePins(originId, scope, pins)
    return [...pins.keys()]
  }

  /** `POST /admin/pins/:origin/:tool/reject`: records the rejection; the tool stays blocked. False for a name neither served nor pinned. @throws the store's errors */
  async reject(originId: string, scope: string, name: string, digest: ToolDigest): Promise<boolean> {
    const i = await this.inspect(originId, scope)
    if (!i.evaluation.tools.has(name) && !i.record.pins.has(name)) return false
    await this.book.updateRecord(originId, (rec) => {
      rec.rejected.set(name, { digest, at: this.book.nowIso() })
      return rec
    })
    this.book.log({ level: 'info', msg: 'pin.rejected', origin: originId, scope: scope === 'public' ? 'public' : 'private', tool: name.slice(0, 64), digest })
    return true
  }

  /** `GET /admin/pins/:origin/manifest`. @throws the store's errors */
  async manifest(originId: string, scope: string): Promise<PinManifest | null> {
    const i = await this.inspect(originId, scope)
    return buildManifest(originId, scope, new Map([...i.record.pins].map(([n, p]) => [n, { digest: p.digest, approvedAt: p.approvedAt, fields: fieldDigestsOf(p.fields) }])))
  }

  /**
   * `PUT /admin/pins/:origin/manifest`: replaces the pins of (origin, scope) with the manifest's
   * (source `manifest`, approved now). A pin whose digest is the one served keeps that definition
   * for validation; the others get it when the origin serves their digest.
   * @returns the names imported, or the manifest's errors (also for another origin or scope)
   * @throws the store's errors
   */
  async importManifest(originId: string, scope: string, input: unknown): Promise<{ ok: true; imported: string[] } | { ok: false; errors: ManifestError[] }> {
    const parsed = await parseManifest(input)
    if (!parsed.ok) return parsed
    const m = parsed.manifest
    const errors: ManifestError[] = []
    if (m.origin !== originId) errors.push({ path: '/origin', message: 'the manifest is for another origin than the path names' })
    if (m.scope !== scope) errors.push({ path: '/scope', message: 'the manifest is for another scope than the query names' })
    if (errors.length) return { ok: false, errors }
    const i = await this.inspect(originId, scope)
    const now = this.book.nowIso()
    const pins = new Map<string, StoredPin>()
    for (const [name, p] of manifestPins(m, now)) {
      const mp = m.pins.find((x) => x.name === name)!
      const e = i.evaluation.tools.get(name)
      const def = e?.served === p.digest ? i.definitions.get(name) : undefined
      pins.set(name, { ...p, effectiveFrom: iso(Date.parse(now) + this.book.propagationMs), fields: { ...mp.fields }, definition: def ?? null })
    }
    await this.book.updateRecord(originId, (rec) => ({ ...rec, baseline: true, pins }))
    return { ok: true, imported: [...pins.keys()] }
  }

  // ------------------------------------------------------------ server instructions

  /** `GET /admin/pins/:origin/instructions`: the origin's instructions pin and the last ones served, decided. @throws the store's errors */
  async instructions(originId: string): Promise<InstructionsStatus> {
    const [record, served] = await Promise.all([this.book.readRecord(originId), this.book.readServedInstructions(originId)])
    const pin = record.instructions
    const advisories = served ? scanInstructions(served.instructions).findings : []
    const { state } = decideInstructions(record, served ?? undefined, advisories.length > 0)
    return {
      origin: originId,
      mode: this.book.mode,
      // First sight that the scan does not flag is approved when the edge next relays them; until then they are pending here.
      state: state === 'approved' && !pin ? 'pending' : state,
      approvedDigest: pin?.digest ?? null,
      servedDigest: served?.digest ?? null,
      approvedAt: pin?.approvedAt ?? null,
      effectiveFrom: pin ? (pin.effectiveFrom ?? pin.approvedAt) : null,
      source: pin?.source ?? null,
      rejectedDigest: record.instructionsRejected?.digest ?? null,
      servedAt: served?.at ?? null,
      approved: pin?.text ?? null,
      served: served?.instructions ?? null,
      advisories,
    }
  }

  /**
   * `POST /admin/pins/:origin/approve-instructions`: only the exact digest served now is accepted.
   * @returns the approval, or why not: `unknown` (no instructions served), `refused` (another digest
   *   is served now, `servedDigest`; or the served text has no digest)
   * @throws the store's errors
   */
  async approveInstructions(
    originId: string,
    digest: ToolDigest
  ): Promise<
    { ok: true; digest: ToolDigest; approvedAt: string; effectiveFrom: string } | { ok: false; reason: 'unknown' | 'refused'; message: string; servedDigest: ToolDigest | null }
  > {
    const [record, served] = await Promise.all([this.book.readRecord(originId), this.book.readServedInstructions(originId)])
    if (!served) return { ok: false, reason: 'unknown', message: 'the origin has served no instructions this edge kept', servedDigest: null }
    if (served.digest === null)
      return { ok: false, reason: 'refused', message: 'the instructions served have no digest (a lone surrogate) and cannot be approved', servedDigest: null }
    if (served.digest !== digest)
      return { ok: false, reason: 'refused', message: `the instructions are served with digest ${served.digest}, not ${digest}`, servedDigest: served.digest }
    const held = record.instructions
    if (held?.digest === digest) return { ok: true, digest, approvedAt: held.approvedAt, effectiveFrom: held.effectiveFrom ?? held.approvedAt }
    const approvedAt = this.book.nowIso()
    const pin = { digest, approvedAt, effectiveFrom: iso(Date.parse(approvedAt) + this.book.propagationMs), source: 'operator' as const, text: served.instructions }
    await this.book.updateRecord(originId, (rec) => {
      const next: PinRecord = { ...rec, instructions: pin }
      // Approving clears a rejection, as for a tool.
      delete next.instructionsRejected
      return next
    })
    this.book.log({ level: 'info', msg: 'pin.instructions_approved', origin: originId, digest })
    return { ok: true, digest, approvedAt, effectiveFrom: pin.effectiveFrom }
  }

  /** `POST /admin/pins/:origin/reject-instructions`: records the rejection; the instructions stay held. False when none are served or pinned. @throws the store's errors */
  async rejectInstructions(originId: string, digest: ToolDigest): Promise<boolean> {
    const [record, served] = await Promise.all([this.book.readRecord(originId), this.book.readServedInstructions(originId)])
    if (!served && !record.instructions) return false
    await this.book.updateRecord(originId, (rec) => ({ ...rec, instructionsRejected: { digest, at: this.book.nowIso() } }))
    this.book.log({ level: 'info', msg: 'pin.instructions_rejected', origin: originId, digest })
    return true
  }
}
