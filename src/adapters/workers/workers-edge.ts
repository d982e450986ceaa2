/**
 * @module adapters/workers/workers-edge
 * `mcpEdge()` as the Workers build of the package gives it (`mcp-edge-validator` under the
 * `workerd`, `worker`, `browser` and `default` conditions): @cfworker/json-schema as the engine
 * (workerd forbids code generation from strings at request time, and ajv compiles schemas to
 * code), `fetch` to the origin, one `console.log` JSON line per POST, and deferred work handed to
 * the request's `ExecutionContext.waitUntil` where there is one.
 */
import type { ValidatorEngine } from '../../core/ports'
import { createMcpEdge, type EdgeRuntime, type McpEdge, type McpEdgeInit } from '../../mcp-edge'
import { createCfworkerEngine } from '../../validators/cfworker'
import { createFetchOriginClient } from './fetch-origin-client'
import { PIN_RELOAD_MS } from '../../core/pinning/apply-pins'

/** The engine the Workers build uses when none is given: @cfworker/json-schema, no code generation. */
export function createDefaultEngine(): ValidatorEngine {
  return createCfworkerEngine()
}

/** The Workers build's defaults for what the options leave unset. */
export const workersRuntime: EdgeRuntime = {
  engine: createDefaultEngine,
  originClient: () => createFetchOriginClient(),
  logger: () => (r) => console.log(JSON.stringify(r)),
  // Workers KV: a write reaches every location within about 60 s; the pins are read again every PIN_RELOAD_MS.
  pinPropagationMs: 60_000 + PIN_RELOAD_MS,
  executionContext: true,
  // Each isolate is its own memory, and a client's requests land on any of them.
  sharedSessionKeyRequired: true,
  storeName: (store) => (store ? 'Workers KV' : 'memory (per isolate, not persisted)'),
}

/**
 * The edge as a Hono sub-app, Workers build. In a Worker the options usually come from `env`:
 * `app.route('/mcp', mcpEdge((env: Env) => ({ env, store: env.TOOL_SCHEMAS })))`. Options: docs/library.md.
 * @throws ConfigError for an unusable option or variable (options given as an object)
 */
export function mcpEdge<E = unknown>(options: McpEdgeInit<E> = {}): McpEdge {
  return createMcpEdge(options, workersRuntime)
}
