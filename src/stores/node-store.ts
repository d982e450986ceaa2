/**
 * @module stores/node-store
 * Which store the Node entry runs on, from its variables (docs/stores.md):
 * - `STORE_URL=redis://...` (or `rediss://`): {@link RedisKv}, keys under `STORE_PREFIX`
 *   (default `mcp-edge:`), shared by every edge on that Redis;
 * - else `STORE_FILE=memory`: {@link MemoryKv}, nothing kept;
 * - else `STORE_FILE=<path>` (default `.edge-data/kv.json`): {@link FileKv}, one process per file;
 *   its folder must exist, except the default `.edge-data`, which is created.
 */
import type { RateLimiter } from '../core/access/rate-limit'
import { dirname, resolve } from 'node:path'
import { ConfigError, showValue } from '../core/config'
import type { KvStore } from '../core/ports'
import { FileKv, type FileKvOptions } from './file-kv'
import { DEFAULT_REDIS_PREFIX } from './kv-rules'
import { MemoryKv } from './memory-kv'
import { redactUrl } from '../core/redact-url'

/** The default `STORE_FILE`. */
export const DEFAULT_STORE_FILE = '.edge-data/kv.json'

/** A store the Node entry opened: `ready` before serving, `flush`/`close` on shutdown. */
export interface NodeStore {
  kv: KvStore
  /** `file <path>`, `memory` or `redis <url with the password redacted>` (for the start line). */
  description: string
  /** With STORE_URL and RATE_LIMIT: the Redis rate limiter every edge on that Redis shares (connected by `ready`). */
  rateLimiter?: RateLimiter
  /** Resolves when the store can serve (Redis connected). @throws StoreConnectError */
  ready(): Promise<void>
  /** Resolves when every acknowledged change is durable (the file store's pending write). */
  flush(): Promise<void>
  /** Flushes and releases the store (the file lock, the Redis connections). Idempotent. */
  close(): Promise<void>
}

/**
 * Opens the store the variables select (see the module comment). The Redis store is loaded with
 * `import()` only when selected: ioredis is an optional peer dependency of the package (docs/library.md).
 * @throws ConfigError naming STORE_URL or STORE_PREFIX for a bad value, or both STORE_URL and STORE_FILE set
 * @throws StoreLockedError / StoreFileError from the file store (another edge holds the file, unreadable file)
 * @throws ConfigError naming STORE_URL when ioredis (an optional peer dependency) is not installed
 */
export async function openNodeStore(env: Record<string, string | undefined>, fileOptions: FileKvOptions = {}): Promise<NodeStore> {
  const url = env.STORE_URL
  if (url !== undefined && url !== '') {
    if (env.STORE_FILE !== undefined && env.STORE_FILE !== '')
      throw new ConfigError(
        `STORE_URL and STORE_FILE are both set (STORE_FILE=${showValue(env.STORE_FILE)}): set STORE_URL for a shared store or STORE_FILE for the embedded one, not both`,
        'STORE_URL'
      )
    const expected = 'a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0'
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw ConfigError.bad('STORE_URL', redactUrl(url), expected)
    }
    if ((parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || parsed.hostname === '') throw ConfigError.bad('STORE_URL', redactUrl(url), expected)
    const prefix = env.STORE_PREFIX ?? DEFAULT_REDIS_PREFIX
    if (prefix === '' || /\s/.test(prefix)) throw ConfigError.bad('STORE_PREFIX', prefix, 'a non-empty prefix without white space, such as mcp-edge:')
    const { RedisKv } = await peer('STORE_URL', 'ioredis', () => import('./redis-kv'))
    const kv = new RedisKv({ url, prefix })
    // RATE_LIMIT budgets are shared by the edges on this Redis too (one connection of its own, keys `<prefix>rl:`).
    const limiter = env.RATE_LIMIT?.trim() ? new (await import('./redis-rate-limit')).RedisRateLimiter({ url, prefix, variable: 'STORE_URL' }) : undefined
    return {
      kv,
      ...(limiter ? { rateLimiter: limiter } : {}),
      description: `redis ${redactUrl(url)} prefix ${prefix}`,
      ready: async () => {
        await kv.connect()
        await limiter?.connect()
        // The registry subscribed when it was built: changes from other edges are seen from the first request on.
        await kv.subscribed()
      },
      flush: () => kv.flush(),
      close: async () => {
        await limiter?.close()
        await kv.close()
      },
    }
  }
  const file = env.STORE_FILE || DEFAULT_STORE_FILE
  if (file === 'memory') return { kv: new MemoryKv(), description: 'memory', ready: async () => {}, flush: async () => {}, close: async () => {} }
  // Only the default folder is created (the README's `npm start` on a fresh checkout); a STORE_FILE
  // in a missing folder is a typo more often than a wish, and is refused naming both.
  const createFolder = resolve(dirname(file)) === resolve(dirname(DEFAULT_STORE_FILE))
  const kv = new FileKv(file, { createFolder, variable: 'STORE_FILE', ...fileOptions })
  return { kv, description: `file ${kv.file}`, ready: async () => {}, flush: () => kv.flush(), close: () => kv.close() }
}

/**
 * Loads the module of a store that needs the optional peer dependency `pkg`.
 * @throws ConfigError naming `variable` and what to install when `pkg` is missing
 */
async function peer<T>(variable: string, pkg: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (e) {
    const code = (e as { code?: unknown }).code
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((e as Error).message).includes(`'${pkg}`))
      throw new ConfigError(`${variable}: this store needs the package ${pkg}, which is not installed (npm install ${pkg})`, variable)
    throw e
  }
}
