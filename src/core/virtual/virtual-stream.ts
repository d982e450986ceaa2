/**
 * @module core/virtual/virtual-stream
 * The standalone stream of a virtual server (`GET <mount>/<name>`, 2025 revisions, with the
 * session id the virtual server gave): the edge opens the GET stream of each origin session the
 * client's session carries and relays to the client one `notifications/tools/list_changed`,
 * `notifications/prompts/list_changed` or `notifications/resources/list_changed` for every one an
 * origin sends (what the edge keeps of that origin's list forgotten first, so the client's next
 * list and calls see the new one), and each `notifications/resources/updated` (URIs are not
 * renamed). A 2026-07-28 `subscriptions/listen` gets the list changes it asked for, from the same
 * streams and from each 2026-07-28 origin's own subscription. Nothing else of the origins' streams
 * is relayed: their other messages belong to sessions and ids the client does not know.
 */
import { carriesListChanged } from '../forwarding/pass-through'
import { isObject, notificationText, requestMessage, type RawId } from '../jsonrpc/jsonrpc'
import { parseWithinDepth } from '../jsonrpc/json-scan'
import { MODERN_VERSION } from '../jsonrpc/versions'
import type { ByteSource, EdgeResponse } from '../edge-response'
import { edgeResponse } from '../edge-response'
import { pinBook, type EdgeDeps } from '../exchange'
import { readSseEvents } from '../sse/read-sse-events'
import type { OriginReply } from '../ports'
import { originTarget } from '../pipeline'
import { forgetFeatures, forgetLists, modernEnvelope, replacementOf } from './origin-sessions'
import type { VirtualSession } from './session-token'

/** A list whose changes an origin announces: `notifications/<list>/list_changed`. */
export type ListName = 'tools' | 'prompts' | 'resources'

/** Which lists' changes a stream relays. */
export type ListFilter = Record<ListName, boolean>

/** A 2025 client's GET stream relays every list's changes (2025 revisions have no filter: an origin sends only what it announced). */
const EVERY_LIST: ListFilter = { tools: true, prompts: true, resources: true }

const LIST_NAMES: readonly ListName[] = ['tools', 'prompts', 'resources']

const OTHER_LISTS: Record<string, ListName> = { 'notifications/prompts/list_changed': 'prompts', 'notifications/resources/list_changed': 'resources' }

/**
 * The lists whose `list_changed` an SSE event's data is (or, in a batch, holds): `tools` as the
 * GET relay reads it (pass-through.ts `carriesListChanged`), `prompts` and `resources` likewise.
 * Data that names none of them is not parsed.
 */
function changedLists(data: string): ListName[] {
  const out: ListName[] = carriesListChanged(data) ? ['tools'] : []
  if (!data.includes('notifications/prompts/list_changed') && !data.includes('notifications/resources/list_changed')) return out
  const v = parseWithinDepth(data)
  for (const m of Array.isArray(v) ? (v as unknown[]) : [v])
    if (isObject(m) && !('id' in m) && typeof m.method === 'string' && Object.hasOwn(OTHER_LISTS, m.method) && !out.includes(OTHER_LISTS[m.method]!))
      out.push(OTHER_LISTS[m.method]!)
  return out
}

/** The `SubscriptionFilter` (2026-07-28) of the list changes `lists` names, e.g. `{"toolsListChanged":true}`. */
export function subscriptionFilter(lists: ListFilter): Record<string, boolean> {
  const out: Record<string, boolean> = {}
  for (const l of LIST_NAMES) if (lists[l]) out[`${l}ListChanged`] = true
  return out
}

/** The text of `notifications/resources/updated` when an SSE event's data is one (alone), else null. */
function resourceUpdated(data: string): string | null {
  if (!data.includes('notifications/resources/updated')) return null
  try {
    const v: unknown = JSON.parse(data)
    if (isObject(v) && v.method === 'notifications/resources/updated' && !('id' in v) && isObject(v.params) && typeof v.params.uri === 'string')
      return JSON.stringify(requestMessage('notifications/resources/updated', { uri: v.params.uri }))
  } catch {
    // Not JSON: not relayed.
  }
  return null
}

/**
 * A 2026-07-28 client's `subscriptions/listen` on a virtual server: its JSON-RPC id (every
 * notification of the stream carries it as `_meta["io.modelcontextprotocol/subscriptionId"]`),
 * the list changes it asked for that the edge honours (its acknowledged filter), and the
 * 2026-07-28 origins the edge listens to in its turn.
 */
export interface Listen {
  id: RawId
  modernOrigins: string[]
  lists: ListFilter
  /** Called once when the stream ends (the subscription's own origin sessions are ended there). */
  onEnd?: () => void
}

/** One SSE event carrying `message`. */
function sseEvent(message: string): Uint8Array {
  return new TextEncoder().encode(`event: message\ndata: ${message}\n\n`)
}

/** The id's JSON token inside a notification's `_meta`. */
function subscriptionMeta(id: RawId): string {
  return `{"io.modelcontextprotocol/subscriptionId":${id.raw}}`
}

/** Opens `subscriptions/listen` on a 2026-07-28 origin for the list changes `lists` names; null when it gives no stream. */
async function listenTo(deps: EdgeDeps, origin: string, authorization: string | null, lists: ListFilter): Promise<OriginReply | null> {
  const target = originTarget(deps.config, origin)
  if (!target) return null
  const body = JSON.stringify(requestMessage('subscriptions/listen', { notifications: subscriptionFilter(lists), _meta: modernEnvelope() }, 1))
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': 'subscriptions/listen',
    ...(authorization ? { authorization } : {}),
  }
  try {
    const reply = await deps.origin({ method: 'POST', url: target.url, headers, body, timeoutMs: deps.config.originTimeoutMs, bodyTimeoutMs: 0 })
    if (reply.status === 200 && (reply.headers['content-type'] ?? '').includes('text/event-stream')) return reply
    reply.discard()
  } catch {
    // No subscription at this origin: its list changes reach the client at its next list.
  }
  return null
}

/**
 * Opens the client's stream: the GET stream of each origin session of `session` that has one,
 * and with `listen` (a 2026-07-28 `subscriptions/listen`) also the subscription of each
 * 2026-07-28 origin, the stream then opening with `notifications/subscriptions/acknowledged` (the
 * honoured filter), carrying only the list changes it names, each with the subscription id.
 * @returns the SSE response, or null when no origin opened a stream and there is no `listen` (the caller answers 405)
 */
export async function openVirtualStream(deps: EdgeDeps, server: string, session: VirtualSession, authorization: string | null, listen?: Listen): Promise<EdgeResponse | null> {
  const opened: { origin: string; reply: OriginReply }[] = []
  if (listen)
    for (const [i, reply] of (await Promise.all(listen.modernOrigins.map((o) => listenTo(deps, o, authorization, listen.lists)))).entries())
      if (reply) opened.push({ origin: listen.modernOrigins[i]!, reply })
  await Promise.all(
    Object.entries(session.backends).map(async ([origin, s]) => {
      const target = originTarget(deps.config, origin)
      if (!target || s.sessionId === undefined) return
      const conn = (await replacementOf(deps, origin, s.sessionId)?.catch(() => undefined)) ?? s
      if (conn.sessionId === undefined) return
      const headers: Record<string, string> = {
        accept: 'text/event-stream',
        'mcp-session-id': conn.sessionId,
        'mcp-protocol-version': conn.era,
        ...(authorization ? { authorization } : {}),
      }
      try {
        const reply = await deps.origin({ method: 'GET', url: target.url, headers, timeoutMs: deps.config.originTimeoutMs, bodyTimeoutMs: 0 })
        if (reply.status === 200 && (reply.headers['content-type'] ?? '').includes('text/event-stream')) opened.push({ origin, reply })
        else reply.discard()
      } catch {
        // No stream from this origin: its list changes reach the client at its next tools/list.
      }
    })
  )
  if (opened.length === 0 && !listen) return null
  const lists = listen ? listen.lists : EVERY_LIST
  // One event per list: on a subscription with its id, on a GET stream as the origin would send it.
  const events = {} as Record<ListName, Uint8Array>
  for (const l of LIST_NAMES) {
    const method = `notifications/${l}/list_changed`
    events[l] = sseEvent(listen ? notificationText(method, `{"_meta":${subscriptionMeta(listen.id)}}`) : JSON.stringify(requestMessage(method)))
  }
  const queue: Uint8Array[] = listen
    ? [
        sseEvent(
          notificationText('notifications/subscriptions/acknowledged', `{"notifications":${JSON.stringify(subscriptionFilter(lists))},"_meta":${subscriptionMeta(listen.id)}}`)
        ),
      ]
    : []
  let wake: (() => void) | undefined
  let ended = false
  const sources: ByteSource[] = []
  const end = () => {
    if (ended) return
    ended = true
    clearTimeout(timer)
    for (const s of sources) void s.cancel().catch(() => undefined)
    listen?.onEnd?.()
    wake?.()
  }
  // STREAM_MAX_MS bounds this stream as it bounds a relayed one; the client reconnects.
  const timer = deps.config.streamMaxMs > 0 ? setTimeout(end, deps.config.streamMaxMs) : undefined
  let open = opened.length
  // A subscription stays open while no origin streams (until the client closes it or STREAM_MAX_MS).
  const holds = listen !== undefined
  for (const { origin, reply } of opened) {
    const source = reply.stream()
    if (!source) {
      open--
      continue
    }
    sources.push(source)
    void (async () => {
      try {
        for await (const ev of readSseEvents(source)) {
          // A resource's URI is the same through the virtual server: its update goes to the client as the origin sent it.
          const updated = listen ? null : resourceUpdated(ev.data)
          if (updated) {
            queue.push(new TextEncoder().encode(`event: message\ndata: ${updated}\n\n`))
            wake?.()
            continue
          }
          for (const list of changedLists(ev.data)) {
            // Forget first (whether or not this client asked for the change): the next list and calls must see the new list.
            if (list === 'tools') {
              deps.registry.invalidate(origin)
              pinBook(deps).listChanged(origin)
              forgetLists(deps, origin)
            } else forgetFeatures(deps, origin)
            if (!lists[list]) continue
            queue.push(events[list])
            wake?.()
          }
        }
      } catch {
        // The origin's stream failed: the others go on.
      }
      if (--open === 0 && !holds) end()
    })()
  }
  if (open === 0 && !holds) end()
  const body: ByteSource = {
    async read() {
      while (queue.length === 0 && !ended) await new Promise<void>((r) => (wake = r))
      wake = undefined
      const value = queue.shift()
      return value ? { done: false, value } : { done: true }
    },
    cancel: async () => end(),
  }
  deps.log({ level: 'info', msg: 'virtual.stream_open', server, origins: opened.map((o) => o.origin) })
  return edgeResponse(body, 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
}
