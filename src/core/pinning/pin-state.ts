/**
 * @module core/pinning/pin-state
 * The set-pin decision (docs/pinning.md "States"): the tools an origin serves to one caller scope,
 * held against the pins an operator (or first sight) approved for that (origin, scope).
 *
 * - `approved`: the served digest is the approved digest of that name;
 * - `changed`: the name has an approved pin and the served digest differs (or the tool has no
 *   digest at all, or the name is served twice with different definitions);
 * - `pending`: the name has no approved pin (a tool first seen after the baseline, a rename,
 *   or a tool that has no digest, which can never be approved);
 * - `removed`: a pinned name this list does not serve. Reported (log line, metric), never a block
 *   and never a deletion: a caller that sees a subset of the approved set is fine (a per-caller
 *   list, SEP-2091), and a tool that comes back with its approved digest is approved again.
 *
 * Baseline, trust on first use: while (origin, scope) has no baseline and no pin, the first
 * *complete* list (every page) is the baseline: each served tool that has a digest becomes approved
 * with source `tofu`. Once any pin exists, nothing the origin serves ever replaces it: only an
 * operator approval or an imported manifest writes a pin (what an operator approves is theirs).
 *
 * The catalog digest ({@link catalogDigest}) identifies the approved set of (origin, scope): the
 * value for `_meta["io.mcp-edge/catalogDigest"]` and for a manifest's `catalogDigest`. Pure; no I/O
 * besides Web Crypto hashing; never throws.
 */
import { yieldToLoop } from '../work-slices'
import { canonicalJson, sha256Digest, toolDigest, type DigestMemo, type JcsProblem, type ToolDigest } from './tool-digest'

/** Who approved a pin: first sight (`tofu`), an imported manifest, or an operator (admin API or CLI). */
export type PinSource = 'tofu' | 'manifest' | 'operator'

/** One approved pin of a tool name in one (origin, scope). */
export interface ApprovedPin {
  /** The approved tool digest (tool-digest.ts). */
  digest: ToolDigest
  /** When it was approved, RFC 3339 UTC (e.g. `2026-12-01T21:15:32.000Z`). */
  approvedAt: string
  /**
   * When every edge is known to enforce it, RFC 3339 UTC: `approvedAt` plus the store's propagation
   * bound (Workers KV is eventually consistent, about 60 s). Shown to the operator; it does not gate
   * anything here: an edge that has read the pin uses it.
   */
  effectiveFrom?: string
  source: PinSource
}

/** The approved pins of one (origin, scope), as read from the pin store. */
export interface PinSet {
  /** Whether a baseline exists (a first complete list was pinned, or a manifest imported), even if it pinned no tool. */
  baseline: boolean
  /** Tool name -> its approved pin. A Map: names come from the origin (`__proto__` is a name like any other). */
  pins: ReadonlyMap<string, ApprovedPin>
}

/** One tool as served, reduced to what the decision needs. */
export interface ServedTool {
  name: string
  /** Its tool digest, or null when the definition has none (tool-digest.ts: lone surrogate, non-finite number). */
  digest: ToolDigest | null
  /** Why `digest` is null. */
  problem?: JcsProblem
}

/**
 * Digests every entry of a `tools/list` result's `tools` array that has a string `name`
 * (in order; an entry without one cannot be pinned by name, is skipped here, and pin-filter.ts drops it).
 * @param tools the `tools` array as parsed
 * @param memo digests of definitions already seen (tool-digest.ts `DigestMemo`), to skip hashing them again
 */
export async function servedTools(tools: readonly unknown[], memo?: DigestMemo): Promise<ServedTool[]> {
  return memo ? memo.perList(tools, () => digestTools(tools, memo)) : digestTools(tools)
}

/**
 * Tool name -> the first definition served under it, for each entry of a `tools` array that is an
 * object with a string `name` (a name served twice keeps its first definition). A Map: names come
 * from the origin (`__proto__` is a name like any other).
 */
export function definitionsOf(tools: readonly unknown[]): Map<string, unknown> {
  const out = new Map<string, unknown>()
  for (const t of tools)
    if (typeof t === 'object' && t !== null && !Array.isArray(t) && typeof (t as { name?: unknown }).name === 'string') {
      const name = (t as { name: string }).name
      if (!out.has(name)) out.set(name, t)
    }
  return out
}

/** Tools canonicalized between two yields to the event loop (about 10-30 us each on Node 20): a 700-tool list is 14 slices. */
const DIGEST_SLICE = 50

async function digestTools(tools: readonly unknown[], memo?: DigestMemo): Promise<ServedTool[]> {
  const named = tools.filter((t): t is Record<string, unknown> & { name: string } => typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string')
  const out: Promise<ServedTool>[] = []
  for (let i = 0; i < named.length; i++) {
    if (i > 0 && i % DIGEST_SLICE === 0) await yieldToLoop()
    const t = named[i]!
    const p = toolDigest(t, memo).then((d): ServedTool => (d.ok ? { name: t.name, digest: d.digest } : { name: t.name, digest: null, problem: d.problem }))
    // Handled now, rejected through Promise.all below: a rejection while this loop yields is not an unhandled one.
    p.catch(() => undefined)
    out.push(p)
  }
  return Promise.all(out)
}

/** The state of a served tool name (module comment). */
export type ToolPinState = 'approved' | 'changed' | 'pending'

/** The decision for one served tool name. */
export interface ToolEvaluation {
  name: string
  state: ToolPinState
  /** The served digest; null when the definition has none, or the name is served with more than one definition. */
  served: ToolDigest | null
  /** The approved pin of the name, when it has one (after this evaluation's trust on first use). */
  pin?: ApprovedPin
  /**
   * Why a tool is not approved although its name could be:
   * - `no-digest`: the served definition has no JCS form ({@link problem} says where);
   * - `duplicate`: the name is served more than once with different definitions (a call by name could reach either);
   * - `awaiting-baseline`: no baseline yet and this list is not complete (one page), so nothing was trusted;
   * - `flagged`: first sight of a definition the advisory scan flags (advisory-scan.ts): never trusted
   *   on first use, it waits for an operator's approval like a new tool.
   */
  reason?: 'no-digest' | 'duplicate' | 'awaiting-baseline' | 'flagged'
  problem?: JcsProblem
}

/** The decision for one served list of one (origin, scope). */
export interface SetEvaluation {
  /** Per served name, in the order first served. */
  tools: ReadonlyMap<string, ToolEvaluation>
  /** Pinned names this list does not serve, sorted (UTF-16 code units); empty unless the list is complete. */
  removed: string[]
  /** Whether this list established the baseline (trust on first use): the caller stores {@link newPins} and marks the baseline. */
  establishesBaseline: boolean
  /** Pins to write: the `tofu` pins of a baseline list, else none. Never a name that already has a pin. */
  newPins: ReadonlyMap<string, ApprovedPin>
  /** The approved set after this evaluation: the pins read plus {@link newPins}. */
  approvedSet: ReadonlyMap<string, ApprovedPin>
  /** How many names are in each state (`removed` included), for `mcp_edge_tool_pins{origin,state}`. */
  counts: Record<ToolPinState | 'removed', number>
}

/**
 * The set-pin decision (module comment).
 * @param pinSet the approved pins of (origin, scope), as read from the store
 * @param served the served tools ({@link servedTools}) of one `tools/list` answer
 * @param opts `complete`: the list holds every page (a full pull, or a reply without `nextCursor` to
 *   a request without `cursor`); only a complete list can set the baseline or report `removed`.
 *   `now`: the time written as `approvedAt` of `tofu` pins, RFC 3339 UTC.
 *   `untrusted`: names whose served definitions carry advisory findings (advisory-scan.ts): a
 *   baseline list does not approve them on first sight (it still sets the baseline), and while
 *   they have no pin they are `pending` with reason `flagged`.
 */
export function evaluatePins(pinSet: PinSet, served: readonly ServedTool[], opts: { complete: boolean; now: string; untrusted?: ReadonlySet<string> }): SetEvaluation {
  const byName = new Map<string, ServedTool[]>()
  for (const t of served) {
    const seen = byName.get(t.name)
    if (seen) seen.push(t)
    else byName.set(t.name, [t])
  }
  // An existing pin is a baseline even if the store lost the mark: first sight never overwrites a pin.
  const hasBaseline = pinSet.baseline || pinSet.pins.size > 0
  const establishesBaseline = !hasBaseline && opts.complete
  const tools = new Map<string, ToolEvaluation>()
  const newPins = new Map<string, ApprovedPin>()
  const counts: Record<ToolPinState | 'removed', number> = { approved: 0, changed: 0, pending: 0, removed: 0 }
  for (const [name, occurrences] of byName) {
    const digests = new Set(occurrences.map((o) => o.digest))
    const digest = digests.size === 1 ? occurrences[0]!.digest : null
    const problem = occurrences.find((o) => o.problem)?.problem
    const pin = pinSet.pins.get(name)
    const e: ToolEvaluation = { name, state: 'pending', served: digest }
    if (pin) {
      e.pin = pin
      e.state = digest !== null && digest === pin.digest ? 'approved' : 'changed'
    } else if (establishesBaseline && digest !== null && !opts.untrusted?.has(name)) {
      const tofu: ApprovedPin = { digest, approvedAt: opts.now, source: 'tofu' }
      newPins.set(name, tofu)
      e.pin = tofu
      e.state = 'approved'
    }
    if (e.state !== 'approved') {
      if (digests.size > 1) e.reason = 'duplicate'
      else if (digest === null) e.reason = 'no-digest'
      else if (!pin && opts.untrusted?.has(name)) e.reason = 'flagged'
      else if (!hasBaseline && !opts.complete) e.reason = 'awaiting-baseline'
      if (problem && digest === null) e.problem = problem
    }
    counts[e.state]++
    tools.set(name, e)
  }
  const removed = opts.complete ? [...pinSet.pins.keys()].filter((n) => !byName.has(n)).sort() : []
  counts.removed = removed.length
  const approvedSet = newPins.size === 0 ? pinSet.pins : new Map([...pinSet.pins, ...newPins])
  return { tools, removed, establishesBaseline, newPins, approvedSet, counts }
}

/** The `_meta` key of the catalog digest on relayed `tools/list` results (the edge's own reverse-DNS prefix). */
export const CATALOG_DIGEST_META = 'io.mcp-edge/catalogDigest'

/**
 * The JCS text the catalog digest is taken over: the approved set as an array of `[name, digest]`
 * pairs sorted by name (UTF-16 code units, the JCS member order), e.g.
 * `[["a","sha256:…"],["b","sha256:…"]]`; `[]` for an empty set.
 * @returns null when a name has no JCS form (a lone surrogate: such a name never gets a pin from
 *   this edge, since its tool has no digest; only a corrupt store could hold one)
 */
export function catalogText(approved: ReadonlyMap<string, { digest: ToolDigest }>): string | null {
  const pairs = [...approved.keys()].sort().map((name) => [name, approved.get(name)!.digest])
  const c = canonicalJson(pairs)
  return c.ok ? c.text : null
}

/**
 * The catalog digest of an approved set: `sha256:` + hex of SHA-256 over {@link catalogText}.
 * It identifies the approved set of (origin, scope), not one page or one caller's subset: every
 * caller of that scope is shown the same value, and it equals the `catalogDigest` of the manifest
 * exported from the same pins.
 * @returns null when {@link catalogText} is null
 */
export async function catalogDigest(approved: ReadonlyMap<string, { digest: ToolDigest }>): Promise<ToolDigest | null> {
  const text = catalogText(approved)
  return text === null ? null : sha256Digest(text)
}
