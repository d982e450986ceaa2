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
    const est = estimateValidationMs(validationCost(TYPICAL), messageChars(TYPICAL_ARGS))
    console.log(`[validation-budget] typical 100 properties, ${messageChars(TYPICAL_ARGS)} characters: estimate ${est.toFixed(2)} ms`)
    expect(est).toBeLessThan(DEFAULT_VALIDATION_BUDGET_MS / 10)
  })

  // The worst cases within every bound: each sized to the largest arguments the budget admits, then validated.
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
  ]
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
