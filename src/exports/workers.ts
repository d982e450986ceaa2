/**
 * @module exports/workers
 * `mcp-edge-validator` as Cloudflare Workers (the `workerd` and `worker` conditions of the
 * package's `exports`), browsers and any other runtime load it. The shared API
 * (exports/shared.ts) with @cfworker/json-schema as the engine: workerd forbids code generation
 * from strings (`new Function`, `eval`) at request time, and ajv compiles every schema to code.
 * Nothing reachable from this file imports ajv, undici or `node:*` (a test bundles it and checks).
 */
export * from './shared'
export { createDefaultEngine, mcpEdge } from '../adapters/workers/workers-edge'

/** Which engine `createDefaultEngine` (and `mcpEdge` without `engine`) builds in this build of the package. */
export const DEFAULT_ENGINE = 'cfworker' as const
