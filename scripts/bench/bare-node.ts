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
 * `BARE_PARSE=1`: the parse floor (docs/performance.md, "Choices"), the limit of a proxy that
 * grades replies, which must read and parse both messages. The request body is decoded (UTF-8)
 * and `JSON.parse`d before the same bytes are forwarded; a JSON reply is held whole, decoded and
 * `JSON.parse`d, then the origin's bytes are written unchanged; an SSE reply is relayed as it
 * comes, each chunk written after the `data:` of every event completed in it is decoded and
 * `JSON.parse`d (the events of the bench origin end in a blank line, LF only, and carry one JSON
 * value each). A request body that does not parse is answered 400 without the origin; a reply
 * that does not parse cuts the client's connection (the bench origin sends neither).
 *
 * `BARE_VALIDATE=1` (implies `BARE_PARSE=1`): the validating floor (docs/performance.md, "The
 * floors"), the limit of the product itself: the parse floor, plus the arguments of every
 * `tools/call` validated with ajv against the tool's schema (`BENCH_TOOLS`, a JSON array of MCP
 * tool entries, each schema compiled once at start), plus one JSON log line per POST on stdout
 * (the lines of one event-loop turn written together, as the edge's batched logger does; the
 * bench points stdout at /dev/null). A POST holding a call whose arguments fail is answered
 * -32602 for each failing id without the origin (the bench sends no mixed batch).
 *
 * Reports `{ port }` over IPC when listening, answers the profiler commands of
 * scripts/bench/profile-ipc.ts (`npm run bench -- --profile`); exits when the parent disconnects.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StringDecoder } from 'node:string_decoder'
import { Ajv, type ValidateFunction } from 'ajv'
import { Pool, type Dispatcher } from 'undici'
import { profileCommand } from './profile-ipc'

const base = process.env.ORIGIN_BASE!
const batchWrites = (process.env.BARE_WRITES ?? 'batch') !== 'direct'
const validate = process.env.BARE_VALIDATE === '1'
const parse = validate || process.env.BARE_PARSE === '1'
/** `BARE_VALIDATE=1`: each tool's arguments validator, compiled once at start (ajv's usual options for a gateway: every error, no strict mode). */
const validators = new Map<string, ValidateFunction>()
if (validate) {
  const ajv = new Ajv({ allErrors: true, strict: false })
  for (const t of JSON.parse(process.env.BENCH_TOOLS ?? '[]') as { name: string; inputSchema: object }[]) validators.set(t.name, ajv.compile(t.inputSchema))
}
const pool = new Pool(base, { connections: 256, pipelining: 1, keepAliveTimeout: 10_000 })
const ANSWER = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}')
const ANSWER_HEAD = { 'content-type': 'application/json', 'content-length': String(ANSWER.length) }
const PARSE_ERROR = Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
const PARSE_ERROR_HEAD = { 'content-type': 'application/json', 'content-length': String(PARSE_ERROR.length) }

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

/** `BARE_VALIDATE=1`: log lines not yet written; the lines of one event-loop turn go out in one write. */
let logLines = ''
const flushLog = (): void => {
  const text = logLines
  logLines = ''
  process.stdout.write(text)
}
/** One JSON log line per POST: when, the calls it held (id, tool, arguments valid), the status and the bytes answered. */
function logLine(t0: number, calls: LoggedCall[], status: number, bytes: number): void {
  if (logLines === '') setImmediate(flushLog)
  logLines += `${JSON.stringify({ ts: new Date().toISOString(), calls, status, bytes, ms: Math.round((performance.now() - t0) * 1000) / 1000 })}\n`
}

interface LoggedCall {
  id: unknown
  tool: string
  valid: boolean
}

/**
 * The `tools/call`s of a parsed request with their arguments checked against the tool's compiled
 * schema (a tool without one passes, as an unknown tool is the origin's to answer).
 */
function checkCalls(msg: unknown): LoggedCall[] {
  const calls: LoggedCall[] = []
  for (const m of Array.isArray(msg) ? msg : [msg]) {
    if (m === null || typeof m !== 'object' || (m as { method?: unknown }).method !== 'tools/call') continue
    const params = (m as { params?: { name?: unknown; arguments?: unknown } }).params
    const tool = typeof params?.name === 'string' ? params.name : ''
    const check = validators.get(tool)
    calls.push({ id: (m as { id?: unknown }).id ?? null, tool, valid: check === undefined || check(params?.arguments ?? {}) })
  }
  return calls
}

/** The -32602 answer of the calls that failed (one object, or an array for a batch). */
function invalidAnswer(msg: unknown, calls: LoggedCall[]): Buffer {
  const errors = calls.filter((c) => !c.valid).map((c) => ({ jsonrpc: '2.0', id: c.id, error: { code: -32602, message: `Invalid arguments for tool ${c.tool}` } }))
  return Buffer.from(JSON.stringify(Array.isArray(msg) ? errors : errors[0]))
}

/**
 * The `data:` of every complete event of an SSE stream, decoded and `JSON.parse`d as the chunks
 * arrive (`BARE_PARSE=1`); a UTF-8 sequence split across chunks is carried by the decoder.
 */
class SseEvents {
  private readonly decoder = new StringDecoder('utf8')
  private rest = ''

  push(chunk: Buffer): void {
    const text = this.rest + this.decoder.write(chunk)
    let start = 0
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', start)) {
      parseEvent(text.slice(start, end))
      start = end + 2
    }
    this.rest = start === 0 ? text : text.slice(start)
  }

  end(): void {
    const text = this.rest + this.decoder.end()
    if (text.trim() !== '') parseEvent(text)
  }
}

/** Parses the data of one SSE event (its `data:` lines joined with LF), if it has any. */
function parseEvent(block: string): void {
  let data: string | undefined
  for (const line of block.split('\n')) {
    if (!line.startsWith('data:')) continue
    const value = line.slice(line.charCodeAt(5) === 32 ? 6 : 5)
    data = data === undefined ? value : `${data}\n${value}`
  }
  if (data !== undefined) JSON.parse(data)
}

/** One forwarded request: the origin's reply copied to `res`. */
class Relay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  /** Chunks of a reply not yet written (the head is written with the first of them). */
  private chunks: Buffer[] = []
  private head: [number, Record<string, string>] | undefined
  private streaming = false
  /** `BARE_PARSE=1`: the events of an SSE reply being parsed; a JSON reply is held whole instead. */
  private sse: SseEvents | undefined

  /** `calls`/`t0`: what the log line of this POST says (`BARE_VALIDATE=1`), null otherwise. */
  constructor(
    private readonly res: ServerResponse,
    private readonly calls: LoggedCall[] | null = null,
    private readonly t0 = 0
  ) {}

  private bytes = 0

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
    if (parse && h['content-type']!.includes('text/event-stream')) this.sse = new SseEvents()
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length
    if (parse) {
      if (this.sse === undefined) {
        // A JSON reply is parsed whole before any of it is written, as a grading proxy must.
        this.chunks.push(chunk)
        return
      }
      try {
        this.sse.push(chunk)
      } catch {
        return this.fail(controller)
      }
    }
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
    if (this.sse) {
      try {
        this.sse.end()
      } catch {
        return void this.res.destroy()
      }
    }
    if (this.calls) logLine(this.t0, this.calls, this.head![0], this.bytes)
    if (this.streaming) return void this.res.end()
    const [status, h] = this.head!
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)
    if (parse && this.sse === undefined) {
      try {
        JSON.parse(body.toString('utf8'))
      } catch {
        return void this.res.destroy()
      }
    }
    later(() => this.res.writeHead(status, h).end(body))
  }

  /** A reply that does not parse (`BARE_PARSE=1`): the client's connection is cut, the origin's read stopped. */
  private fail(controller: Dispatcher.DispatchController): void {
    controller.abort(new Error('reply does not parse'))
    this.res.destroy()
  }

  onResponseError(_c: Dispatcher.DispatchController, _e: Error): void {
    this.res.destroy()
  }
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const t0 = validate ? performance.now() : 0
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
    let msg: unknown
    if (parse) {
      try {
        msg = JSON.parse(body.toString('utf8'))
      } catch {
        return void res.writeHead(400, PARSE_ERROR_HEAD).end(PARSE_ERROR)
      }
    }
    if (req.url === '/answer') return later(() => res.writeHead(200, ANSWER_HEAD).end(ANSWER))
    const calls = validate ? checkCalls(msg) : null
    if (calls?.some((c) => !c.valid)) {
      const answer = invalidAnswer(msg, calls)
      logLine(t0, calls, 200, answer.length)
      return later(() => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.length) }).end(answer))
    }
    const relay = new Relay(res, calls, t0)
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
process.on('message', (m: { cmd?: string }) => void profileCommand(m))
process.on('disconnect', () => process.exit(0))
