/**
 * @module core/virtual/merge-tools
 * The naming rule of a virtual server (docs/virtual-servers.md#naming): the tool lists of its
 * origins, each as the origin names its tools, merged into one list of unique names by the
 * server's `prefix` mode. Pure: lists in, merged list out.
 */
import type { VirtualPrefix } from '../config'
import { isObject } from '../jsonrpc/jsonrpc'

/** Between an origin's name and its tool's in a merged name: `weather__get_forecast`. */
export const PREFIX_SEPARATOR = '__'

/** One origin's tool list as its pull gave it (the filters applied). */
export interface OriginTools {
  origin: string
  tools: unknown[]
}

/** One tool of the merged list: the name clients see, and the origin and name it is called by there. */
export interface MergedTool {
  name: string
  origin: string
  originName: string
  /** The origin's definition with `name` replaced by the merged name. */
  definition: Record<string, unknown>
}

/** A merged list: its tools in order (origins in the server's order, each origin's tools in its order), by name, and the names left out. */
export interface MergedTools {
  tools: MergedTool[]
  byName: Map<string, MergedTool>
  /** Names two or more origins share that `prefix: never` left out (sorted). */
  collisions: string[]
  /** Tools left out because another tool took their merged name, as `<origin>:<tool>` (in order). */
  shadowed: string[]
}

/**
 * Merges the lists. `always`: every tool is `<origin>__<tool>`; `conditional`: only a name two
 * origins share is prefixed, on each of them; `never`: a shared name is left out on every origin
 * and reported in `collisions`. A tool without a string name is skipped. A merged name that still
 * repeats is kept once: a name the rule prefixed wins over an origin's own name that only looks
 * prefixed (origin `b`'s `x` as `b__x`, not another origin's own `b__x`, so no origin takes the
 * name of another's tool), else the first in order; the others are reported in `shadowed`.
 */
export function mergeTools(prefix: VirtualPrefix, lists: readonly OriginTools[]): MergedTools {
  const owners = new Map<string, number>()
  for (const l of lists) {
    const seen = new Set<string>()
    for (const t of l.tools) {
      if (!isObject(t) || typeof t.name !== 'string' || seen.has(t.name)) continue
      seen.add(t.name)
      owners.set(t.name, (owners.get(t.name) ?? 0) + 1)
    }
  }
  const collisions = [...owners].filter(([, n]) => n > 1).map(([name]) => name)
  const shared = new Set(collisions)
  const candidates: { m: MergedTool; prefixed: boolean }[] = []
  for (const l of lists) {
    const seen = new Set<string>()
    for (const t of l.tools) {
      if (!isObject(t) || typeof t.name !== 'string' || seen.has(t.name)) continue
      seen.add(t.name)
      const clash = shared.has(t.name)
      if (prefix === 'never' && clash) continue
      const prefixed = prefix === 'always' || clash
      const name = prefixed ? `${l.origin}${PREFIX_SEPARATOR}${t.name}` : t.name
      candidates.push({ m: { name, origin: l.origin, originName: t.name, definition: { ...t, name } }, prefixed })
    }
  }
  // Who keeps a name several candidates take: the first the rule prefixed, else the first.
  const winner = new Map<string, MergedTool>()
  for (const c of candidates) if (c.prefixed && !winner.has(c.m.name)) winner.set(c.m.name, c.m)
  for (const c of candidates) if (!winner.has(c.m.name)) winner.set(c.m.name, c.m)
  const tools: MergedTool[] = []
  const byName = new Map<string, MergedTool>()
  const shadowed: string[] = []
  for (const { m } of candidates) {
    if (winner.get(m.name) !== m) {
      shadowed.push(`${m.origin}:${m.originName}`)
      continue
    }
    tools.push(m)
    byName.set(m.name, m)
  }
  return { tools, byName, collisions: prefix === 'never' ? collisions.sort() : [], shadowed }
}

/**
 * The origin a merged name belongs to by its prefix alone (`weather__x` -> `weather`), among
 * `origins`; the longest matching origin name wins (origin names may hold `_`). Undefined when none.
 */
export function originOfPrefixed(name: string, origins: readonly string[]): { origin: string; originName: string } | undefined {
  let best: string | undefined
  for (const o of origins) if (name.startsWith(o + PREFIX_SEPARATOR) && (best === undefined || o.length > best.length)) best = o
  return best === undefined ? undefined : { origin: best, originName: name.slice(best.length + PREFIX_SEPARATOR.length) }
}
