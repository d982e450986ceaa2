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
}

/**
 * Merges the lists. `always`: every tool is `<origin>__<tool>`; `conditional`: only a name two
 * origins share is prefixed, on each of them; `never`: a shared name is left out on every origin
 * and reported in `collisions`. A tool without a string name is skipped; a merged name that still
 * repeats (an origin's own `b__x` beside origin `b`'s `x`) is kept once, the first in order.
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
  const tools: MergedTool[] = []
  const byName = new Map<string, MergedTool>()
  for (const l of lists) {
    for (const t of l.tools) {
      if (!isObject(t) || typeof t.name !== 'string') continue
      const clash = shared.has(t.name)
      if (prefix === 'never' && clash) continue
      const name = prefix === 'always' || clash ? `${l.origin}${PREFIX_SEPARATOR}${t.name}` : t.name
      if (byName.has(name)) continue
      const m: MergedTool = { name, origin: l.origin, originName: t.name, definition: { ...t, name } }
      tools.push(m)
      byName.set(name, m)
    }
  }
  return { tools, byName, collisions: prefix === 'never' ? collisions.sort() : [] }
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
