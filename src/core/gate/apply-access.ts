/**
 * @module core/gate/apply-access
 * Who may call which tool, and how often, applied to one POST (docs/security.md). Two entry
 * points, each called from one place, so other gates (tool pinning) chain next to them; access
 * runs first, so a tool it hides is invisible to everything after it:
 * - {@link filterToolsListReply}: the `tools/list` result filter, called by the reply grader
 *   (grading/reply-grader.ts) for every response it relays (JSON body, SSE event, batch
 *   element, every page) before the edge learns from it;
 * - {@link gateRequest}: the request gate, called by stage 5 (pipeline.ts `decide`) for every
 *   JSON-RPC request, single or batch element, before validation and forwarding.
 *
 * Decisions:
 * - The global lists (`TOOLS_ALLOW`, `TOOLS_DENY`) and an origin's own (`ORIGINS.<name>.toolsAllow`,
 *   `.toolsDeny`) narrow each other: a tool is visible on an origin when both filters let it
 *   through (a deny in either hides it; each allow list that is set must match it).
 * - The edge never learns a hidden tool: relayed lists are filtered before learning, and the
 *   edge's own tool-list pull is filtered the same way ({@link filterPulledTools}).
 * - A call to a hidden tool gets exactly the unknown-tool answer (validation/tools-call.ts
 *   `unknownToolAnswer`: -32602, the same text in every era), whatever `UNKNOWN_TOOL` says (with
 *   `forward` an unknown tool goes to the origin, a hidden one never does).
 * - Rate limits count every JSON-RPC message a caller sends to the origin (each batch element on
 *   its own; requests, notifications and responses to the origin's requests alike) against the
 *   caller's budget, and `tools/call` requests against the matching tool budgets too
 *   ({@link gateRequest}, {@link gateWithoutId}): a caller over its budget reaches the origin with
 *   nothing. The charge comes before the tool filter, so a call to a hidden tool costs what a call
 *   to a missing tool costs. The caller is `ex.identity.sub` (a verified token) or else the caller
 *   scope (a digest of the `Authorization` header).
 * - When the limiter cannot answer (Redis down, a binding failing), the request goes on (fail
 *   open): a limiter outage must not stop every call; it is logged (at most once per 10 s per edge).
 * Pure and runtime-neutral.
 */
import type { Config } from '../config'
import type { Exchange, Pending } from '../exchange'
import { idLabel } from '../exchange'
import type { Classified } from '../request/classify'
import { ErrorCode, isObject, NULL_ID, resultText, type RawId } from '../jsonrpc/jsonrpc'
import { boundText } from '../jsonrpc/bound-text'
import { requestIdOf } from '../observe/request-id'
import type { AccessDenial, CallAnswer } from '../local-answer'
import { filterToolListResult, toolFilter, type ToolFilter } from '../access/tool-filter'
import { MemoryRateLimiter, type RateBudget, type RateDecision, type RateLimiter } from '../access/rate-limit'
import { unknownToolAnswer } from '../validation/tools-call'

/** The denial reasons of this gate (`mcp_edge_denials_total{reason}`). */
export type AccessDenialReason = 'tool_filtered' | 'rate_limited'

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

/**
 * One denial: one log line `{ msg: "mcp.denied", rid, origin, reason, id, method, tool?, ... }`
 * (never a token or an argument value) and +1 on `mcp_edge_denials_total{reason}`.
 * @param extra fixed fields for the line (the budget, the fix for the operator)
 */
export function recordDenial(ex: Exchange, reason: string, id: RawId, method: string, extra: Record<string, unknown> = {}): void {
  ex.deps.metrics.countDenial(reason)
  ex.deps.log({ level: 'warn', msg: 'mcp.denied', rid: ex.requestId ?? requestIdOf(undefined), origin: ex.target.id, reason, id: idLabel(id), method, ...extra })
}

/** `n request(s) per second|minute` */
function rate(b: RateBudget, what: string): string {
  return `${b.limit} ${what}${b.limit === 1 ? '' : 's'} per ${b.windowMs === 1000 ? 'second' : 'minute'}`
}

/**
 * The error of a refused request: -31004 naming the budget, when to retry and what fixes it;
 * `data: { source: "edge", reason: "rate_limited", budget, retryAfterS }`.
 */
export function rateLimitedDenial(id: RawId, b: RateBudget, retryAfterS: number): AccessDenial {
  const what = b.tool === null ? `${rate(b, 'request')} from one caller` : `${rate(b, 'call')} from one caller to tools matching ${JSON.stringify(b.tool.source)}`
  const message =
    `Rate limit exceeded: this edge allows ${what} (RATE_LIMIT budget ${b.source}), and this caller has used it up. ` +
    `Retry after ${retryAfterS} s; to send more, spread the requests out, or ask the operator to raise RATE_LIMIT.`
  return {
    kind: 'access',
    status: 429,
    id,
    error: { code: ErrorCode.RateLimited, message, data: { source: 'edge', reason: 'rate_limited', budget: b.source, retryAfterS } },
    headers: { 'retry-after': String(retryAfterS) },
  }
}

/** Last time a limiter outage was logged, per limiter (at most one line per 10 s). */
const outageLogged = new WeakMap<RateLimiter, number>()

function limiterDown(ex: Exchange, limiter: RateLimiter, e: unknown): void {
  const now = Date.now()
  if ((outageLogged.get(limiter) ?? 0) > now - 10_000) return
  outageLogged.set(limiter, now)
  ex.deps.log({
    level: 'warn',
    msg: 'access.rate_limit_unavailable',
    rid: ex.requestId ?? requestIdOf(undefined),
    origin: ex.target.id,
    error: e instanceof Error ? e.name : 'error',
    text: 'the rate limiter could not be asked; requests go on uncounted (fail open) until it answers again',
  })
}

type Gate = CallAnswer | AccessDenial | null

/**
 * The request gate (see the module comment): charges the caller's budgets, then hides filtered
 * tools. Synchronous with no limits, or with the in-memory limiter; a promise with a remote
 * limiter (Redis, the Workers binding).
 * @param caller the caller's identity for rate limits (`ex.identity.sub`, else the caller scope)
 * @returns the local answer of a denied request, or null to go on
 */
export function gateRequest(ex: Exchange, c: Extract<Classified, { kind: 'request' }>, caller: string): Gate | Promise<Gate> {
  const { config } = ex.deps
  const toolName = c.method === 'tools/call' && typeof c.params?.name === 'string' ? c.params.name : null
  const limiter = ex.deps.rateLimiter
  if (!config.rateLimits.empty && limiter) {
    const budgets = config.rateLimits.budgetsFor(toolName)
    if (limiter instanceof MemoryRateLimiter) {
      for (const b of budgets) {
        const d = limiter.takeNow(caller + '\n' + b.source, 1, b.limit, b.windowMs)
        if (!d.ok) return refuse(ex, c.id, c.method, b, d, toolName)
      }
    } else return chargeRemote(ex, c, limiter, budgets, caller, toolName)
  }
  return filterCall(ex, c, toolName)
}

async function chargeRemote(
  ex: Exchange,
  c: Extract<Classified, { kind: 'request' }>,
  limiter: RateLimiter,
  budgets: RateBudget[],
  caller: string,
  toolName: string | null
): Promise<Gate> {
  const refused = await takeRemote(ex, limiter, budgets, caller)
  if (refused) return refuse(ex, c.id, c.method, refused.b, refused.d, toolName)
  return filterCall(ex, c, toolName)
}

/** Charges `budgets` in order on a remote limiter; the first refusal, or null (a limiter outage lets the message go on, logged). */
async function takeRemote(ex: Exchange, limiter: RateLimiter, budgets: RateBudget[], caller: string): Promise<{ b: RateBudget; d: RateDecision } | null> {
  for (const b of budgets) {
    let d: RateDecision
    try {
      d = await limiter.take(caller + '\n' + b.source, 1, b.limit, b.windowMs)
    } catch (e) {
      limiterDown(ex, limiter, e)
      return null
    }
    if (!d.ok) return { b, d }
  }
  return null
}

function refuse(ex: Exchange, id: RawId, method: string, b: RateBudget, d: RateDecision, toolName: string | null): AccessDenial {
  recordDenial(ex, 'rate_limited', id, method, { ...(toolName !== null ? { tool: boundText(toolName) } : {}), budget: b.source, retryAfterS: d.retryAfterS })
  return rateLimitedDenial(id, b, d.retryAfterS)
}

/**
 * The gate of a message without an id that goes to the origin: a notification, or the client's
 * response to a request of the origin (sampling, elicitation, roots). It costs one unit of the
 * caller's budget, like a request (no tool budget applies). A refused one is not forwarded; its
 * answer is the {@link rateLimitedDenial} with id null (HTTP 429, `Retry-After`): MCP Streamable
 * HTTP says a server that cannot accept a notification or response answers an HTTP error status,
 * with a JSON-RPC error without an id (docs/design.md D5). Inside a batch it gets no entry (D15),
 * only its grade row.
 * @param method the notification's method; `''` for a response
 * @returns the denial, or null to forward; a promise with a remote limiter
 */
export function gateWithoutId(ex: Exchange, method: string, caller: string): AccessDenial | null | Promise<AccessDenial | null> {
  const limiter = ex.deps.rateLimiter
  if (ex.deps.config.rateLimits.empty || !limiter) return null
  const budgets = ex.deps.config.rateLimits.budgetsFor(null)
  if (budgets.length === 0) return null
  if (limiter instanceof MemoryRateLimiter) {
    for (const b of budgets) {
      const d = limiter.takeNow(caller + '\n' + b.source, 1, b.limit, b.windowMs)
      if (!d.ok) return refuse(ex, NULL_ID, method, b, d, null)
    }
    return null
  }
  return takeRemote(ex, limiter, budgets, caller).then((r) => (r ? refuse(ex, NULL_ID, method, r.b, r.d, null) : null))
}

function filterCall(ex: Exchange, c: Extract<Classified, { kind: 'request' }>, toolName: string | null): CallAnswer | null {
  if (toolName === null) return null
  const filter = toolFilterOf(ex.deps.config, ex.target.id)
  if (filter.passAll || filter.isToolVisible(toolName)) return null
  recordDenial(ex, 'tool_filtered', c.id, c.method, {
    tool: boundText(toolName),
    fix: 'TOOLS_ALLOW / TOOLS_DENY (or this origin\'s toolsAllow / toolsDeny in ORIGINS) hide this tool; the client was answered "Unknown tool"',
  })
  return unknownToolAnswer(c.id, toolName)
}
