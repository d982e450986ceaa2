/**
 * @module core/virtual/virtual-caller
 * Who asks a virtual server (docs/virtual-servers.md#sessions): the caller tag a session is bound
 * to, and the key the edge keeps its own origin sessions, merged lists and feature routes by; the
 * session a request's `Mcp-Session-Id` names, when it is this caller's (else 404, as an unknown
 * session); and the refusal of a virtual server's session id sent to an origin route. Separate
 * from the dispatch (virtual-server.ts): the POST, GET and DELETE entries and the origin routes
 * (front-door.ts, mcp-edge.ts) all ask it, and it holds the one rule of whose a session is.
 */
import { boundText } from '../jsonrpc/bound-text'
import type { EdgeResponse, RequestHeaders } from '../edge-response'
import { localResponse, type TransportRefusal } from '../local-answer'
import type { EdgeDeps } from '../exchange'
import type { AccessIdentity } from '../access/bearer'
import { identityScopeKey, privateScope } from '../validation/caller-scope'
import { callerTag, issuingServer, readSession, type VirtualSession } from './session-token'
import { recordDenial } from '../guards/denial'
import { requestIdOf } from '../observe/request-id'
import { sessionEnded, setBounded, virtualState } from './origin-sessions'
import type { VirtualTarget } from './virtual-ask'

/**
 * 404 for a session id this virtual server does not serve to this caller: not issued by it, altered,
 * or (auth on) issued to another caller. One answer for every cause, so it tells no one whose a
 * session is; the client starts a new session (MCP transports: 404 for an unknown session id).
 */
function sessionNotFound(): EdgeResponse {
  return localResponse({
    kind: 'transport',
    status: 404,
    message: 'Session not found: this virtual server has no session with this id for this caller; send initialize to start a new session',
  })
}

/**
 * The caller tag a session of this request's caller is bound to (session-token.ts `callerTag`):
 * with auth on, from the verified identity (remembered per process for the last callers); without
 * auth undefined, and a session id is a bearer capability.
 */
export function callerOf(deps: EdgeDeps, identity: AccessIdentity | undefined): Promise<string> | undefined {
  if (!identity) return undefined
  const id = identityScopeKey(identity)
  const st = virtualState(deps)
  let tag = st.callers.get(id)
  if (!tag) {
    tag = st.key.then((k) => callerTag(k, deps.auth?.issuer ?? '', id))
    setBounded(st.callers, id, tag)
  }
  return tag
}

/**
 * Who asks, as the edge keeps its own origin sessions, merged lists and feature routes for
 * requests (per caller, so one caller never shares another's origin session, nor the state a
 * stateful origin holds in it): with auth on, `c-` and the caller tag its virtual sessions are
 * bound to ({@link callerOf}: issuer, `sub`, OAuth client; all callers get the same
 * ORIGIN_AUTHORIZATION, so that cannot tell them apart); without auth, the digest of the
 * `Authorization` the origin gets (`u-` and hex, validation/caller-scope.ts `privateScope`).
 */
export async function callerKey(deps: EdgeDeps, identity: AccessIdentity | undefined, authorization: string | null): Promise<string> {
  const tag = callerOf(deps, identity)
  return tag !== undefined ? `c-${await tag}` : privateScope(authorization)
}

/**
 * The session a request's `Mcp-Session-Id` names on `vt`, when it is this caller's; else the 404
 * of {@link sessionNotFound}. A session of another caller (auth on) is answered the same, and
 * logged and counted as the denial `session_of_another_caller` (`mcp.denied`, with the caller's `sub`).
 * @param method the HTTP method, for the denial line
 */
export async function sessionFor(
  deps: EdgeDeps,
  vt: VirtualTarget,
  token: string,
  headers: RequestHeaders,
  identity: AccessIdentity | undefined,
  method: 'POST' | 'GET' | 'DELETE'
): Promise<VirtualSession | EdgeResponse> {
  const s = await readSession(await virtualState(deps).key, token, vt.name)
  // An ended session verifies still (it is signed, not stored): only this process's memory of its DELETE refuses it.
  if (!s || sessionEnded(deps, token)) return sessionNotFound()
  if (s.caller !== (await callerOf(deps, identity))) {
    recordDenial(deps, requestIdOf(headers), vt.name, {
      reason: 'session_of_another_caller',
      status: 404,
      method,
      ...(identity ? { sub: boundText(identity.sub, 128) } : {}),
    })
    return sessionNotFound()
  }
  return s
}

/** The refusal of a virtual server's session id on an origin route ({@link virtualSessionOnOrigin}). */
const SESSION_OF_VIRTUAL_SERVER: TransportRefusal = {
  kind: 'transport',
  status: 404,
  message:
    'Session not found: this session id belongs to a virtual server of this edge, not to this origin; send it to the virtual server that issued it, or send initialize here to start a session with this origin',
}

/**
 * An origin route's answer to an `Mcp-Session-Id` that is a session id of a virtual server of this
 * edge (its MAC verifies): 404 as an unknown session, saying whose it is, so the id never reaches
 * the origin (it carries the other origins' session ids). Null, without awaiting, for any other id
 * (it goes to the origin as before): only an id that starts as ours (`v1.`), with virtual servers
 * configured, costs the MAC check.
 * @returns null, or a promise of the refusal (null when the MAC does not verify)
 */
export function virtualSessionOnOrigin(deps: EdgeDeps, headers: RequestHeaders): Promise<TransportRefusal | null> | null {
  const token = headers.get('mcp-session-id')
  if (token === null || !token.startsWith('v1.')) return null
  let any = false
  for (const _ in deps.config.virtualServers) {
    any = true
    break
  }
  if (!any) return null
  return virtualState(deps).key.then(async (key) => ((await issuingServer(key, token)) === null ? null : SESSION_OF_VIRTUAL_SERVER))
}
