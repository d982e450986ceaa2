/**
 * @module core/access/apply-scopes
 * The per-tool scope check of a `tools/call` (TOOL_SCOPES, ./tool-scopes.ts) against the scopes of
 * the caller's verified token, and the denial it gives: HTTP 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope the tool needs>",
 * resource_metadata="..."` (RFC 6750 §3.1; MCP 2025-11-25 Authorization §Scope Challenge
 * Handling, so a client can step up) and a JSON-RPC error -31010 for the request's id naming the
 * scopes. Inside a batch only the error counts (the batch answers 200 for the other elements).
 * Pure; the pipeline calls {@link applyScopes} from its tools/call decision only.
 */
import { boundText } from '../jsonrpc/bound-text'
import { ErrorCode, type RawId, type RpcError } from '../jsonrpc/jsonrpc'
import { insufficientScopeChallenge, type AccessIdentity } from './bearer'
import type { ToolScopes } from './tool-scopes'

/** A refused tools/call: the `access` local answer (src/core/local-answer.ts) and what its log line records. */
export interface ScopeDenial {
  kind: 'access'
  status: 403
  id: RawId
  error: RpcError
  headers: Record<string, string>
  tool: string
  /** Every scope the tool needs, sorted. */
  needed: string[]
  /** The needed scopes the token lacks, sorted. */
  missing: string[]
}

/**
 * Checks one tools/call against TOOL_SCOPES.
 * @param identity the verified caller (auth on); undefined: auth off, nothing to check
 * @param toolName `params.name` as sent (a non-string name is left to argument validation)
 * @param metadataUrl the protected resource metadata URL the challenge names
 * @returns null when the call may go on, else the denial (its message names the tool, bounded,
 *   the scopes needed and the ones lacking, and how to get them; never an argument value)
 */
export function applyScopes(scopes: ToolScopes, identity: AccessIdentity | undefined, id: RawId, toolName: unknown, metadataUrl: string): ScopeDenial | null {
  if (identity === undefined || scopes.empty || typeof toolName !== 'string') return null
  const missing = scopes.missingScope(identity.scopes, toolName)
  if (missing === null) return null
  const needed = scopes.requiredScopes(toolName)
  const tool = boundText(toolName)
  const message = `The tool ${tool} needs the scope${needed.length > 1 ? 's' : ''} ${needed.join(' ')}; this access token lacks ${missing.join(' ')}. Ask the authorization server for a token with ${needed.length > 1 ? 'these scopes' : 'this scope'} (the 403 challenge names ${needed.length > 1 ? 'them' : 'it'} in scope) and call again.`
  return {
    kind: 'access',
    status: 403,
    id,
    error: { code: ErrorCode.InsufficientScope, message, data: { source: 'edge', reason: 'insufficient_scope', scope: needed.join(' '), missing, resource_metadata: metadataUrl } },
    headers: { 'www-authenticate': insufficientScopeChallenge(needed, metadataUrl, message) },
    tool,
    needed,
    missing,
  }
}
