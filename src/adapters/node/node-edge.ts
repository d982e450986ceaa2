/**
 * @module adapters/node/node-edge
 * `mcpEdge()` as the package's Node build gives it (`mcp-edge-validator` under the `node` and
 * `bun` conditions, through the internal `#runtime` import): the @cfworker/json-schema engine,
 * the runtime's global `fetch` to the origin, a batched JSON-line logger on stdout, and a
 * client-gone signal built on the response's socket. Nothing here imports an optional peer
 * dependency (undici, ajv, prom-client, @opentelemetry/api, @hono/node-server): a Hono-middleware
 * install has none of them. The standalone server (index.ts, `startEdge`) adds them when
 * installed (server-runtime.ts), and a host app opts in through the package's subpaths
 * (`./node`, `./engines/tiered`, `./prometheus`, `./otel`; docs/library.md).
 */
import type { ServerResponse } from 'node:http'
import type { Context } from 'hono'
import type { ClientSignal } from '../../core/client-signal'
import type { LogRecord, ValidatorEngine } from '../../core/ports'
import { createMcpEdge, type EdgeRuntime, type McpEdge, type McpEdgeInit } from '../../mcp-edge'
import { createCfworkerEngine } from '../../validators/cfworker'
import { createFetchOriginClient } from '../workers/fetch-origin-client'
import { responseCloseSignal } from './close-signal'

/**
 * Runs slow deferred work (the tiered engine's ajv compile, 10-30 ms) from a 0 ms timer, not
 * `setImmediate`: an immediate queued before the listener's write batch (post-listener.ts) would
 * run first and hold every answer decided in that turn behind the compile.
 */
export function deferCompile(task: () => void): void {
  setTimeout(task, 0)
}

/** The engine the package's Node build uses when none is given: @cfworker/json-schema (the tiered engine with ajv is `mcp-edge-validator/engines/tiered`). */
export function createDefaultEngine(): ValidatorEngine {
  return createCfworkerEngine()
}

/** Longest a log line waits in the batch, in ms; a batch of {@link LOG_BATCH_LINES} lines is written at once. */
const LOG_FLUSH_MS = 25
const LOG_BATCH_LINES = 256

/**
 * Batched stdout logger: one JSON line per record (`ts` first), written in batches at most
 * {@link LOG_FLUSH_MS} ms after the first line of a batch (or at {@link LOG_BATCH_LINES} lines),
 * and on process exit (`npm start` exits on SIGINT/SIGTERM). A timer, not `setImmediate`: a
 * pending immediate makes the event loop poll without waiting, and batches were smaller (about 40%
 * fewer writes at 3,000 req/s under strace; the CPU difference was within this VM's noise, docs/performance.md).
 * The line is built as `{"ts":"<ISO time>",` + the record's own JSON minus its `{`, and the ISO
 * time is formatted once per millisecond.
 */
export function stdoutLogger(): ((r: LogRecord) => void) & { flush(): Promise<void> } {
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

/** The client-gone signal of a Hono route on Node: {@link responseCloseSignal} of @hono/node-server's response. */
function socketCloseSignal(c: Context): ClientSignal | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
  return outgoing ? responseCloseSignal(outgoing) : c.req.raw.signal
}

/** The Node build's defaults for what the options leave unset (metrics: TextMetrics; no tracer). */
export const nodeRuntime: EdgeRuntime = {
  engine: createDefaultEngine,
  originClient: () => createFetchOriginClient(),
  logger: stdoutLogger,
  clientSignal: socketCloseSignal,
}

/**
 * The edge as a Hono sub-app, Node build: `app.route('/mcp', mcpEdge({ origin: 'http://127.0.0.1:3000/mcp' }))`.
 * Options: docs/library.md. The host's middleware runs in front of it; the standalone server's
 * direct `node:http` path (post-listener.ts) is not used unless the host opts in.
 * @throws ConfigError for an unusable option or variable (options given as an object)
 */
export function mcpEdge<E = unknown>(options: McpEdgeInit<E> = {}): McpEdge {
  return createMcpEdge(options, nodeRuntime)
}
