/**
 * @module core/request-auth
 * The token check of the MCP endpoint (POST, GET and DELETE at `<mount>[/<name>]`) with auth on,
 * before any body is read: the bearer token (RFC 6750 §2.1) verified for the edge's own audience,
 * a refusal answered 401 with the challenge that names the protected resource metadata (RFC 6750
 * §3, RFC 9728 §5.1; MCP 2025-06-18 and 2025-11-25 Authorization), or 503 when the signing keys
 * could not be read; and, once accepted, the request headers as the origin is to see them: the
 * client's `Authorization` replaced by the edge's own credential (`ORIGIN_AUTHORIZATION`) or
 * dropped (MCP Authorization §Token Passthrough). Also the metadata document's answer.
 * Runtime-neutral; the verifier behind the port does the cryptography (src/auth/jwt-verifier.ts).
 */
import { bearerToken, tokenChallenge, type AccessIdentity, type TokenFailure } from './access/bearer'
import type { EdgeAuth } from './access/resource-server'
import { edgeResponse, type EdgeResponse, type RequestHeaders } from './edge-response'
import { Exchange, logDenial, type DenialReason, type EdgeDeps, type OriginTarget } from './exchange'
import { ErrorCode, NULL_ID } from './jsonrpc/jsonrpc'
import { DEFAULT_VERSION } from './jsonrpc/versions'
import { localResponse, type AccessDenial } from './local-answer'
import { requestIdOf } from './observe/request-id'

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

/** The denial reason of a token failure. */
function reasonOf(f: TokenFailure): DenialReason {
  return f.code === 'missing' ? 'no_token' : f.code === 'jwks_unavailable' ? 'jwks_unavailable' : 'invalid_token'
}

/**
 * The answer to a refused token (id null: the body is not read): 401 with `WWW-Authenticate`
 * ({@link tokenChallenge}) and a JSON-RPC error -32600 whose message says what is wrong and what
 * fixes it, or 503 -32603 with `Retry-After` when the keys could not be read. `data` holds the
 * `reason`, the token failure code and the metadata URL. Never the token.
 * @param scope the scopes every call needs, named in the 401 challenge ({@link EdgeAuth.challengeScope})
 */
export function tokenDenial(failure: TokenFailure, metadataUrl: string, scope: readonly string[] = []): AccessDenial {
  const c = tokenChallenge(failure, metadataUrl, scope)
  const reason = reasonOf(failure)
  const headers: Record<string, string> = {}
  if (c.wwwAuthenticate) headers['www-authenticate'] = c.wwwAuthenticate
  if (c.retryAfterS !== undefined) headers['retry-after'] = String(c.retryAfterS)
  const data: Record<string, unknown> = { source: 'edge', reason, resource_metadata: metadataUrl }
  if (reason === 'invalid_token') data.tokenError = failure.code
  return {
    kind: 'access',
    status: c.status,
    id: NULL_ID,
    error: { code: c.status === 503 ? ErrorCode.InternalError : ErrorCode.InvalidRequest, message: failure.message, data },
    headers,
  }
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

/** The full check of {@link authorizeRequest}: the header's syntax, the verifier (a JWKS read at most), the refusal. */
async function checkToken(
  auth: EdgeAuth,
  deps: EdgeDeps,
  target: OriginTarget,
  headers: RequestHeaders,
  value: string | null,
  method: 'POST' | 'GET' | 'DELETE'
): Promise<Authorized | Refused> {
  const b = bearerToken(value)
  const v = b.ok ? await auth.verifier.verify(b.token) : b
  if (v.ok) return { ok: true, identity: v.identity, headers: new OriginBoundHeaders(headers, auth.originAuthorization) }
  const denial = tokenDenial(v.failure, auth.metadataUrl, auth.challengeScope)
  const d = {
    reason: reasonOf(v.failure),
    status: denial.status,
    ...(v.failure.code !== 'missing' && v.failure.code !== 'jwks_unavailable' ? { tokenError: v.failure.code } : {}),
    // Which key set could not be read and what it answered: the operator's to see, not the client's.
    ...(v.failure.keys ? { jwksUrl: v.failure.keys.url, jwksAnswered: v.failure.keys.answered } : {}),
  }
  if (method !== 'POST') {
    logDenial(deps, requestIdOf(headers), target.id, { ...d, method })
    return { ok: false, response: localResponse(denial) }
  }
  const ex = new Exchange(deps, target, DEFAULT_VERSION).identify(headers)
  ex.deny(d)
  return { ok: false, response: ex.answer(denial) }
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
