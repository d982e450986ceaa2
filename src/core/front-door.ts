/**
 * @module core/front-door
 * The one entry of `POST <mount>` and `POST <mount>/<name>`, whatever carries the request: the
 * path rule (which origin a path names), the length rule (when the body size is known before
 * reading), admission (Host, Origin, Content-Type, Accept, `MAX_BODY_BYTES`) and the hand-off to
 * the pipeline, in {@link servePost}. Runtime-neutral: the carrier reads the body for it.
 *
 * Two carriers call it, and nothing else decides what a POST means:
 * - the Hono route of `mcpEdge()` (src/mcp-edge.ts), on every runtime: Hono's router splits the
 *   path into the mount point and the `:origin` segment;
 * - the standalone Node server's `node:http` listener (src/adapters/node/post-listener.ts), which
 *   sits in front of the same Hono app and takes a POST itself only when {@link originNameOf}
 *   finds an MCP path in the raw URL; every other request goes on to the Hono app. It exists
 *   because the web Request/Response plumbing of @hono/node-server cost about 25 us of CPU per
 *   POST (docs/performance.md).
 */
import type { ClientSignal } from './client-signal'
import { isOriginName, type Config } from './config'
import type { EdgeResponse, RequestHeaders } from './edge-response'
import { edgeFault, Exchange, type EdgeDeps, type OriginTarget } from './exchange'
import { DEFAULT_VERSION } from './jsonrpc/versions'
import { localResponse } from './local-answer'
import { admitPost, handlePost, originTarget, payloadTooLarge } from './pipeline'
import { observeAnswer } from './observe/answer-bytes'
import { authorizeRequest } from './request-auth'
import type { AccessIdentity } from './access/bearer'
import { handleVirtualPost, virtualServerFor } from './virtual/virtual-server'
import { virtualSessionOnOrigin } from './virtual/virtual-caller'

/**
 * The path rule on a raw request path (with or without a query): `<base>` names the default
 * origin (undefined), `<base>/<name>` the origin `name`; null for any other path, and for names
 * that are not {@link isOriginName} (a percent-encoded one is left to the router, which decodes it).
 * @param base the mount point, e.g. `/mcp` (no trailing slash)
 */
export function originNameOf(url: string, base: string): string | undefined | null {
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  if (path === base) return undefined
  if (path.length <= base.length + 1 || !path.startsWith(base) || path.charCodeAt(base.length) !== 47 /* / */) return null
  const name = path.slice(base.length + 1)
  return isOriginName(name) ? name : null
}

/**
 * The origin an MCP path names ({@link originTarget}), or null when the name breaks the path rule
 * or nothing is configured there.
 * @param name the segment after the mount point; undefined for the mount point itself
 */
export function targetFor(config: Config, name: string | undefined): OriginTarget | null {
  return name === undefined || isOriginName(name) ? originTarget(config, name) : null
}

/** 404 for an MCP path with no origin configured (JSON-RPC -32600, id null). */
export function noOriginHere(): EdgeResponse {
  return localResponse({ kind: 'transport', status: 404, message: 'No origin is configured for this path' })
}

/**
 * The length rule: the body size in bytes when the request declares it (a Content-Length of
 * digits and no Transfer-Encoding, RFC 9112 section 6.3), else undefined and the body is read
 * with a bound instead.
 */
export function declaredBodyBytes(headers: RequestHeaders): number | undefined {
  const length = headers.get('content-length')
  return length !== null && headers.get('transfer-encoding') === null && /^\d+$/.test(length) ? Number(length) : undefined
}

/** One `POST <mount>[/<name>]` as its carrier (Hono route, Node listener) hands it to {@link servePost}. */
export interface McpPost {
  /** The segment after the mount point (as the carrier's router gives it); undefined for the mount point itself. */
  originName: string | undefined
  headers: RequestHeaders
  /**
   * Reads the whole body; called once, after admission. With `maxBytes` (the request declared no
   * length) it resolves null as soon as the body passes `maxBytes` bytes; without, the declared
   * length has been checked against `MAX_BODY_BYTES` already.
   */
  readBody(maxBytes: number | undefined): Promise<Uint8Array | null>
  /** The signal that fires when the client goes away; asked for once the body is read. */
  clientSignal?(): ClientSignal | undefined
}

/**
 * Answers one MCP POST: 404 when the path names no origin, the transport refusals and 413 before
 * the body is read (logged like every POST), with auth on the token check (401, 503; request-auth.ts), 413 when an undeclared body grows past
 * `MAX_BODY_BYTES`, then the pipeline ({@link handlePost}). Never rejects: a fault inside the edge
 * is answered 500 -32603 ({@link edgeFault}).
 */
export async function servePost(deps: EdgeDeps, post: McpPost): Promise<EdgeResponse> {
  try {
    // A virtual server (VIRTUAL_SERVERS) takes the path of an origin: admitted and authorized the
    // same way, logged under its own name, then answered by core/virtual.
    const virtual = virtualServerFor(deps.config, post.originName)
    const target = virtual ? { id: virtual.name, url: '' } : targetFor(deps.config, post.originName)
    if (!target) return noOriginHere()
    const declared = declaredBodyBytes(post.headers)
    const refusal = admitPost(post.headers, target, deps, declared)
    if (refusal) return refusal
    // With auth on, the token is checked before the body is read; from here on the headers are
    // the origin-bound view (the client's Authorization replaced, request-auth.ts).
    let headers = post.headers
    let identity: AccessIdentity | undefined
    if (deps.auth) {
      const pending = authorizeRequest(deps.auth, deps, target, headers, 'POST')
      const a = pending instanceof Promise ? await pending : pending
      if (!a.ok) return a.response
      headers = a.headers
      identity = a.identity
    }
    // A virtual server's session id never reaches an origin: it carries the other origins' sessions.
    const misrouted = virtual ? null : virtualSessionOnOrigin(deps, headers)
    if (misrouted) {
      const refusal = await misrouted
      if (refusal) return new Exchange(deps, target, DEFAULT_VERSION).identify(headers).answer(refusal)
    }
    const body = await post.readBody(declared === undefined ? deps.config.maxBodyBytes : undefined)
    if (body === null) return payloadTooLarge(target, deps)
    // Bytes in and out, and an SSE answer as an open stream, for the metrics port.
    const answer = virtual
      ? handleVirtualPost(body, headers, virtual, deps, post.clientSignal?.(), identity)
      : handlePost(body, headers, target, deps, post.clientSignal?.(), identity)
    return observeAnswer(deps.metrics, target.id, body.length, await answer)
  } catch (e) {
    return edgeFault(e, () => deps)
  }
}
