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
import { checkedMirrors, checkStandardHeaders, decodeHeaderValue } from './protocol/standard-headers'
import { checkParamHeaders } from './protocol/param-headers'
import { findTool, validateToolsCall, type CallVerdict } from './validation/tools-call'
import { gateToolsCall, type CallGate } from './pinning/apply-pins'
import { toToolRecord } from './validation/tool-store'
import type { ResolvedTool, ToolRecord } from './validation/tool-record'
import { answerRow, Exchange, headerMemos, idLabel, originEras, pinBook, type EdgeDeps, type OriginTarget, type Pending } from './exchange'
import { respondToBatch } from './batch'
import { toolsCallContext, traced } from './call-context'
import { toWire, wireResponse, type AccessDenial, type CallAnswer, type LocalAnswer, type ProtocolRefusal } from './local-answer'
import { gradeHeader } from './grade-table'
import { gateRequest, gateWithoutId } from './gate/apply-access'
import { forwardRequests, forwardWithoutReply } from './forwarding/forward'
import { identityScopeKey, knownPrivateScope, privateScope } from './validation/caller-scope'
import type { AccessIdentity } from './access/bearer'
import { applyScopes } from './access/apply-scopes'
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
      ex
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
 * Stage 5 for one request: a local answer text, or what to forward. Synchronous when nothing has
 * to be awaited (a known caller scope, no remote rate limiter and a fresh tool in memory: most
 * calls); a promise otherwise. The access gate (gate/apply-access.ts: rate limits, tool filter)
 * runs first, so a hidden tool is never looked up, validated or forwarded.
 */
function decide(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange): Decision | Promise<Decision> {
  const limited = !ex.deps.config.rateLimits.empty
  const s = limited || c.method === 'tools/call' || c.method === 'tools/list' ? callerScope(ex, headers) : ''
  return typeof s === 'string' ? gated(c, headers, ex, s) : s.then((scope) => gated(c, headers, ex, scope))
}

/** {@link decide} once the caller scope is known: the access gate, then validation. */
function gated(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange, s: string): Decision | Promise<Decision> {
  // The rate-limit caller: the verified token's subject, else the caller scope the edge keys private lists by.
  const denied = gateRequest(ex, c, ex.identity?.sub ?? s)
  if (denied === null) return validated(c, headers, ex, s)
  if (denied instanceof Promise) return denied.then((d) => d ?? validated(c, headers, ex, s))
  return denied
}

/** {@link gated} once the access gate let the request through: TOOL_SCOPES, tool pinning, then validation. */
function validated(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange, s: string): Decision | Promise<Decision> {
  // TOOL_SCOPES (auth on): a call the token may not make is refused before validation or any origin
  // request. It runs after the tool filter, so a hidden tool still reads as unknown, not as out of scope.
  const auth = ex.deps.auth
  if (auth && c.method === 'tools/call') {
    const denial = applyScopes(auth.toolScopes, ex.identity, c.id, c.params?.name, auth.metadataUrl)
    if (denial) {
      ex.deny({ reason: 'insufficient_scope', status: ex.batch ? 200 : 403, id: idLabel(c.id), tool: denial.tool, scope: denial.needed.join(' ') })
      return denial
    }
  }
  if (c.method !== 'tools/call') {
    // tools/list replies are learned under the caller's scope when the list is private (learn-from-replies.ts).
    const forward: Decision = { kind: 'forward', pending: { id: c.id, method: c.method, unvalidated: false, answered: false } }
    // A later page is never a complete list (tool pinning's baseline and `removed` need every page).
    if (c.method === 'tools/list' && c.params?.cursor !== undefined) forward.pending.paged = true
    if (c.method === 'tools/list' && ex.deps.config.toolPinning === 'enforce') forward.pending.pull = () => toolsCallContext(ex, headers, ex.scope ?? 'public').pull()
    return forward
  }
  // Tool pinning (docs/pinning.md), after the access gate: the one place a call is gated by its pins.
  if (ex.deps.config.toolPinning === 'enforce') return decidePinned(c, headers, ex, s)
  if (isModern(ex.era)) return decideCallAsync(c, headers, ex, s)
  const verdict = traced(ex, c, () => validateToolsCall(c.id, c.params, callContext(ex, headers, s), c.text.length))
  return verdict instanceof Promise ? verdict.then((v) => fromVerdict(c, v)) : fromVerdict(c, verdict)
}

/** {@link decide} for a tools/call that awaits its scope, or a 2026-07-28 call (Mcp-Param-* first). */
async function decideCallAsync(
  c: Extract<Classified, { kind: 'request' }>,
  headers: RequestHeaders,
  ex: Exchange,
  scope: string | Promise<string>,
  pinned?: ResolvedTool
): Promise<Decision> {
  const ctx = toolsCallContext(ex, headers, await scope)
  if (isModern(ex.era)) {
    // Mcp-Param-* headers against the tool's x-mcp-header arguments, before argument validation (docs/protocol-rules.md C10).
    const p = c.params
    if (p && typeof p.name === 'string' && (p.arguments === undefined || isObject(p.arguments))) {
      const tool = pinned ?? (await findTool(ctx, p.name))
      const r = tool ? checkParamHeaders(c.id, tool.record.inputSchema, (p.arguments as Record<string, unknown> | undefined) ?? {}, headers) : null
      if (r) return r
    }
  }
  return fromVerdict(c, await traced(ex, c, () => validateToolsCall(c.id, c.params, ctx, c.text.length, pinned)))
}

/**
 * {@link decide} for a tools/call under `TOOL_PINNING=enforce`: the pin gate first
 * (pinning/apply-pins.ts `gateToolsCall`: a Map lookup when the pins are held), then validation
 * against the approved definition's inputSchema only.
 */
function decidePinned(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange, s: string | Promise<string>): Decision | Promise<Decision> {
  if (typeof s !== 'string') return s.then((scope) => decidePinned(c, headers, ex, scope))
  const g = gateToolsCall(pinBook(ex.deps), {
    originId: ex.target.id,
    scope: s,
    era: ex.era,
    id: c.id,
    name: c.params?.name,
    // Decoded (the `=?base64?…?=` form of a non-ASCII name included): the gate compares names, not header encodings.
    headerName: isModern(ex.era) ? mcpNameHeader(headers) : null,
    invalidArgs: ex.deps.config.invalidArgs,
    taskAugmented: isObject(c.params?.task),
    pull: () => toolsCallContext(ex, headers, s).pull(),
  })
  return g instanceof Promise ? g.then((v) => afterPinGate(c, headers, ex, s, v)) : afterPinGate(c, headers, ex, s, g)
}

/** The 2026-07-28 `Mcp-Name` header, decoded (MCP 2026-07-28 Streamable HTTP §Value Encoding); null when absent or not decodable. */
function mcpNameHeader(headers: RequestHeaders): string | null {
  const raw = headers.get('mcp-name')
  return raw === null ? null : decodeHeaderValue(raw)
}

function afterPinGate(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange, scope: string, g: CallGate): Decision | Promise<Decision> {
  if (g.kind === 'answer') {
    const a: CallAnswer = { kind: 'call', id: g.id, tool: g.tool, text: g.text }
    if (g.code !== undefined) a.code = g.code
    if (g.isError) a.isError = true
    if (g.unknownTool) a.unknownTool = true
    return a
  }
  const name = c.params?.name
  const pinned =
    g.approvedDigest !== undefined && typeof name === 'string'
      ? pinBook(ex.deps).approvedTool(ex.target.id, scope, name, g.approvedDigest, (def) => ex.deps.registry.resolve(approvedRecord(def, ex.era)))
      : undefined
  if (isModern(ex.era)) return decideCallAsync(c, headers, ex, scope, pinned ?? undefined)
  const verdict = traced(ex, c, () => validateToolsCall(c.id, c.params, callContext(ex, headers, scope), c.text.length, pinned ?? undefined))
  return verdict instanceof Promise ? verdict.then((v) => fromVerdict(c, v)) : fromVerdict(c, verdict)
}

/** The record of an approved definition: no `fetchedAt` and no source tag (the operator's word, never rechecked against a fresh list). */
function approvedRecord(def: Record<string, unknown>, era: ProtocolVersion): ToolRecord {
  const r = toToolRecord({ inputSchema: {}, ...def }, era, 0)!
  delete r.fetchedAt
  return r
}

function fromVerdict(c: Extract<Classified, { kind: 'request' }>, verdict: CallVerdict): Decision {
  if (verdict.kind === 'call') return verdict
  const pending: Pending = { id: c.id, method: c.method, tool: verdict.tool, unvalidated: verdict.unvalidated, answered: false }
  if (verdict.resolved) pending.resolved = verdict.resolved
  return { kind: 'forward', pending }
}

/**
 * The access gate of a notification or response (gate/apply-access.ts `gateWithoutId`: the
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
 */
async function handleBatch(items: Classified[], headers: RequestHeaders, ex: Exchange): Promise<EdgeResponse> {
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
  return respondToBatch(ex, headers, localTexts, forward, forwarded)
}
