/**
 * @module core/pinning/pin-store
 * The pin records in the edge's store: keys and codec. The store layout has one owner,
 * core/validation/tool-store.ts; it delegates the pin keys to this file (this layer sits below
 * validation, so the keys live here and tool-store.ts re-exports them). Two kinds of keys:
 *
 * - `pins:<originId>:public` -> `{ v: 1, baseline, pins: [StoredPin...], rejected: [{ name, digest, at }] }`,
 *   one per origin (the pins are the origin's whatever scope a list comes in; apply-pins.ts reads
 *   and writes only the `public` key, and the scope bounds delete any private one an earlier edge left):
 *   every approved pin with its approved digest, field sub-digests and approved definition (enforce
 *   validates against the approved `inputSchema`), `approvedAt`, `effectiveFrom` and `source`
 *   (`tofu`, `manifest`, `operator`). One value per (origin, scope), so an approval, a rejection or a
 *   manifest import is one write (Workers KV allows one write per second per key; operators approve
 *   far less often). What an operator approves is theirs: the origin never writes this key except
 *   for the first-sight baseline (trust on first use) of an origin that has none.
 *   The same record holds the origin's server instructions pin when one is set (members
 *   `instructions: { digest, approvedAt, effectiveFrom, source, text }` and `instructionsRejected:
 *   { digest, at }`, each written only when present, so a record without them is the text an earlier
 *   edge wrote and reads back unchanged): one record per origin, one write per approval.
 * - `pinserved:<originId>:<scope>` -> `{ at, tools: [definition...] }`: the last complete `tools/list`
 *   an edge relayed in that scope, as served; what the admin API shows, diffs and approves against
 *   (the digest "served now"), and what an edge that has not relayed a list yet decides calls with.
 *   A private scope's is written only when it holds a tool to review, with the scope's TTL.
 * - `pininstructions:<originId>` -> `{ at, digest, instructions }`: the last server instructions an
 *   edge relayed (or held) from the origin's `initialize` or `server/discover` answer, as served;
 *   what the admin API shows and approves against.
 *
 * Both are plain `get`/`put` of JSON text, so they work on every store of the edge (file, memory,
 * Redis, Workers KV). Redis publishes each put on its change channel, and edges sharing it reload
 * the pins at once (apply-pins.ts); Workers KV is eventually consistent (about 60 s), which is what
 * `effectiveFrom` shows. Pure over the store port; errors are the store's own.
 */
import { EdgeError } from '../errors'
import { isToolDigest, type FieldDigests, type ToolDigest } from './tool-digest'
import type { ApprovedPin, PinSet, PinSource } from './pin-state'

/** The part of the store port (core/ports.ts `KvStore`) the pin store uses. */
export interface PinKv {
  get(key: string): Promise<string | null>
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>
  /** Shared stores (Redis): keys other processes put (null: changes may have been missed). */
  subscribe?(listener: (key: string | null) => void): () => void
}

/** The key of the pins of (origin, scope). */
export function pinKey(originId: string, scope: string): string {
  return `pins:${originId}:${scope}`
}

/** The key of the last complete tool list served for (origin, scope). */
export function pinServedKey(originId: string, scope: string): string {
  return `pinserved:${originId}:${scope}`
}

/** The key of the last server instructions served by an origin (`initialize` or `server/discover`). */
export function pinInstructionsKey(originId: string): string {
  return `pininstructions:${originId}`
}

/** The origin and scope a {@link pinKey} names (the scope is `public` or `u-<hex>`, never holding `:`), or null for another key. */
export function parsePinKey(key: string): { originId: string; scope: string } | null {
  if (!key.startsWith('pins:')) return null
  const at = key.lastIndexOf(':')
  if (at <= 5) return null
  return { originId: key.slice(5, at), scope: key.slice(at + 1) }
}

/** One approved pin as stored: the approval and what was approved. */
export interface StoredPin extends ApprovedPin {
  /** Field sub-digests of the approved definition (member -> digest, null for a member without a JCS form). */
  fields: Record<string, ToolDigest | null>
  /**
   * The approved definition as served when it was approved; null for a manifest pin whose
   * definition this edge has not been served yet (it is filled in when the origin serves that digest).
   */
  definition: unknown
}

/** Field sub-digests (tool-digest.ts `fieldDigests`) as a {@link StoredPin} keeps them: a plain object, member -> digest. */
export function storedFields(f: FieldDigests): Record<string, ToolDigest | null> {
  const o: Record<string, ToolDigest | null> = {}
  for (const [k, v] of f) o[k] = v
  return o
}

/** The field sub-digests a {@link StoredPin} keeps, as tool-digest.ts compares them (a Map). */
export function fieldDigestsOf(o: Record<string, ToolDigest | null>): FieldDigests {
  return new Map(Object.entries(o))
}

/** An operator's rejection of a served digest (the tool stays blocked; recorded for the operator). */
export interface Rejection {
  digest: ToolDigest
  /** RFC 3339 UTC. */
  at: string
}

/** The approved server instructions of an origin (pinning/instructions-pin.ts): the approval and the text approved. */
export interface InstructionsPin extends ApprovedPin {
  /** The approved `instructions` text, as served when it was approved. */
  text: string
}

/** The pins of one (origin, scope). Maps: names come from the origin (`__proto__` is a name like any other). */
export interface PinRecord {
  baseline: boolean
  pins: Map<string, StoredPin>
  rejected: Map<string, Rejection>
  /** The origin's approved server instructions; absent when none was approved (a record written before instructions were pinned). */
  instructions?: InstructionsPin
  /** The operator's rejection of served instructions, when one is recorded. */
  instructionsRejected?: Rejection
}

/** The stored pins are not readable (not JSON, wrong shape): treated like a store failure (enforce fails closed). */
export class PinRecordUnreadableError extends EdgeError {
  override readonly name = 'PinRecordUnreadableError'
  override readonly code = 'EDGE_ERR_PINS_UNREADABLE'
  constructor() {
    super('the stored pins do not decode')
  }
}

/** A record with no baseline and no pin. */
export function emptyPinRecord(): PinRecord {
  return { baseline: false, pins: new Map(), rejected: new Map() }
}

const SOURCES: ReadonlySet<string> = new Set<PinSource>(['tofu', 'manifest', 'operator'])

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Decodes the stored pins; null text is an empty record.
 * @throws PinRecordUnreadableError when the text is not a pin record (an entry that does not
 *   decode makes the whole record unreadable: a pin silently dropped would read as `pending`)
 */
export function decodePinRecord(text: string | null): PinRecord {
  if (text === null) return emptyPinRecord()
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    throw new PinRecordUnreadableError()
  }
  if (!isRecord(v) || v.v !== 1 || typeof v.baseline !== 'boolean' || !Array.isArray(v.pins) || !Array.isArray(v.rejected)) throw new PinRecordUnreadableError()
  const out = emptyPinRecord()
  out.baseline = v.baseline
  for (const p of v.pins) {
    if (!isRecord(p) || typeof p.name !== 'string' || !isToolDigest(p.digest) || typeof p.approvedAt !== 'string' || typeof p.source !== 'string' || !SOURCES.has(p.source))
      throw new PinRecordUnreadableError()
    const fields: Record<string, ToolDigest | null> = {}
    if (isRecord(p.fields)) for (const [k, d] of Object.entries(p.fields)) fields[k] = isToolDigest(d) ? d : null
    const pin: StoredPin = { digest: p.digest, approvedAt: p.approvedAt, source: p.source as PinSource, fields, definition: p.definition ?? null }
    if (typeof p.effectiveFrom === 'string') pin.effectiveFrom = p.effectiveFrom
    out.pins.set(p.name, pin)
  }
  for (const r of v.rejected)
    if (isRecord(r) && typeof r.name === 'string' && isToolDigest(r.digest) && typeof r.at === 'string') out.rejected.set(r.name, { digest: r.digest, at: r.at })
  if (v.instructions !== undefined) {
    const p = v.instructions
    if (!isRecord(p) || !isToolDigest(p.digest) || typeof p.approvedAt !== 'string' || typeof p.source !== 'string' || !SOURCES.has(p.source) || typeof p.text !== 'string')
      throw new PinRecordUnreadableError()
    out.instructions = { digest: p.digest, approvedAt: p.approvedAt, source: p.source as PinSource, text: p.text }
    if (typeof p.effectiveFrom === 'string') out.instructions.effectiveFrom = p.effectiveFrom
  }
  const r = v.instructionsRejected
  if (isRecord(r) && isToolDigest(r.digest) && typeof r.at === 'string') out.instructionsRejected = { digest: r.digest, at: r.at }
  return out
}

/** The stored text of a pin record (pins sorted by name, so equal records are equal texts). */
export function encodePinRecord(r: PinRecord): string {
  const pins = [...r.pins.keys()].sort().map((name) => {
    const p = r.pins.get(name)!
    return {
      name,
      digest: p.digest,
      approvedAt: p.approvedAt,
      ...(p.effectiveFrom ? { effectiveFrom: p.effectiveFrom } : {}),
      source: p.source,
      fields: p.fields,
      definition: p.definition,
    }
  })
  const rejected = [...r.rejected.keys()].sort().map((name) => ({ name, ...r.rejected.get(name)! }))
  // The instructions members only when set: a record without them is byte for byte what an earlier edge wrote.
  const i = r.instructions
  const instructions = i
    ? { instructions: { digest: i.digest, approvedAt: i.approvedAt, ...(i.effectiveFrom ? { effectiveFrom: i.effectiveFrom } : {}), source: i.source, text: i.text } }
    : {}
  const instructionsRejected = r.instructionsRejected ? { instructionsRejected: { digest: r.instructionsRejected.digest, at: r.instructionsRejected.at } } : {}
  return JSON.stringify({ v: 1, baseline: r.baseline, pins, rejected, ...instructions, ...instructionsRejected })
}

/** The decision input (pin-state.ts {@link PinSet}) of a record. */
export function pinSetOf(r: PinRecord): PinSet {
  return { baseline: r.baseline, pins: r.pins }
}

/**
 * Reads the pins of (origin, scope).
 * @throws the store's own errors; PinRecordUnreadableError for a value that does not decode
 */
export async function readPinRecord(kv: PinKv, originId: string, scope: string): Promise<PinRecord> {
  return decodePinRecord(await kv.get(pinKey(originId, scope)))
}

/**
 * The last stored text of a pin record and its decoded record, kept by a reader that reads the same
 * record often (a batch answer of many lists reads it once per list): decoding a record of hundreds
 * of definitions is milliseconds of one thread, reading and comparing its text is not.
 */
export interface DecodedPinText {
  text: string | null
  record: PinRecord
}

/**
 * Reads the pins of (origin, scope) like {@link readPinRecord}, decoding the stored text again only
 * when it differs from the text `last()` gives once the store answered (a record another edge or an
 * operator changed is decoded anew). The record returned may be the one `last()` gave: the caller
 * must not change it (records are replaced, never changed in place; {@link updatePinRecord} decodes
 * its own copy). `keep` gets a newly decoded record in the same turn as the decode, so a read whose
 * store answer lands just after (many lists of one answer read at once) finds it in `last()`
 * instead of decoding the same text again.
 * @returns the record and the text it was decoded from (for `last` next time)
 * @throws the store's own errors; PinRecordUnreadableError for a value that does not decode
 */
export async function readPinRecordReusing(
  kv: PinKv,
  originId: string,
  scope: string,
  last: () => DecodedPinText | undefined,
  keep: (decoded: DecodedPinText) => void
): Promise<DecodedPinText> {
  const text = await kv.get(pinKey(originId, scope))
  // Asked after the read: another read of the same record may have finished while this one waited.
  const held = last()
  if (held !== undefined && held.text === text) return held
  const decoded = { text, record: decodePinRecord(text) }
  keep(decoded)
  return decoded
}

/** Writes the pins of (origin, scope). @throws the store's own errors */
export async function writePinRecord(kv: PinKv, originId: string, scope: string, r: PinRecord): Promise<void> {
  await kv.put(pinKey(originId, scope), encodePinRecord(r))
}

/**
 * Read, change, write: `change` gets the record as stored now and returns the record to write, or
 * null to write nothing. Not a transaction (the stores have no compare-and-set): two operators
 * approving in the same instant can lose one approval, which then shows as still `changed`.
 * @returns the record written (or read, when nothing was written)
 * @throws the store's own errors; PinRecordUnreadableError
 */
export async function updatePinRecord(kv: PinKv, originId: string, scope: string, change: (r: PinRecord) => PinRecord | null): Promise<PinRecord> {
  const now = await readPinRecord(kv, originId, scope)
  const next = change(now)
  if (next === null) return now
  await writePinRecord(kv, originId, scope, next)
  return next
}

/** The last complete tool list served for (origin, scope). */
export interface ServedSnapshot {
  /** RFC 3339 UTC: when an edge relayed it. */
  at: string
  tools: unknown[]
}

/** Reads the served snapshot; null when there is none or it does not decode. @throws the store's own errors */
export async function readServedSnapshot(kv: PinKv, originId: string, scope: string): Promise<ServedSnapshot | null> {
  const text = await kv.get(pinServedKey(originId, scope))
  if (text === null) return null
  try {
    const v = JSON.parse(text) as unknown
    return isRecord(v) && typeof v.at === 'string' && Array.isArray(v.tools) ? { at: v.at, tools: v.tools } : null
  } catch {
    return null
  }
}

/**
 * Writes the served snapshot; `options.expirationTtl` (seconds) for a private scope's, which expires
 * with the scope's tool records. @throws the store's own errors
 */
export async function writeServedSnapshot(kv: PinKv, originId: string, scope: string, s: ServedSnapshot, options?: { expirationTtl: number }): Promise<void> {
  await kv.put(pinServedKey(originId, scope), JSON.stringify(s), options)
}

/** The last server instructions an origin served, as the store keeps them ({@link pinInstructionsKey}). */
export interface ServedInstructions {
  /** RFC 3339 UTC: when an edge relayed (or held) them. */
  at: string
  /** Their digest (pinning/instructions-pin.ts); null when the text has none (a lone surrogate): such instructions can never be approved. */
  digest: ToolDigest | null
  instructions: string
}

/** Reads the last served instructions of an origin; null when there are none or they do not decode. @throws the store's own errors */
export async function readServedInstructions(kv: PinKv, originId: string): Promise<ServedInstructions | null> {
  const text = await kv.get(pinInstructionsKey(originId))
  if (text === null) return null
  try {
    const v = JSON.parse(text) as unknown
    return isRecord(v) && typeof v.at === 'string' && (v.digest === null || isToolDigest(v.digest)) && typeof v.instructions === 'string'
      ? { at: v.at, digest: v.digest, instructions: v.instructions }
      : null
  } catch {
    return null
  }
}

/** Writes the last served instructions of an origin. @throws the store's own errors */
export async function writeServedInstructions(kv: PinKv, originId: string, s: ServedInstructions): Promise<void> {
  await kv.put(pinInstructionsKey(originId), JSON.stringify({ at: s.at, digest: s.digest, instructions: s.instructions }))
}
