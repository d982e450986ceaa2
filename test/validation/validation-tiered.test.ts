/**
 * The Node entry's tiered engine (src/validators/tiered.ts) with the real engines: a schema's
 * first calls are validated by @cfworker/json-schema without waiting for ajv's code generation;
 * ajv is compiled after them (deferred, never inside a call) and serves every later call with
 * the same verdicts and the same rejection message; a schema ajv cannot use stays with cfworker; a fault of the
 * second engine inside the deferred task never escapes it.
 */
import { describe, expect, it } from 'vitest'
import type { Dialect } from '../../src/core/jsonrpc/versions'
import type { CompiledValidator, ValidatorEngine } from '../../src/core/ports'
import { createAjvEngine } from '../../src/validators/ajv'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { createTieredEngine } from '../../src/validators/tiered'
import { invalidArgumentsMessage } from '../../src/core/validation/error-message'
import { TOOLS } from '../../scripts/bench/schemas'

/** Wraps an engine to record which one validated each call and how many compiles it ran. */
function counted(engine: ValidatorEngine, log: string[]): ValidatorEngine & { compiles: number } {
  const out = {
    name: engine.name,
    compiles: 0,
    compile(schema: unknown, dialect: Dialect): CompiledValidator {
      out.compiles++
      const v = engine.compile(schema, dialect)
      return (value) => {
        log.push(engine.name)
        return v(value)
      }
    },
  }
  return out
}

describe('tiered engine (cfworker first, then ajv)', () => {
  it('serves the first call with cfworker, compiles ajv after it, then ajv serves with the same verdicts', () => {
    const log: string[] = []
    const first = counted(createCfworkerEngine(), log)
    const second = counted(createAjvEngine(), log)
    const deferred: (() => void)[] = []
    const engine = createTieredEngine(first, second, { defer: (t) => void deferred.push(t), promoteAfter: 2 })
    const tool = TOOLS[2]!
    const v = engine.compile(tool.inputSchema, '2020-12')
    expect(second.compiles).toBe(0)
    const firstInvalid = v(tool.invalid)
    expect(v(tool.valid)).toBeNull()
    expect(log).toEqual(['cfworker', 'cfworker'])
    // Promotion was scheduled by the second call, and ran nowhere inside a call.
    expect(deferred).toHaveLength(1)
    expect(second.compiles).toBe(0)
    deferred.shift()!()
    expect(second.compiles).toBe(1)
    expect(v(tool.valid)).toBeNull()
    // Same issues, as the caller reads them (engines may name a $ref'd keyword's location differently).
    const said = (issues: ReturnType<CompiledValidator>) => invalidArgumentsMessage(tool.name, issues!, tool.inputSchema)
    expect(said(v(tool.invalid))).toEqual(said(firstInvalid))
    expect(firstInvalid).not.toBeNull()
    expect(log.slice(2)).toEqual(['ajv', 'ajv'])
    // Scheduled once only.
    expect(deferred).toHaveLength(0)
  })

  it('keeps the first engine when the second cannot use the schema, and a fault of the second never escapes', () => {
    const log: string[] = []
    const refusing: ValidatorEngine = {
      name: 'broken',
      compile() {
        throw new TypeError('library internals')
      },
    }
    const deferred: (() => void)[] = []
    const engine = createTieredEngine(counted(createCfworkerEngine(), log), refusing, { defer: (t) => void deferred.push(t), promoteAfter: 1 })
    const v = engine.compile({ type: 'object', required: ['a'] }, '2020-12')
    expect(v({})).not.toBeNull()
    expect(() => deferred.shift()!()).not.toThrow()
    expect(v({ a: 1 })).toBeNull()
    expect(v({})).not.toBeNull()
    expect(log).toEqual(['cfworker', 'cfworker', 'cfworker'])
  })

  it('refuses a schema exactly when the first engine does', () => {
    const engine = createTieredEngine(createCfworkerEngine(), createAjvEngine(), { defer: () => undefined })
    expect(() => engine.compile({ $ref: 'https://example.com/remote.json' }, '2020-12')).toThrow(/remote|\$ref/)
  })

  // Member names with quotes or slashes, propertyNames (the failing name is the caller's value,
  // never echoed), and the other keywords: the same message from both tiers.
  const CASES: [string, Record<string, unknown>, unknown][] = [
    ['additionalProperties, a name with a quote', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, { 'x"y': 1 }],
    ['additionalProperties, a name with a slash and a quote', { type: 'object', properties: { a: {} }, additionalProperties: false }, { 'x/"y': 1 }],
    ['additionalProperties, two names', { type: 'object', properties: { a: {} }, additionalProperties: false }, { b: 1, c: 2 }],
    ['unevaluatedProperties', { type: 'object', properties: { a: {} }, unevaluatedProperties: false }, { a: 1, 'z"': 2 }],
    ['required, a name with a quote', { type: 'object', required: ['a"b'] }, {}],
    ['propertyNames', { type: 'object', propertyNames: { maxLength: 2 } }, { secret_key_value: 1 }],
    ['nested propertyNames', { type: 'object', properties: { p: { type: 'object', propertyNames: { pattern: '^[a-z]+$' } } } }, { p: { 'S3cret!': 1 } }],
    ['dependentRequired', { type: 'object', dependentRequired: { a: ['b'] } }, { a: 1 }],
    ['$ref into $defs', { type: 'object', $defs: { n: { type: 'integer', minimum: 3 } }, properties: { p: { $ref: '#/$defs/n' } } }, { p: 1 }],
    ['anyOf', { type: 'object', properties: { p: { anyOf: [{ type: 'integer' }, { type: 'string', minLength: 3 }] } } }, { p: 'x' }],
    ['closed tuple', { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'integer' }], items: false } } }, { p: [1, 2] }],
    ['many issues', { type: 'object', properties: { a: { type: 'string' }, c: { type: 'integer' } }, required: ['d'] }, { a: 1, c: 'x' }],
  ]
  it.each(CASES)('%s: the same message from cfworker and ajv, no rejected name echoed', (_label, schema, value) => {
    const said = (engine: ValidatorEngine) => {
      const issues = engine.compile(schema, '2020-12')(value)
      expect(issues).not.toBeNull()
      return invalidArgumentsMessage('t', issues!, schema).text
    }
    const text = said(createCfworkerEngine())
    expect(text).toBe(said(createAjvEngine()))
    expect(text).not.toMatch(/secret_key_value|S3cret/)
  })
})
