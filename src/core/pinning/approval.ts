/**
 * @module core/pinning/approval
 * An operator's approval, decided against what the origin serves now (docs/pinning.md "Operator
 * flow"): only the exact served digest is accepted, so a definition swapped between the diff and
 * the approval is never approved by accident (a stale digest is refused and names the current one).
 * Used by the admin API (pinning/pin-operations.ts); `mcp-edge tools approve <tool>@<digest>` is to use it through that API. Pure; never throws.
 */
import { classifyChange, isToolDigest, type FieldDigests, type ToolDigest } from './tool-digest'
import type { ApprovedPin, PinSource, SetEvaluation } from './pin-state'

/** `<tool>@<digest>` as typed on the command line, split. */
export type ApprovalArgument = { ok: true; name: string; digest: ToolDigest } | { ok: false; message: string }

/**
 * Splits `<tool>@sha256:<64 hex>` at the last `@sha256:` (a tool name may itself contain `@`).
 * @returns the name and digest, or a message saying what the argument must look like (it never
 *   repeats the argument: it may be long or hold control characters)
 */
export function parseApprovalArgument(arg: string): ApprovalArgument {
  const at = arg.lastIndexOf('@sha256:')
  const name = at > 0 ? arg.slice(0, at) : ''
  const digest = at > 0 ? arg.slice(at + 1) : ''
  if (name === '' || !isToolDigest(digest))
    return { ok: false, message: 'expected <tool>@<digest>, the digest as "sha256:" followed by 64 lowercase hex digits (copy it from `mcp-edge tools list`)' }
  return { ok: true, name, digest }
}

/** Why an approval is refused. */
export type ApprovalRefusal = 'not-served' | 'no-digest' | 'stale-digest'

/** The outcome of one approval. */
export type ApprovalDecision =
  /** Write `pin` (source and time as given); `unchanged` when that digest was already the approved one (nothing to write). */
  | { ok: true; pin: ApprovedPin; unchanged: boolean }
  /** Refused: nothing is written; `message` says why and what to do; `servedDigest` is the current one when there is one. */
  | { ok: false; reason: ApprovalRefusal; message: string; servedDigest?: ToolDigest }

/**
 * Decides an approval of `name` at `digest`.
 * @param evaluation the decision over the latest complete list of the (origin, scope), read just now
 * @param now RFC 3339 UTC time written as `approvedAt`
 * @param source `operator` (admin API, CLI) or `manifest`
 * @returns refused when the name is not served (`not-served`), its definition has no digest or is
 *   served twice (`no-digest`), or `digest` is not the served digest (`stale-digest`, the served one given)
 */
export function decideApproval(evaluation: SetEvaluation, name: string, digest: ToolDigest, now: string, source: PinSource = 'operator'): ApprovalDecision {
  const e = evaluation.tools.get(name)
  if (!e) return { ok: false, reason: 'not-served', message: 'the tool server does not list this tool now; only a served definition can be approved' }
  if (e.served === null)
    return {
      ok: false,
      reason: 'no-digest',
      message:
        e.reason === 'duplicate'
          ? 'the tool server lists more than one definition under this name; none can be approved'
          : 'the served definition cannot be serialized as RFC 8785 canonical JSON, so it has no digest to approve',
    }
  if (e.served !== digest)
    return {
      ok: false,
      reason: 'stale-digest',
      servedDigest: e.served,
      message: `the tool server now serves digest ${e.served}, not the one given; review the current definition (mcp-edge tools diff) and approve its digest`,
    }
  if (e.pin && e.pin.digest === digest && e.state === 'approved') return { ok: true, pin: e.pin, unchanged: true }
  return { ok: true, pin: { digest, approvedAt: now, source }, unchanged: false }
}

/**
 * Whether a change is cosmetic only (tool-digest.ts `classifyChange`): the test `approve
 * --all-cosmetic` applies per tool. A tool with no approved pin (pending) is never cosmetic: a new
 * tool needs a review of its own.
 * @param approved the field sub-digests of the approved definition, or undefined when there is none
 */
export function isCosmeticOnly(approved: FieldDigests | undefined, served: FieldDigests): boolean {
  return approved !== undefined && classifyChange(approved, served).class === 'cosmetic'
}
