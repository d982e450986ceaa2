/**
 * @module core/guards/request/tool-filter
 * The tool filter (`TOOLS_ALLOW`, `TOOLS_DENY`, an origin's `toolsAllow` / `toolsDeny`;
 * docs/security.md): which tools a client may see and call. One guard, three places it acts:
 * - the request guard {@link toolFilterGuard}: a `tools/call` of a hidden tool gets exactly the
 *   unknown-tool answer (validation/tools-call.ts `unknownToolAnswer`: -32602, the same text in
 *   every era), whatever `UNKNOWN_TOOL` says, and never reaches the origin;
 * - the reply guard {@link listFilterGuard} (`list_filter`, first in the reply chain): every
 *   relayed `tools/list` result (JSON body, SSE event, batch element, every page) loses its hidden
 *   tools before the edge learns from it, and so does the edge's own tool-list pull
 *   (call-context.ts `pullOriginTools`, the pull of a call and the admin refresh alike): the edge
 *   never learns a hidden tool.
 *
 * The global lists and an origin's own narrow each other: a tool is visible on an origin when both
 * filters let it through (a deny in either hides it; each allow list that is set must match it).
 * Pure and runtime-neutral.
 */
import type { Config } from '../../config'
import { idLabel } from '../../exchange'
import { boundText } from '../../jsonrpc/bound-text'
import { requestIdOf } from '../../observe/request-id'
import { filterToolListResult, toolFilter, type ToolFilter } from '../../access/tool-filter'
import { unknownToolAnswer } from '../../validation/tools-call'
import { recordDenial } from '../denial'
import type { ReplyGuard, ReplyVerdict, RequestGuard, RequestVerdict } from '../guard'

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

/** True when a tool filter is set, globally or for an origin (else the tool filter has nothing to hide). */
export function hasToolFilter(config: Config): boolean {
  if (config.toolsAllow.length > 0 || config.toolsDeny.length > 0) return true
  return Object.values(config.origins).some((o) => (o.toolsAllow?.length ?? 0) > 0 || (o.toolsDeny?.length ?? 0) > 0)
}

const LIST_PASS: ReplyVerdict = { kind: 'pass' }

/**
 * The reply guard of the tool filter, `list_filter`: a `tools/list` result (a relayed one, every
 * page, or the edge's own pull) loses its hidden tools, every other member (`nextCursor`, `_meta`,
 * `ttlMs`, `cacheScope`) kept; first in the reply chain, so nothing learns or decides a hidden
 * tool. A page with no hidden tool passes (the origin's bytes are relayed as they came).
 * @returns the guard, or null when no filter is set
 */
export function listFilterGuard(config: Config): ReplyGuard | null {
  if (!hasToolFilter(config)) return null
  return {
    name: 'list_filter',
    phase: 'reply',
    stage: 'mutate',
    reads: 'result',
    appliesTo: (method) => method === 'tools/list',
    check({ result }, ctx) {
      const filter = toolFilterOf(config, ctx.originId)
      if (filter.passAll) return LIST_PASS
      const f = filterToolListResult(filter, result)
      return f.removed === 0 ? LIST_PASS : { kind: 'change', result: f.result as Record<string, unknown> }
    },
  }
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
