/**
 * @module core/pinning/pin-filter
 * What the pipeline does with a set-pin decision (pin-state.ts), in the words of SEP-2624
 * (interceptors): `TOOL_PINNING=off|audit|enforce`.
 *
 * - `off`: nothing here runs; every answer is the origin's.
 * - `audit`: nothing is changed or blocked; the verdicts carry the state so the caller can log
 *   each change and count it.
 * - `enforce`: `changed` and `pending` tools are left out of every `tools/list` result the edge
 *   relays, the result's `_meta` gains `io.mcp-edge/catalogDigest`, and a `tools/call` to such a
 *   tool is answered by the edge with a {@link PinDenial}, never sent to the origin. When the pins
 *   cannot be read, enforce fails closed: lists and calls are refused with a denial that says so.
 *
 * Denials are data ({@link PinDenial}); the pipeline renders them the way it renders invalid
 * arguments: an `isError: true` tool result from 2025-11-25 on (SEP-1303), a JSON-RPC error with
 * `rpcCode` up to 2025-06-18. Everything here is synchronous, so a forwarded call pays one Map
 * lookup. Pure; never throws.
 */
import type { ToolDigest } from './tool-digest'
import { CATALOG_DIGEST_META, type ApprovedPin, type SetEvaluation, type ToolEvaluation, type ToolPinState } from './pin-state'
import { boundText } from '../jsonrpc/bound-text'

/** The pinning modes (SEP-2624 words); `audit` is the default. */
export const PINNING_MODES = ['off', 'audit', 'enforce'] as const
/** One of {@link PINNING_MODES}. */
export type PinningMode = (typeof PINNING_MODES)[number]

/**
 * What the pipeline knows about the pins of one (origin, scope) when it relays a list or a call:
 * the latest decision with its catalog digest, or the fact that the pin store could not be read.
 */
export type PinView =
  | {
      ok: true
      /**
       * The decision over a served list of this (origin, scope): for filtering a page, the decision
       * over that page; for deciding calls, the one over the latest complete list (a tool on another
       * page of a one-page decision reads as unlisted).
       */
      evaluation: SetEvaluation
      /** The catalog digest (pin-state.ts `catalogDigest`) of `evaluation.approvedSet`; null when it has none. */
      catalogDigest: ToolDigest | null
    }
  | { ok: false }

/** Why the edge refused a list or a call under `enforce`. */
export type PinDenialReason = 'changed' | 'pending' | 'pins-unavailable' | 'malformed-list'

/**
 * An edge-owned refusal, shaped like SEP-3313's classification: `class: 'governance'`, `code:
 * 'policy_blocked'`. `message` says what happened and `fix` what resolves it; both are edge-written
 * (the tool name is cut to 64 characters and JSON-quoted, no definition text is quoted).
 */
export interface PinDenial {
  code: 'policy_blocked'
  class: 'governance'
  reason: PinDenialReason
  /**
   * The JSON-RPC error code for clients up to 2025-06-18: -32602 for a tool that is not approved
   * (as invalid arguments are), -32603 when the pins could not be read or the origin's list is malformed.
   */
  rpcCode: -32602 | -32603
  message: string
  fix: string
  /** The tool name as called (cut to 64 characters), for calls. */
  tool?: string
  /** The digest the origin serves now, the one an operator would approve (absent when the definition has none). */
  servedDigest?: ToolDigest
  /** The approved digest of the name, for `changed`. */
  approvedDigest?: ToolDigest
}

/** The text of a denial as one string: `message` then `fix` (the isError content text, or the JSON-RPC error message). */
export function denialText(d: PinDenial): string {
  return `${d.message} ${d.fix}`
}

/** `JSON.stringify` of the name cut to 64 UTF-16 code units (the edge's rule for names in messages): quotes and control characters stay escaped. */
function quoteName(name: string): string {
  return JSON.stringify(boundText(name))
}

const NOT_SENT = 'This edge enforces tool pinning, so the call was not sent to the tool server.'

/** The denial for a call to a served tool that is not approved (module comment). */
export function notApprovedDenial(e: ToolEvaluation): PinDenial {
  const q = quoteName(e.name)
  const state = e.state === 'approved' ? 'changed' : e.state
  const base = { code: 'policy_blocked', class: 'governance', rpcCode: -32602, tool: boundText(e.name) } as const
  const served = e.served !== null ? { servedDigest: e.served } : {}
  const approved = e.pin ? { approvedDigest: e.pin.digest } : {}
  if (e.served === null) {
    const why =
      e.reason === 'duplicate'
        ? 'the tool server lists more than one definition under this name'
        : `its definition cannot be serialized as RFC 8785 canonical JSON (${e.problem?.reason === 'non-finite-number' ? 'a number out of range' : 'a lone surrogate'}${e.problem?.pointer ? ' at ' + e.problem.pointer : ''}), so it has no digest`
    return {
      ...base,
      reason: state,
      ...approved,
      message: `Tool ${q} is not approved: ${why}. ${NOT_SENT}`,
      fix: 'The tool server must serve a single definition that can be digested; an operator can then review and approve its digest.',
    }
  }
  const digest = e.served
  if (state === 'changed')
    return {
      ...base,
      reason: 'changed',
      ...served,
      ...approved,
      message: `Tool ${q} changed since an operator approved it (approved digest ${e.pin!.digest}, served digest ${digest}). ${NOT_SENT}`,
      fix: `An operator must review the change and approve digest ${digest} before the tool can be called.`,
    }
  if (e.reason === 'flagged')
    return {
      ...base,
      reason: 'pending',
      ...served,
      message: `Tool ${q} is not approved: this edge saw it for the first time with a definition its advisory scan flags (for example hidden instructions or a credential path), and first sight does not approve such a definition (served digest ${digest}). ${NOT_SENT}`,
      fix: `An operator must review the tool's advisory findings and approve digest ${digest} before it can be called.`,
    }
  return {
    ...base,
    reason: 'pending',
    ...served,
    message: `Tool ${q} is new: it is not in the approved tool set of this server (served digest ${digest}). ${NOT_SENT}`,
    fix: `An operator must review the tool and approve digest ${digest} before it can be called.`,
  }
}

/** The denial when the pins of (origin, scope) could not be read under `enforce` (fail closed). */
export function pinsUnavailableDenial(what: 'call' | 'list', name?: string): PinDenial {
  const d: PinDenial = {
    code: 'policy_blocked',
    class: 'governance',
    reason: 'pins-unavailable',
    rpcCode: -32603,
    message:
      what === 'call'
        ? `The approved tool set of this server could not be read (the pin store is unavailable). This edge enforces tool pinning and fails closed, so the call was not sent to the tool server.`
        : `The approved tool set of this server could not be read (the pin store is unavailable). This edge enforces tool pinning and fails closed, so it relays no tool list it cannot check.`,
    fix: 'Retry later; if this persists, an operator must check the edge\u2019s store.',
  }
  if (name !== undefined) d.tool = boundText(name)
  return d
}

/** What to relay for one `tools/list` result. */
export type ListFilterOutcome =
  /** `off` or `audit`: relay the origin's result exactly as it came (the same object). */
  | { kind: 'unchanged'; result: unknown }
  /**
   * `enforce`: relay `result`, a shallow copy of the origin's with `tools` holding only the approved
   * tools (their order and bytes kept) and the catalog digest added to `_meta`; `dropped` lists the
   * names left out (an entry without a string name counts in `droppedUnnamed`).
   */
  | { kind: 'filtered'; result: Record<string, unknown>; dropped: ToolEvaluation[]; droppedUnnamed: number }
  /** `enforce`: relay no tools at all; answer this request with the denial instead (as a JSON-RPC error). */
  | { kind: 'refused'; denial: PinDenial }

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Filters one `tools/list` result (the JSON-RPC `result` member: `{ tools, nextCursor?, _meta?, ... }`)
 * for a mode. Under `enforce`, a tool entry is kept only when it is an object whose string `name`
 * is `approved` in `view.evaluation` (a name the evaluation does not know is dropped: fail closed).
 * `_meta` keeps every member the origin sent; `io.mcp-edge/catalogDigest` is set (the edge's own
 * key; an origin's value under it is replaced). A `_meta` that is not an object is left as sent
 * and gets no digest. Every other member (`nextCursor`, `ttlMs`, `cacheScope`, ...) is kept as is.
 * @param result the parsed `result` of one `tools/list` response (one page)
 * @param view the decision computed from this same page ({@link PinView}), or the store failure
 * @returns the outcome; `refused` under `enforce` when the pins could not be read, or when the
 *   result is not an object with a `tools` array (nothing in it could be checked)
 */
export function filterToolsListResult(result: unknown, view: PinView, mode: PinningMode): ListFilterOutcome {
  if (mode !== 'enforce') return { kind: 'unchanged', result }
  if (!view.ok) return { kind: 'refused', denial: pinsUnavailableDenial('list') }
  if (!isRecord(result) || !Array.isArray(result.tools))
    return {
      kind: 'refused',
      denial: {
        code: 'policy_blocked',
        class: 'governance',
        reason: 'malformed-list',
        rpcCode: -32603,
        message: 'The tool server answered tools/list without a tools array. This edge enforces tool pinning and relays only tools it has checked.',
        fix: 'The tool server must answer tools/list with a result holding a tools array.',
      },
    }
  const tools = view.evaluation.tools
  const kept: unknown[] = []
  const dropped = new Map<string, ToolEvaluation>()
  let droppedUnnamed = 0
  for (const t of result.tools) {
    const name = isRecord(t) && typeof t.name === 'string' ? t.name : undefined
    const e = name === undefined ? undefined : tools.get(name)
    if (e?.state === 'approved') kept.push(t)
    else if (e) dropped.set(e.name, e)
    else if (name !== undefined) dropped.set(name, { name, state: 'pending', served: null })
    else droppedUnnamed++
  }
  const out: Record<string, unknown> = { ...result, tools: kept }
  if (view.catalogDigest !== null) {
    if (result._meta === undefined) out._meta = { [CATALOG_DIGEST_META]: view.catalogDigest }
    else if (isRecord(result._meta)) out._meta = { ...result._meta, [CATALOG_DIGEST_META]: view.catalogDigest }
  }
  return { kind: 'filtered', result: out, dropped: [...dropped.values()], droppedUnnamed }
}

/** The verdict on one `tools/call` (body `name`, or the 2026-07-28 `Mcp-Name` header; each batch element on its own). */
export type CallPinVerdict =
  /**
   * Send it on (after the usual validation). `state` is what the decision says, for the audit log:
   * a served state, `unlisted` (the name is not in the latest list), `unavailable` (pins not read
   * under `audit`), or absent under `off`. `pin` is the approved pin when the name has one: under
   * `enforce` the call is validated against that approved definition, never a newer one.
   */
  | { kind: 'allow'; state?: ToolPinState | 'unlisted' | 'unavailable'; pin?: ApprovedPin }
  /** `enforce`: answer with the denial; the origin never sees the call. */
  | { kind: 'block'; denial: PinDenial; evaluation?: ToolEvaluation }
  /**
   * `enforce`: the name is neither served nor approved. Answer it as an unknown tool (-32602, the
   * edge's usual rule, after its usual refresh of the list), and never forward it, whatever
   * `UNKNOWN_TOOL` says: a tool the origin does not list has no approved digest.
   */
  | { kind: 'unknown' }

/**
 * Decides one `tools/call` by tool name.
 * - `off`: allow. `audit`: allow, with the state for the log.
 * - `enforce`: served and approved -> allow; served and changed or pending -> block
 *   ({@link notApprovedDenial}); not served but approved (a caller's subset, or a tool the latest
 *   list left out) -> allow with its pin; neither -> unknown; pins unreadable -> block
 *   ({@link pinsUnavailableDenial}).
 * @param name the tool name as called
 */
export function decideCall(name: string, view: PinView, mode: PinningMode): CallPinVerdict {
  if (mode === 'off') return { kind: 'allow' }
  if (!view.ok) return mode === 'enforce' ? { kind: 'block', denial: pinsUnavailableDenial('call', name) } : { kind: 'allow', state: 'unavailable' }
  const e = view.evaluation.tools.get(name)
  // The common case first, with no closure or spread: it runs for every forwarded call.
  if (e !== undefined && e.state === 'approved') return { kind: 'allow', state: 'approved', pin: e.pin! }
  const pin = e?.pin ?? view.evaluation.approvedSet.get(name)
  if (mode === 'audit') return allowed(e ? e.state : 'unlisted', pin)
  if (e) return { kind: 'block', denial: notApprovedDenial(e), evaluation: e }
  return pin ? allowed('unlisted', pin) : { kind: 'unknown' }
}

function allowed(state: ToolPinState | 'unlisted', pin: ApprovedPin | undefined): CallPinVerdict {
  return pin ? { kind: 'allow', state, pin } : { kind: 'allow', state }
}
