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
 *   the scans themselves
 */
export type TextVisitor = (text: string, at: () => string) => string | null

/** One step of the path to a value inside `structuredContent`: written out only when asked. */
interface PathStep {
  up: PathStep | null
  key: string | number
}

/** The path of a step, from `structuredContent`, bounded. */
function pathOf(p: PathStep): string {
  const keys: (string | number)[] = []
  for (let q: PathStep | null = p; q !== null; q = q.up) keys.push(q.key)
  let at = 'structuredContent'
  for (let i = keys.length - 2; i >= 0; i--) {
    const k = keys[i]!
    at += typeof k === 'number' ? `[${k}]` : step(k)
    if (at.length > MAX_PATH) break
  }
  return bounded(at)
}

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

function visitValue(v: unknown, at: PathStep, visit: TextVisitor, depth: number): unknown {
  if (typeof v === 'string') {
    const r = visit(v, () => pathOf(at))
    return r === null ? v : r
  }
  if (depth >= MAX_DEPTH || typeof v !== 'object' || v === null) return v
  if (Array.isArray(v)) {
    let out: unknown[] | null = null
    for (let i = 0; i < v.length; i++) {
      const e = v[i]
      // Numbers, booleans and null hold no text: no step is made for them.
      if (typeof e !== 'string' && (typeof e !== 'object' || e === null)) continue
      const r = visitValue(e, { up: at, key: i }, visit, depth + 1)
      if (r !== e) (out ??= v.slice())[i] = r
    }
    return out ?? v
  }
  let out: Record<string, unknown> | null = null
  const o = v as Record<string, unknown>
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue
    const e = o[k]
    if (typeof e !== 'string' && (typeof e !== 'object' || e === null)) continue
    const r = visitValue(e, { up: at, key: k }, visit, depth + 1)
    if (r !== e) (out ??= { ...o })[k] = r
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
    const r = visitValue(sc, { up: null, key: 'structuredContent' }, visit, 0)
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
