/**
 * @module stores/node-store
 * Which store the Node entry runs on, from its store settings (docs/stores.md), read once from the
 * settings table (core/settings.ts, the `Store (Node)` rows) by the Node entry's `loadNodeConfig`
 * and handed here:
 * - `storeUrl` (`STORE_URL=redis://...` or `rediss://`): {@link RedisKv}, keys under
 *   `storePrefix` (`STORE_PREFIX`), shared by every edge on that Redis;
 * - else `storeFile` `memory`: {@link MemoryKv}, nothing kept;
 * - else `storeFile` (`STORE_FILE=<path>`): {@link FileKv}, one process per file; its folder must
 *   exist, except the default's (`.edge-data`), which is created.
 */
import type { RateLimiter } from '../core/access/rate-limit'
import { dirname, resolve } from 'node:path'
import { ConfigError } from '../core/config'
import type { KvStore } from '../core/ports'
import { settingsOf } from '../core/settings'
import { FileKv, type FileKvOptions } from './file-kv'
import { MemoryKv } from './memory-kv'
import { redactUrl } from '../core/redact-url'

/** The default `STORE_FILE`: the settings table's. */
export const DEFAULT_STORE_FILE = settingsOf('node').find((s) => s.variable === 'STORE_FILE')!.default as string

/**
 * The store settings of the Node entry, as `loadNodeConfig` (adapters/node/node-config.ts) reads
 * them from the settings table (their rules checked there: a `redis:`/`rediss:` URL with a host, a
 * prefix without white space, not both a URL and a file).
 */
export interface NodeStoreSettings {
  /** The embedded store's file, or `memory` (`STORE_FILE`). */
  storeFile: string
  /** The shared Redis store (`STORE_URL`); null: the embedded one. */
  storeUrl: string | null
  /** Prefix of the Redis keys (`STORE_PREFIX`). */
  storePrefix: string
  /** With `storeUrl`: also open the Redis rate limiter every edge on that Redis shares (`RATE_LIMIT` set). */
  sharedRateLimit?: boolean
}

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
 * Opens the store the settings select (see the module comment). The Redis store is loaded with
 * `import()` only when selected: ioredis is an optional peer dependency of the package (docs/library.md).
 * @throws StoreLockedError / StoreFileError from the file store (another edge holds the file, unreadable file)
 * @throws ConfigError naming STORE_URL when ioredis (an optional peer dependency) is not installed
 */
export async function openNodeStore(settings: NodeStoreSettings, fileOptions: FileKvOptions = {}): Promise<NodeStore> {
  const url = settings.storeUrl
  if (url !== null) {
    const prefix = settings.storePrefix
    const { RedisKv } = await peer('STORE_URL', 'ioredis', () => import('./redis-kv'))
    const kv = new RedisKv({ url, prefix })
    // RATE_LIMIT budgets are shared by the edges on this Redis too (one connection of its own, keys `<prefix>rl:`).
    const limiter = settings.sharedRateLimit ? new (await import('./redis-rate-limit')).RedisRateLimiter({ url, prefix, variable: 'STORE_URL' }) : undefined
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
  const file = settings.storeFile
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
