/**
 * A valid instance of a tool's inputSchema, as an agent would send it: every declared property
 * (or only the required ones), and free-text strings of a chosen length (prose, as a file, a
 * review or a page body would be). Deterministic for a given schema and options. Not a full
 * generator: the caller checks the result with both engines, and tries `requiredOnly` next when
 * the optional members conflict.
 *
 * Handles `$ref`/`$defs`, `allOf` (merged), `anyOf`/`oneOf` (the first branch that is not
 * `null`), `type` lists, `enum`/`const`, `default`, string formats, `pattern` (fast-check's
 * `stringMatching`), `min/maxLength`, numeric bounds and `multipleOf`, `min/maxItems`,
 * `prefixItems`/tuple `items`, `min/maxProperties`.
 */
import fc from 'fast-check'

type S = Record<string, any>

export interface InstanceOptions {
  /** Length of a free-text string (one without a pattern, format or enum), clamped to its min/maxLength. */
  text: number
  /** Only the required members of each object. */
  requiredOnly?: boolean
  /** Items of an array without minItems (default 1). */
  items?: number
}

const PROSE =
  'The quick brown fox jumps over the lazy dog. Release notes: fixed the parser, updated the docs, and renamed the option. ' +
  'Ünïcödé and emoji 🚀 stay as they are; quotes "like this", a backslash \\ and a newline\nend a line. '

/** `n` UTF-16 units of prose (never a broken surrogate pair). */
let proseCache = PROSE
export function prose(n: number): string {
  while (proseCache.length < n) proseCache += proseCache
  const s = proseCache.slice(0, n)
  const last = s.charCodeAt(s.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? s.slice(0, -1) + '.' : s
}

const FORMATS: Record<string, string> = {
  'date-time': '2026-12-05T10:20:30Z',
  date: '2026-12-05',
  time: '10:20:30Z',
  email: 'dev@example.com',
  uri: 'https://example.com/docs/page',
  url: 'https://example.com/docs/page',
  'uri-reference': 'https://example.com/docs/page',
  iri: 'https://example.com/docs/page',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  regex: '^a+$',
  'json-pointer': '/a/b',
}

function resolveRef(root: S, ref: string): S | boolean {
  if (!ref.startsWith('#')) throw new Error(`remote $ref ${ref}`)
  let node: any = root
  for (const seg of ref.slice(1).split('/').filter(Boolean)) node = node[decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~')]
  if (node === undefined) throw new Error(`unresolved $ref ${ref}`)
  return node
}

/** The schema with `$ref` followed and `allOf` merged into one object (shallow, `properties`/`required` joined). */
function flatten(root: S, schema: S | boolean, depth: number): S | boolean {
  if (typeof schema === 'boolean') return schema
  if (depth > 40) throw new Error('schema too deep to generate')
  let s: S = { ...schema }
  if (typeof s.$ref === 'string') {
    const target = flatten(root, resolveRef(root, s.$ref), depth + 1)
    delete s.$ref
    if (typeof target === 'boolean') return target
    s = merge(target, s)
  }
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map((p: S) => flatten(root, p, depth + 1))
    delete s.allOf
    for (const p of parts) if (typeof p === 'object') s = merge(s, p)
  }
  return s
}

function merge(a: S, b: S): S {
  const out: S = { ...a, ...b }
  if (a.properties || b.properties) out.properties = { ...a.properties, ...b.properties }
  if (a.required || b.required) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])]
  return out
}

function typeOf(s: S): string {
  const t = s.type
  if (typeof t === 'string') return t
  if (Array.isArray(t)) return t.find((x) => x !== 'null') ?? 'null'
  if (s.properties || s.required || s.additionalProperties !== undefined) return 'object'
  if (s.items || s.prefixItems) return 'array'
  if (s.minimum !== undefined || s.maximum !== undefined) return 'number'
  return 'string'
}

function stringOf(s: S, o: InstanceOptions): string {
  const min = s.minLength ?? 0
  const max = s.maxLength ?? Infinity
  if (typeof s.format === 'string' && FORMATS[s.format]) return FORMATS[s.format]!
  if (typeof s.pattern === 'string') {
    const samples = fc.sample(fc.stringMatching(new RegExp(s.pattern, 'u'), { size: 'xsmall' }), { seed: 42, numRuns: 50 })
    const fit = samples.find((x) => x.length >= min && x.length <= max)
    if (fit !== undefined) return fit
  }
  return prose(Math.max(min, Math.min(max, o.text)))
}

function numberOf(s: S, integer: boolean): number {
  let lo = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 0.5) : (s.minimum ?? 1)
  const hi = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 0.5) : (s.maximum ?? Math.max(lo, 10))
  if (integer) lo = Math.ceil(lo)
  let v = Math.min(Math.max(lo, integer ? 1 : 1.5), hi)
  if (typeof s.multipleOf === 'number') v = Math.ceil(lo / s.multipleOf) * s.multipleOf
  return integer ? Math.round(v) : v
}

/** A value valid against `schema` (within `root`'s `$defs`), or an Error when the generator cannot make one. */
export function validInstance(root: unknown, o: InstanceOptions, schema: unknown = root, depth = 0): unknown {
  const s = flatten(root as S, schema as S | boolean, depth)
  if (s === true) return 'x'
  if (s === false) throw new Error('false schema')
  if (s.const !== undefined) return s.const
  if (Array.isArray(s.enum)) return s.enum.find((x: unknown) => x !== null) ?? s.enum[0]
  const branches = s.anyOf ?? s.oneOf
  if (Array.isArray(branches)) {
    const rest = { ...s }
    delete rest.anyOf
    delete rest.oneOf
    const pick = branches
      .map((b: S) => flatten(root as S, b, depth + 1))
      .find((b: S | boolean) => b !== false && !(typeof b === 'object' && (b.type === 'null' || b.const === null)))
    return validInstance(root, o, typeof pick === 'object' ? merge(rest, pick) : rest, depth + 1)
  }
  switch (typeOf(s)) {
    case 'null':
      return null
    case 'boolean':
      return true
    case 'integer':
      return numberOf(s, true)
    case 'number':
      return numberOf(s, false)
    case 'string':
      return stringOf(s, o)
    case 'array': {
      const tuple: unknown[] = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []
      const rest = Array.isArray(s.items) ? s.additionalItems : s.items
      const n = Math.max(s.minItems ?? 0, tuple.length, Math.min(s.maxItems ?? Infinity, o.items ?? 1))
      const out: unknown[] = []
      for (let i = 0; i < n; i++) {
        const sub = i < tuple.length ? tuple[i] : rest
        if (sub === undefined && i >= tuple.length) {
          if (i >= (s.minItems ?? 0)) break
          out.push(`item ${i}`)
        } else out.push(validInstance(root, o, sub ?? true, depth + 1))
      }
      if (s.uniqueItems === true && out.length > 1 && out.every((x) => typeof x === 'string')) return out.map((x, i) => `${x as string}${i}`.slice(0, (x as string).length || 8))
      return out
    }
    default: {
      const props: Record<string, unknown> = s.properties ?? {}
      const required = new Set<string>(s.required ?? [])
      const out: Record<string, unknown> = {}
      for (const [k, sub] of Object.entries(props)) {
        if (o.requiredOnly && !required.has(k)) continue
        out[k] = validInstance(root, o, sub, depth + 1)
      }
      for (const k of required) if (!(k in out)) out[k] = validInstance(root, o, s.additionalProperties ?? true, depth + 1)
      let extra = 0
      while (Object.keys(out).length < (s.minProperties ?? 0)) out[`extra${extra++}`] = validInstance(root, o, s.additionalProperties ?? true, depth + 1)
      return out
    }
  }
}
