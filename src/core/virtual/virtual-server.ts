/**
 * @module core/virtual/virtual-server
 * A virtual server (`VIRTUAL_SERVERS`, docs/virtual-servers.md): one MCP server at
 * `<mount>/<name>` whose tools are those of several origins of `ORIGINS`. The edge is its server:
 * it answers `initialize`, `server/discover`, `ping` and `tools/list` itself (the list merged
 * from each origin's own pull, paginated by the edge), and routes each `tools/call` by the body's
 * tool name to its origin under the origin's own name, through the same per-origin pipeline as
 * `<mount>/<origin>` (pipeline.ts `handlePost`: filters, scopes, budgets, pins, validation and grading
 * of that origin). An origin that is down or late is left out of the list and its calls answered
 * with a gateway error naming it; the others are served.
 *
 * This module holds the entries (`POST`, and `GET` or `DELETE` of a session) and the answer to each
 * method; the parts are beside it: the caller and its sessions (virtual-caller.ts), the merged
 * tools list (virtual-tools-list.ts), routing to an origin (virtual-routing.ts), the other
 * features (virtual-features.ts), and what they all share (virtual-ask.ts).
 */
import { isKnownVersion, isModern } from '../jsonrpc/versions'
import { ErrorCode, errorText, isObject, resultText } from '../jsonrpc/jsonrpc'
import { parseBody } from '../request/parse-body'
import { boundText } from '../jsonrpc/bound-text'
import { classify, type Classified } from '../request/classify'
import { edgeResponse, type EdgeResponse, type RequestHeaders } from '../edge-response'
import { localResponse, toWire, type ProtocolRefusal } from '../local-answer'
import { decideEra } from '../protocol/era-decision'
import { checkStandardHeaders } from '../protocol/standard-headers'
import type { EdgeDeps } from '../exchange'
import type { ClientSignal } from '../client-signal'
import type { AccessIdentity } from '../access/bearer'
import type { Config } from '../config'
import { originTarget } from '../pipeline'
import { openVirtualStream } from './virtual-stream'
import { cancelInFlight } from './in-flight'
import { originOfAnswer, originOfProgress } from './origin-requests'
import { mintSession, type BackendSession, type VirtualSession } from './session-token'
import {
  connectOrigin,
  endOriginSession,
  endSessionConnections,
  markSessionEnded,
  newestLegacy,
  replacementOf,
  sharedConnection,
  virtualState,
  type OriginConnection,
} from './origin-sessions'
import { type Ask, localResult, type Outcome, targetOf, type VirtualTarget } from './virtual-ask'
import { callerKey, callerOf, sessionFor } from './virtual-caller'
import { listPage, noteLeftOut, withinListDeadline } from './virtual-tools-list'
import { callTool, relayToSessions, textOf } from './virtual-routing'
import { complete, getPrompt, listen, listFeature, LISTS, resourceRequest, setLevel } from './virtual-features'

/** The virtual server `<mount>/<name>` names, or null. */
export function virtualServerFor(config: Config, name: string | undefined): VirtualTarget | null {
  if (name === undefined || !Object.hasOwn(config.virtualServers, name)) return null
  return { name, setting: config.virtualServers[name]! }
}

/** The server version a virtual server announces in its `serverInfo`. */
const SERVER_VERSION = '1.0.0'

const JSON_TYPE = { 'content-type': 'application/json' }

/**
 * Answers one `POST <mount>/<virtual server>` whose transport checks (and token check, with auth
 * on) passed. A single message or a 2025-03-26 batch, answered per id; a session id that this
 * virtual server did not issue, or (auth on) issued to another caller, is answered 404.
 * @param headers the client's headers (with auth on, the origin-bound view)
 * @param identity the verified caller (auth on): the session it opens is bound to it
 */
export async function handleVirtualPost(
  body: Uint8Array | string,
  headers: RequestHeaders,
  vt: VirtualTarget,
  deps: EdgeDeps,
  signal?: ClientSignal,
  identity?: AccessIdentity
): Promise<EdgeResponse> {
  const started = (deps.now ?? Date.now)()
  const methods: string[] = []
  const r = await answerPost(body, headers, vt, deps, methods, signal, identity)
  // One line per POST, as on every MCP path; a routed call has its origin's `mcp.post` line too.
  deps.log({
    level: r.status >= 500 ? 'warn' : 'info',
    msg: 'virtual.post',
    server: vt.name,
    methods: methods.slice(0, 16).map((m) => boundText(m, 64)),
    status: r.status,
    ms: (deps.now ?? Date.now)() - started,
  })
  return r
}

async function answerPost(
  body: Uint8Array | string,
  headers: RequestHeaders,
  vt: VirtualTarget,
  deps: EdgeDeps,
  methods: string[],
  signal?: ClientSignal,
  identity?: AccessIdentity
): Promise<EdgeResponse> {
  const parsed = parseBody(body, deps.config.maxJsonDepth)
  if (parsed.kind === 'body') return localResponse(parsed)
  const token = headers.get('mcp-session-id')
  let session: VirtualSession | null = null
  if (token !== null) {
    const found = await sessionFor(deps, vt, token, headers, identity, 'POST')
    if (!('backends' in found)) return found
    session = found
  }
  const authorization = headers.get('authorization')
  const sessionTag = session && token !== null ? token.slice(token.lastIndexOf('.') + 1) : null
  const ask: Ask = { deps, vt, headers, session, sessionTag, authorization, caller: await callerKey(deps, identity, authorization), signal, identity }
  if (parsed.kind === 'batch') {
    const version = headers.get('mcp-protocol-version')
    if (version !== null && version.trim() !== '2025-03-26')
      return localResponse({ kind: 'body', code: ErrorCode.InvalidRequest, message: 'Invalid Request: JSON-RPC batches exist only in MCP 2025-03-26' })
    if (parsed.items.length > deps.config.maxBatch)
      return localResponse({ kind: 'body', code: ErrorCode.InvalidRequest, message: `Invalid Request: a batch may hold at most ${deps.config.maxBatch} messages` })
    const items = parsed.items.map((it) => classify(it, parsed.text))
    for (const c of items) if (c.kind === 'request' || c.kind === 'notification') methods.push(c.method)
    const seen = new Set<string>()
    const texts = await Promise.all(
      items.map(async (c, i): Promise<string | null> => {
        if (c.kind === 'request') {
          if (seen.has(c.id.key)) return errorText(c.id, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: this id is already used in the batch' })
          seen.add(c.id.key)
          if (c.method === 'initialize')
            return errorText(c.id, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: initialize must be sent on its own, not inside a batch' })
        }
        return textOf(await answer(ask, c, parsed.items[i]!.value), c)
      })
    )
    const out = texts.filter((t): t is string => t !== null)
    if (out.length === 0) return edgeResponse(null, 202, {})
    return edgeResponse(`[${out.join(',')}]`, 200, { ...JSON_TYPE })
  }
  const c = classify(parsed.item, parsed.text)
  if (c.kind === 'request' || c.kind === 'notification') methods.push(c.method)
  const o = await answer(ask, c, parsed.item.value)
  if (o === null) return edgeResponse(null, 202, {})
  if ('response' in o) return o.response
  return edgeResponse(o.text, o.status ?? 200, { ...JSON_TYPE, ...o.headers })
}

/** A refusal of the era rule, with its status (400 for the 2026-07-28 envelope and header errors). */
function refusal(r: ProtocolRefusal): Outcome {
  const w = toWire(r)
  return { text: w.text, status: w.status, ...(w.headers ? { headers: w.headers } : {}) }
}

/** One message of the client: what the virtual server answers. */
async function answer(ask: Ask, c: Classified, value: unknown): Promise<Outcome> {
  if (c.kind === 'invalid') return c.notification ? null : { text: toWire(c).text }
  // A cancellation goes to every origin session of the client's session: the request it names
  // went to one of them under the client's own id, and the others ignore an id they do not know.
  // A request that an origin without a session runs here is closed instead (in-flight.ts).
  if (c.kind === 'notification' && c.method === 'notifications/cancelled') {
    const token = ask.session ? ask.headers.get('mcp-session-id') : null
    if (token !== null) cancelInFlight(ask.deps, token, c.params?.requestId)
    await relayToSessions(ask, c.text, c.method)
    return null
  }
  // The client's progress on a request an origin sent it (sampling, elicitation with a
  // progressToken) goes back as its answer does: to the origin that sent the request when this
  // process relayed it, else to the origin sessions of its session, where that origin takes it.
  if (c.kind === 'notification' && c.method === 'notifications/progress') {
    const token = ask.session ? ask.headers.get('mcp-session-id') : null
    await relayToSessions(ask, c.text, c.method, token !== null ? originOfProgress(ask.deps, token, c.params?.progressToken) : undefined)
    return null
  }
  if (c.kind === 'response') {
    const token = ask.session ? ask.headers.get('mcp-session-id') : null
    await relayToSessions(ask, c.text, '', token !== null ? originOfAnswer(ask.deps, token, c.id) : undefined)
    return null
  }
  // Other notifications (initialized, roots/list_changed) are the virtual server's: none is relayed.
  if (c.kind !== 'request') return null
  // The era rule of every MCP path (protocol/era-decision.ts): the version header against the
  // envelope, a version the edge does not serve (-32022), and on 2026-07-28 the standard headers
  // against the body (-32020: an Mcp-Name that is not the body's tool name is refused, never routed by).
  const d = decideEra(c, value, { headers: ask.headers, supported: ask.deps.config.supportedVersions })
  if (d.kind === 'protocol') return refusal(d)
  const modern = d.kind === 'modern'
  if (modern) {
    const r = checkStandardHeaders(c, ask.headers)
    if (r) return refusal(r)
  }
  // Removed in 2026-07-28 (log levels go per request in `_meta`; subscriptions/listen replaces subscribe): unimplemented for such a request, 404 and -32601.
  if (modern && (c.method === 'logging/setLevel' || c.method === 'resources/subscribe' || c.method === 'resources/unsubscribe'))
    return {
      text: errorText(c.id, { code: ErrorCode.MethodNotFound, message: `Method not found: ${c.method} does not exist in MCP 2026-07-28` }),
      status: 404,
    }
  switch (c.method) {
    case 'initialize':
      return initialize(ask, c)
    case 'server/discover':
      return {
        text: localResult(
          c.id,
          { supportedVersions: ask.deps.config.supportedVersions, capabilities: await capabilities(ask), _meta: { serverInfo: serverInfo(ask) } },
          true,
          true
        ),
      }
    case 'ping':
      return { text: localResult(c.id, {}, modern) }
    case 'tools/list':
      return { text: await listPage(ask, c, modern) }
    case 'tools/call':
      return callTool(ask, c)
    case 'prompts/list':
    case 'resources/list':
    case 'resources/templates/list':
      return listFeature(ask, c, LISTS[c.method], modern)
    case 'prompts/get':
      return getPrompt(ask, c)
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return resourceRequest(ask, c)
    case 'completion/complete':
      return complete(ask, c)
    case 'logging/setLevel':
      return setLevel(ask, c, modern)
    case 'subscriptions/listen':
      return listen(ask, c)
    default:
      return {
        text: errorText(c.id, {
          code: ErrorCode.MethodNotFound,
          message: 'Method not found: a virtual server answers initialize, server/discover, ping, tools/*, prompts/*, resources/*, completion/complete and logging/setLevel',
        }),
      }
  }
}

function serverInfo(ask: Ask): Record<string, unknown> {
  return { name: ask.vt.name, version: SERVER_VERSION }
}

/**
 * The capabilities a virtual server announces: `tools` (with `listChanged` when an origin has
 * it), and each of `prompts` (with `listChanged` when an origin has it), `resources` (with
 * `subscribe`, `listChanged` when an origin has it), `logging` and `completions` only when some
 * origin offers it.
 */
async function capabilities(ask: Ask, known?: OriginConnection[]): Promise<Record<string, unknown>> {
  const conns =
    known ??
    (await Promise.allSettled(ask.vt.setting.origins.map((o) => sharedConnection(ask.deps, targetOf(ask, o), ask.authorization, ask.caller)))).flatMap((r) =>
      r.status === 'fulfilled' ? [r.value] : []
    )
  const listChanged = conns.some((c) => isObject(c.capabilities.tools) && c.capabilities.tools.listChanged === true)
  const out: Record<string, unknown> = { tools: listChanged ? { listChanged: true } : {} }
  const offered = (k: string) => conns.filter((c) => isObject(c.capabilities[k]))
  const some = (k: string, flag: string) => offered(k).some((c) => (c.capabilities[k] as Record<string, unknown>)[flag] === true)
  if (offered('prompts').length) out.prompts = some('prompts', 'listChanged') ? { listChanged: true } : {}
  if (offered('resources').length) {
    const r: Record<string, unknown> = {}
    if (some('resources', 'subscribe')) r.subscribe = true
    if (some('resources', 'listChanged')) r.listChanged = true
    out.resources = r
  }
  if (offered('logging').length) out.logging = {}
  if (offered('completions').length) out.completions = {}
  return out
}

/**
 * `initialize` (2025 revisions): the edge opens a session with each origin in its newest era (a
 * stateful origin gives its session id), and answers with its own `serverInfo`, the merged
 * capabilities and a session id of its own that carries the origins' (session-token.ts). An
 * origin that does not answer is left out of the session; its calls later use the edge's own connection.
 */
async function initialize(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const { deps, vt } = ask
  const wanted = c.params?.protocolVersion
  const supported = deps.config.supportedVersions
  const version = isKnownVersion(wanted) && !isModern(wanted) && supported.includes(wanted) ? wanted : newestLegacy(supported)
  const results = await Promise.allSettled(
    vt.setting.origins.map((o) => {
      const target = targetOf(ask, o)
      const p = connectOrigin(deps, target, ask.authorization)
      // A session the origin gives after the deadline is in no client's session id: ended at once.
      return withinListDeadline(
        deps,
        p,
        () =>
          void p.then(
            (conn) => endOriginSession(deps, target, conn, ask.authorization),
            () => undefined
          )
      )
    })
  )
  const backends: Record<string, BackendSession> = {}
  const conns: OriginConnection[] = []
  results.forEach((r, i) => {
    const origin = vt.setting.origins[i]!
    if (r.status === 'fulfilled') {
      conns.push(r.value)
      backends[origin] = { era: r.value.era, ...(r.value.sessionId !== undefined ? { sessionId: r.value.sessionId } : {}) }
    } else noteLeftOut(ask, origin, r.reason)
  })
  const caller = await callerOf(deps, ask.identity)
  const token = await mintSession(await virtualState(deps).key, { server: vt.name, backends, ...(caller !== undefined ? { caller } : {}) })
  const result = { protocolVersion: version, capabilities: await capabilities(ask, conns), serverInfo: serverInfo(ask) }
  return { text: resultText(c.id, result), headers: { 'mcp-session-id': token } }
}

/**
 * `GET <mount>/<virtual server>` (2025 revisions, with the session id): the stream that relays the
 * origins' `notifications/tools/list_changed` (virtual-stream.ts); 405 when no origin of the
 * session has a stream. `DELETE`: ends the client's session with the virtual server and the
 * origin sessions it carries. Either is 404 for a session id that is not this caller's ({@link sessionFor}).
 * @param identity the verified caller (auth on), else undefined
 */
export async function handleVirtualPassThrough(
  method: 'GET' | 'DELETE',
  headers: RequestHeaders,
  vt: VirtualTarget,
  deps: EdgeDeps,
  identity?: AccessIdentity
): Promise<EdgeResponse> {
  const version = headers.get('mcp-protocol-version')?.trim()
  const noStream = (why: string) => localResponse({ kind: 'transport', status: 405, message: `Method Not Allowed: ${why}; use POST`, headers: { allow: 'GET, POST, DELETE' } })
  // MCP 2026-07-28 is POST-only (D18).
  if (version !== undefined && isKnownVersion(version) && isModern(version)) return noStream(`MCP 2026-07-28 has no ${method} endpoint`)
  const token = headers.get('mcp-session-id')
  if (method === 'GET') {
    if (token === null) return noStream('the stream of a virtual server belongs to a session; send its Mcp-Session-Id')
    const s = await sessionFor(deps, vt, token, headers, identity, 'GET')
    if (!('backends' in s)) return s
    return (await openVirtualStream(deps, vt.name, s, headers.get('authorization'))) ?? noStream('no origin of this session has a stream')
  }
  if (token === null) return localResponse({ kind: 'transport', status: 400, message: 'Bad Request: DELETE needs the Mcp-Session-Id of the session to end' })
  const session = await sessionFor(deps, vt, token, headers, identity, 'DELETE')
  if (!('backends' in session)) return session
  markSessionEnded(deps, token)
  endSessionConnections(deps, token.slice(token.lastIndexOf('.') + 1))
  const authorization = headers.get('authorization')
  for (const [origin, s] of Object.entries(session.backends)) {
    const target = originTarget(deps.config, origin)
    if (!target || s.sessionId === undefined) continue
    const replaced = replacementOf(deps, origin, s.sessionId)
    endOriginSession(deps, target, { era: s.era, sessionId: s.sessionId, capabilities: {} }, authorization)
    if (replaced)
      void replaced.then(
        (conn) => endOriginSession(deps, target, conn, authorization),
        () => undefined
      )
  }
  return edgeResponse(null, 200, {})
}
