/**
 * @module exports/bun
 * `mcp-edge-validator` as Bun loads it (the `bun` condition, ahead of `node`): the Node build's API
 * and tiered engine, with `mcpEdge` sending to origins with `fetch` (adapters/node/node-edge.ts, bunRuntime).
 */
export * from './node'
export { mcpEdgeForBun as mcpEdge } from '../adapters/node/node-edge'
