/**
 * Differential property test: for a corpus of real tool schemas (the demo origin's, the official
 * server-everything's input and output schemas, and schemas written in the shapes MCP servers
 * publish: pydantic, zod-to-json-schema, hand-written 2020-12 and draft-07), and inputs generated
 * from each schema by fast-check (valid-looking and broken), the Node engine (ajv) and the Workers
 * engine (@cfworker/json-schema) return the same valid/invalid verdict, through the same path the
 * edge uses (ToolRegistry.resolve: portability gate, normal form, compile). Schemas the edge
 * refuses must be refused on both. The corpus and the generator are in test/helpers/tool-schema-corpus.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { dialectOf, type ProtocolVersion } from '../../src/core/jsonrpc/versions'
import { ToolRegistry, type ResolvedTool, type ToolRecord } from '../../src/core/validation/tool-registry'
import { fnv1a } from '../../src/core/validation/tool-store'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createAjvEngine } from '../../src/validators/ajv'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { invalidArgumentsMessage } from '../../src/core/validation/error-message'
import { arb, toolSchemaCorpus, type CorpusEntry, type Schema } from '../helpers/tool-schema-corpus'

// ---------------------------------------------------------------- the test

describe('ajv and cfworker agree on every verdict for real tool schemas', () => {
  const corpus: CorpusEntry[] = []
  const stats = { schemas: 0, compiledPairs: 0, refusedPairs: 0, inputs: 0, valid: 0, invalid: 0, sameMessage: 0 }
  const registries = {
    ajv: new ToolRegistry({ kv: new MemoryKv(), engine: createAjvEngine(), schemaTtlS: 300, validatorCacheSize: 1000, refreshMinIntervalMs: 0 }),
    cfworker: new ToolRegistry({ kv: new MemoryKv(), engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 1000, refreshMinIntervalMs: 0 }),
  }

  beforeAll(async () => {
    corpus.push(...(await toolSchemaCorpus()))
  })

  afterAll(() => {
    console.log(
      `\ndifferential: ${stats.schemas} schemas (${corpus.filter((c) => c.source === 'demo origin').length} demo, ${corpus.filter((c) => c.source.startsWith('server-everything')).length} server-everything, ${corpus.filter((c) => c.source === 'written').length} written), ` +
        `${stats.compiledPairs} (schema, era) pairs compiled on both, ${stats.refusedPairs} refused on both; ${stats.inputs} inputs: ${stats.valid} valid / ${stats.invalid} invalid on both engines; ` +
        `identical error text for ${stats.sameMessage} of ${stats.invalid} invalid inputs`
    )
  })

  it('has a corpus of at least 30 real tool schemas', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30)
    expect(corpus.filter((c) => c.source.startsWith('server-everything')).length).toBeGreaterThanOrEqual(10)
  })

  it('gives the same verdict on both engines for every generated input (both eras of the default dialect)', () => {
    const disagreements: string[] = []
    for (const entry of corpus) {
      stats.schemas++
      for (const era of ['2025-06-18', '2025-11-25'] as ProtocolVersion[]) {
        const record: ToolRecord = { name: entry.name, inputSchema: entry.schema, dialect: dialectOf(entry.schema, era), hash: fnv1a(JSON.stringify(entry.schema)), fetchedAt: 0 }
        const a: ResolvedTool = registries.ajv.resolve(record)
        const c: ResolvedTool = registries.cfworker.resolve(record)
        expect(Boolean(a.validate), `${entry.name} (${era}) usable on ajv vs cfworker: ${a.unusable} / ${c.unusable}`).toBe(Boolean(c.validate))
        if (!a.validate || !c.validate) {
          stats.refusedPairs++
          continue
        }
        stats.compiledPairs++
        fc.assert(
          fc.property(arb(entry.schema, entry.schema as Schema, 0), (value) => {
            const va = a.validate!(value)
            const vc = c.validate!(value)
            stats.inputs++
            if ((va === null) !== (vc === null)) {
              disagreements.push(`${entry.source} ${entry.name} (${era}): ${JSON.stringify(value)} ajv=${va === null} cfworker=${vc === null}`)
              return false
            }
            if (va === null) stats.valid++
            else {
              stats.invalid++
              if (invalidArgumentsMessage(entry.name, va, a.messageSchema).text === invalidArgumentsMessage(entry.name, vc!, c.messageSchema).text) stats.sameMessage++
            }
            return true
          }),
          { numRuns: Number(process.env.DIFF_RUNS ?? 150), seed: Number(process.env.DIFF_SEED ?? 4242) }
        )
      }
    }
    expect(disagreements).toEqual([])
    // The generator must exercise both outcomes, or the agreement means nothing.
    expect(stats.valid).toBeGreaterThan(stats.inputs * 0.15)
    expect(stats.invalid).toBeGreaterThan(stats.inputs * 0.15)
    expect(stats.refusedPairs).toBeGreaterThanOrEqual(6)
    // Messages too: the same issues in the same order on both engines for almost every input.
    expect(stats.sameMessage).toBeGreaterThan(stats.invalid * 0.97)
  })
})

describe('member names every object inherits are read as own members on both engines', () => {
  // ajv compiles such a schema with ownProperties and every other one without (validators/ajv.ts
  // namesInherited): a missed name here would let a call without `constructor` pass `required`,
  // or check Object.prototype.toString as the `toString` argument.
  const schemas: Record<string, unknown> = {
    required: { type: 'object', properties: { constructor: { type: 'string' } }, required: ['constructor'] },
    checked: { type: 'object', properties: { toString: { type: 'string' }, valueOf: { type: 'integer' } } },
    nested: { type: 'object', properties: { a: { type: 'object', required: ['hasOwnProperty'] } }, required: ['a'] },
    dependent: { type: 'object', dependentRequired: { x: ['__proto__'] } },
  }
  const cases: [string, unknown, boolean][] = [
    ['required', {}, false],
    ['required', { constructor: 'c' }, true],
    ['checked', {}, true],
    ['checked', { toString: 's' }, true],
    ['checked', { toString: 1 }, false],
    ['nested', { a: {} }, false],
    ['nested', { a: { hasOwnProperty: 1 } }, true],
    ['dependent', JSON.parse('{"x":1}'), false],
    ['dependent', JSON.parse('{"x":1,"__proto__":2}'), true],
  ]
  for (const [engine, make] of [
    ['ajv', createAjvEngine],
    ['cfworker', createCfworkerEngine],
  ] as const) {
    it.each(cases)(`${engine}: %s %j valid=%s`, (name, value, valid) => {
      const validate = make().compile(schemas[name], '2020-12')
      expect(validate(value) === null).toBe(valid)
    })
  }
})
