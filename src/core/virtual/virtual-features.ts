/**
 * @module core/virtual/virtual-features
 * The MCP features of a virtual server besides tools (docs/virtual-servers.md): `prompts/*`,
 * `resources/*` and `completion/complete` (the lists merged from every origin that offers them,
 * each request routed to the origin that listed its name or URI), `logging/setLevel` (sent to every
 * origin that offers logging) and `subscriptions/listen` (the edge's own stream of list changes).
 * Separate from the tools (virtual-tools-list.ts, virtual-routing.ts): each feature is answered by
 * routing through them, and nothing of the tools depends on it.
 */
import { isModern } from '../jsonrpc/versions'
import { ErrorCode, errorText, isObject, responseText, type RawId } from '../jsonrpc/jsonrpc'
import type { Classified } from '../request/classify'
import { mergeTools, type MergedTool, type OriginTools } from './merge-tools'
import { openVirtualStream, type ListFilter } from './virtual-stream'
import type { BackendSession } from './session-token'
import { type FeatureRoutes, connectOrigin, endOriginSession, setBounded, sharedConnection, virtualState, type OriginConnection } from './origin-sessions'
import { type Ask, localResult, type Outcome, targetOf } from './virtual-ask'
import { listKey, noteLeftOut } from './virtual-tools-list'
import { routeTo, textOf } from './virtual-routing'

/** A list method of the other features: its result member and the capability an origin announces it with. */
export interface ListKind {
  method: 'prompts/list' | 'resources/list' | 'resources/templates/list'
  key: 'prompts' | 'resources' | 'resourceTemplates'
  capability: 'prompts' | 'resources'
}

/** The list methods of the other features, by method. */
export const LISTS: Record<ListKind['method'], ListKind> = {
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
export async function listFeature(ask: Ask, c: Extract<Classified, { kind: 'request' }>, kind: ListKind, modern: boolean): Promise<Outcome> {
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
export async function getPrompt(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
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
export async function resourceRequest(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
  const uri = c.params?.uri
  if (typeof uri !== 'string') return { text: errorText(c.id, { code: ErrorCode.InvalidParams, message: `Invalid params: ${c.method} needs params.uri, a string` }) }
  const owner = await resourceOwner(ask, c, uri)
  if (owner === undefined) return notListed(c.id, 'resource')
  return routeTo(ask, c, owner, c.method, { ...(c.params ?? {}) }, uri)
}

/** `completion/complete`: routed by its `ref`, a prompt (by merged name, sent under the origin's) or a resource template (by URI). */
export async function complete(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
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
export async function setLevel(ask: Ask, c: Extract<Classified, { kind: 'request' }>, modern: boolean): Promise<Outcome> {
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
export async function listen(ask: Ask, c: Extract<Classified, { kind: 'request' }>): Promise<Outcome> {
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
