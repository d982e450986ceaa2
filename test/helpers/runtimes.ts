/**
 * The two runtimes every behavioural test runs on, behind one shape: the Node entry
 * (@hono/node-server, undici, ajv, in-memory KV) and the built Worker bundle in workerd under
 * Miniflare (fetch, cfworker, local KV). Both listen on 127.0.0.1 and give an MCP URL.
 */
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { Miniflare } from 'miniflare'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { startEdge } from '../../src/adapters/node/index'
import { mcpEdge } from '../../src/adapters/node/node-edge'
import { createApp } from '../../src/app'
import type { KvStore, LogRecord } from '../../src/core/ports'
import { MemoryKv } from '../../src/stores/memory-kv'
import { WORKER_BUNDLE } from './build-worker'
import { memoryDir } from './memory-dir'
import { waitFor } from './wait'

/** A running edge in one runtime. */
export interface EdgeUnderTest {
  runtime: 'node' | 'worker' | 'middleware'
  /** MCP endpoint, e.g. http://127.0.0.1:1234/mcp */
  url: string
  /**
   * The log records written so far (one `mcp.post` per POST, and event lines). Without `until`
   * it answers at once with what has arrived; with `until` it waits until the lines the caller
   * expects are there ({@link LogWait}): the Worker's lines come through workerd's stdout after its
   * answers, so a test that reads them right after a response states what it expects to see.
   */
  logs(until?: LogWait): Promise<LogRecord[]>
  /** Reads a KV key of the edge's store. */
  kvGet(key: string): Promise<string | null>
  /** Writes a KV key of the edge's store (an operator push). */
  kvPut(key: string, value: string): Promise<void>
  /** Lists the keys of the edge's store that start with `prefix` (where the store can list). */
  kvKeys?(prefix: string): Promise<string[]>
  /** Deletes a KV key of the edge's store (a record the store lost). */
  kvDelete?(key: string): Promise<void>
  close(): Promise<void>
}

/**
 * The log lines a test waits for before reading: at least `atLeast` (default 1) records that
 * have `msg` (when given) and pass `where` (when given). Waiting gives up after 10 s (a hang,
 * not a timing assertion) with an error naming what never came.
 */
export interface LogWait {
  /** Only records with this `msg` count, e.g. `'mcp.post'`. */
  msg?: string
  /** Only records this predicate accepts count. */
  where?: (r: LogRecord) => boolean
  /** How many counted records must be there (default 1). */
  atLeast?: number
}

/** A copy of `records` once `until` holds (at once without `until`). */
async function readLogs(records: LogRecord[], until?: LogWait): Promise<LogRecord[]> {
  if (!until) return [...records]
  const atLeast = until.atLeast ?? 1
  const counts = (r: LogRecord) => (until.msg === undefined || r.msg === until.msg) && (!until.where || until.where(r))
  const what = `${atLeast} log record(s)${until.msg ? ` '${until.msg}'` : ''}${until.where ? ' matching the test' : ''}`
  return waitFor(() => (records.filter(counts).length >= atLeast ? [...records] : null), {
    what,
    detail: () => `seen: ${records.map((r) => String(r.msg)).join(', ')}`,
  })
}

/** Deployment options beyond variables. `kvDown`: the tool store is unavailable (no binding). */
export interface StartOptions {
  kvDown?: boolean
  /** Workers Rate Limiting bindings for the Worker (Miniflare `ratelimits`: name -> `{ simple: { limit, period } }`); ignored on Node. */
  ratelimits?: Record<string, { simple: { limit: number; period: number } }>
  /** The port to listen on (default 0: a free one); for a test that must know the edge's URL before it starts (AUTH_AUDIENCE). */
  port?: number
}

/** Starts the edge on one runtime with the given variables (ORIGIN_URL etc.). */
export type StartEdge = (vars: Record<string, string>, opts?: StartOptions) => Promise<EdgeUnderTest>

/** A store that is not there: every call throws, as a missing binding does. */
const downKv: KvStore = {
  get: () => Promise.reject(new Error('store unavailable')),
  put: () => Promise.reject(new Error('store unavailable')),
  delete: () => Promise.reject(new Error('store unavailable')),
}

export const startNodeEdge: StartEdge = async (vars, opts = {}) => {
  const mem = new MemoryKv()
  const kv = opts.kvDown ? downKv : mem
  const records: LogRecord[] = []
  const edge = await startEdge({ env: { STORE_FILE: 'memory', ...vars }, port: opts.port ?? 0, kv, log: (r) => records.push(r) })
  return {
    runtime: 'node',
    url: edge.url,
    logs: (until) => readLogs(records, until),
    kvGet: (k) => kv.get(k),
    kvPut: (k, v) => kv.put(k, v),
    kvKeys: (prefix) => (opts.kvDown ? Promise.resolve([]) : mem.keys(prefix)),
    kvDelete: (k) => kv.delete(k),
    close: () => edge.close(),
  }
}

export const startWorkerEdge: StartEdge = async (vars, opts = {}) => {
  const records: LogRecord[] = []
  // Local KV (and cache) on tmpfs: Miniflare syncs every put to disk (8.4 ms per put on this
  // machine's disk against 2.2 ms on tmpfs), which is the disk's behaviour, not the binding's.
  const persist = memoryDir('edge-worker-')
  const mf = new Miniflare({
    modules: true,
    scriptPath: WORKER_BUNDLE,
    compatibilityDate: '2026-04-20',
    kvNamespaces: opts.kvDown ? [] : ['TOOL_SCHEMAS'],
    ...(opts.ratelimits ? { ratelimits: opts.ratelimits } : {}),
    kvPersist: join(persist.path, 'kv'),
    cachePersist: join(persist.path, 'cache'),
    bindings: vars,
    host: '127.0.0.1',
    port: opts.port ?? 0,
    handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
      let buf = ''
      stdout.on('data', (d: Buffer) => {
        buf += d.toString()
        let i
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i)
          buf = buf.slice(i + 1)
          try {
            records.push(JSON.parse(line) as LogRecord)
          } catch {
            // not a log record
          }
        }
      })
      stderr.resume()
    },
  })
  const base = await mf.ready
  const kv = opts.kvDown ? null : await mf.getKVNamespace('TOOL_SCHEMAS')
  return {
    runtime: 'worker',
    url: new URL('/mcp', base).toString(),
    logs: (until) => readLogs(records, until),
    kvGet: async (k) => (kv ? kv.get(k, 'text') : null),
    kvPut: async (k, v) => void (await kv?.put(k, v)),
    kvKeys: async (prefix) => (kv ? (await kv.list({ prefix })).keys.map((k) => k.name) : []),
    kvDelete: async (k) => void (await kv?.delete(k)),
    close: async () => {
      try {
        await mf.dispose()
      } finally {
        persist.remove()
      }
    },
  }
}

/**
 * Requests that went through the host app's own middleware in {@link startMiddlewareEdge}, by
 * method and path: proof that a host's middleware runs in front of the mounted edge.
 */
export const hostMiddlewareSeen: string[] = []

/**
 * The edge as Hono middleware: `mcpEdge()` (Node build) inside the standalone app, mounted by a
 * host Hono app with middleware of its own, served by @hono/node-server's `serve`, so every
 * request, `POST /mcp` included, goes through Hono and the host's middleware (not the standalone
 * server's direct node:http path). Like the Node server bound to loopback, it answers loopback
 * Host names only unless ALLOWED_HOSTS says otherwise.
 */
export const startMiddlewareEdge: StartEdge = async (vars, opts = {}) => {
  const mem = new MemoryKv()
  const kv = opts.kvDown ? downKv : mem
  const records: LogRecord[] = []
  const edge = mcpEdge({ env: vars, store: kv, logger: (r) => records.push(r), ...(vars.ALLOWED_HOSTS ? {} : { allowedHosts: ['localhost'] }) })
  const host = new Hono()
  host.use('*', async (c, next) => {
    hostMiddlewareSeen.push(`${c.req.method} ${c.req.path}`)
    await next()
  })
  host.route('/', createApp(edge))
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: host.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
  })
  const port = (server.address() as AddressInfo).port
  return {
    runtime: 'middleware',
    url: `http://127.0.0.1:${port}/mcp`,
    logs: (until) => readLogs(records, until),
    kvGet: (k) => kv.get(k),
    kvPut: (k, v) => kv.put(k, v),
    kvKeys: (prefix) => (opts.kvDown ? Promise.resolve([]) : mem.keys(prefix)),
    kvDelete: (k) => kv.delete(k),
    close: async () => {
      const s = server as unknown as { closeAllConnections?(): void; close(cb: () => void): void }
      s.closeAllConnections?.()
      await new Promise<void>((resolve) => s.close(() => resolve()))
      await edge.close()
    },
  }
}

/** Both runtimes, for `describe.each`. */
export const RUNTIMES: { name: 'node' | 'worker'; start: StartEdge }[] = [
  { name: 'node', start: startNodeEdge },
  { name: 'worker', start: startWorkerEdge },
]

/**
 * Both runtimes and the edge mounted as Hono middleware on Node ({@link startMiddlewareEdge}):
 * for the behaviour tests whose answers must be the same whichever way the POST arrives.
 */
export const RUNTIMES_AND_MIDDLEWARE: { name: 'node' | 'worker' | 'middleware'; start: StartEdge }[] = [...RUNTIMES, { name: 'middleware', start: startMiddlewareEdge }]
