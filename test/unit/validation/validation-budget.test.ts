/**
 * The per-call validation budget: the estimate (schema-portability.ts `validationCost`,
 * tools-call.ts `estimateValidationMs`) is decided before validating, bounds the CPU time the
 * engines take, leaves ordinary calls far under `VALIDATION_BUDGET_MS`, and a call past it is
 * answered as invalid arguments without being validated.
 */
import { describe, expect, it } from 'vitest'
import { createAjvEngine } from '../../../src/validators/ajv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'
import { COST_WEIGHTS, validationCost } from '../../../src/core/validation/schema-portability'
import { DEFAULT_VALIDATION_BUDGET_MS, estimateValidationMs } from '../../../src/core/validation/tools-call'
import { CALL_WEIGHTS, callCostPlan, estimateCallNs } from '../../../src/core/validation/call-cost'

const ENGINES = [
  ['ajv', createAjvEngine()],
  ['cfworker', createCfworkerEngine()],
] as const
const object = (properties: Record<string, unknown>) => ({ type: 'object', properties })
/** `n` characters of `a` and `b`, seeded (the same text on every run). */
const randomAb = (n: number, seed = 12345) => {
  let s = ''
  let x = seed
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    s += x % 2 === 0 ? 'a' : 'b'
  }
  return s
}
const messageChars = (args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: args } }).length

/** Median CPU time (process.cpuUsage) of `runs` validations, in ms. */
function cpuMs(fn: () => void, runs = 5): number {
  fn()
  const a: number[] = []
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage()
    fn()
    const c = process.cpuUsage(c0)
    a.push((c.user + c.system) / 1000)
  }
  return a.sort((x, y) => x - y)[Math.floor(runs / 2)]!
}

const TYPICAL = {
  type: 'object',
  required: Array.from({ length: 20 }, (_, i) => `p${i}`),
  properties: Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [
      `p${i}`,
      i % 4 === 0
        ? { type: 'string', pattern: '^[a-z0-9_-]+$', maxLength: 200 }
        : i % 4 === 1
          ? { type: 'integer', minimum: 0 }
          : i % 4 === 2
            ? { type: 'array', items: { type: 'string' } }
            : { enum: ['a', 'b', 'c'] },
    ])
  ),
}
const TYPICAL_ARGS = Object.fromEntries(
  Array.from({ length: 100 }, (_, i) => [`p${i}`, i % 4 === 0 ? 'abc_' + 'x'.repeat(20) : i % 4 === 1 ? i : i % 4 === 2 ? ['one', 'two', 'three'] : 'b'])
)

/** The worst cases within every bound: each sized to the largest arguments the budget admits, then validated. */
const WORST: [string, unknown, (n: number) => unknown][] = [
  ['one pattern over one string', object({ s: { type: 'string', pattern: '^(a|b|c\\d)*$' } }), (n) => ({ s: 'a'.repeat(n) })],
  ['allOf of 4,096 maxLength over one string', object({ s: { allOf: Array.from({ length: 4096 }, () => ({ maxLength: 1e9 })) } }), (n) => ({ s: 'a'.repeat(n) })],
  [
    'items with allOf of 16 subschemas',
    object({ l: { type: 'array', items: { allOf: Array.from({ length: 16 }, () => ({ type: 'integer' })) } } }),
    (n) => ({ l: Array.from({ length: n / 2 }, () => 1) }),
  ],
  // Patterns whose lazy DFA gives up (each text ends in the `c` the pattern needs, so re2js's literal prefilter does not answer first): re2js's work per character grows with the compiled program (a flat weight let 10 KB hold the event loop 2-3 s).
  ['a pattern of 1,005 instructions whose DFA blows up', object({ s: { type: 'string', pattern: '[ab]*a[ab]{999}c' } }), (n) => ({ s: randomAb(n - 1) + 'c' })],
  ['a pattern near the 2,000-instruction bound', object({ s: { type: 'string', pattern: '[ab]*a[ab]{999}[ab]{980}c' } }), (n) => ({ s: randomAb(n - 1) + 'c' })],
  ['alternations repeated 280 times, anchored at the end', object({ s: { type: 'string', pattern: '(?:a|b|aa|ab|ba|bb){280}$' } }), (n) => ({ s: randomAb(n - 1) + 'c' })],
  ['optional repeats before a counted run', object({ s: { type: 'string', pattern: '(?:a?){300}a{300}' } }), (n) => ({ s: 'a'.repeat(n) })],
  [
    'patternProperties of a 1,005-instruction pattern',
    { type: 'object', patternProperties: { '[ab]*a[ab]{999}c': true } },
    (n) => Object.fromEntries(Array.from({ length: Math.max(1, Math.floor(n / 40)) }, (_, i) => [randomAb(31, i + 1) + 'c', 1])),
  ],
  ['uniqueItems over strings', object({ l: { type: 'array', items: { type: 'string' }, uniqueItems: true } }), (n) => ({ l: Array.from({ length: n / 8 }, (_, i) => `s${i}`) })],
  // Failing calls: each issue costs more than the check that finds it.
  [
    'additionalProperties: false over unnamed members (an issue each)',
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
    (n) => Object.fromEntries(Array.from({ length: Math.max(1, Math.floor(n / 12)) }, (_, i) => [`k${i}`, 1])),
  ],
  [
    'objects in items with four issues each',
    object({
      l: {
        type: 'array',
        items: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'boolean' } }, required: ['a'], additionalProperties: false },
      },
    }),
    (n) => ({ l: Array.from({ length: Math.max(1, Math.floor(n / 26)) }, () => ({ b: 'x', c: 1, d: true })) }),
  ],
  [
    'anyOf of four failing branches per item',
    object({ l: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'object' }, { type: 'array' }] } } }),
    (n) => ({ l: Array.from({ length: Math.max(1, Math.floor(n / 2)) }, () => 1) }),
  ],
]

describe('validation cost estimate', () => {
  it('is fixed work on values met once plus a per-character figure for every repeating or per-character keyword', () => {
    expect(validationCost(true)).toEqual({ fixedNs: 0, perCharNs: 0 })
    const one = validationCost(object({ s: { type: 'string', pattern: '^a*$' } }))
    const many = validationCost(object({ s: { allOf: Array.from({ length: 64 }, () => ({ maxLength: 10 })) } }))
    expect(one.perCharNs).toBeGreaterThanOrEqual(COST_WEIGHTS.pattern)
    expect(many.perCharNs).toBeGreaterThanOrEqual(64 * COST_WEIGHTS.length)
    // A named property and additionalProperties can meet the same value: both are counted.
    const both = validationCost({ type: 'object', properties: { a: { pattern: 'x' } }, additionalProperties: { pattern: 'y' } })
    expect(both.perCharNs).toBeGreaterThanOrEqual(2 * COST_WEIGHTS.pattern)
    // Two different names never meet one value: a 100-property schema costs one property's figure per character.
    const costliest = Math.max(...Object.entries(TYPICAL.properties).map(([k, v]) => validationCost(object({ [k]: v })).perCharNs))
    expect(validationCost(TYPICAL).perCharNs).toBeLessThanOrEqual(costliest)
    expect(estimateValidationMs({ fixedNs: 1e6, perCharNs: 100 }, 10_000)).toBe(2)
  })

  it('a typical 100-property schema with a few KB of arguments is far under the budget', () => {
    const chars = messageChars(TYPICAL_ARGS)
    const est = estimateValidationMs(validationCost(TYPICAL), chars)
    const walked = estimateCallNs(callCostPlan(TYPICAL)!, TYPICAL_ARGS, Infinity) / 1e6
    console.log(`[validation-budget] typical 100 properties, ${chars} characters: static estimate ${est.toFixed(2)} ms, call-time ${walked.toFixed(2)} ms`)
    expect(est).toBeLessThan(DEFAULT_VALIDATION_BUDGET_MS / 4)
    expect(walked).toBeLessThan(DEFAULT_VALIDATION_BUDGET_MS / 10)
  })

  for (const [name, schema, make] of WORST) {
    // 30 s: compiling allOf of 4,096 subschemas on both engines takes seconds on a loaded 2-core machine (the figure asserted is the validation's CPU time).
    it(`the largest call the budget admits stays within it on both engines: ${name}`, { timeout: 30_000 }, () => {
      const cost = validationCost(schema)
      // Largest size whose estimate is within the budget.
      const chars = Math.floor((DEFAULT_VALIDATION_BUDGET_MS * 1e6 - cost.fixedNs) / cost.perCharNs)
      const args = make(Math.max(16, chars - 200))
      expect(estimateValidationMs(cost, messageChars(args))).toBeLessThanOrEqual(DEFAULT_VALIDATION_BUDGET_MS)
      for (const [en, engine] of ENGINES) {
        const v = engine.compile(schema, '2020-12')
        const ms = cpuMs(() => v(args))
        console.log(
          `[validation-budget] ${name}, ${messageChars(args)} characters, ${en}: ${ms.toFixed(1)} ms CPU (estimate ${estimateValidationMs(cost, messageChars(args)).toFixed(1)} ms)`
        )
        expect(ms).toBeLessThan(DEFAULT_VALIDATION_BUDGET_MS)
      }
    })
  }
})

describe('call-time estimate (the walk of the arguments along the plan)', () => {
  const ms = (schema: unknown, args: unknown) => estimateCallNs(callCostPlan(schema)!, args, Infinity) / 1e6

  it('charges the values a call holds at the rate of the keywords that check them, not every character at the costliest path', () => {
    // A pattern on an array the call does not send sets no rate for the plain string it does send.
    const search = object({ query: { type: 'string' }, includeDomains: { type: 'array', items: { type: 'string', pattern: '^([a-z0-9-]+\\.)+[a-z]{2,}$' } } })
    const args = { query: 'q'.repeat(5_000) }
    expect(estimateValidationMs(validationCost(search), messageChars(args))).toBeGreaterThan(10)
    expect(ms(search, args)).toBeLessThan(0.1)
    // The same pattern is charged per character of each domain sent.
    const domains = { query: 'q', includeDomains: Array.from({ length: 100 }, (_, i) => `d${i}.example.com`) }
    expect(ms(search, domains)).toBeGreaterThan(100 * 15 * COST_WEIGHTS.pattern * 1e-6)
    // A string against a pattern: its length times the pattern's rate.
    const one = object({ s: { type: 'string', pattern: '^[a-z]*$' } })
    expect(ms(one, { s: 'a'.repeat(10_000) }) - ms(one, { s: '' })).toBeGreaterThanOrEqual(10_000 * COST_WEIGHTS.pattern * 1e-6)
    // Every branch of a composition and every $ref target count; a recursive schema is a cycle of the plan.
    const tree = { $defs: { n: { type: 'object', properties: { v: { type: 'string', maxLength: 5 }, kids: { type: 'array', items: { $ref: '#/$defs/n' } } } } }, $ref: '#/$defs/n' }
    const deep = (d: number): unknown => (d === 0 ? { v: 'x' } : { v: 'x', kids: [deep(d - 1), deep(d - 1)] })
    expect(ms(tree, deep(6))).toBeGreaterThan(2 * ms(tree, deep(5)) * 0.9)
    // Members no subschema reaches are not walked; with additionalProperties each is charged as a possible issue.
    const closed = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }
    const members = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, 1]))
    expect(ms(closed, members)).toBeGreaterThanOrEqual(1_000 * CALL_WEIGHTS.applied * 1e-6)
  })

  it('stops walking once past the limit', () => {
    const plan = callCostPlan(object({ l: { type: 'array', items: { type: 'integer' } } }))!
    const args = { l: Array.from({ length: 1_000_000 }, () => 1) }
    const limit = 1e6
    const got = estimateCallNs(plan, args, limit)
    expect(got).toBeGreaterThan(limit)
    expect(got).toBeLessThan(limit + 10 * CALL_WEIGHTS.applied)
  })

  // The worst cases again, each sized to the largest arguments the call-time estimate admits.
  for (const [name, schema, make] of WORST) {
    it(`the largest call the call-time estimate admits stays within the budget on both engines: ${name}`, { timeout: 30_000 }, () => {
      const plan = callCostPlan(schema)!
      const budgetNs = DEFAULT_VALIDATION_BUDGET_MS * 1e6
      // Largest n (to 4 Mi) whose arguments the walk admits.
      let lo = 16
      let hi = 4 * 1024 * 1024
      if (estimateCallNs(plan, make(lo), budgetNs) > budgetNs) hi = lo
      while (hi - lo > Math.max(8, lo / 64)) {
        const mid = Math.floor((lo + hi) / 2)
        if (estimateCallNs(plan, make(mid), budgetNs) <= budgetNs) lo = mid
        else hi = mid
      }
      const args = make(lo)
      const est = estimateCallNs(plan, args, Infinity) / 1e6
      expect(est).toBeLessThanOrEqual(DEFAULT_VALIDATION_BUDGET_MS)
      for (const [en, engine] of ENGINES) {
        const v = engine.compile(schema, '2020-12')
        const cpu = cpuMs(() => v(args))
        console.log(`[validation-budget] call-time: ${name}, ${messageChars(args)} characters, ${en}: ${cpu.toFixed(1)} ms CPU (estimate ${est.toFixed(1)} ms)`)
        expect(cpu).toBeLessThan(DEFAULT_VALIDATION_BUDGET_MS)
      }
    })
  }
})
