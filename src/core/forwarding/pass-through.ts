/**
 * @module core/forwarding/pass-through
 * `GET /mcp` (the standalone SSE stream) and `DELETE /mcp` (session end), forwarded untouched;
 * the GET stream is watched for `notifications/tools/list_changed` on the side.
 */
import { isKnownVersion, looksModern } from '../jsonrpc/versions'
import { ErrorCode, isObject, NULL_ID } from '../jsonrpc/jsonrpc'
import { parseWithinDepth } from '../jsonrpc/json-scan'
import { OriginTimeoutError, type OriginReply } from '../ports'
import { TOKEN_EXPIRED_EVENT, watchSse } from '../sse/sse-watch'
import { unsupportedVersion } from '../protocol/protocol-refusals'
import { pinBook, type EdgeDeps, type OriginTarget } from '../exchange'
import { localResponse } from '../local-answer'
import { edgeResponse, type EdgeResponse, type RequestHeaders } from '../edge-response'
import { forwardHeaders, ORIGIN_AUTH_CAUSE, refusesEdgeCredential } from './origin-call'
import { isSse, relayHeaders } from '../grading/origin-reply'
import { isMessageEvent } from '../sse/sse-event'

/**
 * Forwards `GET /mcp` (the standalone SSE stream) or `DELETE /mcp` (session end) untouched,
 * streaming the body (docs/design.md §2). 2026-07-28 requests are answered 405 (D18), an
 * unsupported version header 400 -32022 (D14).
 * The GET stream is relayed byte for byte (the origin's chunks themselves, no re-serialisation);
 * a copy of each chunk is parsed on the side ({@link watchSse}) and a
 * `notifications/tools/list_changed` event invalidates the origin's tools (every scope: the
 * notification does not say whose list changed) before the chunk that completes it is relayed.
 * With auth on, the GET stream ends when the token it was opened with stops being accepted
 * (`validUntilMs`: its `exp` plus the clock leeway), with a last event saying so
 * ({@link TOKEN_EXPIRED_EVENT}); the client reconnects with a new token.
 * @param opts `validUntilMs` of the caller's verified token (auth on)
 */
export async function handlePassThrough(
  method: 'GET' | 'DELETE',
  headers: RequestHeaders,
  target: OriginTarget,
  deps: EdgeDeps,
  opts: { validUntilMs?: number } = {}
): Promise<EdgeResponse> {
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
    reply = await deps.origin({
      method,
      url: target.url,
      headers: forwardHeaders(headers, deps.config.forwardOriginHeader),
      timeoutMs: deps.config.originTimeoutMs,
      ...(method === 'GET' ? { bodyTimeoutMs: 0 } : {}),
    })
  } catch (e) {
    return localResponse({ kind: 'gateway', code: e instanceof OriginTimeoutError ? ErrorCode.OriginTimeout : ErrorCode.OriginUnavailable })
  }
  if (deps.auth && refusesEdgeCredential(reply)) {
    // As for a POST (origin-call.ts): the origin's challenge is about the edge's credential, not the client's token.
    deps.log({
      level: 'warn',
      msg: 'mcp.passthrough.origin_auth',
      origin: target.id,
      method,
      status: reply.status,
      originError: 'ORIGIN_AUTH',
      originErrorText: ORIGIN_AUTH_CAUSE(reply.status).text,
    })
    return localResponse({ kind: 'gateway', code: ErrorCode.OriginUnavailable })
  }
  const source = reply.status === 204 || reply.status === 304 ? (reply.discard(), null) : reply.stream()
  const body =
    source && method === 'GET' && isSse(reply)
      ? watchSse(
          source,
          (ev) => {
            if (isMessageEvent(ev) && ev.data.includes('notifications/tools/list_changed') && carriesListChanged(ev.data)) {
              deps.registry.invalidate(target.id)
              pinBook(deps).listChanged(target.id)
            }
          },
          deps.config.streamMaxMs,
          opts.validUntilMs !== undefined ? { atMs: opts.validUntilMs, event: TOKEN_EXPIRED_EVENT } : undefined
        )
      : source
  return edgeResponse(body, reply.status, relayHeaders(reply))
}

/**
 * True when an SSE event's data is `notifications/tools/list_changed` (alone or inside a JSON-RPC
 * batch): the GET stream's relay and a virtual server's stream both watch for it. Data that does
 * not name the method is not parsed.
 */
export function carriesListChanged(data: string): boolean {
  if (!data.includes('notifications/tools/list_changed')) return false
  const v = parseWithinDepth(data)
  const isIt = (m: unknown) => isObject(m) && m.method === 'notifications/tools/list_changed' && !('id' in m)
  return Array.isArray(v) ? v.some(isIt) : isIt(v)
}
