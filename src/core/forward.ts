/**
 * @module forward
 * Stages 6-8 for what the edge forwards: send the valid messages to the origin, grade its reply
 * per JSON-RPC id (JSON or SSE, event by event), merge the local answers, and respond. Origin
 * faults become gateway errors per id (D9); every forwarded id is answered exactly once.
 * Also the untouched pass-through of GET and DELETE.
 */
import { isKnownVersion, isModern } from './era'
import { ErrorCode, errorText, isObject, NULL_ID, toRawId, type RpcError } from './jsonrpc'
import { memberText, scanJsonText } from './json-text'
import { OriginTimeoutError, type OriginReply } from './ports'
import { gradeHeader, gradeResponse, type GradeRow } from './grade'
import { transformSse, type SseEvent } from './sse'
import { errorResponse, gatewayError, idLabel, JSON_HEADERS, type EdgeDeps, type Exchange, type OriginTarget, type Pending } from './exchange'

/** Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1), framing, and encodings the edge must read. */
const DROP_REQUEST = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection', 'content-length', 'accept-encoding', 'expect'])
/** Reply headers relayed to the client. */
const RELAY_REPLY = ['content-type', 'mcp-session-id', 'mcp-protocol-version', 'cache-control', 'www-authenticate', 'retry-after', 'allow']

function forwardHeaders(headers: Headers): Record<string, string> {
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

export async function callOrigin(ex: Exchange, headers: Headers, body: string): Promise<OriginReply | { fault: number }> {
  const t0 = Date.now()
  try {
    const reply = await ex.deps.origin({ method: 'POST', url: ex.target.url, headers: forwardHeaders(headers), body, timeoutMs: ex.deps.config.originTimeoutMs })
    ex.originMs = Date.now() - t0
    return reply
  } catch (e) {
    ex.originMs = Date.now() - t0
    return { fault: e instanceof OriginTimeoutError ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable }
  }
}

function isSse(reply: OriginReply): boolean {
  return (reply.headers['content-type'] ?? '').toLowerCase().includes('text/event-stream')
}

function isJson(reply: OriginReply): boolean {
  return (reply.headers['content-type'] ?? '').toLowerCase().includes('json')
}

/** Notifications and client responses: forward, then 202 with no body (MCP transports, item 4). */
export async function forwardWithoutReply(text: string, headers: Headers, ex: Exchange): Promise<Response> {
  const reply = await callOrigin(ex, headers, text)
  if ('fault' in reply) {
    ex.row({ id: 'null', method: '', grade: 'origin_error', code: reply.fault, answeredBy: 'edge' })
    ex.finish(502)
    return errorResponse(502, NULL_ID, gatewayError(reply.fault))
  }
  if (reply.status >= 200 && reply.status < 300) {
    reply.discard()
    ex.finish(202)
    return new Response(null, { status: 202, headers: relaySessionOnly(reply) })
  }
  // The origin refused (e.g. 400/404 for a missing or unknown session): relay it if it is JSON-RPC.
  return (await relayRefusal(reply, ex))!
}

function relaySessionOnly(reply: OriginReply): Record<string, string> {
  const sid = reply.headers['mcp-session-id']
  return sid ? { 'mcp-session-id': sid } : {}
}

/** A non-2xx origin answer: relayed unchanged when its body is a JSON-RPC error, else D9. */
async function relayRefusal(reply: OriginReply, ex: Exchange, pending?: Pending[]): Promise<Response | null> {
  let text = ''
  try {
    text = isJson(reply) ? await reply.text() : (reply.discard(), '')
  } catch {
    text = ''
  }
  let msg: unknown
  try {
    msg = text ? JSON.parse(text) : undefined
  } catch {
    msg = undefined
  }
  if (isObject(msg) && isObject(msg.error) && typeof msg.error.code === 'number') {
    for (const p of pending ?? []) ex.row({ id: idLabel(p.id), method: p.method, ...(p.tool ? { tool: p.tool } : {}), grade: 'rpc_error', code: msg.error.code as number, answeredBy: 'origin' })
    if (!pending?.length) ex.row({ id: 'null', method: '', grade: 'rpc_error', code: msg.error.code as number, answeredBy: 'origin' })
    ex.finish(reply.status)
    return new Response(text, { status: reply.status, headers: { ...relayHeaders(reply), 'content-type': 'application/json' } })
  }
  if (!pending?.length) {
    ex.finish(reply.status)
    return new Response(null, { status: reply.status, headers: relayHeaders(reply) })
  }
  return null
}

/**
 * Stage 6-8: forward `body`, grade the reply per id, merge `localTexts`, respond.
 * @param asBatch answer with a JSON array (the client sent a batch)
 */
export async function forwardRequests(body: string, forwarded: Pending[], localTexts: string[], headers: Headers, ex: Exchange, asBatch: boolean): Promise<Response> {
  const reply = await callOrigin(ex, headers, body)
  if ('fault' in reply) return answerAll(forwarded, localTexts, ex, asBatch, reply.fault)
  if (isSse(reply) && reply.status >= 200 && reply.status < 300) return streamReply(reply, forwarded, localTexts, ex)
  if (reply.status < 200 || reply.status > 299) {
    if (!asBatch) {
      const relayed = await relayRefusal(reply, ex, forwarded)
      if (relayed) return relayed
    } else reply.discard()
    return answerAll(forwarded, localTexts, ex, asBatch, ErrorCode.OriginUnavailable, reply.status)
  }
  let text: string
  try {
    text = await reply.text()
  } catch {
    return answerAll(forwarded, localTexts, ex, asBatch, ErrorCode.OriginUnavailable, reply.status)
  }
  if (text.trim() === '') return answerAll(forwarded, localTexts, ex, asBatch, ErrorCode.OriginNoAnswer)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return answerAll(forwarded, localTexts, ex, asBatch, ErrorCode.OriginUnavailable, reply.status)
  }
  const out: string[] = [...localTexts]
  const messages = Array.isArray(value) ? value : [value]
  const scan = Array.isArray(value) ? scanJsonText(text) : null
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i]
    const source = scan ? text.slice(scan.elements[i]!.start, scan.elements[i]!.end) : text
    const graded = gradeMessage(msg, source, ex)
    if (graded !== null) out.push(graded)
  }
  out.push(...unanswered(ex))
  const sid = relaySessionOnly(reply)
  ex.finish(200)
  const responseHeaders = { ...JSON_HEADERS, ...sid, 'mcp-edge-grade': gradeHeader(ex.rows) }
  if (asBatch) return new Response(`[${out.join(',')}]`, { status: 200, headers: responseHeaders })
  return new Response(out[0] ?? '', { status: 200, headers: responseHeaders })
}

/**
 * Grades one message of the origin's reply. Returns the text to send (original or rewritten),
 * or null when it is dropped (repeated or invented id).
 */
function gradeMessage(msg: unknown, source: string, ex: Exchange): string | null {
  if (!isObject(msg) || (!('result' in msg) && !('error' in msg))) return null
  let key: string | null = null
  if (typeof msg.id === 'number' && !Number.isSafeInteger(msg.id)) {
    const el = scanJsonText(source).elements[0]
    key = toRawId(msg.id, memberText(source, el, 'id'))?.key ?? null
  } else key = toRawId(msg.id)?.key ?? null
  let p = key !== null ? ex.pending.get(key) : undefined
  if (!p && msg.id === null && isObject(msg.error)) {
    // An error the origin could tie to no id: give it to the only open request (never leave it waiting).
    const open = [...ex.pending.values()].filter((x) => !x.answered)
    if (open.length === 1) p = open[0]
  }
  if (!p || p.answered) return null
  p.answered = true
  const g = gradeResponse(msg, source, p, { hiddenFailures: ex.deps.config.hiddenFailures })
  const row: GradeRow = { id: idLabel(p.id), method: p.method, grade: g.grade, answeredBy: 'origin' }
  if (p.tool !== undefined) row.tool = p.tool
  if (g.code !== undefined) row.code = g.code
  if (g.isError) row.isError = true
  if (ex.originMs !== undefined) row.originMs = ex.originMs
  ex.row(row)
  if (msg.id === null && p) return errorText(p.id, msg.error as RpcError)
  return g.text ?? source
}

/** Gateway errors for every forwarded id still unanswered (D9 -31003). */
function unanswered(ex: Exchange, code: number = ErrorCode.OriginNoAnswer, originStatus?: number): string[] {
  const out: string[] = []
  for (const p of ex.pending.values()) {
    if (p.answered) continue
    p.answered = true
    ex.row({ id: idLabel(p.id), method: p.method, ...(p.tool ? { tool: p.tool } : {}), grade: code === ErrorCode.OriginNoAnswer ? 'missing' : 'origin_error', code, answeredBy: 'edge' })
    out.push(errorText(p.id, gatewayError(code, originStatus)))
  }
  return out
}

function answerAll(_forwarded: Pending[], localTexts: string[], ex: Exchange, asBatch: boolean, code: number, originStatus?: number): Response {
  const out = [...localTexts, ...unanswered(ex, code, originStatus)]
  ex.finish(200)
  const headers = { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) }
  return new Response(asBatch ? `[${out.join(',')}]` : out[0]!, { status: 200, headers })
}

/** SSE reply: graded event by event; local answers first; gateway errors for ids left open at the end. */
function streamReply(reply: OriginReply, _forwarded: Pending[], localTexts: string[], ex: Exchange): Response {
  const source = reply.stream()
  const headers = relayHeaders(reply)
  headers['content-type'] = 'text/event-stream'
  headers['cache-control'] = headers['cache-control'] ?? 'no-cache'
  if (!source) return answerAll(_forwarded, localTexts, ex, localTexts.length > 0, ErrorCode.OriginNoAnswer)
  const head = localTexts.map((t): SseEvent => ({ data: t }))
  const body = transformSse(source, {
    onEvent(ev) {
      if (!ev.data || ev.data[0] !== '{' && ev.data[0] !== '[') return undefined
      // No parse for an event that cannot need a change (most of a long stream: progress and
      // log notifications). A response must spell a member name "result" or "error" literally,
      // unless a \u escape spells it, so any escape takes the full path; of the notifications
      // only tools/list_changed concerns the edge.
      const d = ev.data
      if (!d.includes('"result"') && !d.includes('"error"') && !d.includes('\\u') && !d.includes('list_changed')) return undefined
      let value: unknown
      try {
        value = JSON.parse(ev.data)
      } catch {
        return undefined // not JSON-RPC: passed through as it came
      }
      if (isObject(value) && value.method === 'notifications/tools/list_changed') ex.deps.registry.invalidate(ex.target.id, 'public')
      if (Array.isArray(value)) {
        const scan = scanJsonText(ev.data)
        const parts = value.map((m, i) => {
          const el = scan.elements[i]!
          const src = ev.data.slice(el.start, el.end)
          if (!isObject(m) || 'method' in m) return src
          return gradeMessage(m, src, ex)
        })
        return `[${parts.filter((x): x is string => x !== null).join(',')}]`
      }
      if (!isObject(value) || 'method' in value) return undefined
      const graded = gradeMessage(value, ev.data, ex)
      return graded === null ? '' : graded === ev.data ? undefined : graded
    },
    onEnd(failed) {
      const tail = unanswered(ex, failed ? ErrorCode.OriginUnavailable : ErrorCode.OriginNoAnswer).map((t): SseEvent => ({ data: t }))
      ex.finish(200)
      return tail
    },
  })
  const withHead = head.length ? prepend(head, body) : body
  return new Response(withHead, { status: reply.status, headers })
}

function prepend(events: SseEvent[], body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder()
  const first = enc.encode(events.map((e) => `data: ${e.data}\n\n`).join(''))
  const reader = body.getReader()
  let sentFirst = false
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (!sentFirst) {
        sentFirst = true
        c.enqueue(first)
        return
      }
      const { value, done } = await reader.read()
      if (done) c.close()
      else c.enqueue(value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
}

/**
 * Forwards `GET /mcp` (the standalone SSE stream) or `DELETE /mcp` (session end) untouched,
 * streaming the body (DESIGN.md section 2). 2026-07-28 requests are answered 405 (D18).
 */
export async function handlePassThrough(method: 'GET' | 'DELETE', headers: Headers, target: OriginTarget, deps: EdgeDeps): Promise<Response> {
  const version = headers.get('mcp-protocol-version')
  if (version !== null && isKnownVersion(version) && isModern(version)) {
    return errorResponse(405, NULL_ID, { code: ErrorCode.InvalidRequest, message: `Method Not Allowed: MCP ${version} has no ${method} endpoint` }, { allow: 'POST' })
  }
  let reply: OriginReply
  try {
    reply = await deps.origin({ method, url: target.url, headers: forwardHeaders(headers), timeoutMs: method === 'GET' ? 0 : deps.config.originTimeoutMs })
  } catch (e) {
    const code = e instanceof OriginTimeoutError ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable
    return errorResponse(502, NULL_ID, gatewayError(code))
  }
  const body = reply.status === 204 || reply.status === 304 ? (reply.discard(), null) : reply.stream()
  return new Response(body, { status: reply.status, headers: relayHeaders(reply) })
}

