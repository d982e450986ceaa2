/**
 * @module validators/tiered
 * Two engines in tiers: a schema is first served by an engine that compiles nothing (the
 * Workers engine, @cfworker/json-schema: under 2 ms for the benchmark's 20-property schema),
 * and the engine that generates code (ajv: 10-30 ms of compile for the same schema, then 10-20x
 * faster per validation) is compiled once the schema has served {@link PROMOTE_AFTER} calls,
 * outside of any call's own stack (`defer`), then takes over. The first call of a tool no longer
 * waits for code generation (the cold path stays under 15 ms on Node; docs/performance.md), and tools called rarely
 * never pay for it.
 *
 * Both engines give the same verdict on every schema the edge uses: schema-portability.ts
 * routes the features where they differ to "unusable" before any engine sees a schema, and
 * test/validation/differential.test.ts holds them to it. When the second engine cannot use a schema the
 * first one took, the first one stays (the tool keeps being validated).
 */
import type { Dialect } from '../core/jsonrpc/versions'
import type { CompiledValidator, SchemaUnusableError, ValidatorEngine } from '../core/ports'

/**
 * Calls a schema is validated by the first engine before the second one is compiled. A compile
 * blocks the process for 10-30 ms (ajv codegen is synchronous), and `defer` can only move it out
 * of the current call's own stack, not out of every request in flight (on Node it runs from a
 * timer after that turn's answers are written, and the requests then in flight wait for it): so it is paid once a tool has proved to be called, not on its
 * first call, and never for a tool called less often than this. 16 calls of the 20-property
 * benchmark schema cost about 0.7 ms more on cfworker than on ajv.
 */
export const PROMOTE_AFTER = 16

/** Options of {@link createTieredEngine}. */
export interface TieredOptions {
  /** Runs the second engine's compile later, outside the request (Node: a 0 ms timer, so the answers already decided in that turn are written first). */
  defer: (task: () => void) => void
  /** Validations served by the first engine before the second is compiled (default {@link PROMOTE_AFTER}). */
  promoteAfter?: number
}

/**
 * Creates the tiered engine. `compile` throws {@link SchemaUnusableError} exactly when the first
 * engine does.
 * @param first the engine that compiles nothing (serves a schema's first calls)
 * @param second the compiling engine (serves every call once it is ready)
 */
export function createTieredEngine(first: ValidatorEngine, second: ValidatorEngine, options: TieredOptions): ValidatorEngine {
  const promoteAfter = options.promoteAfter ?? PROMOTE_AFTER
  return {
    name: `${first.name}+${second.name}`,
    compile(schema: unknown, dialect: Dialect): CompiledValidator {
      let current = first.compile(schema, dialect)
      let calls = 0
      let scheduled = false
      const promote = () => {
        try {
          current = second.compile(schema, dialect)
        } catch {
          // The second engine cannot use it (SchemaUnusableError, or any fault of its own, which
          // must not escape a deferred task): the first one keeps validating.
        }
      }
      return (value: unknown) => {
        if (!scheduled && ++calls >= promoteAfter) {
          scheduled = true
          options.defer(promote)
        }
        return current(value)
      }
    },
  }
}
