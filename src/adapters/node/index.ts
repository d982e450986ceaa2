/**
 * @module adapters/node
 * Node entry: wires the ports (undici origin client, file-backed KV, cfworker then ajv) to the app and serves it
 * on `node:http` (the POST hot path straight to the core, the rest through @hono/node-server;
 * post-listener.ts). `startEdge` is used by `npm start`, the tests and the benchmark.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp } from '../../app'
import { loadConfig, type Config } from '../../core/config'
import { GradeCounters } from '../../core/grading/grade-counters'
import type { EdgeDeps } from '../../core/grading/exchange'
import type { KvStore, LogRecord, OriginClient, ValidatorEngine } from '../../core/ports'
import { createToolRegistry } from '../../core/validation/tool-registry'
import { MemoryKv } from '../../stores/memory-kv'
import { createAjvEngine } from '../../validators/ajv'
import { createCfworkerEngine } from '../../validators/cfworker'
import { createTieredEngine } from '../../validators/tiered'
import { FileKv } from './file-kv'
import { isLoopbackHost } from '../../core/request/transport-checks'
import { createUndiciOriginClient } from './origin-client'
import { createNodeListener, responseCloseSignal } from './post-listener'
import { drainServer, InFlightRequests, type StopReport } from './graceful-stop'
import { listenError, loadNodeListenConfig } from './node-config'
import type { ServerResponse } from 'node:http'
import type { Context } from 'hono'
import type { ClientSignal } from '../../core/client-signal'

/** Options of {@link startEdge}; anything unset comes from `env`. */
export interface StartEdgeOptions {
  env?: Record<string, string | undefined>
  /** Port to listen on; 0 picks a free one. */
  port?: number
  host?: string
  kv?: KvStore
  engine?: ValidatorEngine
  origin?: OriginClient
  /** Log sink; default: one JSON line per POST on stdout, batched. */
  log?: (r: LogRecord) => void
}

/** A running edge. `url` is the MCP endpoint. */
export interface RunningEdge {
  url: string
  port: number
  deps: EdgeDeps
  /** Stops at once: every connection is closed, requests in flight are cut. */
  close(): Promise<void>
  /**
   * Graceful stop (graceful-stop.ts): stops accepting, waits up to `graceMs` for requests and SSE
   * streams in flight, answers what is still open with -31002, then flushes the log and the store.
   * Nothing listens once it resolves.
   */
  stop(graceMs: number): Promise<StopReport>
}

/** The client-gone signal of a Hono route on Node: {@link responseCloseSignal} of @hono/node-server's response. */
function socketCloseSignal(c: Context): ClientSignal | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
  return outgoing ? responseCloseSignal(outgoing) : c.req.raw.signal
}

/** Longest a log line waits in the batch, in ms; a batch of {@link LOG_BATCH_LINES} lines is written at once. */
const LOG_FLUSH_MS = 25
const LOG_BATCH_LINES = 256

/**
 * Batched stdout logger: one JSON line per record (`ts` first), written in batches at most
 * {@link LOG_FLUSH_MS} ms after the first line of a batch (or at {@link LOG_BATCH_LINES} lines),
 * and on process exit (`npm start` exits on SIGINT/SIGTERM). A timer, not `setImmediate`: a
 * pending immediate makes the event loop poll without waiting, and batches were smaller (about 40%
 * fewer writes at 3,000 req/s under strace; the CPU difference was within this VM's noise, issue 7).
 * The line is built as `{"ts":"<ISO time>",` + the record's own JSON minus its `{`, and the ISO
 * time is formatted once per millisecond.
 */
function stdoutLogger(): ((r: LogRecord) => void) & { flush(): Promise<void> } {
  let buf: string[] = []
  let lastMs = 0
  let lastIso = ''
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (buf.length === 0) return
    const out = buf.join('')
    buf = []
    process.stdout.write(out)
  }
  process.once('exit', flush)
  const log = (r: LogRecord) => {
    const now = Date.now()
    if (now !== lastMs) {
      lastMs = now
      lastIso = new Date(now).toISOString()
    }
    const json = JSON.stringify(r)
    buf.push(json.length > 2 ? `{"ts":"${lastIso}",${json.slice(1)}\n` : `{"ts":"${lastIso}"}\n`)
    if (buf.length >= LOG_BATCH_LINES) flush()
    else if (!timer) timer = setTimeout(flush, LOG_FLUSH_MS)
  }
  // Resolves once the pending lines are handed to the OS (stdout's write callback).
  const flushNow = () => {
    flush()
    return new Promise<void>((resolve) => process.stdout.write('', () => resolve()))
  }
  return Object.assign(log, { flush: flushNow })
}

/**
 * Runs slow deferred work (the tiered engine's ajv compile, 10-30 ms) from a 0 ms timer, not
 * `setImmediate`: an immediate queued before the listener's write batch (post-listener.ts) would
 * run first and hold every answer decided in that turn behind the compile.
 */
export function deferCompile(task: () => void): void {
  setTimeout(task, 0)
}

/** Builds the Node ports from a config. */
export function nodeDeps(
  config: Config,
  opts: StartEdgeOptions = {}
): EdgeDeps & { closeOrigin(): Promise<void>; expireOrigin(): void; flushLog(): Promise<void>; flushStore(): Promise<void> } {
  const env = opts.env ?? process.env
  const kv = opts.kv ?? (env.STORE_FILE === 'memory' ? new MemoryKv() : new FileKv(env.STORE_FILE || '.edge-data/kv.json'))
  const undiciClient = opts.origin ? null : createUndiciOriginClient()
  const logger = opts.log ?? stdoutLogger()
  return {
    config,
    // A tool's first calls are validated by the engine that compiles nothing; ajv takes over once the tool is called often (validators/tiered.ts).
    registry: createToolRegistry(config, kv, opts.engine ?? createTieredEngine(createCfworkerEngine(), createAjvEngine(), { defer: deferCompile })),
    origin: opts.origin ?? undiciClient!,
    log: logger,
    defer: (p) => void p.catch(() => undefined),
    metrics: new GradeCounters(),
    closeOrigin: async () => {
      await undiciClient?.close()
    },
    expireOrigin: () => undiciClient?.expire(),
    flushLog: async () => {
      if ('flush' in logger && typeof logger.flush === 'function') await (logger.flush as () => Promise<void>)()
    },
    flushStore: async () => {
      if (kv instanceof FileKv) kv.flush()
    },
  }
}

/**
 * Starts the edge on Node.
 * @throws ConfigError for a bad configuration value
 * @throws ListenError (node-config.ts) when the port is in use or not allowed, or the host is not local
 */
export async function startEdge(opts: StartEdgeOptions = {}): Promise<RunningEdge> {
  const env = opts.env ?? process.env
  const listen = loadNodeListenConfig(env)
  const host = opts.host ?? listen.host
  const config = loadConfig(env)
  // DNS-rebinding protection: an edge bound to loopback only answers loopback Host names.
  if (config.allowedHosts === null && isLoopbackHost(host)) config.allowedHosts = ['localhost']
  const deps = nodeDeps(config, opts)
  const app = createApp(() => deps, { clientSignal: socketCloseSignal })
  const port = opts.port ?? listen.port
  // POST /mcp goes straight to the core; the rest through @hono/node-server (post-listener.ts).
  const inFlight = new InFlightRequests()
  const server = createServer(inFlight.wrap(createNodeListener(app, deps)))
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (e) {
    await deps.closeOrigin()
    throw listenError(e, host, port)
  }
  const actual = (server.address() as AddressInfo).port
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/mcp`,
    port: actual,
    deps,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
        void deps.closeOrigin()
      }),
    stop: async (graceMs) => {
      const report = await drainServer(server, inFlight, graceMs, () => deps.expireOrigin())
      deps.log({ msg: 'edge.stop', ...report })
      await deps.closeOrigin()
      await deps.flushStore()
      await deps.flushLog()
      return report
    },
  }
}
