/**
 * @module core/validation/schema-normal-form
 * One normal form of a schema before either engine compiles it, so ajv (Node) and
 * @cfworker/json-schema (Workers) see the same thing and give the same verdict. Pure; returns a
 * deep copy (engines may annotate or cache the object they are given; the stored record stays
 * untouched).
 *
 * Rules (each where the two libraries disagree, moved to what the JSON Schema spec says):
 * - `$schema` is dropped: the dialect is chosen by the edge (era rule or declared `$schema`) and
 *   passed to the engine; ajv would otherwise refuse a meta-schema URI it does not hold.
 * - draft-07: a schema object with `$ref` ignores every sibling keyword (draft-07 section 8.3);
 *   ajv 8 applies the siblings, so they are removed here.
 * - `enum: []` (nothing is allowed): ajv refuses to compile it, cfworker applies it; it becomes
 *   `not: {}`, which means the same and both engines accept.
 * - Keywords of another dialect: cfworker applies every keyword it knows in every draft, ajv only
 *   the dialect's own. In draft-07, the 2019-09+ keywords (`dependentRequired`,
 *   `dependentSchemas`, `prefixItems`, `unevaluated*`, `minContains`/`maxContains`, `$anchor`)
 *   are removed, as the draft-07 spec ignores them. In 2019-09/2020-12, draft-07's array form of
 *   `items` (a tuple) becomes `prefixItems`, and `additionalItems` becomes `items` — the evident
 *   meaning of a draft-07-style schema published without `$schema` in a 2025-11-25 list, and what
 *   cfworker does, where ajv would refuse the schema; a lone `additionalItems` is dropped.
 * - draft-04 style boolean `exclusiveMinimum`/`exclusiveMaximum` (still emitted by some servers)
 *   become the numeric form: `{minimum: 1, exclusiveMinimum: true}` -> `{exclusiveMinimum: 1}`.
 */
import type { Dialect } from '../jsonrpc/versions'

/** Keys whose values are data, not subschemas. */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples'])
/** Keywords the draft-07 spec does not have (ignored there; removed so no engine applies them). */
const NOT_IN_DRAFT07 = new Set(['dependentRequired', 'dependentSchemas', 'prefixItems', 'unevaluatedProperties', 'unevaluatedItems', 'minContains', 'maxContains', '$anchor'])
/** Keys whose values map names to subschemas. */
const MAP_KEYS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])
/** Upper bound of nesting walked (deeper parts are copied as they are). */
const MAX_DEPTH = 256

function copyData(v: unknown): unknown {
  return v === undefined ? v : structuredClone(v)
}

function walk(node: unknown, dialect: Dialect, depth: number): unknown {
  if (typeof node !== 'object' || node === null || depth > MAX_DEPTH) return copyData(node)
  if (Array.isArray(node)) return node.map((n) => walk(n, dialect, depth + 1))
  const src = node as Record<string, unknown>
  if (dialect === 'draft-07' && typeof src.$ref === 'string') return { $ref: src.$ref }
  const out: Record<string, unknown> = {}
  const set = (key: string, value: unknown) =>
    // defineProperty: a member named "__proto__" stays an own member, as JSON.parse made it.
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  const tupleIn2020 = dialect !== 'draft-07' && Array.isArray(src.items)
  for (const key of Object.keys(src)) {
    const value = src[key]
    if (depth === 0 && key === '$schema') continue
    if (dialect === 'draft-07' && NOT_IN_DRAFT07.has(key)) continue
    if (key === 'enum' && Array.isArray(value) && value.length === 0) {
      out.not = {}
      continue
    }
    if (dialect !== 'draft-07' && (key === 'items' || key === 'additionalItems')) {
      if (key === 'items' && tupleIn2020) {
        if (src.prefixItems === undefined) set('prefixItems', walk(value, dialect, depth + 1))
        if (src.additionalItems !== undefined) set('items', walk(src.additionalItems, dialect, depth + 1))
      } else if (key === 'items') set('items', walk(value, dialect, depth + 1))
      continue // a lone additionalItems is not a 2019-09+ keyword next to a schema-valued items
    }
    if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'boolean') {
      const bound = src[key === 'exclusiveMinimum' ? 'minimum' : 'maximum']
      if (value && typeof bound === 'number') set(key, bound)
      continue
    }
    if ((key === 'minimum' && src.exclusiveMinimum === true) || (key === 'maximum' && src.exclusiveMaximum === true)) continue
    if (MAP_KEYS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const map: Record<string, unknown> = {}
      for (const name of Object.keys(value))
        Object.defineProperty(map, name, { value: walk((value as Record<string, unknown>)[name], dialect, depth + 1), enumerable: true, writable: true, configurable: true })
      set(key, map)
      continue
    }
    set(key, DATA_KEYS.has(key) ? copyData(value) : walk(value, dialect, depth + 1))
  }
  if (Array.isArray(src.enum) && src.enum.length === 0 && src.not !== undefined) {
    out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { not: {} }]
    out.not = walk(src.not, dialect, depth + 1)
  }
  return out
}

/**
 * Normalises a schema for compilation (see the module comment).
 * @param schema an inputSchema or outputSchema as published (object or boolean)
 * @param dialect the dialect it is validated in
 * @returns a deep copy in normal form
 */
export function normaliseSchema(schema: unknown, dialect: Dialect): unknown {
  return walk(schema, dialect, 0)
}
