/**
 * The Workers origin client (src/adapters/workers/fetch-origin-client.ts: the platform `fetch`)
 * reading a JSON reply's bytes within `maxReplyBytes`, against a real `node:http` origin: a body
 * of declared length and no content coding is read whole in one call, any other (coded, or of no
 * declared length) through the bounded reader; both give the origin's bytes unchanged and the same
 * refusals (a declared length past the bound unread, a coded or chunked body past the bound
 * counted as decoded) and the same timeout. Node's `fetch` here; the built Worker in workerd runs
 * the same client in test/transport/limits.test.ts (exact bound, one byte over, gzip, chunked).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFetchOriginClient } from '../../src/adapters/workers/fetch-origin-client'
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginRequest } from '../../src/core/ports'

type Handler = (req: IncomingMessage, res: ServerResponse) => void
let handler: Handler = (_req, res) => res.end()
/** Responses left open by a handler, ended when the file is done. */
const open = new Set<ServerResponse>()
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => handler(req, res))
})
let base = ''
const client = createFetchOriginClient()
const MAX = 4096

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const res of open) res.destroy()
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

const post = (over: Partial<OriginRequest> = {}) =>
  client({
    method: 'POST',
    url: `${base}/mcp`,
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    timeoutMs: 5000,
    maxReplyBytes: MAX,
    ...over,
  })

/** A reply body of exactly `size` bytes with multi-byte UTF-8 characters throughout (some across any 4 KiB boundary). */
function bodyOf(size: number): Buffer {
  const unit = Buffer.from('{"é":"✓ 𝄞 ok"}')
  const out = Buffer.alloc(size, 0x20)
  for (let at = 0; at + unit.length <= size; at += unit.length + 3) unit.copy(out, at)
  return out
}

describe('the fetch origin client reads a JSON reply within maxReplyBytes', () => {
  it.each([0, 1, 150, 4095, MAX])('declared length, no coding: %i bytes, byte for byte (as bytes and as text)', async (size) => {
    const body = bodyOf(size)
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body)
    const reply = await post()
    expect(reply.headers['content-length']).toBe(String(size))
    expect(Buffer.from(await reply.bytes!()).equals(body)).toBe(true)
    expect(await (await post()).text()).toBe(new TextDecoder().decode(body))
  })

  it('no declared length (chunked): byte for byte up to the bound, refused one byte past it', async () => {
    let size = MAX
    handler = (_req, res) => {
      const body = bodyOf(size)
      res.writeHead(200, { 'content-type': 'application/json' })
      for (let at = 0; at < body.length; at += 1000) res.write(body.subarray(at, at + 1000))
      res.end()
    }
    expect(Buffer.from(await (await post()).bytes!()).equals(bodyOf(MAX))).toBe(true)
    size = MAX + 1
    await expect((await post()).bytes!()).rejects.toBeInstanceOf(OriginReplyTooLargeError)
  })

  it('a declared length past the bound is refused', async () => {
    const body = bodyOf(MAX + 1)
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body)
    await expect((await post()).bytes!()).rejects.toBeInstanceOf(OriginReplyTooLargeError)
  })

  it('a coded (gzip) body is bounded by its decoded size, not by its declared length', async () => {
    let size = MAX
    handler = (_req, res) => {
      const body = gzipSync(bodyOf(size))
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length }).end(body)
    }
    expect(Buffer.from(await (await post()).bytes!()).equals(bodyOf(MAX))).toBe(true)
    size = MAX + 1
    const reply = await post()
    expect(Number(reply.headers['content-length'])).toBeLessThan(MAX)
    await expect(reply.bytes!()).rejects.toBeInstanceOf(OriginReplyTooLargeError)
  })

  it('a declared-length body that stops half way times out with OriginTimeoutError', async () => {
    handler = (_req, res) => {
      open.add(res)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 })
      res.write('{"jsonrpc":"2.0",')
    }
    const reply = await post({ timeoutMs: 300 })
    await expect(reply.bytes!()).rejects.toBeInstanceOf(OriginTimeoutError)
  })
})
