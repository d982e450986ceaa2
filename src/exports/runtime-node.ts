/**
 * @module exports/runtime-node
 * The `#runtime` of Node, Bun and Deno (exports/index.ts says how it is selected): the batched
 * stdout logger and the socket-based client-gone signal (adapters/node/node-edge.ts). No optional
 * peer dependency is loaded.
 */
import type { EdgeRuntime } from '../mcp-edge'
import { nodeRuntime } from '../adapters/node/node-edge'

/** The defaults `mcpEdge` takes for what its options leave unset. */
export const runtime: EdgeRuntime = nodeRuntime
