/**
 * @module check/arguments
 * Argument objects for the calls `mcp-edge check` makes: one valid object built from a tool's
 * `inputSchema`, and the invalid variants (a required argument left out, an argument of the wrong
 * type). Pure; never throws.
 *
 * Own code, and why: the generators on npm (json-schema-faker and its kin) produce random values
 * and resolve remote `$ref`s; check needs one deterministic, minimal object (required members
 * only) that it can explain, and it must never fetch anything. The generator below covers the
 * keywords tool schemas use (type, enum, const, default, examples, properties/required, items,
 * minItems, length and range bounds, multipleOf, common formats, simple patterns, local `$ref`,
 * allOf/anyOf/oneOf) and is honest about the rest: every object it returns has been validated
 * with the edge's own engine by the caller ({@link validArguments}), and a schema it cannot
 * satisfy yields a reason instead of a guess.
 */
import { isObject, type CompiledValidator } from './edge-rules'

/** A generated value, or why none could be built. */
export type Generated = { ok: true; value: unknown } | { ok: false; reason: string }

type Schema = Record<string, unknown>

const MAX_DEPTH = 16

const FORMAT_VALUES: Record<string, string> = {
  email: 'check@example.com',
  'idn-email': 'check@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  regex: '^a$',
  'json-pointer': '/a',
}

/** Resolves a same-document `$ref` (`#`, `#/json/pointer`); null for anything else. */
function resolveRef(ref: string, root: unknown): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return null
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isObject(node) && !Array.isArray(node)) return null
    node = (node as Record<string, unknown>)[key]
    if (node === undefined) return null
  }
  return node
}

/**
 * One string matching a simple regular expression: literals, escapes (`\d \w \s \.`), character
 * classes (`[A-Z0-9_]`), groups with alternation (first branch), anchors and quantifiers
 * (`? * + {n} {n,m}`: the least count, at least one for `+`). Null for anything else
 * (lookarounds, backreferences, negated classes). The caller checks the result with RegExp.
 */
export function stringForPattern(pattern: string): string | null {
  let i = 0
  const atom = (): string | null => {
    const c = pattern[i]
    if (c === undefined) return null
    if (c === '\\') {
      const e = pattern[i + 1]
      i += 2
      if (e === undefined) return null
      if (e === 'd') return '0'
      if (e === 'w') return 'a'
      if (e === 's') return ' '
      if (/[DWSbBpPk1-9]/.test(e)) return null
      return e
    }
    if (c === '[') {
      const end = pattern.indexOf(']', i + 2)
      if (end < 0 || pattern[i + 1] === '^') return null
      const body = pattern.slice(i + 1, end)
      i = end + 1
      if (body.startsWith('\\')) return body[1] === 'd' ? '0' : body[1] === 'w' ? 'a' : body[1] === 's' ? ' ' : (body[1] ?? null)
      return body[0] ?? null
    }
    if (c === '(') {
      i++
      if (pattern[i] === '?') {
        if (pattern[i + 1] !== ':') return null
        i += 2
      }
      const inner = seq(')')
      if (inner === null || pattern[i] !== ')') return null
      i++
      return inner
    }
    if (c === '.') {
      i++
      return 'a'
    }
    if ('*+?{|)'.includes(c)) return null
    i++
    return c
  }
  const seq = (close?: string): string | null => {
    let out = ''
    while (i < pattern.length && pattern[i] !== close) {
      const c = pattern[i]!
      if (c === '^' || c === '$') {
        i++
        continue
      }
      if (c === '|') {
        // first branch chosen: skip the rest of this group (or pattern)
        let depth = 0
        while (i < pattern.length) {
          const d = pattern[i]
          if (d === '\\') i++
          else if (d === '(') depth++
          else if (d === ')') {
            if (depth === 0) break
            depth--
          }
          i++
        }
        break
      }
      const a = atom()
      if (a === null) return null
      const q = pattern[i]
      let count = 1
      if (q === '?' || q === '*') {
        count = 0
        i++
      } else if (q === '+') i++
      else if (q === '{') {
        const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i))
        if (!m) return null
        count = Number(m[1])
        i += m[0].length
      }
      if (pattern[i] === '?') i++ // lazy quantifier
      out += a.repeat(count)
    }
    return out
  }
  const s = seq()
  if (s === null) return null
  try {
    return new RegExp(pattern, 'u').test(s) ? s : null
  } catch {
    return null
  }
}

function firstType(t: unknown): string | undefined {
  if (typeof t === 'string') return t
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') ?? t[0]) as string | undefined
  return undefined
}

function number(s: Schema, integer: boolean): Generated {
  const min = typeof s.minimum === 'number' ? s.minimum : undefined
  const exMin = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : undefined
  const max = typeof s.maximum === 'number' ? s.maximum : undefined
  const exMax = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : undefined
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined
  let lo = min ?? (exMin !== undefined ? exMin + (step ?? 1) : 1)
  if (exMin !== undefined && lo <= exMin) lo = exMin + (step ?? 1)
  let v = step ? Math.ceil(lo / step) * step : lo
  if (integer) v = Math.ceil(v)
  const hi = max ?? (exMax !== undefined ? exMax : undefined)
  if (hi !== undefined && (v > hi || (exMax !== undefined && v >= exMax))) return { ok: false, reason: 'no number found inside its bounds' }
  return { ok: true, value: v }
}

function gen(schema: unknown, root: unknown, depth: number): Generated {
  if (depth > MAX_DEPTH) return { ok: false, reason: 'nested too deep' }
  if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return { ok: true, value: {} }
  if (schema === false) return { ok: false, reason: 'a false schema accepts nothing' }
  if (!isObject(schema)) return { ok: false, reason: 'not a JSON Schema object' }
  const s = schema
  if (typeof s.$ref === 'string') {
    const target = resolveRef(s.$ref, root)
    if (target === null) return { ok: false, reason: 'a $ref outside the schema' }
    return gen(target, root, depth + 1)
  }
  if ('const' in s) return { ok: true, value: s.const }
  if (Array.isArray(s.enum) && s.enum.length > 0) return { ok: true, value: s.enum[0] }
  if ('default' in s) return { ok: true, value: s.default }
  if (Array.isArray(s.examples) && s.examples.length > 0) return { ok: true, value: s.examples[0] }
  for (const k of ['anyOf', 'oneOf'] as const) {
    const branches = s[k]
    if (Array.isArray(branches) && branches.length > 0) {
      const { [k]: _drop, ...rest } = s
      for (const b of branches) {
        const g = gen(isObject(b) ? { ...rest, ...b } : b, root, depth + 1)
        if (g.ok) return g
      }
      return { ok: false, reason: `no ${k} branch could be satisfied` }
    }
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s
    const merged: Schema = { ...rest }
    for (const b of allOf as unknown[]) {
      const sub = isObject(b) && typeof b.$ref === 'string' ? resolveRef(b.$ref, root) : b
      if (!isObject(sub)) continue
      for (const [k, v] of Object.entries(sub)) {
        if (k === 'properties' && isObject(v)) merged.properties = { ...(isObject(merged.properties) ? merged.properties : {}), ...v }
        else if (k === 'required' && Array.isArray(v)) merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...v])]
        else if (!(k in merged)) merged[k] = v
      }
    }
    return gen(merged, root, depth + 1)
  }
  const type = firstType(s.type) ?? (isObject(s.properties) || Array.isArray(s.required) ? 'object' : s.items !== undefined ? 'array' : undefined)
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const props = isObject(s.properties) ? s.properties : {}
      const required = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []
      for (const name of required) {
        const sub = props[name] ?? (isObject(s.additionalProperties) ? s.additionalProperties : true)
        const g = gen(sub, root, depth + 1)
        if (!g.ok) return { ok: false, reason: `${name}: ${g.reason}` }
        out[name] = g.value
      }
      const minProps = typeof s.minProperties === 'number' ? s.minProperties : 0
      for (const [name, sub] of Object.entries(props)) {
        if (Object.keys(out).length >= minProps) break
        if (name in out) continue
        const g = gen(sub, root, depth + 1)
        if (g.ok) out[name] = g.value
      }
      return { ok: true, value: out }
    }
    case 'array': {
      const n = typeof s.minItems === 'number' ? s.minItems : 0
      const out: unknown[] = []
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []
      for (let k = 0; k < n; k++) {
        const sub = k < prefix.length ? prefix[k] : Array.isArray(s.items) ? (s.additionalItems ?? true) : (s.items ?? true)
        const g = gen(sub, root, depth + 1)
        if (!g.ok) return { ok: false, reason: `item ${k}: ${g.reason}` }
        out.push(g.value)
      }
      return { ok: true, value: out }
    }
    case 'string': {
      let v: string | null = typeof s.format === 'string' ? (FORMAT_VALUES[s.format] ?? null) : 'example'
      if (v === null) return { ok: false, reason: `format "${String(s.format).slice(0, 32)}" is not one check can produce` }
      if (typeof s.pattern === 'string') {
        const p = stringForPattern(s.pattern)
        if (p === null) return { ok: false, reason: 'its pattern is beyond the generator (write the arguments by hand)' }
        v = p
      }
      const min = typeof s.minLength === 'number' ? s.minLength : 0
      const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity
      if ([...v].length < min) v = v + 'x'.repeat(min - [...v].length)
      if ([...v].length > max) v = [...v].slice(0, max).join('')
      return { ok: true, value: v }
    }
    case 'integer':
      return number(s, true)
    case 'number':
      return number(s, false)
    case 'boolean':
      return { ok: true, value: true }
    case 'null':
      return { ok: true, value: null }
    default:
      return { ok: true, value: {} }
  }
}

/**
 * A valid argument object for a tool: the generated minimal object, checked with the tool's
 * compiled validator (the edge's engine).
 * @param inputSchema the tool's `inputSchema` as listed
 * @param validate the compiled validator of that schema, or null when the edge cannot compile it
 * @returns the object, or a reason (no value of the schema is ever quoted)
 */
export function validArguments(inputSchema: unknown, validate: CompiledValidator | null): Generated {
  const g = gen(inputSchema, inputSchema, 0)
  if (!g.ok) return g
  if (!isObject(g.value)) return { ok: false, reason: 'its inputSchema does not describe an object' }
  if (validate) {
    let issues
    try {
      issues = validate(g.value)
    } catch {
      return { ok: false, reason: 'the validator failed on the generated arguments' }
    }
    if (issues) return { ok: false, reason: `the generated arguments fail the schema at ${issues[0]?.path || 'the root'} (${issues[0]?.keyword})` }
  }
  return g
}

/** The top-level property names the schema requires (after a root-level `$ref`). */
export function requiredNames(inputSchema: unknown): string[] {
  const s = isObject(inputSchema) && typeof inputSchema.$ref === 'string' ? resolveRef(inputSchema.$ref, inputSchema) : inputSchema
  if (!isObject(s) || !Array.isArray(s.required)) return []
  return s.required.filter((r): r is string => typeof r === 'string')
}

/** JSON type names of a value, as JSON Schema's `type` keyword names them. */
function jsonTypes(v: unknown): string[] {
  if (v === null) return ['null']
  if (Array.isArray(v)) return ['array']
  if (typeof v === 'number') return Number.isInteger(v) ? ['integer', 'number'] : ['number']
  return [typeof v]
}

/**
 * An argument object where one declared property has a value of a type its schema does not allow,
 * carrying `canary` so an echo of the rejected value can be found: the canary string itself, or
 * `[canary]` for a string property (a server that stringifies the array prints the canary), or
 * `{ value: canary }`. The property is chosen among the required ones first.
 * @param valid a valid argument object to start from
 * @returns the arguments and the property name, or null when no property declares a `type`
 */
export function wrongTypeArguments(
  inputSchema: unknown,
  valid: Record<string, unknown>,
  canary: string,
  root: unknown = inputSchema
): { args: Record<string, unknown>; property: string } | null {
  const s = isObject(inputSchema) && typeof inputSchema.$ref === 'string' ? resolveRef(inputSchema.$ref, root) : inputSchema
  if (!isObject(s) || !isObject(s.properties)) return null
  const required = new Set(requiredNames(s))
  const entries = Object.entries(s.properties).sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)))
  for (const [name, raw] of entries) {
    const p = isObject(raw) && typeof raw.$ref === 'string' ? resolveRef(raw.$ref, root) : raw
    if (!isObject(p)) continue
    const types = typeof p.type === 'string' ? [p.type] : Array.isArray(p.type) ? p.type.filter((t): t is string => typeof t === 'string') : []
    if (types.length === 0) continue
    const candidates: unknown[] = [canary, [canary], { value: canary }]
    const wrong = candidates.find((c) => !jsonTypes(c).some((t) => types.includes(t) || (t === 'integer' && types.includes('number'))))
    if (wrong === undefined) continue
    return { args: { ...valid, [name]: wrong }, property: name }
  }
  return null
}
