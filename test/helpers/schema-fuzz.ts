/**
 * The schema fuzz: random schemas built from the JSON-Schema-Test-Suite's schemas (each test
 * group's schema is a building block, nested under the applicators and keywords the suite covers)
 * x random arguments (the suite's instances, fast-check JSON values, and hostile shapes: long
 * strings ending in a mismatch, long arrays with repeats, deep nesting), through the edge's gate
 * (portabilityProblem) and both engines (ajv and @cfworker/json-schema, each compiled as the edge
 * compiles). Records the slowest single validation per engine, every verdict the two engines give
 * differently, and every fault an engine throws while validating (a crash of a call).
 * Used by test/validation/schema-fuzz.test.ts (a short seeded run) and scripts/schema-fuzz.ts (the long run).
 */
import fc from 'fast-check'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createAjvEngine } from '../../src/validators/ajv'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { portabilityProblem } from '../../src/core/validation/schema-portability'
import { SchemaUnusableError, type CompiledValidator, type ValidatorEngine } from '../../src/core/ports'
import type { Dialect } from '../../src/core/jsonrpc/versions'

const SUITE = join(import.meta.dirname, '..', 'fixtures', 'json-schema-test-suite', 'tests')

/** Building blocks: the suite's schemas and instances of one dialect. */
export interface SuiteBlocks {
  schemas: unknown[]
  instances: unknown[]
  keywords: string[]
}

/** Reads the suite's required tests of a dialect folder (`draft2020-12`, `draft7`). */
export function loadSuiteBlocks(dir: 'draft2020-12' | 'draft7'): SuiteBlocks {
  const schemas: unknown[] = []
  const instances: unknown[] = []
  const keywords = new Set<string>()
  for (const file of readdirSync(join(SUITE, dir)).filter((f) => f.endsWith('.json'))) {
    const groups = JSON.parse(readFileSync(join(SUITE, dir, file), 'utf8')) as { schema: unknown; tests: { data: unknown }[] }[]
    for (const g of groups) {
      const s = g.schema
      if (typeof s === 'object' && s !== null) {
        const copy = { ...(s as Record<string, unknown>) }
        delete copy.$schema
        schemas.push(copy)
        for (const k of Object.keys(copy)) keywords.add(k)
      } else schemas.push(s)
      for (const t of g.tests) instances.push(t.data)
    }
  }
  return { schemas, instances, keywords: [...keywords].sort() }
}

/** A random schema over the blocks, nested up to `depth` applicators. */
export function schemaArbitrary(blocks: SuiteBlocks, depth = 3): fc.Arbitrary<unknown> {
  const leaf = fc.constantFrom(...blocks.schemas)
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => {
    const sub = fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('tree'))
    return {
      tree: fc.oneof(
        { maxDepth: depth, depthIdentifier: 'schema' },
        leaf,
        fc.array(sub, { minLength: 1, maxLength: 3 }).map((allOf) => ({ allOf })),
        fc.array(sub, { minLength: 1, maxLength: 3 }).map((anyOf) => ({ anyOf })),
        fc.array(sub, { minLength: 1, maxLength: 3 }).map((oneOf) => ({ oneOf })),
        sub.map((not) => ({ not })),
        fc.tuple(sub, sub, sub).map(([i, t, e]) => ({ if: i, then: t, else: e })),
        fc.tuple(sub, sub).map(([a, b]) => ({ type: 'object', properties: { a, b }, required: ['a'] })),
        fc.tuple(sub, fc.boolean()).map(([items, uniqueItems]) => ({ type: 'array', items, uniqueItems })),
        sub.map((s) => ({ type: 'object', additionalProperties: s, patternProperties: { '^(a|a)*$': s, '^x\\d+$': true } })),
        fc.tuple(sub, fc.constantFrom('^(\\w|\\d)*$', '^[a-z]+$', '\\p{Letter}', '^(a+)+$', 'a.c', '^\\s*$')).map(([s, pattern]) => ({ allOf: [s, { pattern }] })),
        fc.tuple(leaf, leaf).map(([a, b]) => (typeof a === 'object' && typeof b === 'object' ? { ...(a as object), ...(b as object) } : a)),
        sub.map((s) => ({ $defs: { x: s }, properties: { p: { $ref: '#/$defs/x' }, q: { anyOf: [{ $ref: '#/$defs/x' }, { type: 'null' }] } } }))
      ),
    }
  })
  return tree
}

/** Random arguments: the suite's instances, JSON values, and hostile shapes. */
export function argsArbitrary(blocks: SuiteBlocks): fc.Arbitrary<unknown> {
  const hostile = fc.oneof(
    fc.integer({ min: 20, max: 5_000 }).map((n) => 'a'.repeat(n) + '!'),
    fc.integer({ min: 20, max: 5_000 }).map((n) => '1'.repeat(n) + '!'),
    fc.integer({ min: 100, max: 5_000 }).map((n) => Array.from({ length: n }, (_, i) => ({ id: i % (n - 1), t: 'x' }))),
    fc.integer({ min: 100, max: 10_000 }).map((n) => Array.from({ length: n }, (_, i) => `s${i}`)),
    fc.integer({ min: 1, max: 40 }).map((n) => JSON.parse('{"a":'.repeat(n) + '1' + '}'.repeat(n)) as unknown),
    fc.integer({ min: 10, max: 500 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => ['a'.repeat(30) + '!' + i, i])))
  )
  const value = fc.oneof(fc.constantFrom(...blocks.instances), fc.jsonValue({ maxDepth: 4 }), hostile)
  return fc.oneof(value, fc.dictionary(fc.constantFrom('a', 'b', 'p', 'q', 'foo', 'bar', 'x1'), value, { maxKeys: 4 }))
}

/** What a run found. */
export interface SchemaFuzzReport {
  cases: number
  refusedAtIngest: number
  refusedByEngine: Record<string, number>
  validations: number
  /** Slowest single validation per engine: wall-clock ms, the same validation's CPU ms, the case index and the arguments' JSON size in bytes. */
  slowest: Record<string, { ms: number; cpuMs: number; index: number; argsBytes: number }>
  /** Slowest single validation per engine by CPU time (what a busy machine does not stretch). */
  slowestCpu: Record<string, { ms: number; cpuMs: number; index: number; argsBytes: number }>
  /** Cases where the engines gave different verdicts (valid vs invalid). */
  disagreements: { index: number; schema: unknown; args: unknown; valid: Record<string, boolean> }[]
  /** Cases where an engine threw while validating (never allowed: a call would crash). */
  faults: { index: number; engine: string; error: string }[]
  /** The reasons the gate gave, counted. */
  reasons: Record<string, number>
}

/**
 * Runs the fuzz: `cases` (schema, arguments) pairs from `seed`, in both dialects' blocks
 * alternately (draft-07 and 2020-12).
 */
export function runSchemaFuzz(cases: number, seed: number, onProgress?: (done: number) => void): SchemaFuzzReport {
  const engines: [string, ValidatorEngine][] = [
    ['ajv', createAjvEngine()],
    ['cfworker', createCfworkerEngine()],
  ]
  const dialects: [Dialect, SuiteBlocks][] = [
    ['2020-12', loadSuiteBlocks('draft2020-12')],
    ['draft-07', loadSuiteBlocks('draft7')],
  ]
  const report: SchemaFuzzReport = { cases: 0, refusedAtIngest: 0, refusedByEngine: {}, validations: 0, slowest: {}, slowestCpu: {}, disagreements: [], faults: [], reasons: {} }
  const samples = dialects.map(([d, blocks]) => ({
    d,
    pairs: fc.sample(fc.tuple(schemaArbitrary(blocks), fc.array(argsArbitrary(blocks), { minLength: 1, maxLength: 4 })), {
      seed: seed + (d === 'draft-07' ? 1 : 0),
      numRuns: Math.ceil(cases / 2),
    }),
  }))
  for (let index = 0; index < cases; index++) {
    const { d, pairs } = samples[index % 2]!
    const [schema, argsList] = pairs[Math.floor(index / 2)]!
    report.cases++
    onProgress?.(index + 1)
    const problem = portabilityProblem(schema)
    if (problem !== null) {
      report.refusedAtIngest++
      const key = problem.replace(/\d+/g, 'N')
      report.reasons[key] = (report.reasons[key] ?? 0) + 1
      continue
    }
    const compiled: [string, CompiledValidator][] = []
    for (const [name, engine] of engines) {
      try {
        compiled.push([name, engine.compile(schema, d)])
      } catch (e) {
        report.refusedByEngine[name] = (report.refusedByEngine[name] ?? 0) + 1
        if (!(e instanceof SchemaUnusableError)) report.faults.push({ index, engine: name, error: `compile: ${String(e)}`.slice(0, 200) })
      }
    }
    for (const args of argsList) {
      const valid: Record<string, boolean> = {}
      for (const [name, validate] of compiled) {
        const c0 = process.cpuUsage()
        const t0 = performance.now()
        try {
          valid[name] = validate(args) === null
        } catch (e) {
          report.faults.push({ index, engine: name, error: String(e).slice(0, 200) })
          continue
        }
        const ms = performance.now() - t0
        const c = process.cpuUsage(c0)
        const cpuMs = (c.user + c.system) / 1000
        report.validations++
        const figure = () => ({ ms, cpuMs, index, argsBytes: JSON.stringify(args).length })
        if (!report.slowest[name] || ms > report.slowest[name]!.ms) report.slowest[name] = figure()
        if (!report.slowestCpu[name] || cpuMs > report.slowestCpu[name]!.cpuMs) report.slowestCpu[name] = figure()
      }
      if (compiled.length === 2 && valid.ajv !== undefined && valid.cfworker !== undefined && valid.ajv !== valid.cfworker)
        report.disagreements.push({ index, schema, args, valid })
    }
  }
  return report
}
