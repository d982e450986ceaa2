/**
 * @module core/guards/request/tool-filter
 * The tool filter (`TOOLS_ALLOW`, `TOOLS_DENY`, an origin's `toolsAllow` / `toolsDeny`;
 * docs/security.md): which tools a client may see and call. One guard, three places it acts:
 * - the request guard {@link toolFilterGuard}: a `tools/call` of a hidden tool gets exactly the
 *   unknown-tool answer (validation/tools-call.ts `unknownToolAnswer`: -32602, the same text in
 *   every era), whatever `UNKNOWN_TOOL` says, and never reaches the origin;
 * - {@link filterToolsListReply}: every relayed `tools/list` result (JSON body, SSE event, batch
 *   element, every page) loses its hidden tools before the edge learns from it (the reply grader);
 * - {@link filterPulledTools}: the edge's own tool-list pull (call-context.ts `pullOriginTools`, the
 *   pull of a call and the admin refresh alike) loses them too, so the edge never learns a hidden tool.
 *
 * The global lists and an origin's own narrow each other: a tool is visible on an origin when both
 * filters let it through (a deny in either hides it; each allow list that is set must match it).
 * Pure and runtime-neutral.
 */
import type { Config } from '../../config'
import type { Exchange, Pending } from '../../exchange'
import { idLabel } from '../../exchange'
import { isObject, resultText } from '../../jsonrpc/jsonrpc'
import { boundText } from '../../jsonrpc/bound-text'
import { requestIdOf } from '../../observe/request-id'
import { filterToolListResult, toolFilter, type ToolFilter } from '../../access/tool-filter'
import { unknownToolAnswer } from '../../validation/tools-call'
import { recordDenial } from '../denial'
import type { RequestGuard, RequestVerdict } from '../guard'

const filters = new WeakMap<Config, Map<string, ToolFilter>>()

/**
 * The tool filter of one origin: the global lists and the origin's own, both applied (see the
 * module comment). Built once per configuration and origin.
 * @param originId `default` for `ORIGIN_URL`, else a name of `ORIGINS`
 */
export function toolFilterOf(config: Config, originId: string): ToolFilter {
  let byOrigin = filters.get(config)
  if (!byOrigin) filters.set(config, (byOrigin = new Map()))
  let f = byOrigin.get(originId)
  if (f) return f
  const global = toolFilter({ allow: config.toolsAllow, deny: config.toolsDeny })
  const own = originId !== 'default' && Object.hasOwn(config.origins, originId) ? config.origins[originId]! : undefined
  const local = own ? toolFilter({ allow: own.toolsAllow, deny: own.toolsDeny }) : toolFilter({})
  if (local.passAll) f = global
  else if (global.passAll) f = local
  else
    f = {
      allow: [...global.allow, ...local.allow],
      deny: [...global.deny, ...local.deny],
      passAll: false,
      isToolVisible: (name) => global.isToolVisible(name) && local.isToolVisible(name),
    }
  byOrigin.set(originId, f)
  return f
}

/**
 * The `tools/list` result filter for one relayed response: the hidden tools removed from its
 * `result.tools`, every other member (`nextCursor`, `_meta`, `ttlMs`, `cacheScope`) kept.
 * @returns null when nothing changes (not a tools/list answer, no filter, no hidden tool on this
 *   page): the origin's bytes are relayed as they came; else the filtered message and its text
 *   (`{"jsonrpc":"2.0","id":<the id token as forwarded>,"result":...}`)
 */
export function filterToolsListReply(ex: Exchange, p: Pending, msg: Record<string, unknown>): { msg: Record<string, unknown>; text: string } | null {
  if (p.method !== 'tools/list' || !isObject(msg.result)) return null
  const filter = toolFilterOf(ex.deps.config, ex.target.id)
  if (filter.passAll) return null
  const f = filterToolListResult(filter, msg.result)
  if (f.removed === 0) return null
  return { msg: { ...msg, result: f.result }, text: resultText(p.id, f.result) }
}

/** The tools of the edge's own tool-list pull without the hidden ones (the edge never learns them). */
export function filterPulledTools(config: Config, originId: string, tools: unknown[]): unknown[] {
  const filter = toolFilterOf(config, originId)
  if (filter.passAll) return tools
  return (filterToolListResult(filter, { tools }).result as { tools: unknown[] }).tools
}

const PASS: RequestVerdict = { kind: 'pass' }

/**
 * The request guard: a `tools/call` of a tool the filter hides is answered as an unknown tool,
 * logged and counted `tool_filtered`. Synchronous. In the chain after the rate budget, so a call to
 * a hidden tool costs what a call to a missing tool costs.
 */
export const toolFilterGuard: RequestGuard = {
  name: 'tool_filter',
  phase: 'request',
  at: 'message',
  appliesTo: (method) => method === 'tools/call',
  check(c, { ex }) {
    const toolName = typeof c.params?.name === 'string' ? c.params.name : null
    if (toolName === null) return PASS
    const filter = toolFilterOf(ex.deps.config, ex.target.id)
    if (filter.passAll || filter.isToolVisible(toolName)) return PASS
    recordDenial(ex.deps, ex.requestId ?? requestIdOf(undefined), ex.target.id, {
      reason: 'tool_filtered',
      id: idLabel(c.id),
      method: c.method,
      tool: boundText(toolName),
      fix: 'TOOLS_ALLOW / TOOLS_DENY (or this origin\'s toolsAllow / toolsDeny in ORIGINS) hide this tool; the client was answered "Unknown tool"',
    })
    return { kind: 'deny', answer: unknownToolAnswer(c.id, toolName) }
  },
}
