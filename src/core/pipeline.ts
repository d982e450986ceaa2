/**
 * @module pipeline
 * The data path of one `POST /mcp` after the transport checks (docs/design.md §2), one call per
 * stage: parse -> batch rule | classify -> era (modern-requests.ts) -> 2026-07-28 headers -> validate ->
 * forward -> grade -> respond. Uses only web-standard Request/Response types and
 * the injected ports, so it runs unchanged on Node and on Workers. Never throws to the caller for
 * bad input or origin faults; every request id gets exactly one answer.
 */
import { DEFAULT_VERSION, isKnownVersion, isModern, MODERN_VERSION } from './protocol/versions'
import { classify, type Classified } from './request/classify'
import { ErrorCode, errorText, isObject, NULL_ID } from './protocol/jsonrpc'
import { parseBody } from './request/parse-body'
import { checkParamHeaders, checkStandardHeaders, decideBatchEra, decideEra, headerVersion, originErasFor, type EraContext, type EraRefusal } from './protocol/modern-requests'
import { gradeHeader, type GradeRow } from './grading/grade-reply'
import { pullToolList } from './forwarding/tool-list-pull'
import { findTool, validateToolsCall, type CallVerdict } from './validation/tools-call'
import { errorResponse, Exchange, gatewayError, idLabel, JSON_HEADERS, type EdgeDeps, type OriginTarget, type Pending } from './grading/exchange'
import { callOrigin, forwardRequests, forwardWithoutReply } from './forwarding/forward'
import { knownPrivateScope, privateScope } from './validation/caller-scope'
import type { ClientSignal } from './client-signal'
import { checkPost } from './request/transport-checks'
import type { Config } from './config'
import { edgeResponse, type EdgeResponse, type RequestHeaders } from './edge-response'

/**
 * The origin an MCP path names: `/mcp` is `ORIGIN_URL` (id `default`), `/mcp/<name>` the entry
 * `<name>` of `ORIGINS`. Null when nothing is configured there (answered 404).
 */
export function originTarget(config: Config, name: string | undefined): OriginTarget | null {
  if (name === undefined) return config.originUrl ? { id: 'default', url: config.originUrl } : null
  const url = Object.hasOwn(config.origins, name) ? config.origins[name] : undefined
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
  const refusal = checkPost(headers, deps.config)
  if (refusal) return new Exchange(deps, target, DEFAULT_VERSION).reject(refusal.status, NULL_ID, { code: refusal.code, message: refusal.message }, '', refusal.headers)
  if (declaredBytes !== undefined && declaredBytes > deps.config.maxBodyBytes) return payloadTooLarge(target, deps)
  return null
}

/** 413 -32600 for a body past `MAX_BODY_BYTES` (declared, or found while reading), logged as `rejected`. */
export function payloadTooLarge(target: OriginTarget, deps: EdgeDeps): EdgeResponse {
  return new Exchange(deps, target, DEFAULT_VERSION).reject(413, NULL_ID, { code: ErrorCode.InvalidRequest, message: `Payload Too Large: the body exceeds ${deps.config.maxBodyBytes} bytes` })
}

/**
 * Handles one `POST /mcp` whose transport checks passed.
 * @param body the request body bytes (already bounded by MAX_BODY_BYTES)
 * @param headers the client's request headers
 * @param signal aborts when the client goes away (the runtime's `request.signal`): the origin
 *   request of forwarded requests is aborted with it while a JSON reply is awaited
 * @returns the response: a JSON body, an SSE stream, or 202 with no body
 */
export async function handlePost(body: Uint8Array | string, headers: RequestHeaders, target: OriginTarget, deps: EdgeDeps, signal?: ClientSignal): Promise<EdgeResponse> {
  const { config } = deps
  // Stage 2: parse.
  const parsed = parseBody(body, config.maxJsonDepth)
  if (parsed.kind === 'reject') {
    return new Exchange(deps, target, DEFAULT_VERSION).reject(400, NULL_ID, { code: parsed.code, message: parsed.code === ErrorCode.ParseError ? 'Parse error: ' + parsed.reason : 'Invalid Request: ' + parsed.reason })
  }
  const eraCtx: EraContext = { headers, supported: config.supportedVersions, origin: originErasFor(deps).view(target.id) }

  // Stage 4: the batch rule (arrays only in 2025-03-26 or with no version header), then each element.
  if (parsed.kind === 'batch') {
    const d = decideBatchEra(parsed.items.map((it) => it.value), eraCtx)
    if (d.kind === 'refuse') return refusal(new Exchange(deps, target, DEFAULT_VERSION), d)
    const ex = new Exchange(deps, target, d.era)
    ex.signal = signal
    if (parsed.items.length > config.maxBatch) {
      return ex.reject(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: `Invalid Request: a batch may hold at most ${config.maxBatch} messages` })
    }
    return handleBatch(parsed.items.map((it) => classify(it, parsed.text)), headers, ex)
  }

  // Stage 3: classify. Shape errors are answered before the era is decided (docs/protocol-rules.md C5).
  const c = classify(parsed.item, parsed.text)
  if (c.kind === 'invalid') {
    const h = headerVersion(headers)
    return handleSingle(c, headers, new Exchange(deps, target, isKnownVersion(h) ? h : DEFAULT_VERSION))
  }
  // Era per request (docs/design.md §3; docs/protocol-rules.md §3).
  const d = decideEra(c, parsed.item.value, eraCtx)
  if (d.kind === 'refuse') {
    const h = headerVersion(headers)
    return refusal(new Exchange(deps, target, isKnownVersion(h) ? h : DEFAULT_VERSION), d, c.kind === 'request' ? c.method : '')
  }
  const ex = new Exchange(deps, target, d.kind === 'legacy' ? d.era : MODERN_VERSION)
  ex.signal = signal
  if (d.kind === 'legacy') return handleSingle(c, headers, ex)
  if (c.kind === 'request') {
    const r = checkStandardHeaders(c, headers)
    if (r) return refusal(ex, r, c.method)
  }
  const res = await handleSingle(c, headers, ex)
  // 2026-07-28 has no sessions: never echo or mint a session id (MCP 2026-07-28 Streamable HTTP §Earlier Streamable HTTP Revisions).
  delete res.headers['mcp-session-id']
  return res
}

/** Answers an {@link EraRefusal}: its status and one JSON-RPC error, logged as `rejected`. */
function refusal(ex: Exchange, r: EraRefusal, method = ''): EdgeResponse {
  return ex.reject(r.status, r.id, r.error, method)
}

/** One digest per POST, shared by the elements of a batch. */
const scopes = new WeakMap<Exchange, Promise<string>>()

/**
 * Sets `ex.scope`: the caller's private KV scope, a SHA-256 of its `Authorization` header
 * (src/core/validation/caller-scope.ts; docs/design.md §7). Computed only for what reads or learns tool lists.
 */
function callerScope(ex: Exchange, headers: RequestHeaders): string | Promise<string> {
  if (ex.scope !== undefined) return ex.scope
  // Known digests are read without a microtask hop (every tools/call asks; issue 7 profile).
  const known = knownPrivateScope(headers.get('authorization'))
  if (known !== undefined) return (ex.scope = known)
  return awaitScope(ex, headers)
}

async function awaitScope(ex: Exchange, headers: RequestHeaders): Promise<string> {
  let p = scopes.get(ex)
  if (!p) scopes.set(ex, (p = privateScope(headers.get('authorization'))))
  return (ex.scope = await p)
}

/** Stage 5's view of the registry for one caller: its scope (own private list, then public) and a pull with its authorization. */
function toolsCallContext(ex: Exchange, headers: RequestHeaders, scope: string) {
  const { deps, target, era } = ex
  const carry: Record<string, string> = {}
  const auth = headers.get('authorization')
  if (auth) carry.authorization = auth
  return {
    registry: deps.registry,
    originId: target.id,
    scope,
    era,
    config: deps.config,
    pull: () => pullToolList({ client: deps.origin, url: target.url, era, headers: carry, timeoutMs: deps.config.originTimeoutMs, deadlineMs: deps.config.toolListTimeoutMs, maxReplyBytes: deps.config.maxReplyBytes }),
  }
}

/** Stage 5's outcome for one request. */
type Decision = { answer: string; row: GradeRow } | { forward: Pending } | { refuse: EraRefusal }

/**
 * Stage 5 for one request: a local answer text, or what to forward. Synchronous when nothing has
 * to be awaited (a known caller scope and a fresh tool in memory: most calls); a promise otherwise.
 */
function decide(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange): Decision | Promise<Decision> {
  const s = c.method === 'tools/call' || c.method === 'tools/list' ? callerScope(ex, headers) : ''
  if (c.method !== 'tools/call') {
    // tools/list replies are learned under the caller's scope when the list is private (learn-from-replies.ts).
    const forward = { forward: { id: c.id, method: c.method, unvalidated: false, answered: false } }
    return typeof s === 'string' ? forward : s.then(() => forward)
  }
  if (typeof s !== 'string' || isModern(ex.era)) return decideCallAsync(c, headers, ex, s)
  const verdict = validateToolsCall(c.id, c.params, toolsCallContext(ex, headers, s))
  return verdict instanceof Promise ? verdict.then((v) => fromVerdict(c, v)) : fromVerdict(c, verdict)
}

/** {@link decide} for a tools/call that awaits its scope, or a 2026-07-28 call (Mcp-Param-* first). */
async function decideCallAsync(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders, ex: Exchange, scope: string | Promise<string>): Promise<Decision> {
  const ctx = toolsCallContext(ex, headers, await scope)
  if (isModern(ex.era)) {
    // Mcp-Param-* headers against the tool's x-mcp-header arguments, before argument validation (docs/protocol-rules.md C10).
    const p = c.params
    if (p && typeof p.name === 'string' && (p.arguments === undefined || isObject(p.arguments))) {
      const tool = await findTool(ctx, p.name)
      const r = tool ? checkParamHeaders(c.id, tool.record.inputSchema, (p.arguments as Record<string, unknown> | undefined) ?? {}, headers) : null
      if (r) return { refuse: r }
    }
  }
  return fromVerdict(c, await validateToolsCall(c.id, c.params, ctx))
}

function fromVerdict(c: Extract<Classified, { kind: 'request' }>, verdict: CallVerdict): Decision {
  if (verdict.kind === 'answer') {
    const row: GradeRow = { id: idLabel(c.id), method: c.method, grade: 'rejected', answeredBy: 'edge' }
    if (verdict.tool !== undefined) row.tool = verdict.tool
    if (verdict.unknownTool) row.unknownTool = true
    if (verdict.code !== undefined) row.code = verdict.code
    if (verdict.isError) row.isError = true
    return { answer: verdict.text, row }
  }
  const forward: Pending = { id: c.id, method: c.method, tool: verdict.tool, unvalidated: verdict.unvalidated, answered: false }
  if (verdict.resolved) forward.resolved = verdict.resolved
  return { forward }
}

async function handleSingle(c: Classified, headers: RequestHeaders, ex: Exchange): Promise<EdgeResponse> {
  if (c.kind === 'invalid') {
    const status = c.id === NULL_ID || c.responseShaped || c.notification ? 400 : 200
    return ex.reject(status, c.responseShaped || c.notification ? NULL_ID : c.id, c.error)
  }
  if (c.kind === 'notification' || c.kind === 'response') {
    // A `notifications/tools/list_changed` from the client is forwarded but not believed: the
    // notification is the server's to send (MCP Tools, "List Changed Notification"), and trusting
    // it let any caller reset the refresh rate limit (issue 17).
    return forwardWithoutReply(c.text, headers, ex)
  }
  const decided = decide(c, headers, ex)
  const d = decided instanceof Promise ? await decided : decided
  if ('refuse' in d) return refusal(ex, d.refuse, c.method)
  if ('answer' in d) {
    ex.row(d.row)
    ex.finish(200)
    return edgeResponse(d.answer, 200, { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  ex.pending.set(c.id.key, d.forward)
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
    return ex.reject(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: a batch mixes requests and responses' })
  }
  // Local answers and forwarded texts keep the element's position.
  const local: (string | null)[] = new Array(items.length).fill(null)
  const out: (string | null)[] = new Array(items.length).fill(null)
  const forwarded: Pending[] = []
  const seen = new Set<string>()
  const decisions: Promise<void>[] = []
  items.forEach((c, i) => {
    if (c.kind === 'invalid') {
      if (c.notification) {
        // D15: MCP-invalid notifications inside a batch get no entry
        ex.row({ id: 'null', method: '', grade: 'rejected', code: c.error.code, answeredBy: 'edge' })
        return
      }
      const id = c.responseShaped ? NULL_ID : c.id
      ex.row({ id: idLabel(id), method: '', grade: 'rejected', code: c.error.code, answeredBy: 'edge' })
      local[i] = errorText(id, c.error)
      return
    }
    if (c.kind === 'notification' || c.kind === 'response') {
      // A client's tools/list_changed is forwarded, never believed (see handleSingle).
      out[i] = c.text
      return
    }
    if (seen.has(c.id.key)) {
      // D4: the first of a repeated id is processed; later ones are refused locally.
      ex.row({ id: idLabel(c.id), method: c.method, grade: 'rejected', code: ErrorCode.InvalidRequest, answeredBy: 'edge' })
      local[i] = errorText(c.id, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: this id is already used in the batch' })
      return
    }
    seen.add(c.id.key)
    if (c.method === 'initialize') {
      // MCP 2025-03-26 lifecycle: the initialize request MUST NOT be part of a JSON-RPC batch.
      ex.row({ id: idLabel(c.id), method: c.method, grade: 'rejected', code: ErrorCode.InvalidRequest, answeredBy: 'edge' })
      local[i] = errorText(c.id, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: initialize must be sent on its own, not inside a batch' })
      return
    }
    decisions.push(
      Promise.resolve(decide(c, headers, ex)).then((d) => {
        if ('refuse' in d) {
          ex.row({ id: idLabel(c.id), method: c.method, grade: 'rejected', code: d.refuse.error.code, answeredBy: 'edge' })
          local[i] = errorText(c.id, d.refuse.error)
        } else if ('answer' in d) {
          ex.row(d.row)
          local[i] = d.answer
        } else {
          out[i] = c.text
          forwarded.push(d.forward)
        }
      })
    )
  })
  await Promise.all(decisions)
  const localTexts = local.filter((t): t is string => t !== null)
  const forward = out.filter((t): t is string => t !== null)
  if (forward.length === 0) {
    if (localTexts.length === 0) {
      // Only MCP-invalid notifications: refused as one (D5, D15).
      ex.finish(400)
      return errorResponse(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: notifications must carry object params' }, { 'mcp-edge-grade': gradeHeader(ex.rows) })
    }
    // Vector 13: a batch whose every entry has a null id is refused as a whole (docs/rules.md).
    const allNull = ex.rows.every((r) => r.id === 'null')
    const status = allNull ? 400 : 200
    ex.finish(status)
    return edgeResponse(`[${localTexts.join(',')}]`, status, { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  for (const p of forwarded) ex.pending.set(p.id.key, p)
  if (forwarded.length === 0) {
    // Only notifications/responses go out: 202 unless local entries need an answer.
    const reply = await callOrigin(ex, headers, `[${forward.join(',')}]`)
    if (!('fault' in reply)) reply.discard()
    if (localTexts.length === 0) {
      if ('fault' in reply) {
        ex.finish(502)
        return errorResponse(502, NULL_ID, gatewayError(reply.fault))
      }
      ex.finish(202)
      return edgeResponse(null, 202)
    }
    ex.finish(200)
    return edgeResponse(`[${localTexts.join(',')}]`, 200, { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  return forwardRequests(`[${forward.join(',')}]`, localTexts, headers, ex, true)
}
