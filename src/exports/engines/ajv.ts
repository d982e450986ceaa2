/**
 * @module exports/engines/ajv
 * `mcp-edge-validator/engines/ajv`: the ajv engine (ajv and ajv-formats; an optional peer
 * dependency). It compiles schemas to code, so it is for Node, Bun and Deno, not workerd
 * (docs/validation.md).
 */
export { createAjvEngine, type EngineOptions } from '../../validators/ajv'
