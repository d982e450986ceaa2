/**
 * The Node entry's tiered engine (src/validators/tiered.ts) with the real engines: a schema's
 * first calls are validated by @cfworker/json-schema without waiting for ajv's code generation;
 * ajv is compiled after them (deferred, never inside a call) and serves every later call with
 * the same verdicts and the same rejection message; a schema ajv cannot use stays with cfworker; a fault of the
 * second engine inside the deferred task never escapes it.
 */
import { describe, expect, it } from 'vitest'
import type { Dialect } from '../src/core/era'
import type { CompiledValidator, ValidatorEngine } from '../src/core/ports'
import { createAjvEngine } from '../src/validators/ajv'
import { createCfworkerEngine } from '../src/validators/cfworker'
import { createTieredEngine } from '../src/validators/tiered'
import { invalidArgumentsMessage } from '../src/core/messages'
import { TOOLS } from '../scripts/bench/schemas'

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
})
