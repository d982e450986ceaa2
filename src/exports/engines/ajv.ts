/**
 * @module exports/engines/ajv
 * `mcp-edge-validator/engines/ajv`: the ajv engine (`ajv`, an optional peer dependency: install it
 * to use this subpath; without it the import fails with ERR_MODULE_NOT_FOUND naming `ajv`). It compiles schemas to code, so it is for Node, Bun and Deno, not workerd
 * (docs/validation.md).
 */
export { createAjvEngine, type EngineOptions } from '../../validators/ajv'
