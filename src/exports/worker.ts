/**
 * @module exports/worker
 * `mcp-edge-validator/worker`: the standalone Worker module (`export default { fetch }`, KV binding
 * `TOOL_SCHEMAS`, variables as in docs/configuration.md; adapters/workers/index.ts).
 */
export { default, type Env } from '../adapters/workers/index'
