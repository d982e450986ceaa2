/**
 * @module core/grading/learn-from-replies
 * What the validation side does with the origin's replies (one call per hook, so grading stays readable):
 * - {@link onToolsListReply}: learn the schemas of every `tools/list` page that passes through
 *   (docs/design.md §7), in the background (`deps.defer`), so the response is not delayed, under
 *   the scope its `cacheScope` names (public, or the caller's private scope; ./scope.ts); called by
 *   reply-grader.ts once a response's grade is final;
 * - {@link onToolsCallReply}: the D12 output-schema check (./output-schema), the `output_schema`
 *   reply guard's (./grading-guards.ts).
 */
import type { Exchange, Pending } from '../exchange'
import type { GradedResponse } from './grade-reply'
import { isObject } from '../jsonrpc/jsonrpc'
import { checkOutputSchema } from './output-schema'
import { listScope, PUBLIC_SCOPE } from '../validation/caller-scope'

/**
 * Learns one `tools/list` result page (any page: the cursor does not matter, each tool is keyed by
 * name). The origin's `ttlMs` hint (2026-07-28) is kept with the records. The page's `cacheScope`
 * decides the KV scope (docs/protocol-rules.md M39, B7): `public`, else the caller's private scope
 * (`ex.scope`, set by the pipeline); a private page whose caller scope is unknown is not learned.
 * Never throws; the reply is relayed unchanged.
 */
export function onToolsListReply(ex: Exchange, p: Pending, msg: Record<string, unknown>): void {
  if (p.method !== 'tools/list' || !isObject(msg.result) || !Array.isArray(msg.result.tools) || ('error' in msg && msg.error !== null)) return
  const result = msg.result
  const ttlMs = typeof result.ttlMs === 'number' ? result.ttlMs : undefined
  const scope = listScope(result.cacheScope, ex.era, ex.scope)
  if (scope === null) return
  try {
    ex.deps.defer(ex.deps.registry.learn(ex.target.id, scope, result.tools as unknown[], ex.era, ttlMs).catch(() => undefined))
  } catch {
    // learning is best effort: the reply goes out either way
  }
}

/**
 * D12 for one graded `tools/call` reply. Returns the grading to use (unchanged, or in strict mode
 * an `isError` result replacing the reply) and the fields to add to the grade row.
 */
export function onToolsCallReply(
  ex: Exchange,
  p: Pending,
  msg: Record<string, unknown>,
  g: GradedResponse
): { graded: GradedResponse; row?: { outputSchema: 'invalid' | 'unchecked' } } {
  if (p.method !== 'tools/call' || p.tool === undefined || !isObject(msg.result) || g.isError || (g.grade !== 'ok' && g.grade !== 'unvalidated')) return { graded: g }
  // The tool the call was validated against; memory's current copy when it went out unvalidated.
  const tool = p.resolved ?? ex.deps.registry.peek(ex.target.id, ex.scope ?? PUBLIC_SCOPE, p.tool)
  const c = checkOutputSchema(msg.result, tool, ex.deps.config.outputSchema, p.id, ex.era, p.tool, ex.requestId)
  if (c.status === 'unchecked') return { graded: g, row: { outputSchema: 'unchecked' } }
  if (c.status !== 'invalid') return { graded: g }
  if (c.text === undefined) return { graded: g, row: { outputSchema: 'invalid' } }
  return { graded: { grade: 'tool_error', isError: true, text: c.text }, row: { outputSchema: 'invalid' } }
}

/**
 * True when `changed` (a `tools/call` result whose `structuredContent` a result check redacted or
 * stripped) breaks the tool's `outputSchema` where `original` kept it (`OUTPUT_SCHEMA=off`: never):
 * such a result is refused rather than relayed broken (guards/reply-chain.ts, asked by the reply grader).
 */
export function brokeOutputSchema(ex: Exchange, p: Pending, original: Record<string, unknown>, changed: Record<string, unknown>): boolean {
  if (ex.deps.config.outputSchema === 'off' || p.method !== 'tools/call' || p.tool === undefined) return false
  const tool = p.resolved ?? ex.deps.registry.peek(ex.target.id, ex.scope ?? PUBLIC_SCOPE, p.tool)
  if (checkOutputSchema(changed, tool, 'warn', p.id, ex.era, p.tool).status !== 'invalid') return false
  return checkOutputSchema(original, tool, 'warn', p.id, ex.era, p.tool).status === 'valid'
}
