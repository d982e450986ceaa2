/**
 * @module core/guards/request/rate-budget
 * The rate budget (`RATE_LIMIT`, docs/security.md): how often a caller may send. Rate limits count
 * every JSON-RPC message a caller sends to the origin (each batch element on its own; requests,
 * notifications and responses to the origin's requests alike) against the caller's budget, and
 * `tools/call` requests against the matching tool budgets too: a caller over its budget reaches the
 * origin with nothing.
 * - {@link rateBudgetGuard}: the request guard, first of the message guards: the charge comes before
 *   the tool filter, so a call to a hidden tool costs what a call to a missing tool costs;
 * - {@link gateWithoutId}: a notification or a client's response, which no request guard sees (it
 *   has no id to answer), charged the same way.
 * The caller is `ex.identity.sub` (a verified token) or else the caller scope (a digest of the
 * `Authorization` header). When the limiter cannot answer (Redis down, a binding failing), the
 * request goes on (fail open): a limiter outage must not stop every call; it is logged (at most once
 * per 10 s per edge). Pure and runtime-neutral.
 */
import type { Config } from '../../config'
import type { Exchange } from '../../exchange'
import { idLabel } from '../../exchange'
import { ErrorCode, NULL_ID, type RawId } from '../../jsonrpc/jsonrpc'
import { boundText } from '../../jsonrpc/bound-text'
import { requestIdOf } from '../../observe/request-id'
import type { AccessDenial } from '../../local-answer'
import { MemoryRateLimiter, type RateBudget, type RateDecision, type RateLimiter } from '../../access/rate-limit'
import { recordDenial } from '../denial'
import type { RequestGuard, RequestVerdict } from '../guard'

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

const PASS: RequestVerdict = { kind: 'pass' }

/**
 * The request guard (see the module comment): charges the caller's budgets in order, the first
 * refusal wins. Synchronous with the in-memory limiter; a promise with a remote limiter (Redis, the
 * Workers binding). Present when `RATE_LIMIT` sets budgets; passes when the runtime gave no limiter.
 */
export function rateBudgetGuard(config: Config): RequestGuard | null {
  if (config.rateLimits.empty) return null
  return {
    name: 'rate_budget',
    phase: 'request',
    at: 'message',
    appliesTo: () => true,
    check(c, { ex, scope }) {
      const limiter = ex.deps.rateLimiter
      if (!limiter) return PASS
      // The rate-limit caller: the verified token's subject, else the caller scope the edge keys private lists by.
      const caller = ex.identity?.sub ?? scope
      const toolName = c.method === 'tools/call' && typeof c.params?.name === 'string' ? c.params.name : null
      const budgets = config.rateLimits.budgetsFor(toolName)
      if (limiter instanceof MemoryRateLimiter) {
        for (const b of budgets) {
          const d = limiter.takeNow(caller + '\n' + b.source, 1, b.limit, b.windowMs)
          if (!d.ok) return { kind: 'deny', answer: refuse(ex, c.id, c.method, b, d, toolName) }
        }
        return PASS
      }
      return takeRemote(ex, limiter, budgets, caller).then((r) => (r ? { kind: 'deny', answer: refuse(ex, c.id, c.method, r.b, r.d, toolName) } : PASS))
    },
  }
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
  recordDenial(ex.deps, ex.requestId ?? requestIdOf(undefined), ex.target.id, {
    reason: 'rate_limited',
    id: idLabel(id),
    method,
    ...(toolName !== null ? { tool: boundText(toolName) } : {}),
    budget: b.source,
    retryAfterS: d.retryAfterS,
  })
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
