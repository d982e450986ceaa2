/**
 * @module exports/node
 * `mcp-edge-validator` as Node (and Bun, Deno) load it: the `node` condition of the package's
 * `exports`. The shared API (exports/shared.ts) plus the engines that compile to code: on Node a
 * tool's first calls are checked by @cfworker/json-schema, which compiles nothing, and ajv takes
 * over once the tool has been called {@link PROMOTE_AFTER} times (validators/tiered.ts;
 * docs/validation.md). The Workers build (exports/workers.ts) has the same API without ajv.
 */
import type { ValidatorEngine } from '../core/ports'
import { deferCompile } from '../adapters/node/index'
import { createAjvEngine } from '../validators/ajv'
import { createCfworkerEngine } from '../validators/cfworker'
import { createTieredEngine } from '../validators/tiered'

export * from './shared'
export { createAjvEngine } from '../validators/ajv'
export { createTieredEngine, PROMOTE_AFTER, type TieredOptions } from '../validators/tiered'
export { createUndiciOriginClient } from '../adapters/node/origin-client'

/** Which engine {@link createDefaultEngine} builds in this build of the package. */
export const DEFAULT_ENGINE = 'tiered' as const

/**
 * The engine the edge uses on this runtime when none is given: cfworker first, ajv from a tool's
 * {@link PROMOTE_AFTER}th call on, its compile run from a 0 ms timer so it never delays an answer.
 */
export function createDefaultEngine(): ValidatorEngine {
  return createTieredEngine(createCfworkerEngine(), createAjvEngine(), { defer: deferCompile })
}
