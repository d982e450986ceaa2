/**
 * The bare Node floor (docs/performance.md, "The floors"): the fastest pass-through proxy written here with `node:http`
 * and undici, nothing read, checked or logged. Every POST body is collected and handed to
 * undici's `Pool.dispatch` (keep-alive pool to `ORIGIN_BASE`, the same path); the reply's status,
 * `content-type` and `content-length` are copied and its chunks written to the client as they
 * come (back-pressure: the origin is paused while the client's socket is full). No framework, no
 * web `Request`/`Response`, no body parse.
 *
 * Writes: `BARE_WRITES=batch` (the default) writes the replies that complete in one event-loop
 * turn together from a `setImmediate`, as the edge's `WriteBatch` does (src/adapters/node/
 * post-listener.ts); `BARE_WRITES=direct` writes each reply as soon as its last chunk arrives.
 * Whichever is faster on the machine is the limit (docs/performance.md, "The floors").
 *
 * `POST /answer` is answered with a fixed JSON text after the body is read, without any origin:
 * the limit a locally answered (rejected) call can approach.
 *
 * Reports `{ port }` over IPC when listening; exits when the parent disconnects.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool, type Dispatcher } from 'undici'

const base = process.env.ORIGIN_BASE!
const batchWrites = (process.env.BARE_WRITES ?? 'batch') !== 'direct'
const pool = new Pool(base, { connections: 256, pipelining: 1, keepAliveTimeout: 10_000 })
const ANSWER = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}')
const ANSWER_HEAD = { 'content-type': 'application/json', 'content-length': String(ANSWER.length) }

/** Replies whose writes wait for the end of the current event-loop turn (`BARE_WRITES=batch`). */
let pending: (() => void)[] = []
const flush = (): void => {
  const batch = pending
  pending = []
  for (const w of batch) w()
}
function later(write: () => void): void {
  if (!batchWrites) return write()
  if (pending.push(write) === 1) setImmediate(flush)
}

/** One forwarded request: the origin's reply copied to `res`. */
class Relay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  /** Chunks of a reply not yet written (the head is written with the first of them). */
  private chunks: Buffer[] = []
  private head: [number, Record<string, string>] | undefined
  private streaming = false

  constructor(private readonly res: ServerResponse) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
  }

  /** The client left before its reply was written: stop reading the origin's. */
  abort(): void {
    this.controller?.abort(new Error('client gone'))
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    const h: Record<string, string> = { 'content-type': String(headers['content-type'] ?? 'application/json') }
    if (headers['content-length'] !== undefined) h['content-length'] = String(headers['content-length'])
    this.head = [status, h]
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.streaming) {
      // Hold the chunks of a reply that is still arriving in this turn; once it spans turns
      // (a long SSE reply), write as it comes.
      this.chunks.push(chunk)
      if (this.chunks.length > 1) this.startStreaming(controller)
      return
    }
    if (!this.res.write(chunk)) {
      controller.pause()
      this.res.once('drain', () => controller.resume())
    }
  }

  private startStreaming(controller: Dispatcher.DispatchController): void {
    this.streaming = true
    const [status, h] = this.head!
    this.res.writeHead(status, h)
    const held = this.chunks
    this.chunks = []
    let ok = true
    for (const c of held) ok = this.res.write(c)
    if (!ok) {
      controller.pause()
      this.res.once('drain', () => controller.resume())
    }
  }

  onResponseEnd(): void {
    if (this.streaming) return void this.res.end()
    const [status, h] = this.head!
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)
    later(() => this.res.writeHead(status, h).end(body))
  }

  onResponseError(_c: Dispatcher.DispatchController, _e: Error): void {
    this.res.destroy()
  }
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    if (req.url === '/answer') return later(() => res.writeHead(200, ANSWER_HEAD).end(ANSWER))
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
    const relay = new Relay(res)
    res.once('close', () => {
      if (!res.writableFinished) relay.abort()
    })
    pool.dispatch({ path: req.url ?? '/', method: 'POST', headers: { 'content-type': 'application/json', accept: req.headers.accept ?? 'application/json' }, body }, relay)
  })
}

const server = createServer({ keepAliveTimeout: 60_000 }, onRequest)
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port })
})
process.on('disconnect', () => process.exit(0))
