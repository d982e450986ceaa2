/**
 * @module core/forwarding/forward
 * Stages 6-8 for what the edge forwards: send the valid messages to the origin, grade its reply
 * per JSON-RPC id (JSON or SSE, event by event), merge the local answers, and respond. Origin
 * faults become gateway errors per id (D9); every forwarded id is answered exactly once.
 * Also the untouched pass-through of GET and DELETE.
 */
import { isKnownVersion, isModern, looksModern } from '../protocol/versions'
import { ErrorCode, errorText, isObject, NULL_ID, toRawId } from '../protocol/jsonrpc'
import { memberText, nestsDeeperThan, scanJsonText } from '../request/json-scan'
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginReply } from '../ports'
import { gradeHeader, gradeResponse, isResponse, type GradeRow } from '../grading/grade-reply'
import { formatEvent, transformSse, type SseEndReason, type SseEvent } from '../sse/sse-transform'
import { watchSse } from '../sse/sse-watch'
import { LinkSignal, type ClientSignal } from '../client-signal'
import { unsupportedVersion } from '../protocol/protocol-refusals'
import { onToolsCallReply, onToolsListReply } from './learn-from-replies'
import { answerRow, idLabel, JSON_HEADERS, originEras, type EdgeDeps, type Exchange, type OriginTarget, type Pending } from '../grading/exchange'
import { gatewayError, localResponse, toWire, wireResponse, type GatewayFault } from '../local-answer'
import { edgeResponse, type ByteSource, type EdgeResponse, type RequestHeaders } from '../edge-response'

/** Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1), framing, and encodings the edge must read. */
const DROP_REQUEST = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection', 'content-length', 'accept-encoding', 'expect'])
/** Reply headers relayed to the client. */
const RELAY_REPLY = ['content-type', 'mcp-session-id', 'mcp-protocol-version', 'cache-control', 'www-authenticate', 'retry-after', 'allow']

function forwardHeaders(headers: RequestHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  headers.forEach((value, name) => {
    if (!DROP_REQUEST.has(name)) out[name] = value
  })
  return out
}

function relayHeaders(reply: OriginReply): Record<string, string> {
  const out: Record<string, string> = {}
  for (const h of RELAY_REPLY) {
    const v = reply.headers[h]
    if (v !== undefined) out[h] = v
  }
  return out
}

/** What asking the origin gave: its reply, or the gateway fault that stands for it (D9). */
export type OriginCall = { kind: 'reply'; reply: OriginReply } | GatewayFault

/**
 * Sends one POST body to the origin with the client's headers (hop-by-hop ones dropped),
 * `ORIGIN_TIMEOUT_MS` and `MAX_REPLY_BYTES`; records `ex.originMs` (milliseconds until the headers).
 * @param signal the client's signal (forwarded requests only: a notification is delivered even
 *   when its sender leaves). It aborts the origin request until the headers arrive, and through a
 *   JSON body; an SSE reply is unlinked from it, since the client cancelling the stream already
 *   cancels the origin's (and grades the open ids `missing`, see streamReply).
 * @returns the origin's reply, or a {@link GatewayFault} with the D9 code (-31002 timeout, -31001 anything else)
 */
export async function callOrigin(ex: Exchange, headers: RequestHeaders, body: string, signal?: ClientSignal): Promise<OriginCall> {
  const t0 = Date.now()
  const link = signal ? new LinkSignal() : undefined
  const onAbort = () => link!.abort()
  if (signal?.aborted) link!.abort()
  else signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const timeoutMs = isListen(ex) ? 0 : ex.deps.config.originTimeoutMs
    const reply = await ex.deps.origin({ method: 'POST', url: ex.target.url, headers: forwardHeaders(headers), body, timeoutMs, maxReplyBytes: ex.deps.config.maxReplyBytes, ...(link ? { signal: link } : {}) })
    ex.originMs = Date.now() - t0
    if (isSse(reply)) signal?.removeEventListener('abort', onAbort)
    return { kind: 'reply', reply }
  } catch (e) {
    ex.originMs = Date.now() - t0
    signal?.removeEventListener('abort', onAbort)
    return { kind: 'gateway', code: e instanceof OriginTimeoutError ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable }
  }
}

/**
 * The client went away before a JSON answer (its signal fired, and the origin request was aborted
 * with it): the open ids are graded `missing` with no text (nobody reads), the log line says
 * `clientClosed: true`.
 */
function clientGone(ex: Exchange, grader: ReplyGrader): EdgeResponse {
  ex.clientClosed = true
  grader.close('cancel')
  ex.finish(200)
  return edgeResponse(null, 200)
}

/**
 * True when the POST is a 2026-07-28 `subscriptions/listen`: a long-lived SSE stream that is
 * forwarded with no timeout at all (docs/protocol-rules.md M6, vector 141); the client ends
 * it by disconnecting, which cancels the origin request.
 */
function isListen(ex: Exchange): boolean {
  for (const p of ex.pending.values()) if (p.method === 'subscriptions/listen') return true
  return false
}

function isSse(reply: OriginReply): boolean {
  return (reply.headers['content-type'] ?? '').toLowerCase().includes('text/event-stream')
}

function isJson(reply: OriginReply): boolean {
  return (reply.headers['content-type'] ?? '').toLowerCase().includes('json')
}

/** Notifications and client responses: forward, then 202 with no body (MCP transports, item 4). */
export async function forwardWithoutReply(text: string, headers: RequestHeaders, ex: Exchange): Promise<EdgeResponse> {
  const sent = await callOrigin(ex, headers, text)
  if (sent.kind === 'gateway') {
    const w = toWire(sent)
    ex.row(answerRow(sent, w, ''))
    ex.finish(502)
    return wireResponse(w)
  }
  const reply = sent.reply
  if (reply.status >= 200 && reply.status < 300) {
    // 200 with an empty body and 204 are normalised to 202 (field case B14).
    reply.discard()
    ex.finish(202)
    return edgeResponse(null, 202, relaySessionOnly(reply))
  }
  // The origin refused (e.g. 400/404 for a missing or unknown session): relayed with its status,
  // the body only when it is a JSON-RPC error.
  const refusal = await readRefusal(reply)
  if (refusal) {
    ex.row({ id: 'null', method: '', grade: 'rpc_error', code: refusal.code, answeredBy: 'origin' })
    ex.finish(reply.status)
    return edgeResponse(refusal.text, reply.status, { ...relayHeaders(reply), 'content-type': 'application/json', 'mcp-edge-grade': gradeHeader(ex.rows) })
  }
  ex.finish(reply.status)
  const h = relayHeaders(reply)
  delete h['content-type']
  return edgeResponse(null, reply.status, h)
}

function relaySessionOnly(reply: OriginReply): Record<string, string> {
  const sid = reply.headers['mcp-session-id']
  return sid ? { 'mcp-session-id': sid } : {}
}

/**
 * A non-2xx origin answer whose body is one JSON-RPC error object (e.g. 400 -32000 "Mcp-Session-Id
 * header is required", 404 -32001 "Session not found", 2026-07-28 400 -32020..-32022): its text
 * and code. Null for anything else (HTML, empty, not JSON-RPC); the body is consumed either way.
 */
async function readRefusal(reply: OriginReply): Promise<{ text: string; code: number; msg: Record<string, unknown> } | null> {
  let text = ''
  try {
    if (isJson(reply)) text = await reply.text()
    else reply.discard()
  } catch {
    return null
  }
  let msg: unknown
  try {
    msg = text ? JSON.parse(text) : undefined
  } catch {
    return null
  }
  if (!isResponse(msg) || !isObject(msg.error)) return null
  return { text, code: msg.error.code as number, msg }
}

/**
 * Grades the messages of one origin reply against the open ids of an {@link Exchange} (D9, D10,
 * D11, docs/design.md §6). Each forwarded id is answered exactly once: the first response for it
 * wins; repeated ids, ids never forwarded and messages that are not JSON-RPC are dropped and
 * logged; an error with `"id": null` is kept aside and given to the ids still open at the end.
 */
class ReplyGrader {
  private orphan: { msg: Record<string, unknown>; source: string } | null = null
  private sawInvalid = false
  private open: number

  constructor(private readonly ex: Exchange) {
    let open = 0
    for (const p of ex.pending.values()) if (!p.answered) open++
    this.open = open
  }

  /** The reply held something that is not a JSON-RPC message (open ids will get -31001 at the end). */
  invalid(): void {
    this.sawInvalid = true
    this.ex.drop({ id: '-', reason: 'invalid' })
  }

  /** True when every forwarded id has its answer. */
  get done(): boolean {
    return this.open === 0
  }

  /**
   * One message of the reply (a parsed value and its exact text).
   * @returns the text to relay (the origin's, or the edge's rewrite), or null when dropped
   */
  message(msg: unknown, source: string): string | null {
    const ex = this.ex
    if (!isResponse(msg)) {
      this.sawInvalid = true
      ex.drop({ id: '-', reason: 'invalid' })
      return null
    }
    if (msg.id === null) {
      if (isObject(msg.error)) this.orphan ??= { msg, source }
      else this.sawInvalid = true
      ex.drop({ id: 'null', reason: isObject(msg.error) ? 'no_id' : 'invalid' })
      return null
    }
    const token = typeof msg.id === 'number' && !Number.isSafeInteger(msg.id) ? memberText(source, scanJsonText(source).elements[0], 'id') : undefined
    const id = toRawId(msg.id, token)
    if (!id) {
      this.sawInvalid = true
      ex.drop({ id: '-', reason: 'invalid' })
      return null
    }
    const p = ex.pending.get(id.key)
    if (!p || p.answered) {
      ex.drop({ id: idLabel(id), reason: p ? 'repeated' : 'unknown_id' })
      return null
    }
    return this.answer(p, msg, source)
  }

  private answer(p: Pending, msg: Record<string, unknown>, source: string): string {
    const ex = this.ex
    p.answered = true
    this.open--
    originEras(ex.deps).observe(ex.target.id, p.method, msg) // D17: learn the origin's era
    // Validation hooks (src/core/forwarding/learn-from-replies.ts): learn tools/list pages in the background; D12 output schema.
    onToolsListReply(ex, p, msg)
    const checked = onToolsCallReply(ex, p, msg, gradeResponse(msg, source, p, { hiddenFailures: ex.deps.config.hiddenFailures }))
    const g = checked.graded
    const row: GradeRow = { id: idLabel(p.id), method: p.method, grade: g.grade, answeredBy: 'origin' }
    if (checked.row) Object.assign(row, checked.row)
    if (p.tool !== undefined) row.tool = p.tool
    if (g.code !== undefined) row.code = g.code
    if (g.isError) row.isError = true
    if (ex.originMs !== undefined) row.originMs = ex.originMs
    ex.row(row)
    return g.text ?? source
  }

  /**
   * Answers every id still open when the reply is over, and returns those answers' texts:
   * the origin's id-less error when it sent one (graded `rpc_error`); otherwise a gateway error
   * (D9): -31001 after a failed stream or a reply holding non-JSON-RPC messages (`origin_error`),
   * -31002 after `ORIGIN_TIMEOUT_MS` without a byte (`origin_error`), -31003 when the reply
   * simply ended without this id (`missing`). After a client cancel the rows are written
   * (`missing`) but no text is produced.
   */
  close(reason: SseEndReason | 'invalid', originStatus?: number): string[] {
    const ex = this.ex
    const out: string[] = []
    for (const p of ex.pending.values()) {
      if (p.answered) continue
      if (this.orphan && reason !== 'cancel') {
        out.push(this.answer(p, this.orphan.msg, this.orphan.source))
        continue
      }
      p.answered = true
      this.open--
      const code =
        reason === 'timeout' ? ErrorCode.OriginTimeout : reason === 'error' || reason === 'invalid' || (reason === 'end' && this.sawInvalid) ? ErrorCode.OriginUnavailable : ErrorCode.OriginNoAnswer
      const row: GradeRow = { id: idLabel(p.id), method: p.method, grade: code === ErrorCode.OriginNoAnswer ? 'missing' : 'origin_error', code, answeredBy: 'edge' }
      if (p.tool !== undefined) row.tool = p.tool
      if (ex.originMs !== undefined) row.originMs = ex.originMs
      ex.row(row)
      if (reason !== 'cancel') out.push(errorText(p.id, gatewayError(code, originStatus)))
    }
    return out
  }
}

/**
 * Stage 6-8: forward `body`, grade the reply per id, merge `localTexts`, respond.
 * JSON replies are answered with `MCP-Edge-Grade`; SSE replies are streamed event by event.
 * The ids to answer are the open entries of `ex.pending` (each gets exactly one answer).
 * @param body the exact text to send: one message, or the sub-batch `[...]` of valid elements
 * @param localTexts answers the edge already built for other elements of a batch
 * @param asBatch answer with a JSON array (the client sent a batch)
 */
export async function forwardRequests(body: string, localTexts: string[], headers: RequestHeaders, ex: Exchange, asBatch: boolean): Promise<EdgeResponse> {
  const sent = await callOrigin(ex, headers, body, ex.signal)
  const grader = new ReplyGrader(ex)
  if (sent.kind === 'gateway' && ex.signal?.aborted) return clientGone(ex, grader)
  if (sent.kind === 'gateway') return respondJson(localTexts, grader.close(sent.code === ErrorCode.OriginTimeout ? 'timeout' : 'error'), ex, asBatch, {})
  const reply = sent.reply
  const ok = reply.status >= 200 && reply.status < 300
  if (ok && isSse(reply)) return streamReply(reply, localTexts, ex, grader, asBatch)
  if (!ok) {
    const refusal = await readRefusal(reply)
    // A 4xx JSON-RPC error is the origin's transport refusal (no session, unknown session,
    // 2026-07-28 header errors): relayed with its status. A 5xx one is an answer to the ids: each
    // open id gets it under its own id, as the same body under 200 would (issue 17).
    if (refusal && reply.status < 500 && (!asBatch || localTexts.length === 0)) {
      // The origin's own JSON-RPC error with its status, relayed unchanged (D9; vectors 82, 83).
      for (const p of ex.pending.values()) {
        if (p.answered) continue
        p.answered = true
        originEras(ex.deps).observe(ex.target.id, p.method, refusal.msg, reply.status) // D17: learn the origin's era
        ex.row({ id: idLabel(p.id), method: p.method, ...(p.tool ? { tool: p.tool } : {}), grade: 'rpc_error', code: refusal.code, answeredBy: 'origin', ...(ex.originMs !== undefined ? { originMs: ex.originMs } : {}) })
      }
      ex.finish(reply.status)
      return edgeResponse(refusal.text, reply.status, { ...relayHeaders(reply), 'content-type': 'application/json', 'mcp-edge-grade': gradeHeader(ex.rows) })
    }
    if (refusal) {
      // A batch with local answers, or a 5xx: the origin's error goes to each forwarded id.
      grader.message({ ...refusal.msg, id: null }, refusal.text)
      return respondJson(localTexts, grader.close('end'), ex, asBatch, relaySessionOnly(reply))
    }
    return respondJson(localTexts, grader.close('invalid', reply.status), ex, asBatch, {})
  }
  let text: string
  try {
    text = await reply.text()
  } catch (e) {
    if (ex.signal?.aborted) return clientGone(ex, grader)
    if (e instanceof OriginReplyTooLargeError) {
      // MAX_REPLY_BYTES: the body was discarded unread; every open id gets -31001 (D9).
      ex.drop({ id: '-', reason: 'too_large' })
      return respondJson(localTexts, grader.close('invalid'), ex, asBatch, relaySessionOnly(reply))
    }
    return respondJson(localTexts, grader.close(isTimeout(e) ? 'timeout' : 'error'), ex, asBatch, {})
  }
  const sid = relaySessionOnly(reply)
  if (text.trim() === '') return respondJson(localTexts, grader.close('end'), ex, asBatch, sid)
  // A reply nested past MAX_JSON_DEPTH is not parsed at all (nestsDeeperThan says why): -31001 for every open id.
  if (nestsDeeperThan(text, ex.deps.config.maxJsonDepth)) {
    ex.drop({ id: '-', reason: 'too_deep' })
    return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return respondJson(localTexts, grader.close('invalid'), ex, asBatch, sid)
  }
  const out: string[] = []
  if (Array.isArray(value)) {
    const scan = scanJsonText(text)
    value.forEach((m, i) => {
      const el = scan.elements[i]!
      const graded = grader.message(m, text.slice(el.start, el.end))
      if (graded !== null) out.push(graded)
    })
  } else {
    const graded = grader.message(value, text.trim())
    if (graded !== null) out.push(graded)
  }
  out.push(...grader.close('end'))
  return respondJson(localTexts, out, ex, asBatch, sid)
}

/** One JSON answer: local answers first, then the graded replies; HTTP 200 with `MCP-Edge-Grade`. */
function respondJson(localTexts: string[], answers: string[], ex: Exchange, asBatch: boolean, extra: Record<string, string>): EdgeResponse {
  ex.finish(200)
  const headers: Record<string, string> = { 'content-type': JSON_HEADERS['content-type'] }
  for (const k in extra) headers[k] = extra[k]!
  headers['mcp-edge-grade'] = gradeHeader(ex.rows)
  if (!asBatch) return edgeResponse(localTexts[0] ?? answers[0] ?? '', 200, headers)
  return edgeResponse(`[${[...localTexts, ...answers].join(',')}]`, 200, headers)
}

/** True for the timeout errors of the origin clients (core's own, undici's body timeout by name). */
function isTimeout(e: unknown): boolean {
  return e instanceof OriginTimeoutError || (e instanceof Error && /Timeout/i.test(e.name))
}

/** What makes an SSE event worth parsing (see streamReply); 2026-07-28 streams add `"id"`. */
const WATCHED = /"result"|"error"|\\u|list_changed/
const WATCHED_MODERN = /"result"|"error"|\\u|list_changed|"id"/

/** True when an SSE event carries a JSON-RPC message (no event name, or `message`: MCP transports). */
function isMessageEvent(ev: SseEvent): boolean {
  return ev.event === undefined || ev.event === 'message'
}

/** True for what the edge grades in a stream: an object with `result` or `error` (a response). */
function looksLikeResponse(v: unknown): boolean {
  return isObject(v) && ('result' in v || 'error' in v) && !('method' in v)
}

/**
 * SSE reply: graded event by event, never buffered beyond one event. Local answers go first;
 * requests, notifications (progress, logging) and non-JSON-RPC events pass through in order;
 * ids left open at the end get their answer from {@link ReplyGrader.close}. The log line is
 * written as soon as every id is graded (or when the stream stops, whichever comes first).
 */
function streamReply(reply: OriginReply, localTexts: string[], ex: Exchange, grader: ReplyGrader, asBatch: boolean): EdgeResponse {
  const source = reply.stream()
  if (!source) return respondJson(localTexts, grader.close('end'), ex, asBatch, relaySessionOnly(reply))
  const headers = relayHeaders(reply)
  headers['content-type'] = 'text/event-stream'
  headers['cache-control'] = headers['cache-control'] ?? 'no-cache'
  // Proxies in front of the edge must not buffer the stream either (MCP 2026-07-28 Streamable HTTP).
  headers['x-accel-buffering'] = 'no'
  const head = localTexts.map((t): SseEvent => ({ data: t }))
  const body = transformSse(
    source,
    {
      // No parse for an event that cannot need a change (most of a long stream: progress and
      // log notifications), and its bytes are relayed as they came. A response must spell a
      // member name "result" or "error" literally, unless a \u escape spells it, so any escape
      // takes the full path; of the notifications only tools/list_changed concerns the edge;
      // 2026-07-28 streams are also checked for server requests (an "id" beside a method).
      watch: isModern(ex.era) ? WATCHED_MODERN : WATCHED,
      onEvent(ev) {
        if (!isMessageEvent(ev)) return undefined
        const first = ev.data.trimStart()[0]
        if (first !== '{' && first !== '[') return undefined
        // Nested past MAX_JSON_DEPTH: not parsed, not relayed; its ids stay open and get -31003 at the end.
        if (nestsDeeperThan(ev.data, ex.deps.config.maxJsonDepth)) {
          ex.drop({ id: '-', reason: 'too_deep' })
          return null
        }
        let value: unknown
        try {
          value = JSON.parse(ev.data)
        } catch {
          // Starts like JSON but does not parse (cut off by the stream's end, or garbage): never
          // relayed as a message; open ids get -31001 as after a truncated JSON reply (D9).
          grader.invalid()
          return null
        }
        let result: string | null | undefined
        if (Array.isArray(value)) {
          const scan = scanJsonText(ev.data)
          const parts: string[] = []
          value.forEach((m, i) => {
            const el = scan.elements[i]!
            const src = ev.data.slice(el.start, el.end)
            if (!looksLikeResponse(m)) return void parts.push(src)
            const graded = grader.message(m, src)
            if (graded !== null) parts.push(graded)
          })
          result = parts.length === 0 ? null : `[${parts.join(',')}]`
          if (result === ev.data) result = undefined
        } else {
          if (isObject(value) && value.method === 'notifications/tools/list_changed') ex.deps.registry.invalidate(ex.target.id)
          if (isModern(ex.era) && isObject(value) && typeof value.method === 'string' && 'id' in value) {
            // 2026-07-28 servers MUST NOT send requests on a response stream (input_required
            // results replaced them): dropped and logged (docs/protocol-rules.md M4).
            const id = toRawId(value.id)
            ex.drop({ id: id ? idLabel(id) : '-', reason: 'server_request' })
            return null
          }
          if (!looksLikeResponse(value)) return undefined
          const graded = grader.message(value, ev.data)
          result = graded === null ? null : graded === ev.data ? undefined : graded
        }
        if (grader.done) ex.finish(200)
        return result
      },
      onEnd(reason, error) {
        if (reason === 'cancel') ex.clientClosed = !grader.done
        const tail = grader.close(reason === 'error' && isTimeout(error) ? 'timeout' : reason).map((t): SseEvent => ({ data: t }))
        ex.finish(200)
        return tail
      },
    },
    // One SSE event is bounded like a JSON reply (MAX_REPLY_BYTES, counted in characters).
    {
      idleMs: isListen(ex) ? 0 : ex.deps.config.originTimeoutMs,
      eventIdleMs: isListen(ex) ? 0 : ex.deps.config.streamIdleMs,
      maxMs: ex.deps.config.streamMaxMs,
      maxEventChars: ex.deps.config.maxReplyBytes,
    }
  )
  const withHead = head.length ? prepend(head, body) : body
  return edgeResponse(withHead, reply.status, headers)
}

/** `events` as one chunk, then `body`. */
function prepend(events: SseEvent[], body: ByteSource): ByteSource {
  let first: Uint8Array | undefined = new TextEncoder().encode(events.map(formatEvent).join(''))
  return {
    read() {
      if (first === undefined) return body.read()
      const value = first
      first = undefined
      return Promise.resolve({ done: false, value })
    },
    cancel: (reason) => body.cancel(reason),
  }
}

/**
 * Forwards `GET /mcp` (the standalone SSE stream) or `DELETE /mcp` (session end) untouched,
 * streaming the body (docs/design.md §2). 2026-07-28 requests are answered 405 (D18), an
 * unsupported version header 400 -32022 (D14).
 * The GET stream is relayed byte for byte (the origin's chunks themselves, no re-serialisation);
 * a copy of each chunk is parsed on the side ({@link watchSse}) and a
 * `notifications/tools/list_changed` event invalidates the origin's tools (every scope: the
 * notification does not say whose list changed) before the chunk that completes it is relayed.
 */
export async function handlePassThrough(method: 'GET' | 'DELETE', headers: RequestHeaders, target: OriginTarget, deps: EdgeDeps): Promise<EdgeResponse> {
  const version = headers.get('mcp-protocol-version')?.trim()
  // D18, docs/protocol-rules.md E1: the modern era is POST-only.
  if (version !== undefined && looksModern(version)) {
    return localResponse({ kind: 'transport', status: 405, message: `Method Not Allowed: MCP 2026-07-28 has no ${method} endpoint; use POST`, headers: { allow: 'POST' } })
  }
  if (version !== undefined && !(isKnownVersion(version) && deps.config.supportedVersions.includes(version))) {
    return localResponse(unsupportedVersion(NULL_ID, version, deps.config.supportedVersions))
  }
  let reply: OriginReply
  try {
    // The headers of a GET stream are bounded like any reply (an origin that never answers must not
    // hold the client forever); its body may stay silent, bounded only by STREAM_MAX_MS below.
    reply = await deps.origin({ method, url: target.url, headers: forwardHeaders(headers), timeoutMs: deps.config.originTimeoutMs, ...(method === 'GET' ? { bodyTimeoutMs: 0 } : {}) })
  } catch (e) {
    return localResponse({ kind: 'gateway', code: e instanceof OriginTimeoutError ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable })
  }
  const source = reply.status === 204 || reply.status === 304 ? (reply.discard(), null) : reply.stream()
  const body =
    source && method === 'GET' && isSse(reply)
      ? watchSse(
          source,
          (ev) => {
            if (isMessageEvent(ev) && ev.data.includes('notifications/tools/list_changed') && carriesListChanged(ev.data)) deps.registry.invalidate(target.id)
          },
          deps.config.streamMaxMs
        )
      : source
  return edgeResponse(body, reply.status, relayHeaders(reply))
}

/** True when an SSE event's data is `notifications/tools/list_changed` (alone or inside a JSON-RPC batch). */
function carriesListChanged(data: string): boolean {
  let v: unknown
  try {
    v = JSON.parse(data)
  } catch {
    return false
  }
  const isIt = (m: unknown) => isObject(m) && m.method === 'notifications/tools/list_changed' && !('id' in m)
  return Array.isArray(v) ? v.some(isIt) : isIt(v)
}
