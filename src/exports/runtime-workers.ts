/**
 * @module exports/runtime-workers
 * The `#runtime` of Cloudflare Workers, browsers and any runtime without a `node` condition
 * (exports/index.ts says how it is selected): `console.log` lines and deferred work handed to the
 * request's `ExecutionContext.waitUntil` (adapters/workers/workers-edge.ts). Nothing reachable
 * imports `node:*` (a test bundles it and checks).
 */
import type { EdgeRuntime } from '../mcp-edge'
import { workersRuntime } from '../adapters/workers/workers-edge'

/** The defaults `mcpEdge` takes for what its options leave unset. */
export const runtime: EdgeRuntime = workersRuntime
