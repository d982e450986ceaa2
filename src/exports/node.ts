/**
 * @module exports/node
 * `mcp-edge-validator` as Node and Deno load it: the `node` condition of the package's
 * `exports`. The shared API (exports/shared.ts) plus the engines that compile to code: on Node a
 * tool's first calls are checked by @cfworker/json-schema, which compiles nothing, and ajv takes
 * over once the tool has been called {@link PROMOTE_AFTER} times (validators/tiered.ts;
 * docs/validation.md). The Workers build (exports/workers.ts) has the same API without ajv.
 */
export * from './shared'
export { createDefaultEngine, mcpEdge } from '../adapters/node/node-edge'
export { createAjvEngine } from '../validators/ajv'
export { createTieredEngine, PROMOTE_AFTER, type TieredOptions } from '../validators/tiered'
export { createUndiciOriginClient } from '../adapters/node/origin-client'

/** Which engine `createDefaultEngine` (and `mcpEdge` without `engine`) builds in this build of the package. */
export const DEFAULT_ENGINE = 'tiered' as const
