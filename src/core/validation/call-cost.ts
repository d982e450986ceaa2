/**
 * @module core/validation/call-cost
 * The validation budget's estimate for one call, from what its arguments hold. Pure; runtime-neutral.
 *
 * The schema's static figure (schema-portability.ts `validationCost`) charges every character of
 * the message at the rate of the costliest value path of the schema, whether the call sends a
 * value there or not: a `pattern` on an array of domain names set the rate of a plain `query`
 * string, and a plain `newText` string was charged as if it were a message of tiny array items.
 * Real tools refused valid calls of 1-11 KB that way (docs/validation.md "Validation budget").
 *
 * Here the schema is turned once, at ingest, into a {@link CallCostPlan}: per place a value can
 * take in the arguments, the subschemas that apply to it there (every `allOf`/`anyOf`/`oneOf`/
 * `not`/`if`/`then`/`else`/`dependentSchemas` branch and `$ref` target, all assumed to run) and
 * what they cost per value, per character of a string, per member and per item. At call time the
 * parsed arguments are walked along the plan and each value present is charged at the rate of
 * the keywords that check it. The walk visits only the values the schema would visit, charges at
 * least a few hundred ns for every step it takes, and stops as soon as the total passes the limit,
 * so its own cost is a small part of what it admits.
 *
 * Every guess goes the costly way: all branches of a composition and every `patternProperties`
 * subschema are assumed to apply, and each subschema applied to a value is charged as if it also
 * made an issue (a failing call's issues are most of its cost: about 2-6 us each).
 */
import { COST_WEIGHTS, dataNodes, IN_PLACE, makeResolver, rootDoc, SCHEMA_LIMITS } from './schema-portability'
import { patternProgram } from '../patterns/linear-pattern'

/**
 * CPU time in ns per unit of work at call time. The per-character rates and `applied` (a
 * subschema applied to a value, with the issue it makes when it fails) are schema-portability.ts
 * `COST_WEIGHTS`, where their measurements are given; beside them:
 * - `required`: each name of `required` is looked up and, when missing, makes an issue: `applied`.
 * - `sized`: each declared property, `enum`/`const` value or `dependentRequired` entry the
 *   engines go through per value: `subschema`.
 * - `member`: one member of an object iterated by `properties`, `patternProperties`,
 *   `additionalProperties`, `propertyNames` or `unevaluatedProperties` (cfworker 45 ns per
 *   character, a member being at least 4): 400.
 */
export const CALL_WEIGHTS = { applied: COST_WEIGHTS.applied, required: COST_WEIGHTS.applied, sized: COST_WEIGHTS.subschema, member: 4 * COST_WEIGHTS.member } as const

/** What applies to a value at one place of the arguments (one node of a {@link CallCostPlan}). */
export interface CallCostNode {
  /** ns per value: the subschemas applied, their declared properties, `required`, `enum`/`const` values. */
  valueNs: number
  /** ns per UTF-16 unit of a string value: `pattern`, `minLength`/`maxLength`, `format`. */
  strNs: number
  /** ns per member of an object value (iteration, `propertyNames` subschemas); 0 when none iterates. */
  memberNs: number
  /** ns per UTF-16 unit of a member name: `patternProperties` keys, `propertyNames` string keywords. */
  nameNs: number
  /** ns per character of an array's items (`uniqueItems`: one canonical key per item). */
  uniqueNs: number
  /** The node of a member by its name (names some `properties` declares). */
  named: Map<string, CallCostNode> | null
  /** The node of any other member (`additionalProperties`, `patternProperties`); null when no subschema reaches it. */
  other: CallCostNode | null
  /** The node of item i (`prefixItems`, a tuple `items`). */
  prefix: CallCostNode[]
  /** The node of any other item (`items`, `additionalItems`, `contains`, `unevaluatedItems`); null when none. */
  item: CallCostNode | null
}

/** A schema's call-time cost plan: the node of the arguments object itself. */
export type CallCostPlan = CallCostNode

/** Most distinct nodes one plan may hold (a schema whose plan is larger keeps the static figure only). */
export const MAX_PLAN_NODES = 20_000

type Seed = object | boolean

/**
 * Builds the {@link CallCostPlan} of an inputSchema that `portabilityProblem` accepted, or null
 * when there is nothing to plan (a boolean or non-object schema) or the plan would pass
 * {@link MAX_PLAN_NODES} (the caller then keeps the static figure alone).
 */
export function callCostPlan(schema: unknown): CallCostPlan | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return null
  const W = COST_WEIGHTS
  const resolve = makeResolver(schema, rootDoc((schema as { $id?: unknown }).$id))
  const ids = new WeakMap<object, number>()
  let nextId = 0
  const idOf = (o: object): number => {
    let i = ids.get(o)
    if (i === undefined) ids.set(o, (i = nextId++))
    return i
  }
  const memo = new Map<string, CallCostNode>()
  const pending: [CallCostNode, object[]][] = []
  let budget = MAX_PLAN_NODES
  let tooLarge = false

  /** The subschemas that apply in place with the seeds: composition branches and `$ref` targets, each once. */
  const closure = (seeds: Seed[]): { objects: object[]; booleans: number } => {
    const seen = new Set<object>()
    const objects: object[] = []
    let booleans = 0
    const stack: unknown[] = [...seeds]
    while (stack.length > 0) {
      const s = stack.pop()
      if (typeof s === 'boolean') {
        booleans++
        continue
      }
      if (typeof s !== 'object' || s === null || Array.isArray(s) || seen.has(s)) continue
      seen.add(s)
      objects.push(s)
      if (objects.length > SCHEMA_LIMITS.maxExpanded) break
      const o = s as Record<string, unknown>
      if (typeof o.$ref === 'string') stack.push(resolve(o.$ref))
      for (const k of IN_PLACE) {
        const v = o[k]
        if (v === undefined) continue
        if (Array.isArray(v)) {
          if (k !== 'dependencies') stack.push(...v)
        } else if ((k === 'dependentSchemas' || k === 'dependencies') && typeof v === 'object' && v !== null) {
          for (const d of Object.values(v)) if (!Array.isArray(d)) stack.push(d)
        } else stack.push(v)
      }
    }
    return { objects, booleans }
  }

  /** The node for the values the seeds apply to (memoised by the set they close over, so recursion makes a cycle). */
  const nodeOf = (seeds: Seed[]): CallCostNode | null => {
    if (seeds.length === 0) return null
    const { objects, booleans } = closure(seeds)
    const key =
      objects
        .map(idOf)
        .sort((a, b) => a - b)
        .join(',') + `|${booleans}`
    const hit = memo.get(key)
    if (hit) return hit
    if (--budget < 0) {
      tooLarge = true
      return null
    }
    const node: CallCostNode = {
      valueNs: CALL_WEIGHTS.applied * (objects.length + booleans),
      strNs: 0,
      memberNs: 0,
      nameNs: 0,
      uniqueNs: 0,
      named: null,
      other: null,
      prefix: [],
      item: null,
    }
    memo.set(key, node)
    pending.push([node, objects])
    return node
  }

  const size = (v: unknown): number => (Array.isArray(v) ? v.length : typeof v === 'object' && v !== null ? Object.keys(v).length : 0)
  const isMap = (v: unknown): v is Record<string, Seed> => typeof v === 'object' && v !== null && !Array.isArray(v)

  /** Fills a node's own rates and creates its children's nodes. */
  const fill = (node: CallCostNode, objects: object[]): void => {
    const names = new Set<string>()
    const everyMember: Seed[] = []
    const unnamed: Seed[] = []
    const items: Seed[] = []
    const tuples: Seed[][] = []
    const nameSeeds: Seed[] = []
    for (const s of objects) {
      const o = s as Record<string, unknown>
      node.valueNs +=
        CALL_WEIGHTS.sized *
          (size(o.properties) +
            size(o.dependentRequired) +
            size(o.dependencies) +
            (o.enum !== undefined ? dataNodes(o.enum, SCHEMA_LIMITS.maxNodes) : 0) +
            (o.const !== undefined ? dataNodes(o.const, SCHEMA_LIMITS.maxNodes) : 0)) +
        CALL_WEIGHTS.required * size(o.required)
      if (typeof o.pattern === 'string') node.strNs += W.pattern + W.patternInstruction * patternProgram(o.pattern)
      if (o.minLength !== undefined) node.strNs += W.length
      if (o.maxLength !== undefined) node.strNs += W.length
      if (typeof o.format === 'string') node.strNs += W.format
      if (o.uniqueItems === true) node.uniqueNs += W.uniqueItems
      if (
        o.properties !== undefined ||
        o.patternProperties !== undefined ||
        o.additionalProperties !== undefined ||
        o.unevaluatedProperties !== undefined ||
        o.propertyNames !== undefined
      )
        node.memberNs += CALL_WEIGHTS.member
      if (o.minProperties !== undefined || o.maxProperties !== undefined) node.memberNs += W.length
      if (isMap(o.properties)) for (const n of Object.keys(o.properties)) names.add(n)
      if (isMap(o.patternProperties))
        for (const [p, sub] of Object.entries(o.patternProperties)) {
          node.nameNs += W.pattern + W.patternInstruction * patternProgram(p)
          everyMember.push(sub)
        }
      for (const k of ['additionalProperties', 'unevaluatedProperties'] as const) if (o[k] !== undefined) unnamed.push(o[k] as Seed)
      if (o.propertyNames !== undefined) nameSeeds.push(o.propertyNames as Seed)
      if (Array.isArray(o.prefixItems)) tuples.push(o.prefixItems as Seed[])
      if (Array.isArray(o.items)) tuples.push(o.items as Seed[])
      else if (o.items !== undefined) items.push(o.items as Seed)
      for (const k of ['additionalItems', 'contains', 'unevaluatedItems'] as const) if (o[k] !== undefined) items.push(o[k] as Seed)
    }
    // A member name is a string checked by propertyNames: its subschemas per member, its string keywords per character.
    const nameNode = nodeOf(nameSeeds)
    if (nameNode) {
      node.memberNs += nameNode.valueNs
      node.nameNs += nameNode.strNs
    }
    if (names.size > 0) {
      node.named = new Map()
      for (const n of names) {
        const seeds: Seed[] = [...everyMember]
        for (const s of objects) {
          const o = s as Record<string, unknown>
          const own = isMap(o.properties) && Object.prototype.hasOwnProperty.call(o.properties, n)
          if (own) seeds.push((o.properties as Record<string, Seed>)[n]!)
          else {
            if (o.additionalProperties !== undefined) seeds.push(o.additionalProperties as Seed)
            if (o.unevaluatedProperties !== undefined) seeds.push(o.unevaluatedProperties as Seed)
          }
        }
        const child = nodeOf(seeds)
        if (child) node.named.set(n, child)
      }
    }
    node.other = nodeOf([...everyMember, ...unnamed])
    node.item = nodeOf(items)
    const longest = Math.max(0, ...tuples.map((t) => t.length))
    for (let i = 0; i < longest; i++) {
      const child = nodeOf([...tuples.flatMap((t) => (i < t.length ? [t[i]!] : [])), ...items])
      if (child) node.prefix.push(child)
      else break
    }
  }

  const root = nodeOf([schema])
  while (pending.length > 0 && !tooLarge) {
    const [node, objects] = pending.pop()!
    fill(node, objects)
  }
  return tooLarge ? null : root
}

/**
 * The estimated CPU time, in ns, of validating `args` along `plan`: each value present charged at
 * the rate of the subschemas that check it. Stops once the total passes `limitNs` and returns
 * that partial total (so any answer above `limitNs` means "over").
 * @param plan the tool's plan ({@link callCostPlan})
 * @param args the parsed `arguments` object
 * @param limitNs the budget in ns; the walk ends as soon as it is passed
 */
export function estimateCallNs(plan: CallCostPlan, args: unknown, limitNs: number): number {
  let total = 0
  // Recursion depth is the arguments' nesting, which the parse bounded (MAX_JSON_DEPTH).
  const walk = (node: CallCostNode, v: unknown): void => {
    total += node.valueNs
    if (total > limitNs) return
    if (typeof v === 'string') {
      total += v.length * node.strNs
      return
    }
    if (typeof v !== 'object' || v === null) return
    if (Array.isArray(v)) {
      if (node.uniqueNs > 0) total += node.uniqueNs * textSize(v, (limitNs - total) / node.uniqueNs)
      if (node.item === null && node.prefix.length === 0) return
      for (let i = 0; i < v.length && total <= limitNs; i++) {
        const child = i < node.prefix.length ? node.prefix[i]! : node.item
        if (child) walk(child, v[i])
      }
      return
    }
    if (node.memberNs === 0 && node.nameNs === 0 && node.named === null && node.other === null) return
    const o = v as Record<string, unknown>
    for (const k in o) {
      if (total > limitNs) return
      total += node.memberNs + k.length * node.nameNs
      const child = node.named?.get(k) ?? node.other
      if (child) walk(child, o[k])
    }
  }
  walk(plan, args)
  return total
}

/** An upper bound of the JSON text length of `v` (numbers at 24 characters unless small integers), counting stops past `limit`. */
function textSize(v: unknown, limit: number): number {
  let n = 0
  const stack: unknown[] = [v]
  while (stack.length > 0 && n <= limit) {
    const x = stack.pop()
    if (typeof x === 'string') n += x.length + 2
    else if (typeof x === 'number') n += Number.isInteger(x) && Math.abs(x) < 1e6 ? 8 : 24
    else if (typeof x !== 'object' || x === null) n += 5
    else if (Array.isArray(x)) {
      n += 1 + x.length
      for (const c of x) stack.push(c)
    } else
      for (const k in x as Record<string, unknown>) {
        n += k.length + 4
        stack.push((x as Record<string, unknown>)[k])
      }
  }
  return n
}
