/**
 * @module core/validation/schema-portability
 * The features a schema may use at the edge, so that a call gets the same verdict on Node (ajv)
 * and on Workers (@cfworker/json-schema). Pure; runtime-neutral.
 *
 * The two engines disagree on a few JSON Schema features (the JSON-Schema-Test-Suite run in
 * test/validation/json-schema-suite.test.ts lists every case and why). Where the schema can be rewritten to
 * the same meaning, the engines do it (src/core/validation/schema-normal-form.ts). Where it cannot, the feature
 * is routed here to one shared behaviour: the schema is "unusable" on every runtime, so the call
 * follows D8 (forwarded and graded `unvalidated`, or -32603 with `ON_SCHEMA_ERROR=reject`) in
 * the same way everywhere. The same check bounds validation cost (MCP 2026-07-28 basic,
 * "Composition-Keyword Resource Use"): it runs once when a schema is compiled, never per call.
 */

import { patternProblem, patternProgram } from '../patterns/linear-pattern'

/**
 * Upper bounds of a schema the edge validates with (docs/validation.md "Cost bounds" gives the
 * reason for each figure). Checked once when a schema is compiled, never per call.
 * - `maxDepth`: nesting of schema objects.
 * - `maxNodes`: schema objects plus the JSON values inside `enum` and `const` (data the engines compare per call).
 * - `maxEnum`: values of one `enum` (a wrong call compares against each).
 * - `maxRequired`: names of one `required` (each is looked up per call, and each missing one is reported).
 * - `maxExpanded`: schema objects once every `$ref` is replaced by its target (all one call can
 *   evaluate): `anyOf` of two `$ref`s nested 20 levels is 60 objects written and 2^20 expanded.
 * - `maxInPlace`: of those, the most that apply to one value of the arguments (same path): the
 *   branches of `anyOf`/`oneOf`/`allOf` multiplied through `$ref`s.
 */
export const SCHEMA_LIMITS = { maxDepth: 64, maxNodes: 20_000, maxEnum: 4_096, maxRequired: 1_024, maxExpanded: 50_000, maxInPlace: 4_096 } as const

/** Keys whose values are data (never subschemas). */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples'])
/** Keys whose values map names to subschemas (the names are data). */
const MAP_KEYS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])

/** The document URL of a root `$id` without its fragment, or null when it is not an absolute URL. */
export function rootDoc(id: unknown): string | null {
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

/** Counts the JSON values of a data keyword (`enum`, `const`), stopping past `limit`. */
export function dataNodes(v: unknown, limit: number): number {
  let n = 0
  const stack: unknown[] = [v]
  while (stack.length > 0 && n <= limit) {
    const x = stack.pop()
    n++
    if (typeof x === 'object' && x !== null) for (const c of Object.values(x)) stack.push(c)
  }
  return n
}

/** Decodes one JSON Pointer segment of a URI fragment. */
function pointerSegment(s: string): string {
  let d = s
  try {
    d = decodeURIComponent(s)
  } catch {
    // kept as written
  }
  return d.replace(/~1/g, '/').replace(/~0/g, '~')
}

/**
 * Resolves a local `$ref` to the schema object it names, or undefined (the engines refuse what
 * does not resolve). Fragments: `#`, a JSON Pointer, or an anchor (`$anchor`, draft-07 `$id: "#a"`).
 */
export function makeResolver(root: unknown, rootId: string | null): (ref: string) => unknown {
  let anchors: Map<string, unknown> | null = null
  const collectAnchors = (): Map<string, unknown> => {
    const m = new Map<string, unknown>()
    const walk = (n: unknown, depth: number): void => {
      if (depth > SCHEMA_LIMITS.maxDepth * 2 || typeof n !== 'object' || n === null) return
      const o = n as Record<string, unknown>
      if (!Array.isArray(n)) {
        if (typeof o.$anchor === 'string') m.set(o.$anchor, n)
        if (typeof o.$id === 'string' && o.$id.startsWith('#')) m.set(o.$id.slice(1), n)
      }
      for (const [k, v] of Object.entries(o)) if (!DATA_KEYS.has(k)) walk(v, depth + 1)
    }
    walk(root, 0)
    return m
  }
  const resolved = new Map<string, unknown>()
  return (ref: string) => {
    if (resolved.has(ref)) return resolved.get(ref)
    const target = resolveUncached(ref)
    resolved.set(ref, target)
    return target
  }
  function resolveUncached(ref: string): unknown {
    let frag: string
    if (ref.startsWith('#')) frag = ref.slice(1)
    else {
      if (rootId === null) return undefined
      try {
        frag = new URL(ref, rootId).hash.slice(1)
      } catch {
        return undefined
      }
    }
    if (frag === '') return root
    if (!frag.startsWith('/')) return (anchors ??= collectAnchors()).get(frag)
    let node: unknown = root
    for (const seg of frag.slice(1).split('/')) {
      if (typeof node !== 'object' || node === null) return undefined
      const key = pointerSegment(seg)
      if (!Object.prototype.hasOwnProperty.call(node, key)) return undefined
      node = (node as Record<string, unknown>)[key]
    }
    return node
  }
}

/** Keywords whose subschemas apply to the same value (in place); each entry's value shape. */
export const IN_PLACE: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas', 'dependencies'])
/** Keywords whose subschemas apply to an item or a member: the name the value is reached by. */
const DESCENDING: Record<string, string> = {
  items: '[]',
  additionalItems: '[]',
  contains: '[]',
  unevaluatedItems: '[]',
  prefixItems: '[i]',
  properties: '{p}',
  patternProperties: '{*}',
  additionalProperties: '{*}',
  unevaluatedProperties: '{*}',
  propertyNames: '{name}',
}

/**
 * What one call can evaluate: the schema with every `$ref` replaced by its target, walked once.
 * Refuses a `$ref` loop that never reaches an item or a member (validation would never end: ajv
 * overflows its stack, cfworker loops), a recursion that applies itself twice to one value per
 * level (`anyOf` of two recursive branches: 2^depth evaluations for a value nested `depth` deep),
 * and an expansion larger than {@link SCHEMA_LIMITS}.maxExpanded. Recursion through an item or a
 * member once per level (trees, JSON values) is fine: its cost grows with the call's size only.
 * @returns the problem phrase, or null
 */
function refCostProblem(root: unknown, rootId: string | null, what: string): string | null {
  const resolve = makeResolver(root, rootId)
  // The refs being expanded: target -> the length of the descending path when it was entered.
  const active = new Map<unknown, number>()
  const backEdges = new Map<unknown, Map<string, number>>()
  let expanded = 0
  let problem: string | null = null
  const path: string[] = []
  // Expanded subschemas per value path ("{a}/[]"): what applies to one value of the arguments.
  const perValue = new Map<string, number>()
  let valueKey = ''
  const keys: string[] = []
  const descend = (step: string, sub: unknown) => {
    path.push(step)
    keys.push(valueKey)
    valueKey += '/' + step
    visit(sub)
    valueKey = keys.pop()!
    path.pop()
  }
  const visit = (node: unknown): void => {
    if (problem !== null || typeof node !== 'object' || node === null || Array.isArray(node)) return
    if (++expanded > SCHEMA_LIMITS.maxExpanded) {
      problem = `its ${what} expands, with its $refs followed, to more than ${SCHEMA_LIMITS.maxExpanded} subschemas the edge would evaluate per call`
      return
    }
    const here = (perValue.get(valueKey) ?? 0) + 1
    perValue.set(valueKey, here)
    if (here > SCHEMA_LIMITS.maxInPlace) {
      problem = `its ${what} applies more than ${SCHEMA_LIMITS.maxInPlace} subschemas to one value once its $refs are followed (anyOf/oneOf/allOf branches multiplied through $refs)`
      return
    }
    const o = node as Record<string, unknown>
    if (typeof o.$ref === 'string') {
      const target = resolve(o.$ref)
      if (typeof target === 'object' && target !== null) {
        const entered = active.get(target)
        if (entered !== undefined) {
          const since = path.slice(entered)
          if (since.length === 0) {
            problem = `its ${what} has a $ref loop that never reaches an item or a member, so validation would never end`
            return
          }
          const sig = since.join('/')
          let m = backEdges.get(target)
          if (!m) backEdges.set(target, (m = new Map()))
          const count = (m.get(sig) ?? 0) + 1
          m.set(sig, count)
          if (count > 1) {
            problem = `its ${what} has a recursive $ref applied more than once to the same value, whose cost doubles with each level of the arguments`
            return
          }
        } else {
          active.set(target, path.length)
          visit(target)
          active.delete(target)
          backEdges.delete(target)
        }
      }
    }
    for (const k in o) {
      if (problem !== null) return
      if (!Object.prototype.hasOwnProperty.call(o, k)) continue
      const v = o[k]
      if (IN_PLACE.has(k)) {
        if (Array.isArray(v)) for (const s of v) visit(s)
        else if ((k === 'dependentSchemas' || k === 'dependencies') && typeof v === 'object' && v !== null) for (const s of Object.values(v)) visit(s)
        else visit(v)
        continue
      }
      const step = DESCENDING[k]
      if (step === undefined) continue
      if (Array.isArray(v)) v.forEach((s, i) => descend(`[${i}]`, s))
      else if ((k === 'properties' || k === 'patternProperties') && typeof v === 'object' && v !== null) {
        for (const [name, s] of Object.entries(v)) descend(k === 'properties' ? `{${name}}` : step, s)
      } else descend(step, v)
    }
  }
  visit(root)
  return problem
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
    const pattern = patternProblem(o.pattern)
    if (pattern !== null) {
      problem = `its ${what} has ${pattern}`
      return
    }
    if (Array.isArray(o.enum) && o.enum.length > SCHEMA_LIMITS.maxEnum) {
      problem = `its ${what} has an enum of more than ${SCHEMA_LIMITS.maxEnum} values`
      return
    }
    if (Array.isArray(o.required) && o.required.length > SCHEMA_LIMITS.maxRequired) {
      problem = `its ${what} requires more than ${SCHEMA_LIMITS.maxRequired} properties in one object`
      return
    }
    for (const key of ['enum', 'const'] as const) {
      if (o[key] !== undefined) nodes += dataNodes(o[key], SCHEMA_LIMITS.maxNodes) - 1
    }
    if (nodes > SCHEMA_LIMITS.maxNodes) {
      problem = `its ${what} is larger than the edge validates (${SCHEMA_LIMITS.maxNodes} nodes, counting enum and const values)`
      return
    }
    for (const key of ['properties', 'patternProperties'] as const) {
      const map = o[key]
      if (typeof map === 'object' && map !== null && !Array.isArray(map)) {
        if (key === 'properties' && Object.prototype.hasOwnProperty.call(map, '__proto__')) {
          problem = `its ${what} declares a property named __proto__, which the edge does not validate`
          return
        }
        if (key === 'patternProperties') {
          for (const k of Object.keys(map)) {
            const p = patternProblem(k)
            if (p !== null) {
              problem = `its ${what} has ${p}`
              return
            }
          }
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
  return problem ?? refCostProblem(schema, rootId, what)
}

/**
 * CPU time, in ns, one validation spends per unit of work, the larger of the two engines' figures
 * (on Node the tiered engine serves a schema's first calls with @cfworker/json-schema, on Workers
 * it serves them all), rounded up. Measured on the 2-core CI VM with Node 20, CPU time
 * (process.cpuUsage), median of 5 runs over 1 Mi characters (scripts in test/unit/validation/validation-cost.test.ts
 * "cost weights" re-measure them):
 * - `subschema`: one subschema applied to one value: ajv 0.2-0.5 ns, cfworker 470-550 ns per
 *   character of an array of small integers (0.9-1.3 us per item per subschema under load): 2,000.
 *   Also each declared property, `enum`/`const` value and `dependentRequired` entry gone through per value.
 * - `applied`: one subschema applied to one value when it may fail, with the issue it then makes
 *   (a failing call's issues are most of its cost): one issue per item or member, ajv 1.8-3.9 us,
 *   cfworker 4.6-6.2 us (20,000 items or members, 2-core VM under load); `anyOf` of 4 failing
 *   branches per item, ajv 10 us per item: 8,000. Also each name of `required` (looked up, and an issue when missing).
 * - `member`: a member `properties` does not name, skipped: ajv 0.0 ns, cfworker 45 ns per character
 *   (100,000 members); with `additionalProperties: false` each is an issue: ajv 344 ns, cfworker 889 ns
 *   per character, charged as `subschema / 2`: 100.
 * - `pattern`: re2js per character of the string: ajv 47-143 ns, cfworker 55-99 ns
 *   (`^[a-z]*$`, `^(a|b|c\d)*$`): 200, plus `patternInstruction` per instruction of its compiled
 *   program: the NFA's work per character grows with the program, 76-92 ns per instruction
 *   (`[ab]*a[ab]{999}c`, `(?:a|b|aa|ab|ba|bb){300}$` against random `a`/`b`; the DFA, kept for
 *   programs of at most 128 instructions, 28 at 105 and 10-17 for small ones): 150. A flat 200 let
 *   `[ab]*a[ab]{999}c` hold the event loop 2-3 s on 10 KB.
 * - `length`: `minLength`/`maxLength` count code points: ajv 4.3 ns, cfworker 6.7 ns: 10.
 * - `format`: the shared format checks: ajv 4.1 ns, cfworker 5.2 ns (`uri`): 10.
 * - `uniqueItems`: the canonical key of every item: ajv 126 ns, cfworker 95 ns per character: 200.
 */
export const COST_WEIGHTS = { subschema: 2_000, applied: 8_000, member: 100, pattern: 200, patternInstruction: 150, length: 10, format: 10, uniqueItems: 200 } as const

/**
 * What validating one call against a schema can cost, known before the call: `fixedNs + chars *
 * perCharNs` bounds the CPU time of one validation of arguments whose JSON text is `chars` UTF-16
 * units long (docs/validation.md "Validation budget").
 * - `fixedNs`: the work on values that occur at most once (reached only through named properties
 *   and `prefixItems` positions): the subschemas applied there and their `properties`,
 *   `required`, `enum` sizes.
 * - `perCharNs`: per character of the arguments: for every value path, the subschemas applied to
 *   it with their per-character keywords (`pattern`, `minLength`/`maxLength`, `format`,
 *   `patternProperties` names); every item or member reached through `items`, `additionalProperties`,
 *   `patternProperties` is at least one character, so its fixed work is charged per character too.
 *   Paths that can reach the same value (a named property and `additionalProperties`) are added.
 */
export interface ValidationCost {
  fixedNs: number
  perCharNs: number
}

/**
 * The {@link ValidationCost} of a schema that {@link portabilityProblem} accepted (its expansion
 * is bounded). Walks the schema with every `$ref` followed once per level, as the cost checks do.
 * A recursive schema (trees) doubles the per-character figure and charges its largest fixed work
 * per character: deeper values meet the same subschemas again.
 * @param schema an inputSchema (any JSON value); a boolean schema costs nothing
 */
export function validationCost(schema: unknown): ValidationCost {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { fixedNs: 0, perCharNs: 0 }
  const W = COST_WEIGHTS
  const resolve = makeResolver(schema, rootDoc((schema as { $id?: unknown }).$id))
  // Per value path ("/{a}/[]"): fixed ns per value, ns per character, whether it repeats (wildcard step).
  const paths = new Map<string, { fixed: number; perChar: number; wild: boolean; shape: string }>()
  const active = new Set<unknown>()
  let recursive = false
  let uniqueItems = 0
  let visits = 0
  let key = ''
  let shape = ''
  let wild = false
  const size = (v: unknown): number => (Array.isArray(v) ? v.length : typeof v === 'object' && v !== null ? Object.keys(v).length : 0)
  const descend = (step: string, isWild: boolean, sub: unknown) => {
    const saved = [key, shape, wild] as const
    key += '/' + step
    shape += step.startsWith('{') ? '/{}' : '/[]'
    wild ||= isWild
    visit(sub)
    ;[key, shape, wild] = saved
  }
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || ++visits > SCHEMA_LIMITS.maxExpanded) return
    const o = node as Record<string, unknown>
    let p = paths.get(key)
    if (!p) paths.set(key, (p = { fixed: 0, perChar: 0, wild, shape }))
    p.fixed +=
      W.applied * (1 + size(o.required)) +
      W.subschema * (size(o.properties) + size(o.enum) + size(o.dependentRequired) + (o.const !== undefined ? dataNodes(o.const, SCHEMA_LIMITS.maxNodes) : 0))
    // Members and items are iterated once each (a member or an item is at least 4 and 2 characters with its separator).
    // With only `properties`, an unnamed member is skipped (`member`); `additionalProperties`,
    // `patternProperties` and `items` test every member or item, and a failing test makes an issue.
    if (o.additionalProperties !== undefined || o.patternProperties !== undefined || o.items !== undefined) p.perChar += W.applied / 2
    else if (o.properties !== undefined) p.perChar += W.member
    if (typeof o.pattern === 'string') p.perChar += W.pattern + W.patternInstruction * patternProgram(o.pattern)
    if (o.minLength !== undefined) p.perChar += W.length
    if (o.maxLength !== undefined) p.perChar += W.length
    if (typeof o.format === 'string') p.perChar += W.format
    // Every member name is matched against every patternProperties key.
    if (typeof o.patternProperties === 'object' && o.patternProperties !== null)
      for (const name of Object.keys(o.patternProperties)) p.perChar += W.pattern + W.patternInstruction * patternProgram(name)
    if (o.uniqueItems === true) uniqueItems++
    if (typeof o.$ref === 'string') {
      const target = resolve(o.$ref)
      if (typeof target === 'object' && target !== null) {
        if (active.has(target)) recursive = true
        else {
          active.add(target)
          visit(target)
          active.delete(target)
        }
      }
    }
    for (const k in o) {
      if (!Object.prototype.hasOwnProperty.call(o, k)) continue
      const v = o[k]
      // propertyNames applies to member names: characters of this object.
      if (IN_PLACE.has(k) || k === 'propertyNames') {
        if (Array.isArray(v)) for (const s of v) visit(s)
        else if ((k === 'dependentSchemas' || k === 'dependencies') && typeof v === 'object' && v !== null) for (const s of Object.values(v)) visit(s)
        else visit(v)
        continue
      }
      if (DESCENDING[k] === undefined) continue
      if (k === 'properties' && typeof v === 'object' && v !== null && !Array.isArray(v)) for (const [name, s] of Object.entries(v)) descend(`{${name}}`, false, s)
      else if (k === 'patternProperties' && typeof v === 'object' && v !== null && !Array.isArray(v)) for (const s of Object.values(v)) descend('{*}', true, s)
      else if (Array.isArray(v)) v.forEach((s, i) => descend(`[${i}]`, k !== 'prefixItems', s))
      else descend(DESCENDING[k]!.startsWith('{') ? '{*}' : '[]', true, v)
    }
  }
  visit(schema)
  let fixedNs = 0
  let maxFixed = 0
  const byShape = new Map<string, { steps: string[]; ns: number }[]>()
  for (const [k, p] of paths) {
    maxFixed = Math.max(maxFixed, p.fixed)
    // A value reached by names only occurs once; a repeating value (an item, a member) is at least 2 characters with its separator.
    if (!p.wild) fixedNs += p.fixed
    let group = byShape.get(p.shape)
    if (!group) byShape.set(p.shape, (group = []))
    group.push({ steps: k.split('/'), ns: p.perChar + (p.wild ? p.fixed / 2 : 0) })
  }
  // The paths one value matches agree step by step (same name, or a wildcard on one side), so for
  // any of them every other is compatible with it: the most any value meets is at most the largest
  // sum over a path and the paths compatible with it. Past 512 paths of one shape, every path is added.
  const compatible = (a: string[], b: string[]) => a.every((s, i) => s === b[i] || s === '{*}' || s === '[]' || b[i] === '{*}' || b[i] === '[]')
  let perCharNs = 0
  for (const group of byShape.values()) {
    if (group.length > 512) {
      perCharNs = Math.max(
        perCharNs,
        group.reduce((n, q) => n + q.ns, 0)
      )
      continue
    }
    for (const q of group)
      perCharNs = Math.max(
        perCharNs,
        group.reduce((n, r) => (compatible(q.steps, r.steps) ? n + r.ns : n), 0)
      )
  }
  perCharNs += W.uniqueItems * uniqueItems
  if (recursive) perCharNs = 2 * perCharNs + maxFixed
  return { fixedNs, perCharNs }
}
