/**
 * Reply size and client disconnect (docs/scope.md), against a real scripted HTTP origin:
 * - `MAX_REPLY_BYTES`: an origin JSON reply beyond the bound (declared by Content-Length, or
 *   chunked with no length) gives every forwarded id -31001 with no origin text, and the edge
 *   stops reading (the origin's connection is closed before it finished writing); a reply of
 *   exactly the bound passes (declared, or chunked in pieces); on Workers a gzip reply is bounded by
 *   its decoded size; the default is 16 MiB; the edge's own tool-list pull is bounded
 *   too (a list beyond it fails the pull: D16, forwarded unvalidated). Node entry and built
 *   Worker in workerd.
 * - a client that disconnects while a JSON reply is awaited aborts the origin request (the
 *   origin sees its connection closed long before ORIGIN_TIMEOUT_MS); the log line says
 *   `clientClosed: true` and grades the id `missing`.
 */
import type { ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/core/config'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { ADMIN_TOKEN, gradesOf, mcpHeaders, nextLog, post, postLogs, pushTools } from '../helpers/grading'
import { countMethod, serveMcp, toolCalls } from '../helpers/mcp-script'

const MAX = 4096
const CANARY = 'CANARY_reply_text'
const call = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"big","arguments":{}}}`

/** A JSON-RPC result for `id` padded to exactly `size` bytes. */
function replyOf(id: number, size: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${CANARY}`
  const tail = '"}]}}'
  return head + 'x'.repeat(size - head.length - tail.length) + tail
}

/** Resolves when `p` does, or rejects after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))])
}

describe('MAX_REPLY_BYTES configuration', () => {
  it('defaults to 16 MiB and refuses a non-positive value', () => {
    expect(loadConfig({}).maxReplyBytes).toBe(16 * 1024 * 1024)
    expect(loadConfig({ MAX_REPLY_BYTES: '1000' }).maxReplyBytes).toBe(1000)
    expect(() => loadConfig({ MAX_REPLY_BYTES: '0' })).toThrow(ConfigError)
    expect(() => loadConfig({ MAX_REPLY_BYTES: 'lots' })).toThrow(/MAX_REPLY_BYTES/)
  })
})

describe.each(RUNTIMES_AND_MIDDLEWARE)('reply size and client disconnect on $name', ({ name, start }) => {
  let origin: ScriptedOrigin
  let lists: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    lists = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, ORIGINS: JSON.stringify({ lists: lists.url }), ADMIN_TOKEN, MAX_REPLY_BYTES: String(MAX), REFRESH_MIN_INTERVAL_MS: '0' })
    await pushTools(edge, [{ name: 'big', inputSchema: { type: 'object' } }])
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await lists?.close()
  })

  it("the edge's own tool-list pull is bounded too: a list beyond it fails the pull (D16)", async () => {
    const tool = (description: string) => ({ name: 'listed', description, inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } })
    const script = serveMcp(lists, { pages: [[tool('d'.repeat(MAX))]] })
    const before = (await postLogs(edge)).length
    const bad = '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"listed","arguments":{"n":"x"}}}'
    const got = await post(edge, bad, mcpHeaders('2025-06-18'), 'lists')
    // Pulled, refused by the bound, so forwarded unvalidated (and answered by the origin).
    expect(countMethod(lists, 'tools/list')).toBe(1)
    expect(toolCalls(lists)).toEqual([{ name: 'listed', arguments: { n: 'x' } }])
    expect(JSON.parse(got.text).result.content[0].text).toBe('ok')
    expect(gradesOf(await nextLog(edge, before))).toEqual([{ id: '20', grade: 'unvalidated' }])
    // The same list within the bound validates.
    script.pages = [[tool('short')]]
    const again = await post(edge, bad.replace('"id":20', '"id":21'), mcpHeaders('2025-06-18'), 'lists')
    expect(JSON.parse(again.text).error?.code, again.text).toBe(-32602)
    expect(toolCalls(lists).length).toBe(1)
  })

  it('a reply of exactly MAX_REPLY_BYTES is relayed unchanged', async () => {
    origin.handle((r, res) => {
      const id = (r.json as { id: number }).id
      res.writeHead(200, { 'content-type': 'application/json' }).end(replyOf(id, MAX))
    })
    const got = await post(edge, call(1))
    expect(got.status).toBe(200)
    expect(got.text).toBe(replyOf(1, MAX))
    expect(got.headers.get('mcp-edge-grade')).toBe('ok=1')
  })

  it('a reply one byte over the bound (Content-Length) gets -31001, with no origin text', async () => {
    origin.handle((r, res) => {
      const id = (r.json as { id: number }).id
      res.writeHead(200, { 'content-type': 'application/json' }).end(replyOf(id, MAX + 1))
    })
    const before = (await postLogs(edge)).length
    const got = await post(edge, call(2))
    expect(got.status).toBe(200)
    const msg = JSON.parse(got.text)
    expect(msg).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -31001, message: expect.any(String), data: { source: 'edge' } } })
    expect(got.text).not.toContain(CANARY)
    expect(got.headers.get('mcp-edge-grade')).toBe('origin_error=1')
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual([{ id: '2', grade: 'origin_error', code: -31001 }])
    expect(log.dropped).toEqual([{ id: '-', reason: 'too_large' }])
  })

  it('a chunked reply of exactly MAX_REPLY_BYTES, written in pieces, is relayed unchanged', async () => {
    origin.handle((r, res: ServerResponse) => {
      const text = replyOf((r.json as { id: number }).id, MAX)
      res.writeHead(200, { 'content-type': 'application/json' }) // no Content-Length: chunked
      for (let at = 0; at < text.length; at += 1000) res.write(text.slice(at, at + 1000))
      res.end()
    })
    const got = await post(edge, call(6))
    expect(got.text).toBe(replyOf(6, MAX))
    expect(got.headers.get('mcp-edge-grade')).toBe('ok=1')
  })

  // Workers' fetch decodes a compressed body, so its Content-Length (the compressed size) does not
  // bound what is read: the bound counts the decoded bytes (the Node client does not decode).
  it.runIf(name === 'worker')('a gzip reply is bounded by its decoded size, not by its Content-Length', async () => {
    origin.handle((r, res) => {
      const id = (r.json as { id: number }).id
      const body = gzipSync(replyOf(id, id === 7 ? MAX : MAX + 1))
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length }).end(body)
    })
    const within = await post(edge, call(7))
    expect(within.text).toBe(replyOf(7, MAX))
    const before = (await postLogs(edge)).length
    const over = await post(edge, call(8))
    expect(JSON.parse(over.text).error).toMatchObject({ code: -31001, data: { source: 'edge' } })
    expect((await nextLog(edge, before)).dropped).toEqual([{ id: '-', reason: 'too_large' }])
  })

  it('a chunked reply with no length is cut at the bound: the edge stops reading, the origin connection closes', async () => {
    let closed!: () => void
    const originClosed = new Promise<void>((r) => (closed = r))
    let written = 0
    const total = 64 * 1024 * 1024
    origin.handle((r, res: ServerResponse) => {
      const id = (r.json as { id: number }).id
      res.writeHead(200, { 'content-type': 'application/json' }) // no Content-Length: chunked
      res.on('close', () => closed())
      const chunk = 'x'.repeat(16 * 1024)
      res.write(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${CANARY}`)
      // Up to 64 MiB, as fast as the edge reads: the edge must stop long before.
      const pump = () => {
        while (!res.destroyed && written < total) {
          written += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        if (!res.destroyed) res.end('"}]}}')
      }
      pump()
    })
    const got = await post(edge, call(3))
    expect(JSON.parse(got.text).error).toMatchObject({ code: -31001, data: { source: 'edge' } })
    expect(got.text).not.toContain(CANARY)
    await within(originClosed, 4000, 'origin connection closed')
    expect(written).toBeLessThan(total)
  })

  it('in a 2025-03-26 batch, every forwarded id gets -31001 and local answers stay', async () => {
    origin.handle((r, res) => {
      const ids = (r.json as { id: number }[]).map((m) => m.id)
      res.writeHead(200, { 'content-type': 'application/json' }).end(`[${ids.map((id) => replyOf(id, MAX)).join(',')}]`)
    })
    const body = `[${call(4)},${call(5)},{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"big","arguments":"no"}}]`
    const got = await post(edge, body, mcpHeaders('2025-03-26'))
    const msgs = JSON.parse(got.text) as { id: number; error?: { code: number } }[]
    expect(msgs.map((m) => [m.id, m.error?.code])).toEqual([
      [6, -32602],
      [4, -31001],
      [5, -31001],
    ])
    expect(got.text).not.toContain(CANARY)
  })

  // Skipped on the Worker: under plain Miniflare a client that aborts its request is not passed
  // on to the Worker (request.signal does not fire and the invocation is not cancelled within the
  // test's 4 s, also with the `enable_request_signal` compatibility flag; the same limit as the SSE
  // disconnect test in sse-streaming.test.ts), so only ORIGIN_TIMEOUT_MS ends the origin request
  // there. The Worker passes request.signal all the same (app.ts), and on Cloudflare a client
  // disconnect cancels the invocation and its subrequests.
  it.skipIf(name === 'worker')('a client that disconnects during a JSON reply aborts the origin request', async () => {
    let arrived!: () => void
    const received = new Promise<void>((r) => (arrived = r))
    let closed!: () => void
    const originClosed = new Promise<void>((r) => (closed = r))
    origin.handle((_r, res) => {
      res.on('close', () => closed())
      arrived() // and never answers
    })
    const before = (await postLogs(edge)).length
    const controller = new AbortController()
    const pending = fetch(edge.url, { method: 'POST', headers: mcpHeaders(), body: call(7), signal: controller.signal }).catch((e: unknown) => e)
    await within(received, 4000, 'request at the origin')
    const t0 = Date.now()
    controller.abort()
    await pending
    // The origin never answers: any bound catches an abort that is not passed on (a hang).
    await within(originClosed, 10_000, 'origin request aborted')
    expect(Date.now() - t0).toBeLessThan(10_000)
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual([{ id: '7', grade: 'missing', code: -31003 }])
    expect(log.clientClosed).toBe(true)
  })
})
