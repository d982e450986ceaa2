import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'

/**
 * A node:http request listener around an async handler (node:http drops the promise a listener
 * returns, so a rejection would be an unhandled rejection that vitest reports apart from the test
 * that caused it). When the handler rejects, the error goes to stderr and the exchange fails where
 * the test sees it: a 500 when no reply has started, a cut connection when one has; nothing when the
 * client already left (no one is there to answer).
 */
export function asyncListener(handler: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>): RequestListener {
  return (req, res) => {
    handler(req, res).catch((e: unknown) => {
      if (res.destroyed || res.writableEnded) return
      process.stderr.write(`test origin handler failed on ${req.method} ${req.url}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
      if (res.headersSent) res.destroy()
      else res.writeHead(500).end()
    })
  }
}

/** node:http's `createServer` for an async handler, through {@link asyncListener}. */
export function createAsyncServer(handler: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>): Server {
  return createServer(asyncListener(handler))
}
