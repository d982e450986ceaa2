/**
 * @module core/guards/request/arguments
 * Argument validation, the last request guard (validation/tools-call.ts decides; docs/design.md
 * §5): a `tools/call` whose arguments do not fit the tool's `inputSchema` (the approved one under
 * `TOOL_PINNING=enforce`) is answered by the edge (-32602, or an `isError` result by `INVALID_ARGS`
 * and the era); in 2026-07-28 the `Mcp-Param-*` headers are checked against the tool's
 * `x-mcp-header` arguments first (docs/protocol-rules.md C10). A call it accepts is forwarded with
 * what grading needs (the tool, whether it was validated, the compiled tool). Its refusals are
 * graded answers, not denials: they are counted in `mcp_edge_grades_total`. Synchronous when the
 * tool is fresh in memory (2025 eras); a promise when it has to be read or pulled, and always in
 * 2026-07-28.
 */
import { isObject } from '../../jsonrpc/jsonrpc'
import { isModern } from '../../jsonrpc/versions'
import { checkParamHeaders } from '../../protocol/param-headers'
import { findTool, validateToolsCall, type CallVerdict } from '../../validation/tools-call'
import type { Pending } from '../../exchange'
import type { GuardedRequest, RequestGuard, RequestGuardContext, RequestVerdict } from '../guard'

/** The argument guard (always in the chain: `tools/call` validation is what the edge is for). */
export const argumentsGuard: RequestGuard = {
  name: 'arguments',
  phase: 'request',
  at: 'message',
  appliesTo: (method) => method === 'tools/call',
  check(c, ctx) {
    if (isModern(ctx.ex.era)) return modernCall(c, ctx)
    const verdict = ctx.traced(() => validateToolsCall(c.id, c.params, ctx.tools(ctx.scope), c.text.length, ctx.info.pinned))
    return verdict instanceof Promise ? verdict.then((v) => fromVerdict(c, v)) : fromVerdict(c, verdict)
  },
}

/** A 2026-07-28 call: Mcp-Param-* headers first, then the arguments. */
async function modernCall(c: GuardedRequest, ctx: RequestGuardContext): Promise<RequestVerdict> {
  const tools = ctx.tools(ctx.scope)
  const p = c.params
  if (p && typeof p.name === 'string' && (p.arguments === undefined || isObject(p.arguments))) {
    const tool = ctx.info.pinned ?? (await findTool(tools, p.name))
    const r = tool ? checkParamHeaders(c.id, tool.record.inputSchema, (p.arguments as Record<string, unknown> | undefined) ?? {}, ctx.headers) : null
    if (r) return { kind: 'deny', answer: r }
  }
  return fromVerdict(c, await ctx.traced(() => validateToolsCall(c.id, c.params, tools, c.text.length, ctx.info.pinned)))
}

function fromVerdict(c: GuardedRequest, verdict: CallVerdict): RequestVerdict {
  if (verdict.kind === 'call') return { kind: 'deny', answer: verdict }
  const pending: Pending = { id: c.id, method: c.method, tool: verdict.tool, unvalidated: verdict.unvalidated, answered: false }
  if (verdict.resolved) pending.resolved = verdict.resolved
  return { kind: 'forward', pending }
}
