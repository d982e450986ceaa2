/**
 * @module core/pinning/instructions-pin
 * Server instructions pinned like tools (docs/pinning.md "Server instructions"). The `instructions`
 * of an `initialize` result (2025 eras) and of a `server/discover` result (2026-07-28) go into the
 * agent's system prompt, so under `TOOL_PINNING` they get what a tool definition gets: a digest
 * (the tool digest's code: SHA-256 over the RFC 8785 text of the string), one pin per origin (the
 * `instructions` member of the origin's pin record, pin-store.ts), the advisory scan, and the
 * operator's review (pin-operations.ts, the admin API, `mcp-edge tools ... --instructions`).
 *
 * - `off`: nothing.
 * - `audit`: the answer is relayed as it came; the decision is made in the background, and a
 *   change (instructions that differ from the approved ones, or first-seen ones the scan flags) is
 *   logged once (`pin.instructions_change`).
 * - `enforce`: the answer waits for the decision; while the instructions are not approved (changed,
 *   pending, or the pins unreadable) the `instructions` member is left out of the result and every
 *   other byte of the answer is the origin's; counted as `mcp_edge_tool_pin_blocks_total{reason=
 *   "instructions-held"}`.
 *
 * First sight (the origin has no instructions pin): trust on first use, source `tofu`, unless the
 * advisory scan flags the text (then `pending` until an operator approves it) or the text has no
 * digest (a lone surrogate: it can never be approved). The step the reply path calls is
 * {@link holdInstructions}, from one place (the `instructions_pins` reply guard, guards/reply/instructions-pins.ts).
 * Never throws to it.
 */
import { isObject } from '../jsonrpc/jsonrpc'
import { scanJsonText } from '../jsonrpc/json-scan'
import { canonicalJson, sha256Digest, type ToolDigest } from './tool-digest'
import { scanInstructions, type AdvisoryFinding } from './advisory-scan'
import type { PinRecord } from './pin-store'
import type { PinBook } from './apply-pins'

/** The state of an origin's served instructions against its pin. `none`: neither served nor pinned; `removed`: pinned, not served. */
export type InstructionsState = 'approved' | 'changed' | 'pending' | 'removed' | 'none'

/** The metric reason of an answer relayed with its instructions left out. */
export const INSTRUCTIONS_HELD = 'instructions-held'

/**
 * The digest of server instructions: `sha256:` + hex of SHA-256 over the RFC 8785 (JCS) text of the
 * string (its JSON string literal), the tool digest's code (tool-digest.ts).
 * @returns the digest, or null when the text has no JCS form (a lone surrogate): never approvable
 */
export async function instructionsDigest(text: string): Promise<ToolDigest | null> {
  const c = canonicalJson(text)
  return c.ok ? sha256Digest(c.text) : null
}

/**
 * The decision over served instructions (pure).
 * @param record the origin's pin record (its `instructions` pin, when set)
 * @param served the served digest (null: no JCS form), or undefined when nothing is served
 * @param flagged whether the advisory scan found something in the served text
 * @returns the state, and `tofu: true` when first sight approves them (no pin yet, a digest, not flagged)
 */
export function decideInstructions(record: PinRecord, served: { digest: ToolDigest | null } | undefined, flagged: boolean): { state: InstructionsState; tofu: boolean } {
  const pin = record.instructions
  if (!served) return { state: pin ? 'removed' : 'none', tofu: false }
  if (pin) return { state: served.digest !== null && served.digest === pin.digest ? 'approved' : 'changed', tofu: false }
  if (served.digest === null || flagged) return { state: 'pending', tofu: false }
  return { state: 'approved', tofu: true }
}

/** One relayed `initialize` or `server/discover` response, as {@link holdInstructions} takes it. */
export interface InstructionsReply {
  originId: string
  /** The parsed response and the exact text to relay. */
  msg: Record<string, unknown>
  source: string
}

/**
 * The text to relay for one `initialize` or `server/discover` response (module comment): the
 * origin's text as it came (`off`, `audit`, an error, a result without string `instructions`,
 * approved instructions), or under `enforce` a promise of it with the `instructions` member left
 * out while they are not approved. Never rejects.
 */
export function holdInstructions(book: PinBook, r: InstructionsReply): string | Promise<string> {
  if (book.mode === 'off') return r.source
  const result = r.msg.result
  if (!isObject(result) || typeof result.instructions !== 'string') return r.source
  const decision = decide(book, r.originId, result.instructions)
  if (book.mode === 'audit') {
    book.defer(decision.catch(() => undefined))
    return r.source
  }
  const held = () => {
    book.countBlock(r.originId, INSTRUCTIONS_HELD)
    return withoutInstructions(r)
  }
  return decision.then((relay) => (relay ? approvedText(r) : held()), held)
}

/**
 * The text of an answer whose instructions were approved: the origin's, unless a member name is
 * repeated in it (`"instructions"` twice, or `"result"` twice). The edge decided on the value
 * `JSON.parse` keeps (the last); a client whose parser keeps the first would read the other one,
 * so such an answer is relayed as the edge parsed it, with the approved value alone.
 */
function approvedText(r: InstructionsReply): string {
  const el = scanJsonText(r.source).elements[0]
  return el && !el.duplicateNames ? r.source : JSON.stringify(r.msg)
}

/**
 * Decides served instructions against the origin's pin: digests and scans them, reads the record,
 * pins them on first sight when nothing flags them, keeps them as served for the operator when
 * they changed, logs each change once.
 * @returns whether they may be relayed (approved); false when the pins cannot be read
 */
async function decide(book: PinBook, originId: string, text: string): Promise<boolean> {
  const digest = await instructionsDigest(text)
  const findings = scanInstructions(text).findings
  let record: PinRecord
  try {
    record = await book.readRecord(originId)
  } catch {
    book.log({ level: 'error', msg: 'pin.store_unavailable', origin: originId, scope: 'public', mode: book.mode, what: 'instructions' })
    return false
  }
  let d = decideInstructions(record, { digest }, findings.length > 0)
  const firstSight = d.tofu
  if (d.tofu && digest !== null) {
    const approvedAt = book.nowIso()
    const pin = { digest, approvedAt, effectiveFrom: new Date(Date.parse(approvedAt) + book.propagationMs).toISOString(), source: 'tofu' as const, text }
    try {
      // Another edge may have pinned the origin's instructions first: decide with what the store holds.
      record = await book.updateRecord(originId, (now) => (now.instructions ? null : { ...now, instructions: pin }))
      d = decideInstructions(record, { digest }, findings.length > 0)
      if (record.instructions?.digest === digest && record.instructions.source === 'tofu') book.log({ level: 'info', msg: 'pin.instructions_baseline', origin: originId, digest })
    } catch {
      // First sight trusts them; the next answer writes the pin again.
      book.log({ level: 'warn', msg: 'pin.instructions_not_stored', origin: originId })
      return true
    }
  }
  const approved = record.instructions?.digest ?? null
  const seen = book.instructionsSeen.get(originId) ?? {}
  book.instructionsSeen.set(originId, seen)
  const sig = `${d.state}|${digest ?? '-'}|${approved ?? '-'}`
  // Kept as served for the operator: what is not approved, what first sight pinned, and approved
  // instructions this instance kept another version of before (the origin went back to them).
  const keep = d.state !== 'approved' || firstSight || seen.written !== undefined
  if (keep && seen.written !== sig) {
    try {
      await book.writeServedInstructions(originId, { at: book.nowIso(), digest, instructions: text })
      seen.written = sig
    } catch {
      // the next answer writes it
    }
  }
  if (seen.logged !== sig && (d.state !== 'approved' || seen.logged !== undefined)) {
    seen.logged = sig
    book.log({
      level: d.state === 'approved' ? 'info' : 'warn',
      msg: 'pin.instructions_change',
      origin: originId,
      state: d.state,
      approvedDigest: approved,
      servedDigest: digest,
      ...(d.state === 'approved' ? {} : { findings: findingLines(findings) }),
      mode: book.mode,
    })
  }
  return d.state === 'approved'
}

/** Advisory findings as short log words (kind and where; never the text). */
function findingLines(findings: readonly AdvisoryFinding[]): string[] {
  return findings.slice(0, 10).map((f) => `${f.kind} at ${f.pointer === '' ? '/' : f.pointer}`)
}

/**
 * The response text with the `instructions` member of its result removed and every other byte
 * kept: the member's name, value and one comma next to it are cut from the origin's text. When the
 * text cannot be edited safely (a member name repeated), the parsed response is serialized without it.
 */
export function withoutInstructions(r: InstructionsReply): string {
  return cutMember(r.source) ?? serializedWithout(r.msg)
}

function serializedWithout(msg: Record<string, unknown>): string {
  const result = { ...(msg.result as Record<string, unknown>) }
  delete result.instructions
  return JSON.stringify({ ...msg, result })
}

/** The text with `result.instructions` cut out, or null (module comment of {@link withoutInstructions}). */
function cutMember(source: string): string | null {
  const el = scanJsonText(source).elements[0]
  const rs = el?.members?.get('result')
  if (!el || el.duplicateNames || !rs) return null
  const resultText = source.slice(rs.start, rs.end)
  const res = scanJsonText(resultText).elements[0]
  if (!res?.members || res.duplicateNames) return null
  const spans = [...res.members.values()].sort((a, b) => a.start - b.start)
  const at = spans.indexOf(res.members.get('instructions')!)
  if (at < 0) return null
  const value = spans[at]!
  let cut: { start: number; end: number }
  if (at > 0) {
    // `<previous value>, "instructions": "..."`: from the end of the previous value to the end of this one.
    cut = { start: spans[at - 1]!.end, end: value.end }
  } else {
    // The first member: from after `{` to after the comma that follows it (or to its end when it is the only member).
    const open = resultText.indexOf('{', res.start)
    let i = value.end
    while (i < resultText.length && /\s/.test(resultText[i]!)) i++
    cut = { start: open + 1, end: resultText[i] === ',' ? i + 1 : value.end }
  }
  const edited = resultText.slice(0, cut.start) + resultText.slice(cut.end)
  return source.slice(0, rs.start) + edited + source.slice(rs.end)
}
