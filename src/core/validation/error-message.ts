/**
 * @module core/validation/error-message
 * Builds the actionable, safe message for invalid tool arguments (docs/design.md §5).
 *
 * Everything here is derived from the declared schema and the failing locations; the received
 * values are never read, so a secret in an argument cannot leak into a response or a log line.
 * Member names the caller sent appear only where the schema forbids them (docs/design.md §5:
 * "Unknown fields are named"), and only when they look like a field name (an identifier of at most
 * 64 characters); any other name, e.g. a token pasted as a key, is shown as `<unnamed member>`.
 * Array positions are shown as `[n]`. Issues come in a fixed order (schema property order, then
 * path, then keyword), so both engines produce the same text. The text is bounded: at most
 * {@link MAX_ISSUES} issues, {@link MAX_MESSAGE_CHARS} characters.
 */
import type { ValidationIssue } from '../ports'
import { boundText } from '../jsonrpc/bound-text'

/** At most this many issues are described (the rest are counted). */
export const MAX_ISSUES = 8
/** Upper bound of the message text, in UTF-16 code units. */
export const MAX_MESSAGE_CHARS = 2000

/** One issue as published in `error.data.issues` (program-readable, value-free). */
export interface PublicIssue {
  path: string
  keyword: string
  expected: string
}

type Schema = Record<string, unknown>

function decodePointer(ptr: string): string[] {
  if (ptr === '' || ptr === '#') return []
  return ptr
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** A member name shown to the caller only when it looks like a field name. */
const FIELD_NAME = /^[A-Za-z_$][A-Za-z0-9_.$-]{0,63}$/

/**
 * `/items/2/qty` -> `items[2].qty`; the root is `arguments`.
 * @param declared member names the schema declares (always shown); other names are shown only
 *   when they look like a field name
 */
export function displayPath(pointer: string, extra?: string, declared?: (name: string) => boolean): string {
  const segs = decodePointer(pointer)
  if (extra !== undefined) segs.push(extra)
  if (segs.length === 0) return 'arguments'
  let out = ''
  for (const s of segs) {
    if (/^\d+$/.test(s)) out += `[${s}]`
    else out += (out ? '.' : '') + (FIELD_NAME.test(s) || declared?.(s) ? s : '<unnamed member>')
  }
  return out
}

/**
 * Resolves a schema location. A `$ref` segment (engines that report the dynamic path, e.g.
 * `/properties/items/items/$ref/properties/qty`) continues at the local target of that `$ref`.
 */
function resolvePointer(root: unknown, ptr: string, depth = 0): unknown {
  let cur: unknown = root
  for (const seg of decodePointer(ptr)) {
    if (typeof cur !== 'object' || cur === null) return undefined
    const next = (cur as Record<string, unknown>)[seg]
    if (seg === '$ref' && typeof next === 'string' && next.startsWith('#') && depth < 8) {
      // A $ref is a URI fragment: percent-encoding is undone before reading it as a pointer.
      let target = next
      try {
        target = decodeURIComponent(next)
      } catch {
        // not percent-encoded
      }
      cur = next === '#' ? root : resolvePointer(root, target, depth + 1)
      continue
    }
    cur = next
  }
  return cur
}

function resolveRef(root: Schema, s: unknown, depth = 0): Schema | undefined {
  if (typeof s !== 'object' || s === null) return undefined
  const ref = (s as Schema).$ref
  if (typeof ref === 'string' && ref.startsWith('#') && depth < 8) return resolveRef(root, resolvePointer(root, ref), depth + 1)
  return s as Schema
}

function list(values: unknown[]): string {
  return boundText(values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', '), 300)
}

function typeOf(s: Schema | undefined): string {
  if (!s) return 'value'
  if (Array.isArray(s.type)) return s.type.join(' or ')
  if (typeof s.type === 'string') return s.type
  if (Array.isArray(s.enum)) return 'one of the allowed values'
  if ('const' in s) return 'constant'
  if (s.anyOf || s.oneOf) return 'one of several shapes'
  return 'value'
}

/** The keyword's rule, phrased from the schema alone. */
function expectedFor(issue: ValidationIssue, root: Schema): string {
  const kwParent = resolvePointer(root, issue.schemaPath.replace(/\/[^/]*$/, '')) as Schema | undefined
  const kwValue = resolvePointer(root, issue.schemaPath)
  const n = (v: unknown) => (typeof v === 'number' ? String(v) : '?')
  switch (issue.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not an allowed argument'
    case 'type':
      return `must be ${Array.isArray(kwValue) ? kwValue.join(' or ') : typeof kwValue === 'string' ? (/^[aeiou]/.test(kwValue) ? 'an ' : 'a ') + kwValue : 'of the declared type'}`
    case 'enum':
      return Array.isArray(kwValue) ? `must be one of: ${list(kwValue)}` : 'must be one of the allowed values'
    case 'const':
      return `must be exactly ${boundText(JSON.stringify(kwValue) ?? '?', 100)}`
    case 'minimum':
      return `must be >= ${n(kwValue)}`
    case 'maximum':
      return `must be <= ${n(kwValue)}`
    case 'exclusiveMinimum':
      return `must be > ${n(typeof kwValue === 'boolean' ? kwParent?.minimum : kwValue)}`
    case 'exclusiveMaximum':
      return `must be < ${n(typeof kwValue === 'boolean' ? kwParent?.maximum : kwValue)}`
    case 'multipleOf':
      return `must be a multiple of ${n(kwValue)}`
    case 'minLength':
      return `must be at least ${n(kwValue)} characters long`
    case 'maxLength':
      return `must be at most ${n(kwValue)} characters long`
    case 'pattern':
      return `must match the pattern ${boundText(String(kwValue), 200)}`
    case 'format':
      return `must be a valid ${boundText(String(kwValue), 40)}`
    case 'minItems':
      return `must have at least ${n(kwValue)} items`
    case 'maxItems':
      return `must have at most ${n(kwValue)} items`
    case 'uniqueItems':
      return 'must not contain duplicate items'
    case 'minProperties':
      return `must have at least ${n(kwValue)} members`
    case 'maxProperties':
      return `must have at most ${n(kwValue)} members`
    case 'items':
    case 'prefixItems':
    case 'additionalItems':
    case 'unevaluatedItems':
      return 'has more items, or items of another shape, than allowed'
    case 'contains':
    case 'minContains':
    case 'maxContains':
      return 'must contain the required kind of item'
    case 'anyOf':
      return 'must match at least one of the allowed shapes'
    case 'oneOf':
      return 'must match exactly one of the allowed shapes'
    case 'not':
      return 'must not match the excluded shape'
    case 'dependencies':
    case 'dependentRequired':
    case 'dependentSchemas':
      return 'requires other arguments to be present with it'
    case 'propertyNames':
      return 'has a member name that is not allowed'
    case 'if':
    case 'then':
    case 'else':
      return 'does not meet a conditional rule of the schema'
    case 'false schema':
      return 'is not allowed'
    default:
      return `fails the "${boundText(issue.keyword, 40)}" rule`
  }
}

/** Member names declared anywhere in the schema (`properties` keys), cut to 64 characters. */
function declaredNames(root: Schema): (name: string) => boolean {
  // Once per schema object (a rejection must not walk the whole schema again).
  const known = declaredCache.get(root)
  if (known) return (name) => known.has(name)
  const names = new Set<string>()
  declaredCache.set(root, names)
  const visit = (n: unknown, depth: number) => {
    if (depth > 32 || typeof n !== 'object' || n === null) return
    if (Array.isArray(n)) return n.forEach((x) => visit(x, depth + 1))
    const o = n as Schema
    if (typeof o.properties === 'object' && o.properties !== null) for (const k of Object.keys(o.properties)) if (k.length <= 64) names.add(k)
    for (const [k, v] of Object.entries(o)) if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples') visit(v, depth + 1)
  }
  visit(root, 0)
  return (name) => names.has(name)
}

/** Member names declared anywhere in a schema, per schema object. */
const declaredCache = new WeakMap<Schema, Set<string>>()

/** Issues in a fixed order: schema property order of the first path segment, then path, then keyword. */
function ordered(issues: ValidationIssue[], root: Schema): ValidationIssue[] {
  const order = Object.keys((root.properties ?? {}) as object)
  const rank = (i: ValidationIssue) => {
    const first = decodePointer(i.path)[0] ?? i.property
    const r = first === undefined ? -1 : order.indexOf(first)
    return r === -1 ? (first === undefined ? -1 : order.length) : r
  }
  // Each issue's rank once, not once per comparison.
  const ranks = new Map(issues.map((i) => [i, rank(i)] as const))
  return [...issues].sort((a, b) => ranks.get(a)! - ranks.get(b)! || cmp(a.path, b.path) || cmp(a.property ?? '', b.property ?? '') || cmp(a.keyword, b.keyword))
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Value-free issues for `error.data.issues`, in a fixed order, at most {@link MAX_ISSUES}. */
export function publicIssues(issues: ValidationIssue[], schema: unknown): PublicIssue[] {
  const root = (typeof schema === 'object' && schema !== null ? schema : {}) as Schema
  const declared = declaredNames(root)
  return ordered(issues, root)
    .slice(0, MAX_ISSUES)
    .map((i) => ({
      path: displayPath(i.path, i.property, declared),
      keyword: i.keyword,
      expected: expectedFor(i, root),
    }))
}

function describeProperty(root: Schema, name: string): string {
  const props = (root.properties ?? {}) as Record<string, unknown>
  const s = resolveRef(root, props[name])
  const required = Array.isArray(root.required) && root.required.includes(name)
  const facts = [typeOf(s), required ? 'required' : 'optional']
  if (s) {
    const lo = s.minimum ?? s.exclusiveMinimum
    const hi = s.maximum ?? s.exclusiveMaximum
    if (typeof lo === 'number' || typeof hi === 'number') facts.push(`${typeof lo === 'number' ? lo : ''}..${typeof hi === 'number' ? hi : ''}`)
    if (typeof s.format === 'string') facts.push(`format ${boundText(s.format, 40)}`)
  }
  let line = `  - ${boundText(name, 64)} (${facts.join(', ')})`
  if (s && typeof s.description === 'string') line += `: ${boundText(s.description.replace(/\s+/g, ' '), 160)}`
  if (s && Array.isArray(s.enum)) line += `${s && typeof s.description === 'string' ? '.' : ':'} Allowed: ${list(s.enum)}`
  return line
}

/**
 * The message of docs/design.md §5.
 * @param tool the tool name (from the call; cut to 64 characters)
 * @param issues the failing locations reported by the engine
 * @param schema the tool's declared `inputSchema`
 * @returns text of at most {@link MAX_MESSAGE_CHARS} characters and the public issues
 */
export function invalidArgumentsMessage(tool: string, issues: ValidationIssue[], schema: unknown): { text: string; issues: PublicIssue[] } {
  const pub = publicIssues(issues, schema)
  const root = (typeof schema === 'object' && schema !== null ? schema : {}) as Schema
  const lines = [`Invalid arguments for tool "${boundText(tool, 64)}":`]
  for (const i of pub) lines.push(`  - ${i.path}: ${i.expected}`)
  if (issues.length > pub.length) lines.push(`  - and ${issues.length - pub.length} more`)
  const props = (root.properties ?? {}) as Record<string, unknown>
  const touched: string[] = []
  for (const i of ordered(issues, root).slice(0, MAX_ISSUES)) {
    const first = decodePointer(i.path)[0] ?? i.property
    if (first !== undefined && first in props && !touched.includes(first)) touched.push(first)
  }
  if (touched.length) {
    lines.push('Expected:')
    for (const name of touched) lines.push(describeProperty(root, name))
  }
  lines.push('Fix these arguments and call the tool again.')
  return { text: boundText(lines.join('\n'), MAX_MESSAGE_CHARS), issues: pub }
}
