/**
 * @module validators/normalise
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
 */
import type { Dialect } from '../core/era'

/** Keys whose values are data, not subschemas. */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples'])
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
  for (const key of Object.keys(src)) {
    const value = src[key]
    if (depth === 0 && key === '$schema') continue
    if (key === 'enum' && Array.isArray(value) && value.length === 0) {
      out.not = {}
      continue
    }
    // defineProperty: a member named "__proto__" stays an own member, as JSON.parse made it.
    Object.defineProperty(out, key, { value: DATA_KEYS.has(key) ? copyData(value) : walk(value, dialect, depth + 1), enumerable: true, writable: true, configurable: true })
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
