/**
 * @module core/virtual/virtual-routing
 * Sending a client's request to the origin that owns it (docs/virtual-servers.md): `tools/call` by
 * the body's tool name, and each request the other features route ({@link routeTo}), through that
 * origin's own pipeline in the session the client's session carries (else the edge's own), with
 * the headers and envelope of the origin's era, once more on a new session when the origin lost
 * the one used; gateway errors naming the origin, and `resultType` added for a 2026-07-28 client
 * of a 2025 origin; the client's cancellations, answers and progress relayed to its origin
 * sessions; and a routed answer read as one response text. Separate from the dispatch
 * (virtual-server.ts) and the other features (virtual-features.ts), which both route through it.
 */
import { invalidArgsAsToolError, isKnownVersion, isModern, META_VERSION_KEY, MODERN_VERSION, type ProtocolVersion } from '../jsonrpc/versions'
import { ErrorCode, errorText, isObject, requestText, responseText, type RawId } from '../jsonrpc/jsonrpc'
import { formatEvent, isMessageEvent } from '../sse/sse-event'
import type { Classified } from '../request/classify'
import { isWholeBody, type ByteSource, type EdgeResponse, type RequestHeaders } from '../edge-response'
import { toWire } from '../local-answer'
import { headerMemos, originEras, pinBook, type EdgeDeps } from '../exchange'
import { handlePost, originTarget } from '../pipeline'
import { unknownToolAnswer } from '../validation/tools-call'
import { readSseEvents } from '../sse/read-sse-events'
import { OriginTimeoutError } from '../ports'
import { originOfPrefixed, type MergedTool } from './merge-tools'
import { keepInFlight } from './in-flight'
import { watchOriginRequests } from './origin-requests'
import { forgetLists, modernEnvelope, replaceConnection, replacementOf, sharedConnection, virtualState, type OriginConnection } from './origin-sessions'
import { type Ask, type Outcome, targetOf } from './virtual-ask'
import { findMerged, noteLeftOut } from './virtual-tools-list'

/** The response text of an {@link Outcome} (a routed call's response read to its end), for a batch. */
export async function textOf(o: Outcome, c: Classified): Promise<string | null> {
  if (o === null) return null
  if ('text' in o) return o.text
  const id = c.kind === 'request' ? c.id : null
  return id ? responseTextOf(o.response, id) : null
}

/**
 * The JSON-RPC response for `id` in a routed call's answer: its JSON body, or the event of its
 * SSE stream that answers `id` (notifications before it are dropped: a batch has no stream).
 */
async function responseTextOf(r: EdgeResponse, id: RawId): Promise<string> {
  const body = r.body
  if (body === null) return errorText(id, { code: ErrorCode.OriginNoAnswer, message: 'Origin never answered this request', data: { source: 'edge' } })
  if (isWholeBody(body)) return typeof body === 'string' ? body : new TextDecoder().decode(body)
  try {
    for await (const ev of readSseEvents(body)) {
      if (!ev.data) continue
      let msg: unknown
      try {
        msg = JSON.parse(ev.data)
      } catch {
        continue
      }
      if (isObject(msg) && !('method' in msg) && ('result' in msg || 'error' in msg)) return ev.data
    }
  } finally {
    void (body as ByteSource).cancel().catch(() => undefined)
  }
  return errorText(id, { code: ErrorCode.OriginNoAnswer, message: 'Origin never answered this request', data: { source: 'edge' } })
}

/** The era of a request: 2026-07-28 when its envelope says so, else the version header (or 2025-03-26 without one). */
function eraOf(c: Extract<Classified, { kind: 'request' }>, headers: RequestHeaders): ProtocolVersion {
  const meta = c.params?._meta
  if (isObject(meta) && meta[META_VERSION_KEY] === MODERN_VERSION) return MODERN_VERSION
  const h = headers.get('mcp-protocol-version')?.trim()
  return isKnownVersion(h) && !isModern(h) ? h : '2025-03-26'
}

/**
 * Sends a client's `notifications/cancelled`, or its answer (or progress) to a request an origin
 * sent inside a routed request's stream (sampling, elicitation, roots), to each 2025 origin session
 * its virtual-server session carries, through the origin's path (the message as the client wrote
 * it): the origin that sent the request (or runs the cancelled one) takes it, the others do not
 * know the id. 2026-07-28 origins have no sessions: a call to one is cancelled by the client
 * closing its request, which aborts the edge's request to the origin (or by in-flight.ts).
 * @param only the origin known to have sent the request (origin-requests.ts): to its session alone
 */
export async function relayToSessions(ask: Ask, text: string, method: string, only?: string): Promise<void> {
  let sessions = Object.entries(ask.session?.backends ?? {}).filter(([, s]) => s.sessionId !== undefined && !isModern(s.era))
  if (only !== undefined && sessions.some(([o]) => o === only)) sessions = sessions.filter(([o]) => o === only)
  await Promise.all(
    sessions.map(async ([origin, s]) => {
      const target = originTarget(ask.deps.config, origin)
      if (!target) return
      const conn = (await replacementOf(ask.deps, origin, s.sessionId!)?.catch(() => undefined)) ?? { era: s.era, sessionId: s.sessionId!, capabilities: {} }
      const r = await handlePost(text, originHeaders(ask.headers, conn, method, '', false), target, ask.deps)
      if (r.body !== null && !isWholeBody(r.body)) await r.body.cancel().catch(() => undefined)
    })
  )
}

/**
 * A routed request found its origin down: logged and counted as left out, and the merged lists
 * holding it forgotten, so the next `tools/list` merges again (and leaves it out while it is down).
 */
function originFailed(ask: Ask, origin: string, reason: unknown): void {
  noteLeftOut(ask, origin, reason)
  forgetLists(ask.deps, origin)
}

/** A gateway error for `id` naming the origin that could not serve it. */
function originDown(id: RawId, origin: string, timeout: boolean): string {
  return errorText(id, {
    code: timeout ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable,
    message: timeout
      ? `Origin timeout: origin ${origin} of this virtual server did not answer in time`
      : `Origin unavailable: origin ${origin} of this virtual server cannot be reached`,
    data: { source: 'edge', origin },
  })
}

/**
 * `tools/call`: routed by the body's tool name (never a header) to its origin, under the origin's
 * own name, through that origin's pipeline. A name the merged list does not hold is an unknown
 * tool (a hidden tool's included); one whose origin is left out gets a gateway error naming it.
 */
export async function callTool(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const name = c.params?.name
  if (typeof name !== 'string') return { text: errorText(c.id, { code: ErrorCode.InvalidParams, message: 'Invalid params: tools/call needs params.name, a string' }) }
  const m = await findMerged(ask, name)
  if (!m) {
    const st = virtualState(ask.deps).status.get(ask.vt.name)
    const owner = ask.vt.setting.prefix === 'always' ? originOfPrefixed(name, ask.vt.setting.origins)?.origin : undefined
    const down = owner !== undefined ? st?.leftOut[owner] : undefined
    if (owner !== undefined && down !== undefined) return { text: originDown(c.id, owner, down.startsWith('timeout')) }
    return { text: toWire(unknownToolAnswer(c.id, name)).text }
  }
  return routeCall(ask, c, m)
}

/** The headers a routed request carries to its origin: the client's, with the session, version and standard headers of the origin's era. */
function originHeaders(client: RequestHeaders, conn: OriginConnection, method: string, name: string, clientModern: boolean): RequestHeaders {
  const h = new Map<string, string>()
  client.forEach((value, key) => {
    if (key === 'content-length' || key === 'mcp-session-id' || key === 'mcp-protocol-version' || key === 'mcp-method' || key === 'mcp-name' || key === 'last-event-id') return
    // Mcp-Param-* mirror arguments of a 2026-07-28 request: kept only from a 2026-07-28 client to a 2026-07-28 origin.
    if (key.startsWith('mcp-param-') && !(clientModern && isModern(conn.era))) return
    h.set(key, value)
  })
  h.set('mcp-protocol-version', conn.era)
  if (conn.sessionId !== undefined) h.set('mcp-session-id', conn.sessionId)
  if (isModern(conn.era)) {
    h.set('mcp-method', method)
    if (name === '') return { get: (n) => h.get(n) ?? null, forEach: (fn) => h.forEach((v, k) => fn(v, k)) }
    // Non-ASCII names go as the `=?base64?...?=` form of MCP 2026-07-28 Streamable HTTP §Value Encoding.
    h.set('mcp-name', /^[\x20-\x7e]*$/.test(name) ? name : `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode(name)))}?=`)
  }
  return { get: (n) => h.get(n) ?? null, forEach: (fn) => h.forEach((v, k) => fn(v, k)) }
}

/** The body a routed request carries: `method` with `params` (the origin's names) and the envelope of the origin's era; the id as the client wrote it. */
function originRequestText(id: RawId, method: string, given: Record<string, unknown>, era: ProtocolVersion, clientModern: boolean): string {
  const params: Record<string, unknown> = { ...given }
  const meta: Record<string, unknown> = isObject(params._meta) ? { ...params._meta } : {}
  if (isModern(era)) {
    Object.assign(meta, modernEnvelope(clientModern ? (meta['io.modelcontextprotocol/clientCapabilities'] ?? {}) : {}))
  } else {
    for (const k of Object.keys(meta)) if (k.startsWith('io.modelcontextprotocol/')) delete meta[k]
  }
  if (Object.keys(meta).length) params._meta = meta
  else delete params._meta
  return requestText(id, method, JSON.stringify(params))
}

/**
 * The connection a routed request uses: the one its session carries (or its replacement here),
 * else the edge's own, kept under `caller` (returned for {@link replaceConnection}). A client
 * session that carries no entry for the origin (it was down at `initialize`) gets an edge session
 * of its own in this process, never the one its caller's other sessions or requests without a
 * session use: whatever a stateful origin keeps in a session stays one client session's.
 */
function connectionFor(ask: Ask, origin: string): { conn: Promise<OriginConnection>; shared?: Promise<OriginConnection>; caller: string } {
  const s = ask.session?.backends[origin]
  if (s) {
    const replaced = s.sessionId !== undefined ? replacementOf(ask.deps, origin, s.sessionId) : undefined
    return { conn: replaced ?? Promise.resolve({ era: s.era, ...(s.sessionId !== undefined ? { sessionId: s.sessionId } : {}), capabilities: {} }), caller: ask.caller }
  }
  const caller = ask.sessionTag !== null ? `${ask.caller}\ns-${ask.sessionTag}` : ask.caller
  const shared = sharedConnection(ask.deps, targetOf(ask, origin), ask.authorization, caller)
  return { conn: shared, shared, caller }
}

/**
 * Whether a routed call's answer (to a request that carried an origin session id) says the origin
 * no longer knows the session (it restarted): HTTP 404, relayed or as a gateway error's
 * `originStatus`, as MCP transports require; or 400, which servers built on the SDK's examples
 * (server-everything among them) answer to a session id they do not know. A 400 refuses the
 * request before it runs, so sending it again on a new session does not run it twice.
 */
function sessionGone(r: EdgeResponse): boolean {
  if (r.status === 404) return true
  if (!isWholeBody(r.body)) return false
  const text = typeof r.body === 'string' ? r.body : new TextDecoder().decode(r.body)
  if (!text.includes('"originStatus":404') && !text.includes('"originStatus":400')) return false
  try {
    const v: unknown = JSON.parse(text)
    return isObject(v) && isObject(v.error) && isObject(v.error.data) && (v.error.data.originStatus === 404 || v.error.data.originStatus === 400)
  } catch {
    return false
  }
}

/** A whole JSON answer whose error is one of the edge's gateway errors (D9), with the origin named in its `data`. */
function nameOriginInGatewayError(r: EdgeResponse, id: RawId, origin: string, onGatewayError: () => void): EdgeResponse {
  if (!isWholeBody(r.body)) return r
  const text = typeof r.body === 'string' ? r.body : new TextDecoder().decode(r.body)
  if (!text.includes('"source":"edge"')) return r
  try {
    const v: unknown = JSON.parse(text)
    if (!isObject(v) || !isObject(v.error)) return r
    const code = v.error.code
    if (code !== ErrorCode.OriginUnavailable && code !== ErrorCode.OriginTimeout && code !== ErrorCode.OriginNoAnswer) return r
    onGatewayError()
    const data = isObject(v.error.data) ? v.error.data : {}
    return { ...r, body: errorText(id, { code, message: String(v.error.message), data: { ...data, origin } }) }
  } catch {
    return r
  }
}

/** The ports with `INVALID_ARGS` fixed to one shape, per shape and edge (they share every other part, the learned state included). */
const shaped = new WeakMap<EdgeDeps, Map<string, EdgeDeps>>()

/**
 * The ports a routed call goes through: `deps` itself, or with `INVALID_ARGS=auto` and a client
 * whose era answers invalid arguments in another shape than the origin's era, the same ports
 * with the client's shape fixed (-32602 for 2025-06-18 and older, an `isError` result from
 * 2025-11-25 on), so the client gets the shape of its own era.
 */
function depsForShape(deps: EdgeDeps, clientEra: ProtocolVersion, originEra: ProtocolVersion): EdgeDeps {
  if (deps.config.invalidArgs !== 'auto' || invalidArgsAsToolError(clientEra) === invalidArgsAsToolError(originEra)) return deps
  const shape = invalidArgsAsToolError(clientEra) ? 'tool-error' : 'rpc-error'
  let byShape = shaped.get(deps)
  if (!byShape) shaped.set(deps, (byShape = new Map()))
  let d = byShape.get(shape)
  if (!d) {
    // What the ports learn lazily is made first, so both views share it.
    originEras(deps)
    headerMemos(deps)
    pinBook(deps)
    d = { ...deps, config: { ...deps.config, invalidArgs: shape } }
    byShape.set(shape, d)
  }
  return d
}

/** A response text whose `result` has no `resultType`, with `resultType: "complete"`; other texts unchanged. */
function addResultType(text: string, id: RawId): string {
  if (!text.includes('"result"')) return text
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return text
  }
  if (!isObject(v) || !isObject(v.result) || 'resultType' in v.result || 'method' in v) return text
  // The id as the client wrote it (the parse above loses the digits of an integer past 2^53).
  return responseText(id, 'result', JSON.stringify({ ...v.result, resultType: 'complete' }))
}

/**
 * A 2025 origin's answer to a 2026-07-28 client: every result carries `resultType` in 2026-07-28
 * (absent means `complete` to a lenient client, but the revision requires it), so a result
 * without one gets `"resultType":"complete"`; an SSE answer is rewritten event by event.
 */
function withResultType(r: EdgeResponse, id: RawId): EdgeResponse {
  const body = r.body
  if (body === null) return r
  if (isWholeBody(body)) return { ...r, body: addResultType(typeof body === 'string' ? body : new TextDecoder().decode(body), id) }
  const events = readSseEvents(body)[Symbol.asyncIterator]()
  const encoder = new TextEncoder()
  const source: ByteSource = {
    async read() {
      const n = await events.next()
      if (n.done) return { done: true }
      const ev = n.value
      return { done: false, value: encoder.encode(formatEvent(isMessageEvent(ev) && ev.data ? { ...ev, data: addResultType(ev.data, id) } : ev)) }
    },
    cancel: async (reason) => {
      await events.return?.(undefined)
      await body.cancel(reason)
    },
  }
  return { ...r, body: source }
}

/** Sends a routed call through its origin's pipeline under the origin's tool name. */
function routeCall(ask: Ask, c: Extract<Classified, { kind: 'request' }>, m: MergedTool): Promise<Outcome> {
  return routeTo(ask, c, m.origin, 'tools/call', { ...(c.params ?? {}), name: m.originName }, m.originName)
}

/**
 * Sends the client's request `c` as `method` with `params` (the origin's names) to `origin`,
 * through that origin's pipeline, in the session the client's session carries (else the edge's
 * own); once more on a new session when the origin lost the one used.
 * @param name what `Mcp-Name` carries to a 2026-07-28 origin (the tool or prompt name, the resource URI), '' for none
 */
export async function routeTo(
  ask: Ask,
  c: Extract<Classified, { kind: 'request' }>,
  origin: string,
  method: string,
  params: Record<string, unknown>,
  name: string
): Promise<Outcome> {
  const m = { origin }
  const target = targetOf(ask, m.origin)
  const clientModern = isModern(eraOf(c, ask.headers))
  const { conn: pending, shared, caller } = connectionFor(ask, m.origin)
  let conn: OriginConnection
  try {
    conn = await pending
  } catch (e) {
    originFailed(ask, m.origin, e)
    return { text: originDown(c.id, m.origin, e instanceof OriginTimeoutError) }
  }
  const clientEra = eraOf(c, ask.headers)
  // An origin without a session for this client cannot take its notifications/cancelled: the
  // request is kept so that a cancellation closes it (in-flight.ts).
  const token = ask.session && conn.sessionId === undefined ? ask.headers.get('mcp-session-id') : null
  const flight = token !== null ? keepInFlight(ask.deps, token, c.id, ask.signal) : undefined
  const send = (cn: OriginConnection) =>
    handlePost(
      originRequestText(c.id, method, params, cn.era, clientModern),
      originHeaders(ask.headers, cn, method, name, clientModern),
      target,
      depsForShape(ask.deps, clientEra, cn.era),
      flight?.signal ?? ask.signal,
      ask.identity
    )
  let r = await send(conn)
  if (conn.sessionId !== undefined && sessionGone(r)) {
    try {
      conn = await replaceConnection(ask.deps, target, conn, shared, ask.authorization, caller)
    } catch (e) {
      originFailed(ask, m.origin, e)
      return { text: originDown(c.id, m.origin, e instanceof OriginTimeoutError) }
    }
    r = await send(conn)
  }
  // The origin's session id is the edge's business: the client keeps the virtual server's.
  delete r.headers['mcp-session-id']
  const named = nameOriginInGatewayError(r, c.id, m.origin, () => forgetLists(ask.deps, m.origin))
  const shaped = clientModern && !isModern(conn.era) ? withResultType(named, c.id) : named
  // A 2025 origin session may send the client requests in this answer: noted, so that the
  // client's answers and progress go back to this origin alone.
  const session = ask.session && conn.sessionId !== undefined && !isModern(conn.era) ? ask.headers.get('mcp-session-id') : null
  const watched =
    session !== null && shaped.body !== null && !isWholeBody(shaped.body) ? { ...shaped, body: watchOriginRequests(ask.deps, session, m.origin, shaped.body) } : shaped
  return { response: flight ? flight.settle(watched) : watched }
}
