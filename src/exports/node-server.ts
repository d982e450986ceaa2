/**
 * @module exports/node-server
 * `mcp-edge-validator/node`: the standalone Node server (`startEdge`, what `npm start` and the CLI
 * run), its `node:http` listener with the direct `POST /mcp` path, and the Node-only ports (the
 * durable file store, the Redis store, the undici origin client; docs/stores.md). Node only: imports `node:http` and `node:fs`.
 */
export { startEdge, type RunningEdge, type StartEdgeOptions } from '../adapters/node/index'
export { deferCompile, stdoutLogger } from '../adapters/node/node-edge'
export { createNodeListener, responseCloseSignal, writeEdgeResponse } from '../adapters/node/post-listener'
export { createUndiciOriginClient } from '../adapters/node/origin-client'
export { FileKv, StoreFileError, type FileKvOptions } from '../stores/file-kv'
export { RedisKv, StoreConnectError, type RedisKvOptions } from '../stores/redis-kv'
export { StoreLockedError } from '../stores/store-lock'
export { openNodeStore, type NodeStore } from '../stores/node-store'
