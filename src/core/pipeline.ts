/**
 * @module pipeline
 * The data path of one `POST /mcp` after the transport checks (docs/design.md §2), one call per
 * stage: parse -> batch rule | classify -> era (protocol/era-decision.ts) -> 2026-07-28 headers -> validate ->
 * forward -> grade -> respond. Uses only web-standard Request/Response types and
 * the injected ports, so it runs unchanged on Node and on Workers. Never throws to the caller for
 * bad input or origin faults; every request id gets exactly one answer.
 */
import { DEFAULT_VERSION, isKnownVersion, isModern, MODERN_VERSION, type ProtocolVersion } from './jsonrpc/versions'
import { classify, type Classified } from './request/classify'
import { ErrorCode, isObject } from './jsonrpc/jsonrpc'
import { parseBody } from './request/parse-body'
import { decideBatchEra, decideEra, headerVersion, type EraContext } from './protocol/era-decision'
import { checkedMirrors, checkStandardHeaders } from './protocol/standard-headers'
import { answerRow, Exchange, headerMemos, originEras, type EdgeDeps, type OriginTarget, type Pending } from './exchange'
import { respondToBatch } from './batch'
import { toolsCallContext, traced } from './call-context'
import { toWire, wireResponse, type AccessDenial, type CallAnswer, type LocalAnswer, type ProtocolRefusal } from './local-answer'
import { gradeHeader } from './grade-table'
import { gateWithoutId } from './guards/request/rate-budget'
import { messageChain, runRequestGuards } from './guards/request-chain'
import type { ForwardInfo, RequestGuardContext, RequestVerdict } from './guards/guard'
import type { CallVerdict, ValidateContext } from './validation/tools-call'
import { forwardRequests, forwardWithoutReply } from './forwarding/forward'
import { identityScopeKey, knownPrivateScope, privateScope } from './validation/caller-scope'
import type { AccessIdentity } from './access/bearer'
import type { ClientSignal } from './client-signal'
import { checkPost } from './request/transport-checks'
import type { Config } from './config'
import type { EdgeResponse, RequestHeaders } from './edge-response'

/**
 * The origin an MCP path names: `/mcp` is `ORIGIN_URL` (id `default`), `/mcp/<name>` the entry
 * `<name>` of `ORIGINS`. Null when nothing is configured there (answered 404).
 */
export function originTarget(config: Config, name: string | undefined): OriginTarget | null {
  if (name === undefined) return config.originUrl ? { id: 'default', url: config.originUrl } : null
  const url = Object.hasOwn(config.origins, name) ? config.origins[name]?.url : undefined
  return url ? { id: name, url } : null
}

/**
 * The checks of a `POST /mcp` before its body is read (MCP transports; docs/design.md §2): Host,
 * Origin, Content-Type and Accept ({@link checkPost}), then the declared body size against
 * `MAX_BODY_BYTES` (413). Refusals are logged like every POST.
 * @param declaredBytes the Content-Length, when the client sent one
 * @returns the refusal to send, or null when the body may be read
 */
export function admitPost(headers: RequestHeaders, target: OriginTarget, deps: EdgeDeps, declaredBytes?: number): EdgeResponse | null {
  const refusal = checkPost(headers, deps.config, headerMemos(deps))
  if (refusal) return new Exchange(deps, target, DEFAULT_VERSION).identify(headers).answer(refusal)
  if (declaredBytes !== undefined && declaredBytes > deps.config.maxBodyBytes) return payloadTooLarge(target, deps)
  return null
}

/** 413 -32600 for a body past `MAX_BODY_BYTES` (declared, or found while reading), logged as `rejected`. */
export function payloadTooLarge(target: OriginTarget, deps: EdgeDeps): EdgeResponse {
  return new Exchange(deps, target, DEFAULT_VERSION).answer({ kind: 'transport', status: 413, message: `Payload Too Large: the body exceeds ${deps.config.maxBodyBytes} bytes` })
}

/**
 * Handles one `POST /mcp` whose transport checks passed.
 * @param body the request body bytes (already bounded by MAX_BODY_BYTES)
 * @param headers the client's request headers
 * @param signal aborts when the client goes away (the runtime's `request.signal`): the origin
 *   request of forwarded requests is aborted with it while a JSON reply is awaited
 * @param identity who the verified access token speaks for (auth on; request-auth.ts), else undefined
 * @returns the response: a JSON body, an SSE stream, or 202 with no body
 */
export async function handlePost(
  body: Uint8Array | string,
  headers: RequestHeaders,
  target: OriginTarget,
  deps: EdgeDeps,
  signal?: ClientSignal,
  identity?: AccessIdentity
): Promise<EdgeResponse> {
  const { config } = deps
  // One exchange per POST; its era is the default until the era rule (stage 4) decides it.
  const ex = new Exchange(deps, target, DEFAULT_VERSION).identify(headers)
  ex.signal = signal
  if (identity) ex.identity = identity
  // Stage 2: parse.
  const parsed = parseBody(body, config.maxJsonDepth)
  if (parsed.kind === 'body') return ex.answer(parsed)
  const eraCtx: EraContext = { headers, supported: config.supportedVersions, origin: originEras(deps).view(target.id) }

  // Stage 4: the batch rule (arrays only in 2025-03-26 or with no version header), then each element.
  if (parsed.kind === 'batch') {
    const d = decideBatchEra(
      parsed.items.map((it) => it.value),
      eraCtx
    )
    if (d.kind === 'protocol') return ex.answer(noteRefusedVersion(ex, d))
    ex.era = d.era
    ex.batch = true
    if (parsed.items.length > config.maxBatch) {
      return ex.answer({ kind: 'body', code: ErrorCode.InvalidRequest, message: `Invalid Request: a batch may hold at most ${config.maxBatch} messages` })
    }
    return handleBatch(
      parsed.items.map((it) => classify(it, parsed.text)),
      headers,
      ex,
      parsed.text
    )
  }

  // Stage 3: classify. Shape errors are answered before the era is decided (docs/protocol-rules.md C5).
  const c = classify(parsed.item, parsed.text)
  if (c.kind === 'invalid') {
    ex.era = headerEra(headers)
    return handleSingle(c, headers, ex)
  }
  // Era per request (docs/design.md §3; docs/protocol-rules.md §3).
  const d = decideEra(c, parsed.item.value, eraCtx)
  if (d.kind === 'protocol') {
    ex.era = headerEra(headers)
    // The log line names the method of a refused notification too (notifications/initialized
    // is the first message a client sends under its negotiated version).
    return ex.answer(noteRefusedVersion(ex, d), c.kind === 'response' ? '' : c.method)
  }
  ex.era = d.kind === 'legacy' ? d.era : MODERN_VERSION
  if (d.kind === 'legacy') return handleSingle(c, headers, ex)
  if (c.kind === 'request') {
    const r = checkStandardHeaders(c, headers)
    if (r) return ex.answer(r, c.method)
    ex.checkedMirrors = checkedMirrors(c)
  }
  const res = await handleSingle(c, headers, ex)
  // 2026-07-28 has no sessions: never echo or mint a session id (MCP 2026-07-28 Streamable HTTP §Earlier Streamable HTTP Revisions).
  delete res.headers['mcp-session-id']
  return res
}

/**
 * Notes on the exchange the version a -32022 refusal names (its `data.requested`, already cut to
 * 64 characters), so the log line says which version was refused instead of an era the request
 * never named. Returns the refusal unchanged.
 */
function noteRefusedVersion(ex: Exchange, d: ProtocolRefusal): ProtocolRefusal {
  const data = d.error.code === ErrorCode.UnsupportedVersion ? d.error.data : undefined
  if (isObject(data) && typeof data.requested === 'string') ex.refusedVersion = data.requested
  return d
}

/** The era an answer given before (or without) the era rule is logged under: the version header when known, else the default. */
function headerEra(headers: RequestHeaders): ProtocolVersion {
  const h = headerVersion(headers)
  return isKnownVersion(h) ? h : DEFAULT_VERSION
}

/**
 * Sets `ex.scope`: the caller's private KV scope, a SHA-256 of its `Authorization` header, or with
 * auth on of its verified identity (src/core/validation/caller-scope.ts; docs/design.md §7,
 * docs/security.md). Computed only for what reads or learns tool lists.
 */
function callerScope(ex: Exchange, headers: RequestHeaders): string | Promise<string> {
  if (ex.scope !== undefined) return ex.scope
  const key = ex.identity ? identityScopeKey(ex.identity) : headers.get('authorization')
  // Known digests are read without a microtask hop (every tools/call asks; a CPU profile of `npm run bench` showed the hop).
  const known = knownPrivateScope(key)
  if (known !== undefined) return (ex.scope = known)
  return awaitScope(ex, key)
}

async function awaitScope(ex: Exchange, key: string | null): Promise<string> {
  // One digest per POST, shared by the elements of a batch.
  const p = (ex.scopePending ??= privateScope(key))
  return (ex.scope = await p)
}

/** The validation context of a batch's elements, built once per POST and caller scope (it reads a header and allocates a pull per build). */
const batchContexts = new WeakMap<Exchange, { scope: string; ctx: ReturnType<typeof toolsCallContext> }>()

/** {@link toolsCallContext}, shared by the elements of a batch. */
function callContext(ex: Exchange, headers: RequestHeaders, scope: string): ReturnType<typeof toolsCallContext> {
  if (!ex.batch) return toolsCallContext(ex, headers, scope)
  const held = batchContexts.get(ex)
  if (held?.scope === scope) return held.ctx
  const ctx = toolsCallContext(ex, headers, scope)
  batchContexts.set(ex, { scope, ctx })
  return ctx
}

/** Stage 5's outcome for one request: forward it, or answer it locally. */
type Decision = { kind: 'forward'; pending: Pending } | CallAnswer | ProtocolRefusal | AccessDenial

/**
 * Stage 5 for one request: the request guards of the configuration (guards/request-chain.ts:
 * rate budget, tool filter, scopes, pins, argument validation; the token was checked at the front
 * door), then a local answer or what to forward. Synchronous when nothing has to be awaited (a
 * known caller scope, no remote rate limiter and a fresh tool in memory: most calls); a promise
 * otherwise. A single request and each batch element come here alike.
 */
function decide(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange): Decision | Promise<Decision> {
  const limited = !ex.deps.config.rateLimits.empty
  const s = limited || c.method === 'tools/call' || c.method === 'tools/list' ? callerScope(ex, headers) : ''
  return typeof s === 'string' ? guarded(c, headers, ex, s) : s.then((scope) => guarded(c, headers, ex, scope))
}

/** {@link decide} once the caller scope is known: the chain, then its verdict as a decision. */
function guarded(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange, scope: string): Decision | Promise<Decision> {
  const ctx = new GuardContext(ex, headers, scope, c)
  const v = runRequestGuards(messageChain(ex.deps.config), c, ctx)
  return v instanceof Promise ? v.then((r) => toDecision(c, ctx, r)) : toDecision(c, ctx, v)
}

/** What the request guards of one request are told (guards/guard.ts); methods, not closures: one allocation per request. */
class GuardContext implements RequestGuardContext {
  info: ForwardInfo = {}
  constructor(
    readonly ex: Exchange,
    readonly headers: RequestHeaders,
    readonly scope: string,
    private readonly c: Extract<Classified, { kind: 'request' }>
  ) {}
  tools(scope: string): ValidateContext {
    return callContext(this.ex, this.headers, scope)
  }
  traced(run: () => CallVerdict | Promise<CallVerdict>): CallVerdict | Promise<CallVerdict> {
    return traced(this.ex, this.c, run)
  }
}

function toDecision(c: Extract<Classified, { kind: 'request' }>, ctx: RequestGuardContext, v: RequestVerdict): Decision {
  if (v.kind === 'deny') return v.answer
  if (v.kind === 'forward') return v
  // No guard decided (every method but tools/call). tools/list replies are learned under the
  // caller's scope when the list is private (learn-from-replies.ts).
  const pending: Pending = { id: c.id, method: c.method, unvalidated: false, answered: false }
  // A later page is never a complete list (tool pinning's baseline and `removed` need every page).
  if (c.method === 'tools/list' && c.params?.cursor !== undefined) pending.paged = true
  if (ctx.info.pull) pending.pull = ctx.info.pull
  return { kind: 'forward', pending }
}

/**
 * The access gate of a notification or response (guards/request/rate-budget.ts `gateWithoutId`: the
 * caller's budget), with the caller found as for a request. Null when rate limiting is off.
 */
function gateNoId(c: Extract<Classified, { kind: 'notification' | 'response' }>, headers: RequestHeaders, ex: Exchange): AccessDenial | null | Promise<AccessDenial | null> {
  if (ex.deps.config.rateLimits.empty) return null
  const method = c.kind === 'notification' ? c.method : ''
  const s = callerScope(ex, headers)
  return typeof s === 'string' ? gateWithoutId(ex, method, ex.identity?.sub ?? s) : s.then((scope) => gateWithoutId(ex, method, ex.identity?.sub ?? scope))
}

async function handleSingle(c: Classified, headers: RequestHeaders, ex: Exchange): Promise<EdgeResponse> {
  if (c.kind === 'invalid') return ex.answer(c)
  if (c.kind === 'notification' || c.kind === 'response') {
    // A notification has no id, so no grade row: the log line names it on its own.
    if (c.kind === 'notification') ex.notification = c.method
    const denied = await gateNoId(c, headers, ex)
    if (denied) return ex.answer(denied, c.kind === 'notification' ? c.method : '')
    // A `notifications/tools/list_changed` from the client is forwarded but not believed: the
    // notification is the server's to send (MCP Tools, "List Changed Notification"), and trusting
    // it let any caller reset the refresh rate limit (docs/reliability.md).
    return forwardWithoutReply(c.text, headers, ex)
  }
  const decided = decide(c, headers, ex)
  const d = decided instanceof Promise ? await decided : decided
  if (d.kind !== 'forward') return ex.answer(d, c.method)
  ex.pending.set(c.id.key, d.pending)
  return forwardRequests(c.text, [], headers, ex, false)
}

/**
 * A 2025-03-26 batch (JSON-RPC 2.0 §6): every element classified and validated on its own, exactly
 * as it would be alone; invalid, duplicate-id and refused elements answered locally; the valid
 * rest forwarded as one sub-batch in the client's order; replies merged by id (forward.ts).
 * Notifications get no entry; a batch of notifications/responses only is answered 202.
 * @param bodyText the POST's body as text (the elements' texts are spans of it)
 */
async function handleBatch(items: Classified[], headers: RequestHeaders, ex: Exchange, bodyText: string): Promise<EdgeResponse> {
  const hasResponses = items.some((c) => c.kind === 'response')
  const hasRequests = items.some((c) => c.kind === 'request' || c.kind === 'notification')
  if (hasResponses && hasRequests) {
    // MCP 2025-03-26 transports: a POST holds requests/notifications, or responses, never both.
    return ex.answer({ kind: 'body', code: ErrorCode.InvalidRequest, message: 'Invalid Request: a batch mixes requests and responses' })
  }
  // Local answers and forwarded texts keep the element's position.
  const local: (string | null)[] = new Array(items.length).fill(null)
  const out: (string | null)[] = new Array(items.length).fill(null)
  const forwarded: Pending[] = []
  const seen = new Set<string>()
  const decisions: Promise<void>[] = []
  /** The first notification or response a budget refused: the answer when nothing else is left. */
  let refusedNoId: AccessDenial | undefined
  /** Answers element `i` locally: its grade row, and its text in the element's place. */
  const answerHere = (i: number, a: LocalAnswer, method: string) => {
    const w = toWire(a)
    ex.row(answerRow(a, w, method))
    local[i] = w.text
  }
  const decided: [number, Extract<Classified, { kind: 'request' }>, Decision][] = []
  const settle = (i: number, c: Extract<Classified, { kind: 'request' }>, d: Decision) => {
    if (d.kind !== 'forward') return answerHere(i, d, c.method)
    out[i] = c.text
    forwarded.push(d.pending)
  }
  const refuseHere = (i: number, c: Extract<Classified, { kind: 'request' }>, message: string) =>
    answerHere(i, { kind: 'invalid', id: c.id, error: { code: ErrorCode.InvalidRequest, message }, responseShaped: false, notification: false }, c.method)
  items.forEach((c, i) => {
    if (c.kind === 'invalid') {
      // D15: MCP-invalid notifications inside a batch get no entry (only their grade row).
      if (c.notification) ex.row(answerRow(c, toWire(c), ''))
      else answerHere(i, c, '')
      return
    }
    if (c.kind === 'notification' || c.kind === 'response') {
      // A client's tools/list_changed is forwarded, never believed (see handleSingle). Each one
      // costs the caller's budget; a refused one gets no entry (D15), only its grade row.
      const g = gateNoId(c, headers, ex)
      const settleNoId = (d: AccessDenial | null) => {
        if (d === null) out[i] = c.text
        else {
          ex.row(answerRow(d, toWire(d), c.kind === 'notification' ? c.method : ''))
          refusedNoId ??= d
        }
      }
      if (g instanceof Promise) decisions.push(g.then(settleNoId))
      else settleNoId(g)
      return
    }
    // D4: the first of a repeated id is processed; later ones are refused locally.
    if (seen.has(c.id.key)) return refuseHere(i, c, 'Invalid Request: this id is already used in the batch')
    seen.add(c.id.key)
    // MCP 2025-03-26 lifecycle: the initialize request MUST NOT be part of a JSON-RPC batch.
    if (c.method === 'initialize') return refuseHere(i, c, 'Invalid Request: initialize must be sent on its own, not inside a batch')
    const d = decide(c, headers, ex)
    if (d instanceof Promise) decisions.push(d.then((v) => settle(i, c, v)))
    else decided.push([i, c, d])
  })
  // Decisions made without waiting (most) are applied in the elements' order before any awaited
  // one, the order a promise per element gave (grade rows, forwarded order), without a promise and
  // a microtask per element.
  for (const [i, c, d] of decided) settle(i, c, d)
  if (decisions.length > 0) await Promise.all(decisions)
  const localTexts = local.filter((t): t is string => t !== null)
  const forward = out.filter((t): t is string => t !== null)
  // Only notifications/responses, and a budget refused them: the refusal (429), not a 202 or a 400.
  if (refusedNoId && localTexts.length === 0 && forward.length === 0) {
    const w = toWire(refusedNoId)
    ex.finish(w.status)
    return wireResponse(w, { 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  // Every element forwarded, each as its own text: the sub-batch is the client's body itself, sent as it came.
  return respondToBatch(ex, headers, localTexts, forward, forwarded, forward.length === items.length ? bodyText.trim() : undefined)
}
