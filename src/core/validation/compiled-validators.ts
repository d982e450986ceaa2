/**
 * @module core/validation/compiled-validators
 * Compiled validators per isolate: a tool record's input and output schemas compiled by the
 * engine, at most once per (dialect, schema text) while the LRU holds them (`VALIDATOR_CACHE_SIZE`;
 * docs/design.md §7). Before compiling, {@link portabilityProblem} refuses features the two engines
 * would judge differently. Never throws: an unusable schema becomes a safe reason.
 */
import { dialectOf, type Dialect } from '../jsonrpc/versions'
import { SchemaUnusableError, type CompiledValidator, type LogRecord, type ValidatorEngine } from '../ports'
import { portabilityProblem, validationCost, type ValidationCost } from './schema-portability'
import { normaliseSchema } from './schema-normal-form'
import { callCostPlan, type CallCostPlan } from './call-cost'
import type { ResolvedTool, ToolRecord } from './tool-record'
import { boundText } from '../jsonrpc/bound-text'

/** Compiles records into {@link ResolvedTool}s through a bounded LRU of compiled validators. */
export class CompiledValidators {
  private readonly compiled = new Map<string, CompiledValidator | SchemaUnusableError>()

  /**
   * @param max the LRU's bound (`VALIDATOR_CACHE_SIZE`)
   * @param stats the registry's counters: `compiles` counts every compile that ran, `schemaErrors` the schemas that proved unusable
   * @param onEvent receives `registry.schema_unusable` and `registry.compile_failed` (docs/observability.md), once per distinct schema while the LRU holds it
   */
  constructor(
    private readonly engine: ValidatorEngine,
    private readonly max: number,
    private readonly stats: { compiles: number; schemaErrors?: number },
    private readonly onEvent?: (record: LogRecord) => void
  ) {}

  /** Sends one event, never throwing. */
  private event(record: LogRecord): void {
    try {
      this.onEvent?.(record)
    } catch {
      // a failing log sink must not fail a lookup
    }
  }

  /** Number of compiled validators held (bounded by `max`). */
  get size(): number {
    return this.compiled.size
  }

  /** Compiles (or takes from the LRU) the validators of a record. Never throws. */
  resolve(record: ToolRecord): ResolvedTool {
    const out: ResolvedTool = { record, validate: null }
    if (!record.dialect) {
      out.unusable = 'its inputSchema declares a JSON Schema dialect the edge does not support'
      this.event({ level: 'warn', msg: 'registry.schema_unusable', tool: boundText(record.name), schema: 'inputSchema', reason: out.unusable })
      return out
    }
    const v = this.compile(record.inputSchema, record.dialect, 'inputSchema', record.name)
    if (v instanceof SchemaUnusableError) out.unusable = v.reason
    else {
      out.validate = v
      out.messageSchema = normaliseSchema(record.inputSchema, record.dialect)
      out.cost = this.costOf(record.inputSchema)
      out.costPlan = this.planOf(record.inputSchema)
    }
    if (record.outputSchema !== undefined) {
      const od = record.outputDialect !== undefined ? record.outputDialect : dialectOf(record.outputSchema, '2025-11-25')
      const o = od
        ? this.compile(record.outputSchema, od, 'outputSchema', record.name)
        : new SchemaUnusableError('its outputSchema declares a JSON Schema dialect the edge does not support')
      out.outputValidate = o instanceof SchemaUnusableError ? null : o
      if (o instanceof SchemaUnusableError) out.outputUnusable = o.reason
      else if (od) out.outputMessageSchema = normaliseSchema(record.outputSchema, od)
    }
    return out
  }

  /** {@link validationCost} per schema object (one walk of the schema, as its compile). */
  private readonly costs = new WeakMap<object, ValidationCost>()

  private costOf(schema: unknown): ValidationCost {
    if (typeof schema !== 'object' || schema === null) return validationCost(schema)
    let c = this.costs.get(schema)
    if (!c) this.costs.set(schema, (c = validationCost(schema)))
    return c
  }

  /** {@link callCostPlan} per schema object (built once, shared by every tool holding the schema). */
  private readonly plans = new WeakMap<object, CallCostPlan | null>()

  private planOf(schema: unknown): CallCostPlan | null {
    if (typeof schema !== 'object' || schema === null) return null
    let p = this.plans.get(schema)
    if (p === undefined) this.plans.set(schema, (p = callCostPlan(schema)))
    return p
  }

  private compile(schema: unknown, dialect: Dialect, what = 'inputSchema', tool = ''): CompiledValidator | SchemaUnusableError {
    const cacheKey = what + '\n' + dialect + '\n' + JSON.stringify(schema)
    const hit = this.compiled.get(cacheKey)
    if (hit) {
      // LRU: move to the back.
      this.compiled.delete(cacheKey)
      this.compiled.set(cacheKey, hit)
      return hit
    }
    let result: CompiledValidator | SchemaUnusableError
    try {
      this.stats.compiles++
      const problem = portabilityProblem(schema, what)
      if (problem !== null) throw new SchemaUnusableError(problem)
      result = this.engine.compile(schema, dialect)
    } catch (e) {
      // Engines phrase reasons for the input schema; the output schema gets its own name.
      result =
        e instanceof SchemaUnusableError
          ? what === 'inputSchema'
            ? e
            : new SchemaUnusableError(e.reason.replace('inputSchema', what))
          : new SchemaUnusableError(`its ${what} could not be compiled`)
      this.stats.schemaErrors = (this.stats.schemaErrors ?? 0) + 1
      // Once per distinct schema while the LRU holds it: the result is cached below.
      this.event({
        level: 'warn',
        msg: e instanceof SchemaUnusableError ? 'registry.schema_unusable' : 'registry.compile_failed',
        tool: boundText(tool),
        schema: what,
        reason: result.reason,
      })
    }
    this.compiled.set(cacheKey, result)
    while (this.compiled.size > this.max) {
      const oldest = this.compiled.keys().next().value as string
      this.compiled.delete(oldest)
    }
    return result
  }
}
