/**
 * @module core/virtual/origin-sessions
 * The edge as the client of a virtual server's origins (docs/virtual-servers.md): which era each
 * origin is spoken to in (the newest it supports: `server/discover` first, else `initialize` in
 * the newest 2025 revision the edge serves), the session a stateful origin gives, and the
 * process-wide state of every virtual server of one edge (its session key, what it learned, what
 * it left out). Runtime-neutral: the origin client port only.
 */
import { hasVersionHeader, isKnownVersion, isModern, META_VERSION_KEY, MODERN_VERSION, type ProtocolVersion } from '../jsonrpc/versions'
import { isObject, requestMessage } from '../jsonrpc/jsonrpc'
import { originEras, type EdgeDeps, type OriginTarget } from '../exchange'
import { readRpcResponse } from '../forwarding/tool-list-pull'
import { PullError } from '../errors'
import type { MergedTools } from './merge-tools'
import { sessionKey } from './session-token'

const ACCEPT = 'application/json, text/event-stream'
const CLIENT_INFO = { name: 'mcp-edge-validator', version: '0.1.0' }

/** The edge's connection to one origin: the era it speaks there, the session it holds (stateful origins), the origin's capabilities. */
export interface OriginConnection {
  era: ProtocolVersion
  sessionId?: string
  capabilities: Record<string, unknown>
}

/** What a virtual server's last merge left out, for the log, `/readyz` and the metrics. */
export interface VirtualStatus {
  /** Origin -> why its tools are not listed (down, timeout). */
  leftOut: Record<string, string>
  /** Tool names two origins share, left out by `prefix: never`. */
  collisions: string[]
  /** Tools another tool's merged name left out (merge-tools.ts `shadowed`), as the last merge found them; logged, not in `/readyz`. */
  shadowed?: string[]
}

/** A caller's merged list as held: `at`, when its pull started (epoch ms); `ttlMs`, how long it is fresh; `leftOut`, the origins it lacks. */
export type HeldList = MergedTools & { at: number; ttlMs: number; leftOut: string[] }

/** Where a caller's prompts (merged names), resources (by URI) and resource templates are routed, from the last lists it was given. */
export interface FeatureRoutes {
  prompts?: MergedTools
  resources?: Map<string, string>
  templates?: { template: string; origin: string; pattern: RegExp }[]
}

/** The state of the virtual servers of one edge (per process, or per Worker isolate). */
export interface VirtualState {
  key: Promise<CryptoKey>
  /**
   * The edge's own session per origin and caller (`<origin>\n<caller key>`, virtual-caller.ts
   * `callerKey`: with auth on the verified caller, else the `Authorization` the origin gets), for
   * requests that carry no session of a virtual server (2026-07-28 clients, sessionless calls): one
   * caller's origin session never serves another caller. Least recently used first, at most
   * {@link sharedBound} ({@link sharedConnection}).
   */
  shared: Map<string, SharedSession>
  /** The most {@link shared} holds: {@link MAX_SHARED_SESSIONS} (a field so a test can see the bound act without opening a thousand sessions). */
  sharedBound: number
  /** An origin session that origin no longer knows (it restarted) -> the session that replaces it here. */
  replaced: Map<string, Promise<OriginConnection>>
  /** Per virtual server and caller (`<server>\n<caller key>`): its last merged list (a private list is never another caller's). */
  lists: Map<string, HeldList>
  /** Per virtual server and caller: the merge in flight (concurrent lists share one fan-out). */
  pulling: Map<string, Promise<MergedTools>>
  /** Per virtual server and caller: where the prompts and resources it was last given are routed. */
  features: Map<string, FeatureRoutes>
  /** Per virtual server: what its last merge left out. */
  status: Map<string, VirtualStatus>
  /** Per verified caller (`identityScopeKey`): the caller tag its sessions are bound to (session-token.ts `callerTag`). */
  callers: Map<string, Promise<string>>
  /**
   * The last merges of identical lists (virtual-tools-list.ts `internedMerge`), least recently used
   * first, at most {@link MAX_MERGES}: callers whose origins gave them the same lists hold one
   * merged list between them, not one copy each.
   */
  merges: Map<string, MergedTools>
  /** Per origin and pin scope (`<origin>\n<scope>`): the digest of the list tool pinning last audited there (virtual-tools-list.ts `pinnedTools`). */
  audited: Map<string, { digest: string; at: number }>
  /** Session ids of virtual servers their client ended with `DELETE` here (by their MAC), oldest forgotten first past {@link MAX_ENDED_SESSIONS}. */
  ended: Set<string>
}

/** One of the edge's own origin sessions ({@link VirtualState.shared}): the connection, and what its `DELETE` needs when it is dropped. */
export interface SharedSession {
  conn: Promise<OriginConnection>
  target: OriginTarget
  authorization: string | null
}

/** Most distinct merges kept for reuse ({@link VirtualState.merges}). */
export const MAX_MERGES = 16

/** Most replaced origin sessions, merged lists and caller tags remembered, each (the oldest forgotten first). */
const MAX_REPLACED = 1024

/**
 * Most of the edge's own origin sessions held per process or isolate (one per origin and caller):
 * past it the least recently used is dropped and ended at its origin (`DELETE`), so a flood of
 * distinct callers holds neither the edge's memory nor the origins' sessions without bound.
 */
export const MAX_SHARED_SESSIONS = 1024

/**
 * Most ended session ids remembered per process or isolate (about 60 bytes each): a session id is
 * signed, not stored, so an ended one verifies still and only this memory refuses it.
 */
export const MAX_ENDED_SESSIONS = 16_384

/**
 * Remembers that the client ended the session `token` (its `DELETE`): later requests with it are
 * answered 404 in this process or isolate (MCP transports: after a session ends, the server
 * answers its id with 404). Past {@link MAX_ENDED_SESSIONS} the oldest is forgotten.
 */
export function markSessionEnded(deps: EdgeDeps, token: string): void {
  const ended = virtualState(deps).ended
  // The MAC names the session: 43 characters instead of the whole id.
  const mac = token.slice(token.lastIndexOf('.') + 1)
  ended.delete(mac)
  ended.add(mac)
  if (ended.size > MAX_ENDED_SESSIONS) ended.delete(ended.values().next().value!)
}

/** Whether the client ended the session `token` in this process or isolate ({@link markSessionEnded}). */
export function sessionEnded(deps: EdgeDeps, token: string): boolean {
  return virtualState(deps).ended.has(token.slice(token.lastIndexOf('.') + 1))
}

/** Sets `key` in a map bounded to {@link MAX_REPLACED} entries, the oldest forgotten first. */
export function setBounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_REPLACED) map.delete(map.keys().next().value!)
}

/** The virtual servers that hold `origin`. */
function serversHolding(deps: EdgeDeps, origin: string): string[] {
  return Object.entries(deps.config.virtualServers)
    .filter(([, v]) => v.origins.includes(origin))
    .map(([name]) => name)
}

/** Deletes the entries of `map` (keyed `<server>\n<credential>`) of the given servers. */
function forgetServers(map: Map<string, unknown>, servers: string[]): void {
  for (const key of [...map.keys()]) if (servers.includes(key.slice(0, key.indexOf('\n')))) map.delete(key)
}

/** Forgets the merged lists of the virtual servers holding `origin` (its list changed), for every caller. */
export function forgetLists(deps: EdgeDeps, origin: string): void {
  const st = virtualState(deps)
  const servers = serversHolding(deps, origin)
  forgetServers(st.lists, servers)
  forgetServers(st.features, servers)
}

/**
 * Forgets where the prompts and resources of the virtual servers holding `origin` are routed, for
 * every caller (the origin said `notifications/prompts/list_changed` or `resources/list_changed`):
 * the next `prompts/get` or resource request lists them again. The merged tool lists are kept.
 */
export function forgetFeatures(deps: EdgeDeps, origin: string): void {
  forgetServers(virtualState(deps).features, serversHolding(deps, origin))
}

const states = new WeakMap<EdgeDeps, VirtualState>()

/** The virtual servers' state of `deps`, made on first use (the session key: `VIRTUAL_SESSION_KEY`, else random). */
export function virtualState(deps: EdgeDeps): VirtualState {
  let s = states.get(deps)
  if (!s) {
    s = {
      key: sessionKey(deps.config.virtualSessionKey),
      shared: new Map(),
      sharedBound: MAX_SHARED_SESSIONS,
      replaced: new Map(),
      lists: new Map(),
      pulling: new Map(),
      status: new Map(),
      features: new Map(),
      callers: new Map(),
      ended: new Set(),
      merges: new Map(),
      audited: new Map(),
    }
    states.set(deps, s)
  }
  return s
}

/** What `/readyz` shows of the virtual servers: per server, the origins left out of its list and the names `prefix: never` left out (none when all is well). */
export function virtualReadiness(deps: EdgeDeps): Record<string, VirtualStatus> {
  const out: Record<string, VirtualStatus> = {}
  const s = states.get(deps)
  for (const name of Object.keys(deps.config.virtualServers)) {
    const st = s?.status.get(name)
    out[name] = { leftOut: { ...(st?.leftOut ?? {}) }, collisions: [...(st?.collisions ?? [])] }
  }
  return out
}

/** The newest 2025 revision the edge serves (what its `initialize` offers an origin). */
export function newestLegacy(supported: readonly ProtocolVersion[]): ProtocolVersion {
  return [...supported].filter((v) => !isModern(v)).sort((a, b) => (a < b ? 1 : -1))[0] ?? '2025-06-18'
}

/** The 2026-07-28 request envelope (`params._meta`) the edge sends as a client. */
export function modernEnvelope(capabilities: unknown = {}): Record<string, unknown> {
  return { [META_VERSION_KEY]: MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': CLIENT_INFO }
}

/**
 * Opens the edge's connection to one origin in the newest era it supports: `server/discover`
 * (when the edge serves 2026-07-28), and when that gives no DiscoverResult, `initialize` and
 * `notifications/initialized`, keeping the session id a stateful origin gives. The answers teach
 * the per-origin era memory too (D17).
 * @param authorization the `Authorization` to send (the caller's with auth off, ORIGIN_AUTHORIZATION with auth on), or null
 * @throws when the origin cannot be reached, does not answer in time, or answers `initialize` with anything but a result
 */
export async function connectOrigin(deps: EdgeDeps, target: OriginTarget, authorization: string | null): Promise<OriginConnection> {
  const { config } = deps
  const base: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT, ...(authorization ? { authorization } : {}) }
  const send = (headers: Record<string, string>, body: Record<string, unknown>) =>
    deps.origin({
      method: 'POST',
      url: target.url,
      headers: { ...base, ...headers },
      body: JSON.stringify(body),
      timeoutMs: config.originTimeoutMs,
      maxReplyBytes: config.maxReplyBytes,
    })
  if (config.supportedVersions.includes(MODERN_VERSION)) {
    const reply = await send({ 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' }, requestMessage('server/discover', { _meta: modernEnvelope() }, 1))
    if (reply.status >= 200 && reply.status < 300) {
      const msg = await readRpcResponse(reply, 1, config.maxJsonDepth).catch(() => null)
      if (msg) originEras(deps).observe(target.id, 'server/discover', msg, reply.status)
      const r = msg?.result
      if (isObject(r) && Array.isArray(r.supportedVersions) && r.supportedVersions.includes(MODERN_VERSION))
        return { era: MODERN_VERSION, capabilities: isObject(r.capabilities) ? r.capabilities : {} }
    } else reply.discard()
  }
  const offered = newestLegacy(config.supportedVersions)
  const reply = await send(
    hasVersionHeader(offered) ? { 'mcp-protocol-version': offered } : {},
    requestMessage('initialize', { protocolVersion: offered, capabilities: {}, clientInfo: CLIENT_INFO }, 2)
  )
  if (reply.status < 200 || reply.status > 299) {
    reply.discard()
    throw new PullError('status', reply.status)
  }
  const sessionId = reply.headers['mcp-session-id'] || undefined
  const msg = await readRpcResponse(reply, 2, config.maxJsonDepth)
  if (!isObject(msg.result)) throw new PullError('initialize')
  originEras(deps).observe(target.id, 'initialize', msg, reply.status)
  const v = msg.result.protocolVersion
  const era = isKnownVersion(v) && !isModern(v) ? v : offered
  const done = await send({ 'mcp-protocol-version': era, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) }, requestMessage('notifications/initialized'))
  done.discard()
  return { era, ...(sessionId ? { sessionId } : {}), capabilities: isObject(msg.result.capabilities) ? msg.result.capabilities : {} }
}

/**
 * The edge's own connection to `origin` for requests without a virtual-server session: opened once
 * per process and caller, again after a failure. Held least recently used first: past
 * {@link MAX_SHARED_SESSIONS} the least recently used is forgotten and its origin session ended
 * (`DELETE`, in the background); that caller's next request opens a new one.
 * @param authorization the `Authorization` the origin gets (the caller's with auth off, ORIGIN_AUTHORIZATION with auth on), or null
 * @param caller whose connection it is (virtual-caller.ts `callerKey`): two callers never share one
 */
export function sharedConnection(deps: EdgeDeps, target: OriginTarget, authorization: string | null, caller: string): Promise<OriginConnection> {
  const st = virtualState(deps)
  const key = `${target.id}\n${caller}`
  const held = st.shared.get(key)
  if (held) {
    // Least recently used first: a caller's use moves its session to the back.
    st.shared.delete(key)
    st.shared.set(key, held)
    return held.conn
  }
  const entry: SharedSession = { conn: connectOrigin(deps, target, authorization), target, authorization }
  st.shared.set(key, entry)
  entry.conn.catch(() => {
    if (st.shared.get(key) === entry) st.shared.delete(key)
  })
  while (st.shared.size > st.sharedBound) {
    const [oldest, dropped] = st.shared.entries().next().value!
    st.shared.delete(oldest)
    dropped.conn.then(
      (conn) => endOriginSession(deps, dropped.target, conn, dropped.authorization),
      () => undefined
    )
  }
  return entry.conn
}

/**
 * Ends the edge's own origin sessions a client session used (those {@link sharedConnection} holds
 * under a caller ending in `\ns-<tag>`, virtual-routing.ts `connectionFor`): its client ended it.
 * @param tag the MAC of the client's session id
 */
export function endSessionConnections(deps: EdgeDeps, tag: string): void {
  const st = virtualState(deps)
  const suffix = `\ns-${tag}`
  for (const [key, held] of [...st.shared]) {
    if (!key.endsWith(suffix)) continue
    st.shared.delete(key)
    held.conn.then(
      (conn) => endOriginSession(deps, held.target, conn, held.authorization),
      () => undefined
    )
  }
}

/**
 * A new connection standing for one the origin no longer knows (it restarted, or ended the
 * session). The edge's own shared connection (`used` is the promise it was taken from) is opened
 * again once, whoever notices first; a virtual-server session's origin session gets one
 * replacement per process, shared by every request that still carries it.
 */
export function replaceConnection(
  deps: EdgeDeps,
  target: OriginTarget,
  stale: OriginConnection,
  used: Promise<OriginConnection> | undefined,
  authorization: string | null,
  caller: string
): Promise<OriginConnection> {
  const st = virtualState(deps)
  if (used !== undefined || stale.sessionId === undefined) {
    const key = `${target.id}\n${caller}`
    if (used === undefined || st.shared.get(key)?.conn === used) st.shared.delete(key)
    return sharedConnection(deps, target, authorization, caller)
  }
  const k = `${target.id}\n${stale.sessionId}`
  let p = st.replaced.get(k)
  if (!p) {
    p = connectOrigin(deps, target, authorization)
    setBounded(st.replaced, k, p)
    p.catch(() => {
      if (st.replaced.get(k) === p) st.replaced.delete(k)
    })
  }
  return p
}

/** The replacement of an origin session, when one was made in this process. */
export function replacementOf(deps: EdgeDeps, origin: string, sessionId: string): Promise<OriginConnection> | undefined {
  return virtualState(deps).replaced.get(`${origin}\n${sessionId}`)
}

/** Ends an origin session the edge opened (DELETE, in the background; failures ignored). */
export function endOriginSession(deps: EdgeDeps, target: OriginTarget, conn: OriginConnection, authorization: string | null): void {
  if (conn.sessionId === undefined) return
  const headers: Record<string, string> = { 'mcp-session-id': conn.sessionId, 'mcp-protocol-version': conn.era, ...(authorization ? { authorization } : {}) }
  deps.defer(
    deps.origin({ method: 'DELETE', url: target.url, headers, timeoutMs: deps.config.originTimeoutMs }).then(
      (r) => r.discard(),
      () => undefined
    )
  )
}
