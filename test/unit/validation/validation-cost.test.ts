/**
 * Per-call validation time of the probe's cases, in process, on both engines: each case's
 * validation alone, 15 repetitions, and the median must stay under 50 ms (the bound "no client
 * waits more than 50 ms behind any single call"). The figure asserted is the thread's CPU time
 * (process.cpuUsage), the median of many runs: other processes on a busy machine stretch the
 * wall clock, not the work done, so the test does not flake; the wall-clock median is printed
 * too. The unbounded engines took 700 ms to 14.5 s for these inputs.
 * The end-to-end reproducers (both runtimes, a concurrent client) are in test/validation/validation-cost.test.ts.
 *
 * Also the unit rules of the bounded parts: the ECMAScript -> RE2 translation, JSON Schema
 * equality for uniqueItems, and the cost model's refusals with their reasons.
 */
import { describe, expect, it } from 'vitest'
import { createAjvEngine } from '../../../src/validators/ajv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'
import { RE2JS } from 're2js'
import fc from 'fast-check'
import { compilePattern, isLinearForBacktracking, patternProblem, toRe2Syntax } from '../../../src/core/patterns/linear-pattern'
import { canonicalKey, firstDuplicate } from '../../../src/core/patterns/unique-items'
import { portabilityProblem, SCHEMA_LIMITS } from '../../../src/core/validation/schema-portability'
import type { ValidatorEngine } from '../../../src/core/ports'

const ENGINES: [string, ValidatorEngine][] = [
  ['ajv', createAjvEngine()],
  ['cfworker', createCfworkerEngine()],
]
const object = (properties: Record<string, unknown>) => ({ type: 'object', properties })

/** The medians of `runs` timings of `fn`, in ms: CPU time of this process and wall-clock time. */
function medianMs(fn: () => void, runs = 15): { cpu: number; wall: number } {
  fn() // warm (and any lazy compile) outside the figure
  const cpu: number[] = []
  const wall: number[] = []
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    fn()
    wall.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / 1000)
  }
  const median = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(runs / 2)]!
  return { cpu: median(cpu), wall: median(wall) }
}

/** The probe's cases that stay usable: schema, the attack's arguments, and the verdict. */
const CASES: { name: string; schema: unknown; args: unknown; valid: boolean }[] = [
  { name: 'pattern ^(\\w|\\d)*$, 25 digits + "!"', schema: object({ s: { type: 'string', pattern: '^(\\w|\\d)*$' } }), args: { s: '1'.repeat(25) + '!' }, valid: false },
  { name: 'pattern ^(a|a)*$, 28 "a" + "!"', schema: object({ s: { type: 'string', pattern: '^(a|a)*$' } }), args: { s: 'a'.repeat(28) + '!' }, valid: false },
  {
    name: 'patternProperties ^(a|a)*$, 200 member names of 28 "a" + "!"',
    schema: { type: 'object', patternProperties: { '^(a|a)*$': { type: 'integer' } } },
    args: Object.fromEntries(Array.from({ length: 200 }, (_, i) => ['a'.repeat(28) + '!' + i, 'x'])),
    valid: true,
  },
  {
    name: 'uniqueItems, 10,000 objects',
    schema: object({ l: { type: 'array', uniqueItems: true } }),
    args: { l: Array.from({ length: 10_000 }, (_, i) => ({ id: i, tag: 't' })) },
    valid: true,
  },
  {
    name: 'uniqueItems, 20,000 strings',
    schema: object({ l: { type: 'array', items: { type: 'string' }, uniqueItems: true } }),
    args: { l: Array.from({ length: 20_000 }, (_, i) => `s${i}`) },
    valid: true,
  },
  {
    name: `required at the bound (${SCHEMA_LIMITS.maxRequired} names), none given`,
    schema: { type: 'object', required: Array.from({ length: SCHEMA_LIMITS.maxRequired }, (_, i) => `p${i}`) },
    args: {},
    valid: false,
  },
  {
    name: `enum at the bound (${SCHEMA_LIMITS.maxEnum} values), a wrong value`,
    schema: object({ v: { enum: Array.from({ length: SCHEMA_LIMITS.maxEnum }, (_, i) => `v${i}`) } }),
    args: { v: 'nope' },
    valid: false,
  },
  { name: `anyOf of two $refs nested 10 levels (at the bound: ${SCHEMA_LIMITS.maxInPlace} subschemas on one value)`, schema: refFanOut(10), args: { v: 'x' }, valid: false },
]

function refFanOut(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {}
  for (let i = 0; i < levels; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }
  defs[`d${levels}`] = { type: 'string', minLength: 1000 }
  return { type: 'object', properties: { v: { $ref: '#/$defs/d0' } }, $defs: defs }
}

describe('per-call validation time of the probe cases (median of 15, in process)', () => {
  for (const c of CASES) {
    it.each(ENGINES)(`${c.name}: under 50 ms on %s`, (_, engine) => {
      expect(portabilityProblem(c.schema)).toBeNull()
      const validate = engine.compile(c.schema, '2020-12')
      expect(validate(c.args) === null).toBe(c.valid)
      const ms = medianMs(() => validate(c.args))
      console.log(`[validation-cost] ${engine.name}: ${c.name}: ${ms.cpu.toFixed(2)} ms CPU, ${ms.wall.toFixed(2)} ms wall (medians of 15)`)
      expect(ms.cpu).toBeLessThan(50)
    })
  }
})

describe('linear-time patterns (ECMAScript u semantics on RE2)', () => {
  it('gives ECMAScript verdicts where the two syntaxes differ', () => {
    const agree: [string, string[]][] = [
      ['a.b', ['a\nb', 'a\rb', 'a\u2028b', 'axb', 'a😀b']],
      ['^\\s+$', ['\u00a0', '\ufeff', ' \t\v', 'x']],
      ['^\\S$', [' ', '\u00a0', 'x']],
      ['^\\uD83D\\uDE00$', ['😀', '\ud83d']],
      ['\\u{1F600}|\\u00e9', ['😀', 'é', 'e']],
      ['^\\cJ$', ['\n']],
      ['^[^]$', ['\n']],
      ['(?<year>\\d{4})-', ['2024-', '24-']],
      ['^\\p{Letter}+$', ['Héllo', 'a1']],
      ['^\\p{Script=Greek}$', ['α', 'a']],
      ['^[\\b]$', ['\b', 'b']],
      ['^\\0$', ['\0', '0']],
      ['\\bfoo\\b', ['a foo b', 'afoob']],
    ]
    for (const [p, inputs] of agree) {
      expect(patternProblem(p), p).toBeNull()
      for (const s of inputs) expect(compilePattern(p).test(s), `${p} on ${JSON.stringify(s)}`).toBe(new RegExp(p, 'u').test(s))
    }
  })
  it('names what it cannot run in linear time, and what is not a regular expression', () => {
    expect(patternProblem('(a)\\1')).toMatch(/backreference/)
    expect(patternProblem('(?<n>a)\\k<n>')).toMatch(/backreference/)
    for (const p of ['(?=a)', '(?!a)', '(?<=a)b', '(?<!a)b']) expect(patternProblem(p)).toMatch(/lookahead or lookbehind/)
    expect(patternProblem('a{1001}')).toMatch(/repetition count above 1000/)
    expect(patternProblem('(?i)a')).toMatch(/not a valid regular expression/)
    expect(patternProblem('x'.repeat(8_193))).toMatch(/longer than 8192/)
  })
  it('matches 1,000,000 characters against ^(a|a)*$ (ECMAScript: exponential) in linear time', () => {
    const re = compilePattern('^(a|a)*$')
    expect(re.test('a'.repeat(1_000_000))).toBe(true)
    expect(re.test('a'.repeat(1_000_000) + '!')).toBe(false)
  })
})

describe('patterns the backtracking engine runs in linear time (matched by RegExp, not re2js)', () => {
  it('takes anchored sequences of single-character atoms where nothing a repetition gives back can start what follows', () => {
    for (const p of [
      '^[A-Za-z ]+$',
      '^[A-Z]{3}-[0-9]{4}$',
      '^[0-9]{5}$',
      '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
      '^\\d{4}-\\d{2}-\\d{2}$',
      '^[\\w-]+\\.[a-z]{2,}$',
      '^[a-z]+[0-9]*$',
      '^\\$\\d+$',
    ])
      expect(isLinearForBacktracking(p), p).toBe(true)
    // Unanchored, overlapping repetitions (^\d*\d*x is cubic on a backtracking engine), groups,
    // alternation, `.`, `\s`, negated classes, lazy quantifiers: re2js.
    for (const p of [
      '[a-z]+',
      '^\\d*\\d*x',
      '^[a-z]+[0-9]*[a-z]$',
      '^[a-z]{1,3}[a-z]$',
      '^a{2,}b?a$',
      '^(a|b)$',
      '^(a+)+$',
      '^a.b$',
      '^\\s+$',
      '^[^@]+$',
      '^[a-z]*?$',
      '^[\\uD83D]$',
      '^😀+$',
    ])
      expect(isLinearForBacktracking(p), p).toBe(false)
  })

  it('gives the verdict re2js gives, on generated patterns and inputs', () => {
    const atom = fc.constantFrom('a', 'b', '-', '\\d', '\\w', '\\.', '[ab]', '[a-c]', '[0-9x]', '[\\w-]', 'é', ' ', '\\$')
    const quant = fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '{2,}', '{0,2}')
    const pattern = fc
      .tuple(fc.array(fc.tuple(atom, quant), { minLength: 1, maxLength: 6 }), fc.boolean())
      .map(([parts, end]) => `^${parts.map(([a, q]) => a + q).join('')}${end ? '$' : ''}`)
    const input = fc.array(fc.constantFrom('a', 'b', 'c', '-', '.', '0', '7', '_', 'é', ' ', '$', '\n', '😀', '\ud800', 'x'), { maxLength: 12 }).map((cs) => cs.join(''))
    let linear = 0
    fc.assert(
      fc.property(pattern, fc.array(input, { minLength: 1, maxLength: 8 }), (p, inputs) => {
        if (!isLinearForBacktracking(p)) return
        linear++
        const re2 = RE2JS.compile(toRe2Syntax(p))
        for (const s of inputs) expect(compilePattern(p).test(s), `${p} on ${JSON.stringify(s)}`).toBe(re2.test(s))
      }),
      { numRuns: 3000, seed: 25 }
    )
    expect(linear).toBeGreaterThan(500)
  })

  it('stays linear on what would make a backtracking engine give back the most', () => {
    // Each taken pattern against 200,000 characters it almost matches: a quadratic matcher would take minutes.
    for (const [p, s] of [
      ['^[A-Za-z ]+$', 'a'.repeat(200_000) + '!'],
      ['^[a-z]+[0-9]*$', 'a'.repeat(200_000) + '!'],
      ['^[\\w-]+\\.[a-z]{2,}$', 'a-'.repeat(100_000) + '.a!'],
    ] as const) {
      expect(isLinearForBacktracking(p)).toBe(true)
      expect(compilePattern(p).test(s)).toBe(false)
    }
  })
})

describe('uniqueItems equality (JSON Schema: numbers by value, members in any order)', () => {
  it('keys equal values alike and different values apart', () => {
    expect(canonicalKey({ a: 1, b: [1, { c: null }] })).toBe(canonicalKey(JSON.parse('{"b":[1.0,{"c":null}],"a":1}')))
    expect(canonicalKey(-0)).toBe(canonicalKey(0))
    expect(canonicalKey('1')).not.toBe(canonicalKey(1))
    expect(canonicalKey([1, 2])).not.toBe(canonicalKey([2, 1]))
    expect(canonicalKey({ a: '1' })).not.toBe(canonicalKey({ a: 1 }))
    expect(canonicalKey(JSON.parse('"\\ud800"'))).not.toBe(canonicalKey(JSON.parse('"\\ud801"')))
  })
  it('finds the first repeat, across strings and other values', () => {
    expect(firstDuplicate([1, '1', true, 'true', null, 'null', [], {}])).toBeNull()
    expect(firstDuplicate(['a', { x: 1 }, 'b', JSON.parse('{"x":1.0}')])).toEqual([1, 3])
    expect(firstDuplicate(JSON.parse('[1, 2, 1.0]'))).toEqual([0, 2])
  })
  it('short arrays of primitives (compared pairwise) and longer or mixed ones (keyed) give one answer', () => {
    const keyed = (items: unknown[]): [number, number] | null => {
      const seen = new Map<string, number>()
      for (let i = 0; i < items.length; i++) {
        const k = canonicalKey(items[i])
        if (seen.has(k)) return [seen.get(k)!, i]
        seen.set(k, i)
      }
      return null
    }
    const item = fc.oneof(
      fc.constantFrom('a', 'b', '1', '', 'true', 'null', JSON.parse('"\\ud800"') as string),
      fc.constantFrom(0, -0, 1, 2.5),
      fc.boolean(),
      fc.constant(null),
      fc.constantFrom([], {}, [1], { a: 1 })
    )
    fc.assert(
      fc.property(fc.array(item, { maxLength: 24 }), (items) => {
        expect(firstDuplicate(items)).toEqual(keyed(items))
      }),
      { numRuns: 3000, seed: 25 }
    )
  })
})

describe('the cost model refuses at ingest, with the reason', () => {
  it('sizes of enum, required and the enum/const values', () => {
    expect(portabilityProblem({ enum: Array.from({ length: SCHEMA_LIMITS.maxEnum + 1 }, (_, i) => i) })).toMatch(/enum of more than 4096 values/)
    expect(portabilityProblem({ required: Array.from({ length: SCHEMA_LIMITS.maxRequired + 1 }, (_, i) => `p${i}`) })).toMatch(/requires more than 1024/)
    expect(portabilityProblem({ const: Array.from({ length: SCHEMA_LIMITS.maxNodes }, () => [1]) })).toMatch(/counting enum and const values/)
    expect(
      portabilityProblem({ enum: Array.from({ length: SCHEMA_LIMITS.maxEnum }, (_, i) => i), required: Array.from({ length: SCHEMA_LIMITS.maxRequired }, (_, i) => `p${i}`) })
    ).toBeNull()
  })
  it('$ref loops that never reach an item or a member, and recursion applied twice to one value', () => {
    expect(portabilityProblem({ $ref: '#' })).toMatch(/\$ref loop/)
    expect(portabilityProblem({ $defs: { a: { $ref: '#/$defs/b' }, b: { anyOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' })).toMatch(/\$ref loop/)
    expect(portabilityProblem({ definitions: { a: { not: { $ref: '#/definitions/a' } } }, properties: { x: { $ref: '#/definitions/a' } } })).toMatch(/\$ref loop/)
    expect(portabilityProblem({ anyOf: [{ properties: { c: { $ref: '#' } } }, { properties: { c: { $ref: '#' } } }] })).toMatch(/applied more than once to the same value/)
  })
  it('accepts recursion through an item or a member once per level (trees, JSON values)', () => {
    expect(portabilityProblem({ type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } } })).toBeNull()
    const json = {
      $defs: { v: { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/$defs/v' } }, { type: 'object', additionalProperties: { $ref: '#/$defs/v' } }] } },
      $ref: '#/$defs/v',
    }
    expect(portabilityProblem(json)).toBeNull()
    expect(portabilityProblem({ properties: { left: { $ref: '#' }, right: { $ref: '#' } } })).toBeNull()
  })
  it('refuses a $ref fan-out past the bounds (20 levels of anyOf over two $refs: 60 nodes, 2^20 expansions)', () => {
    expect(portabilityProblem(refFanOut(10))).toBeNull()
    expect(portabilityProblem(refFanOut(11))).toMatch(/applies more than 4096 subschemas to one value/)
    expect(portabilityProblem(refFanOut(20))).toMatch(/applies more than 4096 subschemas to one value/)
    // Spread over many values instead of one: the total bound.
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { $ref: '#/$defs/d0' }])), $defs: refFanOut(9).$defs }
    expect(portabilityProblem(wide)).toMatch(/expands, with its \$refs followed, to more than 50000 subschemas/)
  })
})
