/**
 * @module core/forwarding/origin-call
 * Stage 6, the origin call: one POST to the origin with the client's headers (hop-by-hop ones
 * dropped), `ORIGIN_TIMEOUT_MS` and `MAX_REPLY_BYTES`, and what the edge reads of the reply's
 * headers is grading/origin-reply.ts. A failed call is a
 * {@link GatewayFault} (docs/design.md D9).
 */
import { originCause } from '../observe/origin-cause'
import { ErrorCode } from '../jsonrpc/jsonrpc'
import { OriginTimeoutError, type OriginReply, type OriginRequest } from '../ports'
import { isSse } from '../grading/origin-reply'
import { LinkSignal, type ClientSignal } from '../client-signal'
import { isListen, type Exchange } from '../exchange'
import type { GatewayFault } from '../local-answer'
import { type RequestHeaders } from '../edge-response'

/** Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1), framing, and encodings the edge must read. */
const DROP_REQUEST = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'content-length',
  'accept-encoding',
  'expect',
])

/**
 * The browser-context request headers: what a browser says about the page that made the request
 * (`Origin`, `Referer` with the page's URL, the Fetch Metadata headers `Sec-Fetch-Site`,
 * `Sec-Fetch-Mode`, `Sec-Fetch-Dest`, `Sec-Fetch-User`, ... all `sec-fetch-*`).
 */
function isBrowserContext(name: string): boolean {
  return name === 'origin' || name === 'referer' || name.startsWith('sec-fetch-')
}

/** The 2026-07-28 headers that mirror the body (MCP 2026-07-28 Streamable HTTP §Standard Request Headers). */
function isMirror(name: string): boolean {
  return name === 'mcp-method' || name === 'mcp-name'
}

/**
 * The client's request headers to send to the origin: all but the hop-by-hop and framing ones,
 * the browser-context ones (`Origin`, `Referer`, `Sec-Fetch-*`) unless `keepBrowserContext`, and
 * `Mcp-Method` / `Mcp-Name` unless named in `checkedMirrors`: the edge relays a mirrored header
 * only when it held it to the body, so a header naming a tool the edge hides (in a 2025 era,
 * where nothing checks it) never reaches an origin that may route by it.
 * Why they are dropped: the edge is the origin's client; it applies the browser Origin rule
 * itself (`ALLOWED_ORIGINS`), and an origin with its own loopback-only Origin check (the MCP SDK's
 * DNS-rebinding protection, MCP Transports §Security Warning) or a Fetch Metadata check
 * (`Sec-Fetch-Site: cross-site` refused) refused every page the edge allows when the browser's
 * headers were passed on. `Cookie` is forwarded: an origin may authenticate its callers by
 * cookie, like by `Authorization`.
 * @param keepBrowserContext `FORWARD_ORIGIN_HEADER=on`: pass the browser-context headers on as well
 */
export function forwardHeaders(headers: RequestHeaders, keepBrowserContext = false, checkedMirrors: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {}
  headers.forEach((value, name) => {
    if (DROP_REQUEST.has(name) || (!keepBrowserContext && isBrowserContext(name))) return
    if (isMirror(name) && !checkedMirrors.includes(name)) return
    out[name] = value
  })
  return out
}

/**
 * True when, with auth on, the origin's answer refuses the edge's credential: 401 or 403 (the
 * origin sees only ORIGIN_AUTHORIZATION, or nothing). The body is released.
 */
export function refusesEdgeCredential(reply: OriginReply): boolean {
  if (reply.status !== 401 && reply.status !== 403) return false
  reply.discard()
  return true
}

/** The log cause of {@link refusesEdgeCredential}: `ORIGIN_AUTH` and the status. */
export const ORIGIN_AUTH_CAUSE = (status: number) => ({ code: 'ORIGIN_AUTH', text: `the origin refused the edge's own credential (ORIGIN_AUTHORIZATION) with HTTP ${status}` })

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
  const hr0 = performance.now()
  const link = signal ? new LinkSignal() : undefined
  const onAbort = () => link!.abort()
  if (signal?.aborted) link!.abort()
  else signal?.addEventListener('abort', onAbort, { once: true })
  const out = forwardHeaders(headers, ex.deps.config.forwardOriginHeader, ex.checkedMirrors)
  // The origin call's span, a child of the POST's; the origin sees it as its parent (W3C traceparent).
  const span = ex.span && ex.deps.tracer ? ex.deps.tracer.start('mcp.origin', ex.span, 'client') : undefined
  const traceparent = span?.traceparent()
  if (traceparent) out.traceparent = traceparent
  try {
    const timeoutMs = isListen(ex) ? 0 : ex.deps.config.originTimeoutMs
    const request: OriginRequest = { method: 'POST', url: ex.target.url, headers: out, body, timeoutMs, maxReplyBytes: ex.deps.config.maxReplyBytes }
    if (link) request.signal = link
    const reply = await ex.deps.origin(request)
    ex.originMs = Date.now() - t0
    ex.originSeconds = (performance.now() - hr0) / 1000
    if (ex.deps.auth && refusesEdgeCredential(reply)) {
      // With auth on the origin judged the edge's own credential, not the client's token: its
      // challenge must not reach the client (which would try to authorize against the origin's
      // server, or step up for a scope the edge cannot ask for). A gateway fault, logged with the cause.
      signal?.removeEventListener('abort', onAbort)
      ex.originCause = ORIGIN_AUTH_CAUSE(reply.status)
      if (span) {
        if (span.recording)
          span.setAttributes({ 'http.request.method': 'POST', 'http.response.status_code': reply.status, 'mcp_edge.origin': ex.target.id, 'error.type': 'ORIGIN_AUTH' })
        span.fail('origin ORIGIN_AUTH')
        span.end()
      }
      return { kind: 'gateway', code: ErrorCode.OriginUnavailable }
    }
    if (isSse(reply)) signal?.removeEventListener('abort', onAbort)
    if (span) {
      if (span.recording) span.setAttributes({ 'http.request.method': 'POST', 'http.response.status_code': reply.status, 'mcp_edge.origin': ex.target.id })
      if (reply.status >= 500) span.fail(`HTTP ${reply.status}`)
      span.end()
    }
    return { kind: 'reply', reply }
  } catch (e) {
    ex.originMs = Date.now() - t0
    ex.originSeconds = (performance.now() - hr0) / 1000
    signal?.removeEventListener('abort', onAbort)
    // The cause goes to the log line (docs/observability.md); the client gets the D9 error only.
    ex.originCause = originCause(e)
    if (span) {
      if (span.recording) span.setAttributes({ 'http.request.method': 'POST', 'mcp_edge.origin': ex.target.id, 'error.type': ex.originCause.code })
      span.fail(`origin ${ex.originCause.code}`)
      span.end()
    }
    return { kind: 'gateway', code: e instanceof OriginTimeoutError ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable }
  }
}
