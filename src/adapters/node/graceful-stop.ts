/**
 * @module adapters/node/graceful-stop
 * The Node edge's graceful stop (docs/deploy-node.md): stop accepting connections, let requests
 * and SSE streams in flight finish within `SHUTDOWN_GRACE_MS`, then answer whatever is still open
 * with its per-id gateway error (-31002, as when `ORIGIN_TIMEOUT_MS` passes: the origin did not
 * answer within the time the edge had left) and close the last connections.
 *
 * Admin API requests are requests in flight like calls: a PUT is waited for within the grace, and
 * its store write is one batch (`putMany`: one file write, one Redis MULTI/EXEC) that the store's
 * close (after this drain, RunningEdge.stop) flushes, so a PUT is stored whole or not at all.
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'

/** How long, after the bound, the answers of the expired calls get to be written (ms). */
export const EXPIRE_WRITE_MS = 2_000

/** Counts the requests in flight of one server (a request is in flight until its response closes). */
export class InFlightRequests {
  private count = 0
  private waiters: (() => void)[] = []
  /** Called when a response finishes while stopping (idle keep-alive connections are closed then). */
  onFinish: (() => void) | null = null

  /** Requests whose response has not closed yet (SSE streams included). */
  get size(): number {
    return this.count
  }

  /** Wraps a request listener so every request is counted. */
  wrap(listener: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      this.count++
      res.once('close', () => {
        this.count--
        this.onFinish?.()
        if (this.count === 0) this.wake()
      })
      listener(req, res)
    }
  }

  /** Resolves when no request is in flight, or after `ms` (whichever is first); true when idle. */
  idle(ms: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done)
        resolve(false)
      }, ms)
      const done = () => {
        clearTimeout(timer)
        resolve(true)
      }
      this.waiters.push(done)
    })
  }

  private wake(): void {
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w()
  }
}

/** What a graceful stop did (logged as `edge.stop`). */
export interface StopReport {
  /** Requests in flight when the stop began. */
  inFlight: number
  /** Requests still open at the bound, whose forwarded ids were answered -31002. */
  expired: number
  /** Milliseconds the stop took until the last connection closed. */
  ms: number
}

/**
 * Stops `server` gracefully: no new connections; idle keep-alive connections closed (and each one
 * as soon as its response is done); waits up to `graceMs` for `inFlight` to drain; then calls
 * `expire` (the origin client aborts every call with a timeout, so each open id gets -31002) and
 * waits up to {@link EXPIRE_WRITE_MS} for those answers; then closes every connection left.
 */
export async function drainServer(server: Server, inFlight: InFlightRequests, graceMs: number, expire: () => void): Promise<StopReport> {
  const t0 = Date.now()
  const report: StopReport = { inFlight: inFlight.size, expired: 0, ms: 0 }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  inFlight.onFinish = () => setImmediate(() => server.closeIdleConnections())
  server.closeIdleConnections()
  if (!(await inFlight.idle(graceMs))) {
    report.expired = inFlight.size
    expire()
    await inFlight.idle(EXPIRE_WRITE_MS)
  }
  server.closeAllConnections()
  await closed
  report.ms = Date.now() - t0
  return report
}
