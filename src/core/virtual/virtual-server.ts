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
 * Beside this module: the caller and its sessions (virtual-caller.ts), the merged tools list
 * (virtual-tools-list.ts), routing to an origin (virtual-routing.ts), and what they share (virtual-
 * ask.ts).
 */
import { isKnownVersion, isModern } from '../jsonrpc/versions'
import { ErrorCode, errorText, isObject, responseText, resultText, type RawId } from '../jsonrpc/jsonrpc'
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
import { mergeTools, type MergedTool, type OriginTools } from './merge-tools'
import { openVirtualStream, type ListFilter } from './virtual-stream'
import { cancelInFlight } from './in-flight'
import { originOfAnswer, originOfProgress } from './origin-requests'
import { mintSession, type BackendSession, type VirtualSession } from './session-token'
import {
  type FeatureRoutes,
  connectOrigin,
  endOriginSession,
  endSessionConnections,
  markSessionEnded,
  newestLegacy,
  replacementOf,
  setBounded,
  sharedConnection,
  virtualState,
  type OriginConnection,
} from './origin-sessions'
import { type Ask, localResult, type Outcome, targetOf, type VirtualTarget } from './virtual-ask'
import { callerKey, callerOf, sessionFor } from './virtual-caller'
import { listKey, listPage, noteLeftOut, withinListDeadline } from './virtual-tools-list'
import { callTool, relayToSessions, routeTo, textOf } from './virtual-routing'

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

/** A list method of the other features: its result member and the capability an origin announces it with. */
interface ListKind {
  method: 'prompts/list' | 'resources/list' | 'resources/templates/list'
  key: 'prompts' | 'resources' | 'resourceTemplates'
  capability: 'prompts' | 'resources'
}

const LISTS: Record<ListKind['method'], ListKind> = {
  'prompts/list': { method: 'prompts/list', key: 'prompts', capability: 'prompts' },
  'resources/list': { method: 'resources/list', key: 'resources', capability: 'resources' },
  'resources/templates/list': { method: 'resources/templates/list', key: 'resourceTemplates', capability: 'resources' },
}

/** Most pages of one origin's prompt or resource list read (a cursor that never ends stops there). */
const MAX_FEATURE_PAGES = 20

/** The origins of the virtual server whose edge connection announces `capability`, in the server's order (an origin that cannot be reached is left out). */
async function offering(ask: Ask, capability: string): Promise<string[]> {
  const origins = ask.vt.setting.origins
  const conns = await Promise.allSettled(origins.map((o) => sharedConnection(ask.deps, targetOf(ask, o), ask.authorization, ask.caller)))
  return origins.filter((o, i) => {
    const r = conns[i]!
    if (r.status === 'rejected') noteLeftOut(ask, o, r.reason)
    return r.status === 'fulfilled' && isObject(r.value.capabilities[capability])
  })
}

/** The JSON-RPC message a routed request was answered with. */
async function messageOf(o: Outcome, c: Extract<Classified, { kind: 'request' }>): Promise<Record<string, unknown>> {
  const text = await textOf(o, c)
  try {
    const v: unknown = text === null ? null : JSON.parse(text)
    return isObject(v) ? v : {}
  } catch {
    return {}
  }
}

/** Every item of one origin's list (all its pages, through the origin's pipeline under the client's id). @throws its error when it answers one */
async function originItems(ask: Ask, c: Extract<Classified, { kind: 'request' }>, origin: string, kind: ListKind): Promise<unknown[]> {
  const items: unknown[] = []
  let cursor: unknown
  for (let page = 0; page < MAX_FEATURE_PAGES; page++) {
    const msg = await messageOf(await routeTo(ask, c, origin, kind.method, typeof cursor === 'string' ? { cursor } : {}, ''), c)
    if (!isObject(msg.result)) throw new Error(isObject(msg.error) ? String(msg.error.message) : `no result for ${kind.method}`)
    const got = msg.result[kind.key]
    if (Array.isArray(got)) items.push(...(got as unknown[]))
    cursor = msg.result.nextCursor
    if (typeof cursor !== 'string') break
  }
  return items
}

/** A URI template (RFC 6570) as a pattern for the URIs it expands to: each expression matches any text. */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]*\}/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${parts.join('.*')}$`)
}

/** Where the prompts and resources a caller was last given are routed (per virtual server and caller). */
function featureRoutes(ask: Ask): FeatureRoutes {
  const st = virtualState(ask.deps)
  const key = listKey(ask)
  let r = st.features.get(key)
  if (!r) setBounded(st.features, key, (r = {}))
  return r
}

/**
 * `prompts/list`, `resources/list`, `resources/templates/list`: every offering origin's full list,
 * asked at once (one that fails is left out, logged), in one page. Prompts are named by the
 * server's `prefix` rule as tools are; resources and templates keep their URIs, each routed to the
 * first origin (in the server's order) that listed it.
 */
async function listFeature(ask: Ask, c: Extract<Classified, { kind: 'request' }>, kind: ListKind, modern: boolean): Promise<Outcome> {
  if (c.params?.cursor !== undefined)
    return { text: errorText(c.id, { code: ErrorCode.InvalidParams, message: `Invalid params: ${kind.method} of a virtual server has one page; call it without a cursor` }) }
  const origins = await offering(ask, kind.capability)
  const lists = await Promise.allSettled(origins.map((o) => originItems(ask, c, o, kind)))
  const ok: OriginTools[] = []
  lists.forEach((r, i) => {
    if (r.status === 'fulfilled') ok.push({ origin: origins[i]!, tools: r.value })
    else noteLeftOut(ask, origins[i]!, r.reason)
  })
  const routes = featureRoutes(ask)
  let items: unknown[]
  if (kind.key === 'prompts') {
    const merged = mergeTools(ask.vt.setting.prefix, ok)
    routes.prompts = merged
    items = merged.tools.map((t) => t.definition)
  } else {
    const field = kind.key === 'resources' ? 'uri' : 'uriTemplate'
    const owners = new Map<string, string>()
    items = []
    for (const l of ok)
      for (const it of l.tools) {
        if (!isObject(it) || typeof it[field] !== 'string' || owners.has(it[field])) continue
        owners.set(it[field], l.origin)
        items.push(it)
      }
    if (kind.key === 'resources') routes.resources = owners
    else routes.templates = [...owners].map(([template, origin]) => ({ template, origin, pattern: templatePattern(template) }))
  }
  return { text: localResult(c.id, { [kind.key]: items }, modern, true) }
}

/** An error for a name or URI no origin of the virtual server lists (the value is not echoed). */
function notListed(id: RawId, what: string): Outcome {
  return { text: errorText(id, { code: ErrorCode.InvalidParams, message: `Invalid params: no origin of this virtual server lists this ${what}; list them first` }) }
}

/** `prompts/get`: routed by the body's name to its origin under the origin's own name (the list merged first when this caller has none). */
async function getPrompt(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const name = c.params?.name
  if (typeof name !== 'string') return { text: errorText(c.id, { code: ErrorCode.InvalidParams, message: 'Invalid params: prompts/get needs params.name, a string' }) }
  const m = await promptRoute(ask, c, name)
  if (!m) return notListed(c.id, 'prompt')
  return routeTo(ask, c, m.origin, 'prompts/get', { ...(c.params ?? {}), name: m.originName }, m.originName)
}

async function promptRoute(ask: Ask, c: Extract<Classified, { kind: 'request' }>, name: string): Promise<MergedTool | undefined> {
  if (!featureRoutes(ask).prompts) await listFeature(ask, c, LISTS['prompts/list'], false)
  return featureRoutes(ask).prompts?.byName.get(name)
}

/**
 * The origin a resource URI (or a template of `completion/complete`'s `ref/resource`) is routed
 * to: the one that listed it, else the one whose template matches it, else the only origin that
 * offers resources. The lists are read first when this caller has none.
 */
async function resourceOwner(ask: Ask, c: Extract<Classified, { kind: 'request' }>, uri: string): Promise<string | undefined> {
  const find = () => {
    const r = featureRoutes(ask)
    return r.resources?.get(uri) ?? r.templates?.find((t) => t.template === uri || t.pattern.test(uri))?.origin
  }
  let owner = find()
  if (owner !== undefined) return owner
  const routes = featureRoutes(ask)
  if (!routes.resources) await listFeature(ask, c, LISTS['resources/list'], false)
  if (!routes.templates) await listFeature(ask, c, LISTS['resources/templates/list'], false)
  owner = find()
  if (owner !== undefined) return owner
  const offered = await offering(ask, 'resources')
  return offered.length === 1 ? offered[0] : undefined
}

/** `resources/read`, `resources/subscribe`, `resources/unsubscribe`: routed by `params.uri` ({@link resourceOwner}), the URI unchanged. */
async function resourceRequest(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const uri = c.params?.uri
  if (typeof uri !== 'string') return { text: errorText(c.id, { code: ErrorCode.InvalidParams, message: `Invalid params: ${c.method} needs params.uri, a string` }) }
  const owner = await resourceOwner(ask, c, uri)
  if (owner === undefined) return notListed(c.id, 'resource')
  return routeTo(ask, c, owner, c.method, { ...(c.params ?? {}) }, uri)
}

/** `completion/complete`: routed by its `ref`, a prompt (by merged name, sent under the origin's) or a resource template (by URI). */
async function complete(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const ref = c.params?.ref
  if (isObject(ref) && ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    const m = await promptRoute(ask, c, ref.name)
    if (!m) return notListed(c.id, 'prompt')
    return routeTo(ask, c, m.origin, 'completion/complete', { ...(c.params ?? {}), ref: { ...ref, name: m.originName } }, m.originName)
  }
  if (isObject(ref) && ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    const owner = await resourceOwner(ask, c, ref.uri)
    if (owner === undefined) return notListed(c.id, 'resource')
    return routeTo(ask, c, owner, 'completion/complete', { ...(c.params ?? {}) }, ref.uri)
  }
  return {
    text: errorText(c.id, {
      code: ErrorCode.InvalidParams,
      message: 'Invalid params: completion/complete needs params.ref, a ref/prompt with a name or a ref/resource with a uri',
    }),
  }
}

/** `logging/setLevel`: sent to every origin that offers `logging` (their log messages reach the client in the streams of routed requests); answered by the edge. */
async function setLevel(ask: Ask, c: Extract<Classified, { kind: 'request' }>, modern: boolean): Promise<Outcome> {
  const origins = await offering(ask, 'logging')
  if (origins.length === 0) return { text: errorText(c.id, { code: ErrorCode.MethodNotFound, message: 'Method not found: no origin of this virtual server offers logging' }) }
  const answers = await Promise.all(origins.map(async (o) => messageOf(await routeTo(ask, c, o, 'logging/setLevel', { ...(c.params ?? {}) }, ''), c)))
  const refused = answers.find((m) => isObject(m.error))
  if (refused && answers.every((m) => isObject(m.error))) return { text: responseText(c.id, 'error', JSON.stringify(refused.error)) }
  return { text: localResult(c.id, {}, modern) }
}

/**
 * The list changes a subscription gets (its acknowledged filter, 2026-07-28 subscriptions: the
 * subset of the requested types the server honours): tools when asked; prompts and resources when
 * asked and some origin offers them. `resourceSubscriptions` is not honoured.
 */
function honouredLists(requested: unknown, conns: OriginConnection[]): ListFilter {
  const asked = isObject(requested) ? requested : {}
  const offers = (k: string) => conns.some((c) => isObject(c.capabilities[k]))
  return {
    tools: asked.toolsListChanged === true,
    prompts: asked.promptsListChanged === true && offers('prompts'),
    resources: asked.resourcesListChanged === true && offers('resources'),
  }
}

/**
 * `subscriptions/listen` (2026-07-28): the edge answers with its own stream (virtual-stream.ts):
 * `notifications/subscriptions/acknowledged` with the list changes it honours
 * ({@link honouredLists}), then one `notifications/<list>/list_changed` (with the subscription id)
 * for each one an origin sends of those lists, from the subscription of each 2026-07-28 origin and
 * the GET stream of a session of the subscription's own with each stateful 2025 origin (an origin
 * session has one GET stream: the SDK answers a second 409, so subscriptions sharing the edge's
 * session would not all hear it), ended with the stream.
 */
async function listen(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const origins = ask.vt.setting.origins
  const conns = await Promise.allSettled(origins.map((o) => sharedConnection(ask.deps, targetOf(ask, o), ask.authorization, ask.caller)))
  const lists = honouredLists(
    c.params?.notifications,
    conns.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  )
  const modernOrigins: string[] = []
  const stateful: string[] = []
  conns.forEach((r, i) => {
    // An origin that offers none of the honoured lists has nothing to say on this stream.
    if (r.status !== 'fulfilled' || !(['tools', 'prompts', 'resources'] as const).some((l) => lists[l] && isObject(r.value.capabilities[l]))) return
    if (isModern(r.value.era)) modernOrigins.push(origins[i]!)
    else if (r.value.sessionId !== undefined) stateful.push(origins[i]!)
  })
  const own = await Promise.allSettled(stateful.map((o) => connectOrigin(ask.deps, targetOf(ask, o), ask.authorization)))
  const backends: Record<string, BackendSession> = {}
  own.forEach((r, i) => {
    if (r.status === 'fulfilled' && r.value.sessionId !== undefined) backends[stateful[i]!] = { era: r.value.era, sessionId: r.value.sessionId }
  })
  const onEnd = () => {
    for (const [o, s] of Object.entries(backends)) endOriginSession(ask.deps, targetOf(ask, o), { ...s, capabilities: {} }, ask.authorization)
  }
  const stream = await openVirtualStream(ask.deps, ask.vt.name, { server: ask.vt.name, backends }, ask.authorization, { id: c.id, modernOrigins, lists, onEnd })
  return stream ? { response: stream } : null
}
