/**
 * @module core/request-auth
 * The token check of the MCP endpoint (POST, GET and DELETE at `<mount>[/<name>]`) with auth on,
 * before any body is read, where the token guard (guards/request/token.ts, first of the chain)
 * runs: the bearer token (RFC 6750 §2.1) verified for the edge's own audience, a refusal answered
 * 401 with the challenge that names the protected resource metadata (RFC 6750
 * §3, RFC 9728 §5.1; MCP 2025-06-18 and 2025-11-25 Authorization), or 503 when the signing keys
 * could not be read; and, once accepted, the request headers as the origin is to see them: the
 * client's `Authorization` replaced by the edge's own credential (`ORIGIN_AUTHORIZATION`) or
 * dropped (MCP Authorization §Token Passthrough). Also the metadata document's answer.
 * Runtime-neutral; the verifier behind the port does the cryptography (src/auth/jwt-verifier.ts).
 */
import type { AccessIdentity } from './access/bearer'
import type { EdgeAuth } from './access/resource-server'
import { edgeResponse, type EdgeResponse, type RequestHeaders } from './edge-response'
import { Exchange, type EdgeDeps, type OriginTarget } from './exchange'
import { DEFAULT_VERSION } from './jsonrpc/versions'
import { localResponse } from './local-answer'
import { requestIdOf } from './observe/request-id'
import { recordDenial } from './guards/denial'
import { verifyToken } from './guards/request/token'

/**
 * The request headers with `Authorization` replaced: `get('authorization')` and `forEach` give
 * `credential` (or nothing when null) instead of the client's value; every other header is the
 * client's. Everything downstream of the front door that talks to the origin (the forwarded POST,
 * GET and DELETE, the edge's own tool-list pull) reads headers through this view, so the
 * client's token cannot reach the origin by any path.
 */
export class OriginBoundHeaders implements RequestHeaders {
  constructor(
    private readonly client: RequestHeaders,
    private readonly credential: string | null
  ) {}
  get(name: string): string | null {
    return name.length === 13 && name.toLowerCase() === 'authorization' ? this.credential : this.client.get(name)
  }
  forEach(fn: (value: string, name: string) => void): void {
    this.client.forEach((value, name) => {
      if (name.toLowerCase() !== 'authorization') fn(value, name)
    })
    if (this.credential !== null) fn(this.credential, 'authorization')
  }
}

/** An accepted request: who the token speaks for, and the headers to use from here on ({@link OriginBoundHeaders}). */
export interface Authorized {
  ok: true
  identity: AccessIdentity
  headers: RequestHeaders
}

/** A refused request: the answer to send (already logged and counted). */
export interface Refused {
  ok: false
  response: EdgeResponse
}

/**
 * Checks the bearer token of one request to the MCP endpoint (auth on). A refusal is answered
 * here: logged as one `mcp.denied` line (a POST also writes its `mcp.post` line, like every
 * refused POST) and counted in `mcp_edge_denials_total{reason}`.
 * @param method the request's method: a POST gets its grade row, GET and DELETE only the denial line
 * @returns the identity and the origin-bound headers, or the refusal's response
 */
export function authorizeRequest(
  auth: EdgeAuth,
  deps: EdgeDeps,
  target: OriginTarget,
  headers: RequestHeaders,
  method: 'POST' | 'GET' | 'DELETE'
): Authorized | Promise<Authorized | Refused> {
  const value = headers.get('authorization')
  // A token accepted before (the usual case: a client sends the same token on every request) is
  // answered from the cache without awaiting and without the header's syntax check: about 1 us
  // less per call than the full path below (scripts/bench/auth-cost.ts).
  if (value !== null && auth.verifier.peek && value.startsWith('Bearer ')) {
    const identity = auth.verifier.peek(value.slice(7))
    if (identity) return { ok: true, identity, headers: new OriginBoundHeaders(headers, auth.originAuthorization) }
  }
  return checkToken(auth, deps, target, headers, value, method)
}

/** The full check of {@link authorizeRequest}: the token guard's verdict (guards/request/token.ts), the refusal. */
async function checkToken(
  auth: EdgeAuth,
  deps: EdgeDeps,
  target: OriginTarget,
  headers: RequestHeaders,
  value: string | null,
  method: 'POST' | 'GET' | 'DELETE'
): Promise<Authorized | Refused> {
  const v = await verifyToken(auth, value)
  if (v.ok) return { ok: true, identity: v.identity, headers: new OriginBoundHeaders(headers, auth.originAuthorization) }
  if (method !== 'POST') {
    recordDenial(deps, requestIdOf(headers), target.id, { ...v.denial, method })
    return { ok: false, response: localResponse(v.answer) }
  }
  const ex = new Exchange(deps, target, DEFAULT_VERSION).identify(headers)
  recordDenial(deps, ex.requestId ?? requestIdOf(undefined), target.id, { ...v.denial, method: 'POST' })
  return { ok: false, response: ex.answer(v.answer) }
}

/**
 * The protected resource metadata answer (RFC 9728 §3.2: 200 `application/json`) for a request
 * path, or null when the path is not one of {@link EdgeAuth.metadataPaths}. Readable from any
 * page (`Access-Control-Allow-Origin: *`: the document is public, and browser MCP clients read it
 * before they hold a token) and cacheable for 5 minutes.
 */
export function metadataAnswer(auth: EdgeAuth, path: string): EdgeResponse | null {
  if (!auth.metadataPaths.includes(path)) return null
  return edgeResponse(auth.metadataText, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' })
}
