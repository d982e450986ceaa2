/**
 * @module core/virtual/virtual-tools-list
 * The merged `tools/list` of a virtual server (docs/virtual-servers.md#naming): every origin's
 * list pulled at once through the edge's tool-list pull, each within its deadline, let through by
 * tool pinning, merged by the server's `prefix` rule (merge-tools.ts) and held per caller; its
 * pages and cursors; the origins left out of it; and the merged tool a call names. Separate from
 * the dispatch (virtual-server.ts) and the routing (virtual-routing.ts), which read the held list
 * and note an origin left out, but never build the list.
 */
import { ErrorCode, errorText, isObject, resultText } from '../jsonrpc/jsonrpc'
import type { Classified } from '../request/classify'
import { pinBook, type EdgeDeps } from '../exchange'
import { pullOriginTools } from '../call-context'
import type { PulledToolList } from '../forwarding/tool-list-pull'
import { holdToolsList } from '../pinning/apply-pins'
import { identityScopeKey, listScope, privateScope } from '../validation/caller-scope'
import { originCause } from '../observe/origin-cause'
import { OriginTimeoutError } from '../ports'
import { sha256Digest } from '../pinning/tool-digest'
import { mergeTools, type MergedTool, type MergedTools, type OriginTools } from './merge-tools'
import { type HeldList, MAX_MERGES, setBounded, sharedConnection, virtualState } from './origin-sessions'
import { type Ask, localResult, targetOf } from './virtual-ask'

/** The tools/list cursor of the edge: the offset in the merged list, as opaque text. */
function cursorAt(offset: number): string {
  return btoa(`vs:${offset}`).replace(/=+$/, '')
}

function offsetOf(cursor: unknown): number | null {
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9+/]{1,40}$/.test(cursor)) return null
  try {
    const m = /^vs:(\d{1,9})$/.exec(atob(cursor + '='.repeat((4 - (cursor.length % 4)) % 4)))
    return m ? Number(m[1]) : null
  } catch {
    return null
  }
}

/**
 * Whether a caller's held merged list may answer a first page: younger than its freshness (the
 * shortest `ttlMs` an origin gave, else `SCHEMA_TTL_S`, as the per-origin records), and no origin
 * of it has said `notifications/tools/list_changed` since its pull started (seen by the registry
 * on any path: the origin's own route, a call's stream, a virtual server's stream).
 */
function stillFresh(ask: Ask, held: HeldList): boolean {
  // A list that left an origin out is merged again at each first page: the origin is listed as soon as it answers.
  if (held.leftOut.length > 0) return false
  const now = (ask.deps.now ?? Date.now)()
  if (now - held.at >= held.ttlMs) return false
  return !ask.vt.setting.origins.some((o) => ask.deps.registry.listChangedSince(o, held.at))
}

/**
 * One page of the merged list. A first page reuses the caller's held list while it is fresh
 * ({@link stillFresh}), else merges again; later pages read the list the first one merged.
 */
export async function listPage(ask: Ask, c: Extract<Classified, { kind: 'request' }>, modern: boolean): Promise<string> {
  const cursor = c.params?.cursor
  let offset = 0
  if (cursor !== undefined) {
    const o = offsetOf(cursor)
    if (o === null) return errorText(c.id, { code: ErrorCode.InvalidParams, message: 'Invalid params: this cursor was not given by this server; call tools/list without a cursor' })
    offset = o
  }
  const kept = virtualState(ask.deps).lists.get(listKey(ask))
  const held = kept && (offset > 0 || stillFresh(ask, kept)) ? kept : undefined
  const merged = held ?? (await mergedList(ask))
  const size = ask.vt.setting.pageSize
  const page = merged.tools.slice(offset, offset + size).map((t) => t.definition)
  const result: Record<string, unknown> = { tools: page }
  if (offset + size < merged.tools.length) result.nextCursor = cursorAt(offset + size)
  return localResult(c.id, result, modern, true)
}

/** Where a caller's merged list of this virtual server is kept: per server and caller (virtual-caller.ts `callerKey`). */
export function listKey(ask: Ask): string {
  return `${ask.vt.name}\n${ask.caller}`
}

/**
 * Every origin's list, pulled through the one tool-list pull of the edge (call-context.ts
 * `pullOriginTools`: the filters applied, the origin credential sent) in the era the origin
 * speaks, all at once: each is bounded by its own deadline (`ORIGIN_TIMEOUT_MS`,
 * `TOOL_LIST_TIMEOUT_MS`), and one that fails or is late is left out while the others are
 * merged. Concurrent lists of one virtual server share one fan-out.
 */
export function mergedList(ask: Ask): Promise<MergedTools> {
  const st = virtualState(ask.deps)
  const key = listKey(ask)
  const running = st.pulling.get(key)
  if (running) return running
  const p = (async () => {
    // When the pull starts: a list_changed from then on makes this list stale (stillFresh).
    const at = (ask.deps.now ?? Date.now)()
    let ttlMs = ask.deps.config.schemaTtlS * 1000
    const origins = ask.vt.setting.origins
    const lists = await Promise.allSettled(
      origins.map((o): Promise<OriginTools | null> =>
        // The connection and the pull within one deadline: a slow origin's initialize does not add to its pull's.
        withinListDeadline(
          ask.deps,
          (async () => {
            const target = targetOf(ask, o)
            const conn = await sharedConnection(ask.deps, target, ask.authorization, ask.caller)
            const pulled = await pullOriginTools(ask.deps, target, conn.era, ask.authorization)
            if (typeof pulled.ttlMs === 'number' && pulled.ttlMs > 0) ttlMs = Math.min(ttlMs, pulled.ttlMs)
            const tools = await pinnedTools(ask, o, pulled)
            return tools ? { origin: o, tools } : null
          })()
        )
      )
    )
    const ok: OriginTools[] = []
    const leftOut: Record<string, string> = {}
    lists.forEach((r, i) => {
      const origin = origins[i]!
      if (r.status === 'fulfilled' && r.value) ok.push(r.value)
      else leftOut[origin] = noteLeftOut(ask, origin, r.status === 'rejected' ? r.reason : PINS_REFUSED)
    })
    const merged = internedMerge(ask, ok)
    const before = st.status.get(ask.vt.name)
    for (const o of Object.keys(before?.leftOut ?? {}))
      if (!(o in leftOut))
        ask.deps.log({
          level: 'info',
          msg: 'virtual.origin_back',
          server: ask.vt.name,
          origin: o,
          text: `origin ${o} of virtual server ${ask.vt.name} answers again: its tools are listed`,
        })
    if (merged.collisions.length && merged.collisions.join('\n') !== before?.collisions.join('\n'))
      ask.deps.log({
        level: 'warn',
        msg: 'virtual.names_left_out',
        server: ask.vt.name,
        tools: merged.collisions,
        text: `virtual server ${ask.vt.name} (prefix never) leaves out tool names that several origins share: ${merged.collisions.join(', ')}`,
      })
    if (merged.shadowed.length && merged.shadowed.join('\n') !== before?.shadowed?.join('\n'))
      ask.deps.log({
        level: 'warn',
        msg: 'virtual.names_shadowed',
        server: ask.vt.name,
        tools: merged.shadowed,
        text: `virtual server ${ask.vt.name} leaves out tools whose merged name another tool has (origin:tool): ${merged.shadowed.join(', ')}; use prefix always, with no origin name another's followed by _`,
      })
    st.status.set(ask.vt.name, { leftOut, collisions: merged.collisions, shadowed: merged.shadowed })
    setBounded(st.lists, key, { ...merged, at, ttlMs, leftOut: Object.keys(leftOut) })
    return merged
  })()
  st.pulling.set(key, p)
  const clear = () => {
    if (st.pulling.get(key) === p) st.pulling.delete(key)
  }
  p.then(clear, clear)
  return p
}

/**
 * `p`, or an {@link OriginTimeoutError} once `TOOL_LIST_TIMEOUT_MS` (the whole of one origin's
 * tool-list pull, its initialize included) has passed: what the edge asks every origin of a
 * virtual server at once (the list, `initialize`) waits for the slowest no longer, however many
 * requests it takes to connect to it (`server/discover`, `initialize`, `notifications/initialized`,
 * each bounded by `ORIGIN_TIMEOUT_MS` alone).
 * @param onLate called when the deadline passed first (what `p` still gives is then the caller's to clean up)
 */
export function withinListDeadline<T>(deps: EdgeDeps, p: Promise<T>, onLate?: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onLate?.()
      reject(new OriginTimeoutError())
    }, deps.config.toolListTimeoutMs)
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/**
 * {@link mergeTools} of `lists`, the same object for lists equal to those of a recent merge: each
 * caller pulls its own lists (one may be private), but callers given the same lists share one
 * merged list, so a flood of distinct callers does not hold a copy of every origin's list each.
 */
function internedMerge(ask: Ask, lists: OriginTools[]): MergedTools {
  const merges = virtualState(ask.deps).merges
  // The whole content is the key: equal keys are equal lists, so sharing one tells no caller anything.
  const key = `${ask.vt.name}\n${ask.vt.setting.prefix}\n${JSON.stringify(lists)}`
  const held = merges.get(key)
  if (held) {
    merges.delete(key)
    merges.set(key, held)
    return held
  }
  const merged = mergeTools(ask.vt.setting.prefix, lists)
  merges.set(key, merged)
  if (merges.size > MAX_MERGES) merges.delete(merges.keys().next().value!)
  return merged
}

/**
 * An origin's pulled list as tool pinning lets it through (pinning/apply-pins.ts `holdToolsList`,
 * the same gate as a list relayed on `<mount>/<origin>`): `audit` records it and keeps every
 * tool, `enforce` leaves out the tools not approved.
 * @returns the tools, or null when the pins refuse the whole list (its pins could not be read, or
 *   it was malformed: `enforce` fails closed), which leaves the origin out
 */
async function pinnedTools(ask: Ask, origin: string, pulled: PulledToolList): Promise<unknown[] | null> {
  const book = pinBook(ask.deps)
  if (book.mode === 'off') return pulled.tools
  const caller = ask.identity ? identityScopeKey(ask.identity) : ask.authorization
  const scope = listScope(pulled.cacheScope, pulled.era, await privateScope(caller))
  if (book.mode === 'audit' && scope !== null) {
    // Audit keeps every tool: a list the book audited last for this origin and scope (every
    // caller of a public list shares its scope) needs no second audit, so a flood of callers does
    // not queue one audit of every origin's whole list each.
    // Once per SCHEMA_TTL_S at least, as a held list is pulled again: an audit that could not
    // read the pins (the store down) is tried again.
    const audited = virtualState(ask.deps).audited
    const key = `${origin}\n${scope}`
    const digest = await sha256Digest(JSON.stringify(pulled.tools))
    const now = (ask.deps.now ?? Date.now)()
    const last = audited.get(key)
    if (last && last.digest === digest && now - last.at < ask.deps.config.schemaTtlS * 1000) return pulled.tools
    setBounded(audited, key, { digest, at: now })
  }
  const id = { raw: '1', key: 'n:1' }
  const source = resultText(id, { tools: pulled.tools })
  const held = await holdToolsList(book, { originId: origin, scope, id, paged: false, msg: JSON.parse(source) as Record<string, unknown>, source })
  if (held === source) return pulled.tools
  const v: unknown = JSON.parse(held)
  if (isObject(v) && isObject(v.result) && Array.isArray(v.result.tools)) return v.result.tools
  return null
}

/** The reason {@link noteLeftOut} is given for a list tool pinning refused as a whole. */
const PINS_REFUSED = Symbol('pins refused the list')

/** Logs and counts one origin left out of a virtual server's list or session; returns why, as `/readyz` says it. */
export function noteLeftOut(ask: Ask, origin: string, reason: unknown): string {
  const why =
    reason instanceof OriginTimeoutError
      ? 'timeout: no answer in time'
      : reason === PINS_REFUSED
        ? 'refused by tool pinning: its pins could not be read'
        : `unavailable: ${originCause(reason).text}`
  ask.deps.log({
    level: 'warn',
    msg: 'virtual.origin_left_out',
    server: ask.vt.name,
    origin,
    reason: why,
    text: `origin ${origin} of virtual server ${ask.vt.name} is left out (${why}); the other origins are served`,
  })
  ask.deps.metrics.countVirtualLeftOut?.(ask.vt.name, origin)
  return why
}

/** The merged tool `name` names: from the held list, else after one new merge (a tool added since), bounded by REFRESH_MIN_INTERVAL_MS. */
export async function findMerged(ask: Ask, name: string): Promise<MergedTool | undefined> {
  const list = virtualState(ask.deps).lists.get(listKey(ask))
  const held = list?.byName.get(name)
  if (held) return held
  // A name the held list lacks merges again (a tool added since), at most once per
  // REFRESH_MIN_INTERVAL_MS per caller, as an unknown tool refreshes an origin's list (D7): calls
  // to made-up names do not turn into pulls of every origin.
  if (list && (ask.deps.now ?? Date.now)() - list.at < ask.deps.config.refreshMinIntervalMs) return undefined
  return (await mergedList(ask)).byName.get(name)
}
