/**
 * @module exports/engines/tiered
 * `mcp-edge-validator/engines/tiered`: a tool's first calls checked by one engine, later ones by
 * another (validators/tiered.ts). {@link createTieredAjvEngine} is what the standalone server
 * runs: @cfworker/json-schema for a tool's first {@link PROMOTE_AFTER} calls, then ajv, compiled
 * from a 0 ms timer (needs ajv, an optional peer dependency; docs/validation.md).
 */
import type { ValidatorEngine } from '../../core/ports'
import { deferCompile } from '../../adapters/node/node-edge'
import { createAjvEngine } from '../../validators/ajv'
import { createCfworkerEngine } from '../../validators/cfworker'
import { createTieredEngine } from '../../validators/tiered'

export { createTieredEngine, PROMOTE_AFTER, type TieredOptions } from '../../validators/tiered'

/** cfworker for a tool's first {@link PROMOTE_AFTER} calls, then ajv (compiled off the request, from a 0 ms timer): `mcpEdge({ engine: createTieredAjvEngine() })`. */
export function createTieredAjvEngine(): ValidatorEngine {
  return createTieredEngine(createCfworkerEngine(), createAjvEngine(), { defer: deferCompile })
}
