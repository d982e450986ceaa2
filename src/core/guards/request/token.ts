/**
 * @module core/guards/request/token
 * The token guard, first of the chain (auth on: `AUTH_ISSUER`; docs/security.md): the bearer token
 * of every request to the MCP endpoint (POST, GET and DELETE), verified for the edge's own audience
 * before any body is read. A refusal is the whole HTTP request's: 401 with the challenge that names
 * the protected resource metadata (RFC 6750 §3, RFC 9728 §5.1; MCP 2025-06-18 and 2025-11-25
 * Authorization), or 503 when the signing keys could not be read; logged and counted as
 * `no_token`, `invalid_token` or `jwks_unavailable`. It runs once per HTTP request at the front door
 * (request-auth.ts `authorizeRequest`, `at: 'http'`), so the message runner passes over it: every
 * message of a POST it let through carries an accepted token. Runtime-neutral; the verifier behind
 * the port does the cryptography (src/auth/jwt-verifier.ts).
 */
import { bearerToken, tokenChallenge, type AccessIdentity, type TokenFailure } from '../../access/bearer'
import type { EdgeAuth } from '../../access/resource-server'
import { ErrorCode, NULL_ID } from '../../jsonrpc/jsonrpc'
import type { AccessDenial } from '../../local-answer'
import type { Denial, DenialReason } from '../denial'
import type { RequestGuard } from '../guard'

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

/** The token guard's verdict on one HTTP request: the verified caller, or the answer and the denial to record. */
export type TokenVerdict = { ok: true; identity: AccessIdentity } | { ok: false; answer: AccessDenial; denial: Denial }

/**
 * Verifies the `Authorization` header of one request (RFC 6750 §2.1): its syntax, then the verifier
 * (a JWKS read at most). The caller records the denial (guards/denial.ts) with the HTTP method.
 */
export async function verifyToken(auth: EdgeAuth, value: string | null): Promise<TokenVerdict> {
  const b = bearerToken(value)
  const v = b.ok ? await auth.verifier.verify(b.token) : b
  if (v.ok) return { ok: true, identity: v.identity }
  const answer = tokenDenial(v.failure, auth.metadataUrl, auth.challengeScope)
  const denial: Denial = {
    reason: reasonOf(v.failure),
    status: answer.status,
    ...(v.failure.code !== 'missing' && v.failure.code !== 'jwks_unavailable' ? { tokenError: v.failure.code } : {}),
    // Which key set could not be read and what it answered: the operator's to see, not the client's.
    ...(v.failure.keys ? { jwksUrl: v.failure.keys.url, jwksAnswered: v.failure.keys.answered } : {}),
  }
  return { ok: false, answer, denial }
}

/** The token guard as the chain lists it (auth on); its check runs at the front door (module comment). */
export const tokenGuard: RequestGuard = {
  name: 'token',
  phase: 'request',
  at: 'http',
  appliesTo: () => true,
  check: () => ({ kind: 'pass' }),
}
