/**
 * The Node origin client (src/adapters/node/origin-client.ts: undici `dispatch` with the edge's
 * own handler) against a real `node:http` origin: replies read as text within MAX_REPLY_BYTES,
 * SSE bodies read as a stream with back-pressure, timeouts, the client's signal, cancel and
 * discard (the connection is reused after a small discarded body, cut after a large one).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createUndiciOriginClient } from '../../src/adapters/node/origin-client'
import { LinkSignal } from '../../src/core/client-signal'
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginRequest } from '../../src/core/ports'

type Handler = (req: IncomingMessage, res: ServerResponse) => void
let handler: Handler = (_req, res) => res.end()
const sockets = new Set<Socket>()
let closedRequests = 0
const server = createServer((req, res) => {
  res.on('close', () => {
    if (!res.writableFinished) closedRequests++
  })
  handler(req, res)
})
server.on('connection', (s: Socket) => sockets.add(s))
let base = ''
const client = createUndiciOriginClient()

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await client.close()
  for (const s of sockets) s.destroy()
  await new Promise((r) => server.close(r))
})
afterEach(() => {
  closedRequests = 0
})

const post = (over: Partial<OriginRequest> = {}) =>
  client({ method: 'POST', url: `${base}/mcp?x=1`, headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}', timeoutMs: 2000, ...over })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(10)
}

describe('Node origin client', () => {
  it('sends method, path, headers and body, and reads the reply as text (BOM dropped, headers joined)', async () => {
    let seen = ''
    handler = (req, res) => {
      let b = ''
      req.on('data', (c: Buffer) => (b += c.toString()))
      req.on('end', () => {
        seen = `${req.method} ${req.url} ${req.headers['content-type']} ${b}`
        res.setHeader('x-multi', ['a', 'b'])
        res.writeHead(200, { 'content-type': 'application/json' }).end('\ufeff{"ok":"é"}')
      })
    }
    const reply = await post()
    expect(reply.status).toBe(200)
    expect(reply.headers['x-multi']).toBe('a, b')
    expect(await reply.text()).toBe('{"ok":"é"}')
    expect(seen).toBe('POST /mcp?x=1 application/json {"jsonrpc":"2.0","id":1,"method":"ping"}')
  })

  it('reads a reply that comes after 103 Early Hints', async () => {
    handler = (_req, res) => {
      res.writeEarlyHints({ link: '</x>; rel=preload' })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    }
    const reply = await post()
    expect(reply.status).toBe(200)
    expect(await reply.text()).toBe('{}')
  })

  it('refuses a text reply beyond maxReplyBytes: declared, and chunked, and cuts the connection', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000))
    await expect((await post({ maxReplyBytes: 1000 })).text()).rejects.toBeInstanceOf(OriginReplyTooLargeError)
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const tick = setInterval(() => res.write('x'.repeat(400)), 5)
      res.on('close', () => clearInterval(tick))
    }
    await expect((await post({ maxReplyBytes: 1000 })).text()).rejects.toBeInstanceOf(OriginReplyTooLargeError)
    await until(() => closedRequests === 1)
    expect(closedRequests).toBe(1)
  })

  it('times out before the headers and in the middle of a body with OriginTimeoutError', async () => {
    handler = () => undefined // never answers
    await expect(post({ timeoutMs: 200 })).rejects.toBeInstanceOf(OriginTimeoutError)
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"partial":')
    }
    await expect((await post({ timeoutMs: 200 })).text()).rejects.toBeInstanceOf(OriginTimeoutError)
  })

  it('holds a reply dripping a byte at a time to the deadline (timeoutMs), not to each byte', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const tick = setInterval(() => res.write(' '), 50)
      res.on('close', () => clearInterval(tick))
    }
    const t0 = Date.now()
    await expect((await post({ timeoutMs: 300 })).text()).rejects.toBeInstanceOf(OriginTimeoutError)
    // At the 300 ms deadline: not before it, and (as the reply never ends) the upper bound only
    // catches a deadline that each byte restarts (10x).
    const took = Date.now() - t0
    expect(took).toBeGreaterThanOrEqual(290)
    expect(took).toBeLessThan(3_000)
  })

  it('times out a request still queued for a connection, and keeps GET streams out of the POST pool', async () => {
    const one = createUndiciOriginClient({ connections: 1 })
    try {
      handler = (req, res) => {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'text/event-stream' })
          return void res.write(': open\n\n')
        }
        if (req.headers['x-hang']) return // holds the only POST connection
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      }
      const get = await one({ method: 'GET', url: `${base}/mcp`, headers: {}, timeoutMs: 0 })
      expect(await (await one({ method: 'POST', url: `${base}/mcp`, headers: {}, body: '{}', timeoutMs: 2000 })).text()).toBe('{}')
      void one({ method: 'POST', url: `${base}/mcp`, headers: { 'x-hang': '1' }, body: '{}', timeoutMs: 0 }).catch(() => undefined)
      await sleep(50)
      const t0 = Date.now()
      await expect(one({ method: 'POST', url: `${base}/mcp`, headers: {}, body: '{}', timeoutMs: 300 })).rejects.toBeInstanceOf(OriginTimeoutError)
      // At the 300 ms deadline although the only connection never frees: not before it, and the
      // upper bound only catches a deadline that waits for a connection (10x).
      const took = Date.now() - t0
      expect(took).toBeGreaterThanOrEqual(290)
      expect(took).toBeLessThan(3_000)
      await get.stream()!.cancel()
    } finally {
      for (const s of sockets) s.destroy()
      await one.close().catch(() => undefined)
    }
  })

  it('gives no stream for a 204, even one labelled text/event-stream', async () => {
    handler = (_req, res) => res.writeHead(204, { 'content-type': 'text/event-stream' }).end()
    const reply = await post()
    expect(reply.status).toBe(204)
    expect(reply.stream()).toBeNull()
  })

  it('serves overlapping reads in order', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: a\n\n')
      setTimeout(() => res.end('data: b\n\n'), 30)
    }
    const source = (await post()).stream()!
    const [a, b] = await Promise.all([source.read(), source.read()])
    const text = (r: Awaited<ReturnType<typeof source.read>>) => (r.done ? 'done' : new TextDecoder().decode(r.value))
    expect(text(a) + text(b)).toBe('data: a\n\ndata: b\n\n')
  })

  it('streams a large SSE body with back-pressure: every byte, in order, to a slow reader', async () => {
    const chunk = (i: number) => `data: ${String(i).padStart(6, '0')} ${'y'.repeat(16_000)}\n\n`
    const n = 64 // about 1 MB, far beyond what the client holds before pausing the origin
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let i = 0
      const more = () => {
        while (i < n) if (!res.write(chunk(i++))) return void res.once('drain', more)
        res.end()
      }
      more()
    }
    const reply = await post()
    const source = reply.stream()!
    let text = ''
    const decoder = new TextDecoder()
    for (let r = await source.read(), k = 0; !r.done; r = await source.read(), k++) {
      text += decoder.decode(r.value as Uint8Array, { stream: true })
      if (k % 8 === 0) await sleep(5)
    }
    expect(text).toBe(Array.from({ length: n }, (_, i) => chunk(i)).join(''))
  })

  it('cancelling a stream aborts the origin request', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: 1\n\n')
    }
    const source = (await post()).stream()!
    const first = await source.read()
    expect(first.done).toBe(false)
    await source.cancel()
    await until(() => closedRequests === 1)
    expect(closedRequests).toBe(1)
    expect((await source.read()).done).toBe(true)
  })

  it("the client's signal aborts before the headers and in the middle of a text body", async () => {
    handler = () => undefined
    const early = new LinkSignal()
    const pending = post({ signal: early })
    await sleep(50)
    early.abort()
    await expect(pending).rejects.toThrow()
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"partial":')
    }
    const late = new LinkSignal()
    const reply = await post({ signal: late })
    const text = reply.text()
    late.abort()
    await expect(text).rejects.toThrow()
    await until(() => closedRequests === 2)
    expect(closedRequests).toBe(2)
  })

  it('a discarded small body leaves the connection reusable; a discarded large one is cut', async () => {
    const before = sockets.size
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"small":true}')
    ;(await post()).discard()
    await sleep(20)
    ;(await post()).discard()
    await sleep(20)
    expect(await (await post()).text()).toBe('{"small":true}')
    expect(sockets.size - before).toBeLessThanOrEqual(1)
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const tick = setInterval(() => res.write('z'.repeat(16_000)), 2)
      res.on('close', () => clearInterval(tick))
    }
    ;(await post()).discard()
    await until(() => closedRequests === 1)
    expect(closedRequests).toBe(1)
  })
})
