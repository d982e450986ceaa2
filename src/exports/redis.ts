/**
 * @module exports/redis
 * `mcp-edge-validator/redis`: the Redis store, shared by several edges (docs/stores.md). Needs the
 * optional peer dependency ioredis. `mcpEdge({ store: new RedisKv({ url }) })`; `await kv.connect()`
 * before serving.
 */
export { RedisKv, StoreConnectError, DEFAULT_REDIS_PREFIX, type RedisKvOptions } from '../stores/redis-kv'
export { RedisRateLimiter, type RedisRateLimiterOptions } from '../stores/redis-rate-limit'
