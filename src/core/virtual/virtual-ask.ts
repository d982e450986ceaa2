/**
 * @module core/virtual/virtual-ask
 * What every part of a virtual server's answer (virtual-server.ts) shares: the virtual server a
 * request is for ({@link VirtualTarget}), one request's view of it ({@link Ask}), what it is
 * answered with ({@link Outcome}), and two helpers each part uses (an origin's target, a result
 * the edge builds). Separate so that the caller, the merged tools list, the routing, the other
 * features and the dispatch each import it, and none imports the dispatch: no import cycle.
 */
import { resultText, type RawId } from '../jsonrpc/jsonrpc'
import type { EdgeResponse, RequestHeaders } from '../edge-response'
import type { EdgeDeps, OriginTarget } from '../exchange'
import type { ClientSignal } from '../client-signal'
import type { AccessIdentity } from '../access/bearer'
import type { VirtualServerSetting } from '../config'
import { originTarget } from '../pipeline'
import type { VirtualSession } from './session-token'

/** A virtual server of `VIRTUAL_SERVERS`: its name (the path segment) and its setting. */
export interface VirtualTarget {
  name: string
  setting: VirtualServerSetting
}

/** One request's view of the virtual server: who asks, in which session, with which headers. */
export interface Ask {
  deps: EdgeDeps
  vt: VirtualTarget
  headers: RequestHeaders
  session: VirtualSession | null
  /** The MAC of the session id ({@link session}), which names that session alone; null without a session. */
  sessionTag: string | null
  /** The `Authorization` the origins get: the caller's with auth off, ORIGIN_AUTHORIZATION with auth on (request-auth.ts gave the origin-bound headers). */
  authorization: string | null
  /** Who asks (virtual-caller.ts `callerKey`): what the edge's own origin sessions, merged lists and feature routes are kept by. */
  caller: string
  signal: ClientSignal | undefined
  identity: AccessIdentity | undefined
}

/** What one request of the client gets: a response text, a whole HTTP response (a routed call), or nothing (a notification). */
export type Outcome = { text: string; status?: number; headers?: Record<string, string> } | { response: EdgeResponse } | null

/** A result built by the edge, with `resultType` (and the cache hints of a list) on 2026-07-28. */
export function localResult(id: RawId, result: Record<string, unknown>, modern: boolean, cacheable = false): string {
  if (modern) {
    result.resultType = 'complete'
    if (cacheable) Object.assign(result, { ttlMs: 0, cacheScope: 'private' })
  }
  return resultText(id, result)
}

/** The target of `origin`, an origin of the virtual server (the setting names only origins of `ORIGINS`, so there is one). */
export function targetOf(ask: Ask, origin: string): OriginTarget {
  return originTarget(ask.deps.config, origin)!
}
