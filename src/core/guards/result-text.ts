/**
 * @module core/guards/result-text
 * The strings of a tool result the result checks read (docs/result-checks.md): each `text` content
 * item's `text`, each `resource` content item's `resource.text`, and every string value inside
 * `structuredContent` (object keys are names, not text, and are left alone). Images, audio,
 * resource links and blobs are never visited. A visit that changes a string gets a copy of the
 * result with only the changed path copied; the input is never changed in place. Pure.
 */
import { isObject } from '../jsonrpc/jsonrpc'
import { findSecrets } from './secret-scan'

/**
 * Called once per string: returns its replacement, or null to keep it.
 * @param text the string
 * @param at where it is, as `content[0].text` or `structuredContent.items[2].body`: written only
 *   when asked (a finding), since building a path for each of thousands of values cost more than
 *   the scans themselves; to be called during the visit only (the walk has moved on after it)
 */
export type TextVisitor = (text: string, at: () => string) => string | null

/** Deepest `structuredContent` nesting visited (the reply's own depth is bounded by `MAX_JSON_DEPTH` when parsed). */
const MAX_DEPTH = 256

/** Longest `at` path handed to a visitor (log lines carry it). */
const MAX_PATH = 200

/**
 * A member name as a path step: `.name` for a short identifier-like name that holds no credential,
 * else `.*`. Member names come from the origin and the path goes into log lines: a name that is
 * itself a token (`{"ghp_...": 1}`), or holds escapes, is never written out.
 */
function step(key: string): string {
  return /^[A-Za-z_$][\w$]{0,31}$/.test(key) && findSecrets(key).length === 0 ? `.${key}` : '.*'
}

/** `at` bounded to {@link MAX_PATH} units (a path nested hundreds deep keeps its start). */
const bounded = (at: string) => (at.length > MAX_PATH ? at.slice(0, MAX_PATH - 1) + '…' : at)

/**
 * One walk of `structuredContent`: where the walk is, from it down to the value being visited, as
 * one entry per level (written at the level's index, never pushed or popped: a push and a pop per
 * container cost more than the walk): the array or object there and the index of the value in it
 * (for an object, in the order of `Object.keys`). A value costs no allocation, and a path is
 * written out only when a visitor asks for it.
 */
class Walk {
  /** Per level: the array or object the walk is in (entries past `depth` are stale). */
  readonly in: object[] = []
  /** Per level: the index of the value in it (an object's member, in the order of its keys). */
  readonly index: number[] = []
  /** The level of the string being visited. */
  depth = 0
  constructor(readonly visit: TextVisitor) {}
  /** The path of the string being visited, from `structuredContent`, bounded. */
  readonly at = (): string => {
    let at = 'structuredContent'
    for (let l = 0; l < this.depth; l++) {
      const where = this.in[l]!
      const i = this.index[l]!
      at += Array.isArray(where) ? `[${i}]` : step(Object.keys(where)[i]!)
      if (at.length > MAX_PATH) break
    }
    return bounded(at)
  }
}

/** Numbers, booleans and null hold no text: no step is made for them. */
const holdsText = (v: unknown): boolean => typeof v === 'string' || (typeof v === 'object' && v !== null)

function visitValue(v: unknown, w: Walk, depth: number): unknown {
  if (typeof v === 'string') {
    w.depth = depth
    const r = w.visit(v, w.at)
    return r === null ? v : r
  }
  if (depth >= MAX_DEPTH || typeof v !== 'object' || v === null) return v
  // An object's own enumerable members, in the order of its keys: `Object.values` is the fastest
  // walk of them (the names are read only for a path or a change).
  const isArray = Array.isArray(v)
  const values: readonly unknown[] = isArray ? v : Object.values(v)
  let out: unknown[] | Record<string, unknown> | null = null
  let keys: string[] | null = null
  w.in[depth] = v
  for (let i = 0; i < values.length; i++) {
    const e = values[i]
    if (!holdsText(e)) continue
    w.index[depth] = i
    const r = visitValue(e, w, depth + 1)
    if (r === e) continue
    // Copied at the first change only, and then only this level (the input is never changed).
    if (isArray) ((out ??= (v as unknown[]).slice()) as unknown[])[i] = r
    else ((out ??= { ...(v as Record<string, unknown>) }) as Record<string, unknown>)[(keys ??= Object.keys(v))[i]!] = r
  }
  return out ?? v
}

/**
 * Visits the text of one tool result (module comment), `content` in order, then `structuredContent`.
 * @param only `content` restricts the visit to `text` content items (the size bound reads those only)
 * @returns the result itself when no string changed, else a copy with the changes
 */
export function visitResultText(result: Record<string, unknown>, visit: TextVisitor, only?: 'content'): Record<string, unknown> {
  let out: Record<string, unknown> | null = null
  const content = result.content
  if (Array.isArray(content)) {
    let items: unknown[] | null = null
    for (let i = 0; i < content.length; i++) {
      const c = content[i]
      if (!isObject(c)) continue
      if (c.type === 'text' && typeof c.text === 'string') {
        const r = visit(c.text, () => `content[${i}].text`)
        if (r !== null) (items ??= content.slice())[i] = { ...c, text: r }
      } else if (only === undefined && c.type === 'resource' && isObject(c.resource) && typeof c.resource.text === 'string') {
        const r = visit(c.resource.text, () => `content[${i}].resource.text`)
        if (r !== null) (items ??= content.slice())[i] = { ...c, resource: { ...c.resource, text: r } }
      }
    }
    if (items) out = { ...result, content: items }
  }
  if (only === undefined && 'structuredContent' in result) {
    const sc = result.structuredContent
    const r = visitValue(sc, new Walk(visit), 0)
    if (r !== sc) (out ??= { ...result }).structuredContent = r
  }
  return out ?? result
}

/** Adds `members` to a result's `_meta` (the origin's members kept; a `_meta` that is not an object is replaced only when absent). */
export function withMeta(result: Record<string, unknown>, members: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta
  if (meta !== undefined && !isObject(meta)) return result
  return { ...result, _meta: { ...(meta ?? {}), ...members } }
}
