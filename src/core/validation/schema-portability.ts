/**
 * @module core/validation/schema-portability
 * The features a schema may use at the edge, so that a call gets the same verdict on Node (ajv)
 * and on Workers (@cfworker/json-schema). Pure; runtime-neutral.
 *
 * The two engines disagree on a few JSON Schema features (the JSON-Schema-Test-Suite run in
 * test/json-schema-suite.test.ts lists every case and why). Where the schema can be rewritten to
 * the same meaning, the engines do it (src/core/validation/schema-normal-form.ts). Where it cannot, the feature
 * is routed here to one shared behaviour: the schema is "unusable" on every runtime, so the call
 * follows D8 (forwarded and graded `unvalidated`, or -32603 with `ON_SCHEMA_ERROR=reject`) in
 * the same way everywhere. The same check bounds validation cost (MCP 2026-07-28 basic,
 * "Composition-Keyword Resource Use"): it runs once when a schema is compiled, never per call.
 */

import safeRegex from 'safe-regex2'

/** Upper bounds of a schema the edge validates with. */
export const SCHEMA_LIMITS = { maxDepth: 64, maxNodes: 20_000 } as const

/** Keys whose values are data (never subschemas). */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples'])
/** Keys whose values map names to subschemas (the names are data). */
const MAP_KEYS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])

function rootDoc(id: unknown): string | null {
  if (typeof id !== 'string') return null
  try {
    const u = new URL(id)
    u.hash = ''
    return u.href
  } catch {
    return null
  }
}

/** True when a `$ref` stays inside the schema document (a fragment, or the root's own `$id`). */
function isLocalRef(ref: string, rootId: string | null): boolean {
  if (ref.startsWith('#')) return true
  if (rootId === null) return false
  try {
    const u = new URL(ref, rootId)
    u.hash = ''
    return u.href === rootId
  } catch {
    return false
  }
}

function validPattern(p: unknown): boolean {
  if (typeof p !== 'string') return true
  try {
    new RegExp(p, 'u')
    return true
  } catch {
    return false
  }
}

/**
 * False for a pattern whose backtracking can explode (star height > 1 or too many repetitions,
 * e.g. `^(a+)+$`): matched against a caller's string, one call could hold the event loop for
 * minutes. Checked with safe-regex2 (fastify's maintained fork of substack/safe-regex), once per
 * schema compile; such a schema is unusable (D8) on every runtime.
 */
function linearPattern(p: unknown): boolean {
  return typeof p !== 'string' || safeRegex(p)
}

/**
 * Why a schema cannot be validated the same way on every runtime, or null when it can.
 * @param schema an inputSchema or outputSchema as published (any JSON value)
 * @returns a safe reason (names features, never schema text), e.g. "its inputSchema uses $dynamicRef"
 */
export function portabilityProblem(schema: unknown, what = 'inputSchema'): string | null {
  if (typeof schema === 'boolean') return null
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `its ${what} is not a JSON Schema object`
  const rootId = rootDoc((schema as { $id?: unknown }).$id)
  let nodes = 0
  let usesUnevaluatedProperties = false
  let hasOneSidedIf = false
  let problem: string | null = null
  const visit = (node: unknown, depth: number, isRoot: boolean): void => {
    if (problem !== null || typeof node !== 'object' || node === null) return
    if (Array.isArray(node)) {
      for (const n of node) visit(n, depth + 1, false)
      return
    }
    if (++nodes > SCHEMA_LIMITS.maxNodes) {
      problem = `its ${what} is larger than the edge validates (${SCHEMA_LIMITS.maxNodes} nodes)`
      return
    }
    if (depth > SCHEMA_LIMITS.maxDepth) {
      problem = `its ${what} is nested deeper than the edge validates (${SCHEMA_LIMITS.maxDepth} levels)`
      return
    }
    const o = node as Record<string, unknown>
    if (typeof o.$dynamicRef === 'string' || typeof o.$dynamicAnchor === 'string' || typeof o.$recursiveRef === 'string' || o.$recursiveAnchor === true) {
      problem = `its ${what} uses $dynamicRef/$recursiveRef, which the edge does not validate`
      return
    }
    if (!isRoot && typeof o.$id === 'string' && !o.$id.startsWith('#')) {
      problem = `its ${what} embeds a schema resource with its own $id, which the edge does not validate`
      return
    }
    if (typeof o.$ref === 'string' && !isLocalRef(o.$ref, rootId)) {
      problem = `its ${what} has a $ref the edge cannot resolve (remote references are never fetched)`
      return
    }
    if (o.unevaluatedItems !== undefined) {
      problem = `its ${what} uses unevaluatedItems, which the edge does not validate`
      return
    }
    if (o.unevaluatedProperties !== undefined) usesUnevaluatedProperties = true
    if (o.if !== undefined && (o.then === undefined || o.else === undefined)) hasOneSidedIf = true
    if (!validPattern(o.pattern)) {
      problem = `its ${what} has a pattern that is not a valid regular expression`
      return
    }
    if (!linearPattern(o.pattern)) {
      problem = `its ${what} has a pattern with nested repetition, whose matching time can explode`
      return
    }
    for (const key of ['properties', 'patternProperties'] as const) {
      const map = o[key]
      if (typeof map === 'object' && map !== null && !Array.isArray(map)) {
        if (key === 'properties' && Object.prototype.hasOwnProperty.call(map, '__proto__')) {
          problem = `its ${what} declares a property named __proto__, which the edge does not validate`
          return
        }
        if (key === 'patternProperties' && !Object.keys(map).every((k) => validPattern(k) && linearPattern(k))) {
          problem = `its ${what} has a pattern that is not a valid regular expression, or one whose matching time can explode`
          return
        }
      }
    }
    if (Array.isArray(o.required) && o.required.includes('__proto__')) {
      problem = `its ${what} declares a property named __proto__, which the edge does not validate`
      return
    }
    for (const [k, v] of Object.entries(o)) {
      if (DATA_KEYS.has(k) || k === 'required') continue
      if (MAP_KEYS.has(k) && typeof v === 'object' && v !== null && !Array.isArray(v)) {
        // name -> subschema: the names are data, each value is a schema
        for (const sub of Object.values(v)) visit(sub, depth + 2, false)
      } else visit(v, depth + 1, false)
    }
  }
  visit(schema, 0, true)
  if (problem === null && usesUnevaluatedProperties && hasOneSidedIf) {
    problem = `its ${what} combines unevaluatedProperties with an if that lacks then or else, which the edge does not validate`
  }
  return problem
}
