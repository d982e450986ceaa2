/**
 * @module exports/node
 * `mcp-edge-validator/node`: the standalone Node server (`startEdge`, what `mcp-edge serve`
 * runs), its `node:http` listener with the direct `POST /mcp` path, the undici origin client and
 * the Node stores (the durable file store; `openNodeStore` picks the store `STORE_URL` /
 * `STORE_FILE` select, docs/stores.md). Needs the optional peers @hono/node-server and undici;
 * `startEdge` also uses ajv (tiered engine), prom-client and
 * @opentelemetry/api when they are installed, and ioredis for `STORE_URL` (docs/library.md).
 */
export { startEdge, type RunningEdge, type StartEdgeOptions } from '../adapters/node/index'
export { deferCompile, stdoutLogger } from '../adapters/node/node-edge'
export { loadNodeConfig, loadNodeListenConfig, ListenError, type NodeConfig, type NodeListenConfig, type NodeServerOptions } from '../adapters/node/node-config'
export { createNodeListener, responseCloseSignal, writeEdgeResponse } from '../adapters/node/post-listener'
export { createUndiciOriginClient } from '../adapters/node/origin-client'
export { classifyStoreText, FileKv, inDefaultFolder, StoreFileError, type ClassifyOptions, type FileKvOptions, type StoreText } from '../stores/file-kv'
export { StoreLockedError } from '../stores/store-lock'
export { openNodeStore, type NodeStore, type NodeStoreSettings } from '../stores/node-store'
