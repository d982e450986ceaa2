/**
 * SSE replies (docs/grading.md): transformed event by event (eventsource-parser), never buffered beyond
 * one event, on Node and on the built Worker in workerd.
 * - no buffering: the client receives the first event before the origin sends the second;
 * - fidelity: events split across chunks (also inside a UTF-8 character), multi-line `data`,
 *   comments, `id` and `retry`, CRLF, custom events and non-JSON data passed through; progress
 *   and log notifications relayed in order; a hidden failure marked; a repeated id dropped with
 *   its event id kept;
 * - the log line is written as soon as every id is graded, not when the stream ends;
 * - a client that goes away: the origin stream is cancelled and the log says so;
 * - a real SDK origin (event store, priming event with `id`/`retry`): resumption tokens, progress
 *   and log notifications reach the official SDK client through the edge.
 */
import type { Server as HttpServer, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js'
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { createAsyncServer } from '../helpers/async-listener'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { ADMIN_TOKEN, gradesOf, mcpHeaders, nextLog, postLogs, pushTools } from '../helpers/grading'

const call = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"steps","arguments":{}}}`
const sseHead = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
const PROGRESS_1 = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}'
const PROGRESS_2 = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":2}}'
const ANSWER = (id: number) => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"done"}]}}`

/** Resolves when `p` does, or rejects after `ms` with `what` (so a buffering edge fails, not hangs). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))])
}

/** Reads a response body chunk by chunk, accumulating text. */
function chunkReader(res: Response) {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  return {
    get text() {
      return text
    },
    /** Reads until the accumulated text contains `needle`. */
    async until(needle: string): Promise<string> {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`stream ended before ${JSON.stringify(needle)}`)
        text += decoder.decode(value, { stream: true })
      }
      return text
    },
    async rest(): Promise<string> {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return text
        text += decoder.decode(value, { stream: true })
      }
    },
    cancel: () => reader.cancel(),
  }
}

/** The request id of the streamed POSTs: the correlation id of the edge's classification of a result it marks isError. */
const SSE_RID = 'sse-post'

function postStream(edge: EdgeUnderTest, body: string, signal?: AbortSignal): Promise<Response> {
  return fetch(edge.url, { method: 'POST', headers: mcpHeaders(undefined, { 'x-request-id': SSE_RID }), body, signal })
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('SSE replies on $name', ({ name, start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN })
    await pushTools(edge, [{ name: 'steps', inputSchema: { type: 'object' } }])
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('relays the first event before the origin sends the second (no buffering)', async () => {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let sentSecond = false
    origin.handle(async (_req, res) => {
      sseHead(res)
      res.write(`data: ${PROGRESS_1}\n\n`)
      // Waits for the test to see the first event; gives up after 5 s so a buffering edge fails.
      await within(released, 5000, 'client never saw the first event').catch(() => undefined)
      sentSecond = true
      res.write(`data: ${PROGRESS_2}\n\n`)
      res.end(`data: ${ANSWER(1)}\n\n`)
    })
    const res = await postStream(edge, call(1))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const body = chunkReader(res)
    await within(body.until(PROGRESS_1 + '\n\n'), 4000, 'first event through the edge')
    expect(sentSecond).toBe(false)
    release()
    const all = await within(body.rest(), 4000, 'rest of the stream')
    expect(sentSecond).toBe(true)
    expect(all).toBe(`data: ${PROGRESS_1}\n\ndata: ${PROGRESS_2}\n\ndata: ${ANSWER(1)}\n\n`)
  })

  it('sends the headers at once while the origin has not sent an event yet', async () => {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let sentEvent = false
    origin.handle(async (_req, res) => {
      sseHead(res)
      res.flushHeaders()
      await within(released, 5000, 'client never saw the headers').catch(() => undefined)
      sentEvent = true
      res.end(`data: ${ANSWER(1)}\n\n`)
    })
    const res = await within(postStream(edge, call(1)), 4000, 'headers through the edge')
    expect(sentEvent).toBe(false)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    release()
    expect(await within(res.text(), 4000, 'the answer')).toBe(`data: ${ANSWER(1)}\n\n`)
  })

  it.runIf(name === 'node')('sends a reply the origin sent whole in one piece, with a Content-Length', async () => {
    const wire = `data: ${PROGRESS_1}\n\ndata: ${PROGRESS_2}\n\ndata: ${ANSWER(1)}\n\n`
    origin.handle((_req, res) => {
      sseHead(res)
      res.end(wire)
    })
    const res = await postStream(edge, call(1))
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(wire)))
    expect(res.headers.get('transfer-encoding')).toBeNull()
    expect(await res.text()).toBe(wire)
  })

  it('transforms event by event: split chunks, multi-line data, comments, id, retry, CRLF, custom events relayed byte for byte; a hidden failure marked, a repeated id dropped', async () => {
    const hidden = '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\\"success\\":false}"}]}}'
    const wire =
      ': keepalive\n\n' +
      'retry: 2500\n' +
      `id: ev-1\ndata: ${PROGRESS_1}\n\n` +
      'event: custom\ndata: not json at all\ndata: second line\n\n' +
      'id: ev-2\r\ndata: {"jsonrpc":"2.0","method":"notifications/message",\r\ndata: "params":{"level":"info","data":"caf\u00e9"}}\r\n\r\n' +
      'data: {not json either\n\n' +
      `id: ev-3\ndata: ${hidden}\n\n` +
      `id: ev-4\ndata: {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"second answer"}}\n\n` +
      `data: ${PROGRESS_2}\n\n`
    const bytes = Buffer.from(wire, 'utf8')
    // Cut points: inside "data:", inside a JSON member, inside the two bytes of "é", inside a CRLF.
    const e = bytes.indexOf(Buffer.from('\u00e9', 'utf8'))
    const cuts = [3, 30, bytes.indexOf(Buffer.from('progressToken')) + 4, bytes.indexOf(Buffer.from('\r\n')) + 1, e + 1, bytes.length - 5].sort((a, b) => a - b)
    origin.handle(async (_req, res) => {
      sseHead(res)
      let at = 0
      for (const cut of cuts) {
        res.write(bytes.subarray(at, cut))
        at = cut
        await new Promise((r) => setTimeout(r, 15))
      }
      res.end(bytes.subarray(at))
    })
    const before = (await postLogs(edge)).length
    const res = await postStream(edge, call(2))
    const text = await within(res.text(), 5000, 'whole stream')
    const marked =
      hidden.slice(0, -2) +
      `,"isError":true,"_meta":{"io.mcp-edge/failure":{"class":"capability","code":"hidden_failure","correlationId":"${SSE_RID}","agentGuidance":"The tool reported a failure in its result; read it before calling again."}}}}`
    // Every event the edge leaves alone arrives as the origin's own bytes (comments, retry, CRLF,
    // field order); only the hidden failure is rewritten and the repeated answer loses its data.
    expect(text).toBe(
      wire
        .replace(`id: ev-3\ndata: ${hidden}\n\n`, `id: ev-3\ndata: ${marked}\n\n`)
        .replace(`id: ev-4\ndata: {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"second answer"}}\n\n`, 'id: ev-4\n\n')
    )
    expect(text).not.toContain('second answer')
    expect(text).toContain(marked)
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual([{ id: '2', grade: 'tool_error' }])
    // The table was written when id 2 was graded; the later repeated answer gets its own line.
    expect(log.dropped).toBeUndefined()
    const late = (await edge.logs({ msg: 'mcp.post.dropped', where: (r) => r.rid === log.rid })).filter((r) => r.msg === 'mcp.post.dropped')
    expect(late.at(-1)).toEqual({ level: 'warn', msg: 'mcp.post.dropped', rid: log.rid, origin: 'default', id: '2', reason: 'repeated' })
  })

  it('grades a batch answered in one SSE event per id, local answers first', async () => {
    origin.handle((_req, res) => {
      sseHead(res)
      res.end(`data: [${ANSWER(3)},{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"nope"}}]\n\n`)
    })
    const before = (await postLogs(edge)).length
    const res = await fetch(edge.url, {
      method: 'POST',
      headers: mcpHeaders('2025-03-26'),
      body: `[${call(3)},{"jsonrpc":"2.0","id":4,"method":"resources/list"},{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"steps","arguments":[]}}]`,
    })
    const text = await res.text()
    const local = text.split('\n\n')[0]!
    expect(local.startsWith('data: {"jsonrpc":"2.0","id":5,"error":{"code":-32602')).toBe(true)
    expect(text.endsWith(`data: [${ANSWER(3)},{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"nope"}}]\n\n`)).toBe(true)
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual([
      { id: '5', grade: 'rejected', code: -32602 },
      { id: '3', grade: 'ok' },
      { id: '4', grade: 'rpc_error', code: -32601 },
    ])
  })

  it('drops a request sent on the response stream of a 2026-07-28 request, and logs it', async () => {
    const sampling = '{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}'
    const answer = '{"jsonrpc":"2.0","id":1090,"result":{"resultType":"complete","resources":[]}}'
    origin.handle((_req, res) => {
      sseHead(res)
      res.end(`event: message\ndata: ${PROGRESS_1}\n\nid: e1\ndata: ${sampling}\n\nevent: message\ndata: ${answer}\n\n`)
    })
    const before = (await postLogs(edge)).length
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'ExampleClient', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const res = await fetch(edge.url, {
      method: 'POST',
      headers: mcpHeaders('2026-07-28', { 'mcp-method': 'resources/list' }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1090, method: 'resources/list', params: { _meta: meta } }),
    })
    expect(await res.text()).toBe(`event: message\ndata: ${PROGRESS_1}\n\nid: e1\n\nevent: message\ndata: ${answer}\n\n`)
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual([{ id: '1090', grade: 'ok' }])
    expect(log.dropped).toEqual([{ id: '"srv-1"', reason: 'server_request' }])
  })

  it('writes the log line once every id is graded, while the origin keeps the stream open', async () => {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let ended = false
    origin.handle(async (_req, res) => {
      sseHead(res)
      res.write(`data: ${ANSWER(6)}\n\n`)
      await within(released, 5000, 'test never released').catch(() => undefined)
      ended = true
      res.end(`data: ${PROGRESS_2}\n\n`)
    })
    const before = (await postLogs(edge)).length
    const res = await postStream(edge, call(6))
    const body = chunkReader(res)
    await within(body.until(ANSWER(6)), 4000, 'answer through the edge')
    const log = await nextLog(edge, before)
    expect(ended).toBe(false)
    expect(gradesOf(log)).toEqual([{ id: '6', grade: 'ok' }])
    release()
    expect(await body.rest()).toBe(`data: ${ANSWER(6)}\n\ndata: ${PROGRESS_2}\n\n`)
    // The stream's end writes no second line.
    await new Promise((r) => setTimeout(r, 100))
    expect((await postLogs(edge)).length).toBe(before + 1)
  })

  // Skipped on the Worker: under plain Miniflare a client abort is not passed on to the Worker's
  // response stream (its cancel is never called within 4 s here), so only the idle timeout ends
  // the origin stream there (see grading-faults.test.ts, "SSE stream that goes quiet").
  it.skipIf(name === 'worker')('cancels the origin stream when the client goes away and logs the open id', async () => {
    let originClosed!: () => void
    const closed = new Promise<void>((r) => (originClosed = r))
    origin.handle((_req, res) => {
      sseHead(res)
      res.on('close', () => originClosed())
      res.write(`data: ${PROGRESS_1}\n\n`)
    })
    const before = (await postLogs(edge)).length
    const controller = new AbortController()
    const res = await postStream(edge, call(7), controller.signal)
    const body = chunkReader(res)
    await within(body.until(PROGRESS_1), 4000, 'first event')
    controller.abort()
    const log = await nextLog(edge, before, 4000)
    expect(gradesOf(log)).toEqual([{ id: '7', grade: 'missing', code: -31003 }])
    expect(log.clientClosed).toBe(true)
    await within(closed, 4000, 'origin connection closed after the client left')
  })
})

/** A real SDK origin (McpServer, stateless Streamable HTTP, SSE replies, event store, retry). */
async function startSdkOrigin(): Promise<{ url: string; close(): Promise<void>; eventIds: string[] }> {
  const eventIds: string[] = []
  const http: HttpServer = createAsyncServer(async (req, res) => {
    const server = new McpServer({ name: 'sse-origin', version: '1.0.0' }, { capabilities: { logging: {} } })
    server.registerTool('steps', { description: 'Reports progress, logs, then answers.', inputSchema: {} }, async (_args, extra) => {
      const token = extra._meta?.progressToken
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } })
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'half way' } })
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 2, total: 2 } })
      return { content: [{ type: 'text', text: '{"ok":false,"reason":"quota exceeded"}' }] }
    })
    const store = new InMemoryEventStore()
    const storeEvent = store.storeEvent.bind(store)
    store.storeEvent = async (streamId, message) => {
      const id = await storeEvent(streamId, message)
      eventIds.push(id)
      return id
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, eventStore: store, retryInterval: 1000 })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    eventIds,
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('SDK origin with resumable SSE through the edge on $name', ({ start }) => {
  let origin: Awaited<ReturnType<typeof startSdkOrigin>>
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startSdkOrigin()
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('keeps the priming event (id, retry, empty data), relays progress and logs in order, and marks the hidden failure', async () => {
    const client = new Client({ name: 'sse-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(edge.url)))
    const seen: string[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(`log:${String(n.params.data)}`))
    const tokens: string[] = []
    const result = await client.callTool({ name: 'steps', arguments: {} }, undefined, {
      onprogress: (p) => void seen.push(`progress:${p.progress}`),
      onresumptiontoken: (t) => void tokens.push(t),
    })
    expect(seen).toEqual(['progress:1', 'log:half way', 'progress:2'])
    expect(result.isError).toBe(true)
    expect(result.content).toEqual([{ type: 'text', text: '{"ok":false,"reason":"quota exceeded"}' }])
    // Every event id the origin stored (priming event first) reached the client as a resumption token.
    expect(tokens.length).toBeGreaterThanOrEqual(5)
    for (const t of tokens) expect(origin.eventIds).toContain(t)
    await client.close()
  })

  it('relays the priming event bytes (retry, id, empty data) on a raw POST', async () => {
    const init = await fetch(edge.url, {
      method: 'POST',
      headers: mcpHeaders('2025-11-25'),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'steps', arguments: {} } }),
    })
    const text = await init.text()
    // The SDK's priming block, exactly as the origin wrote it.
    expect(text).toMatch(/^id: [^\n]+\nretry: 1000\ndata: ?\n\n/)
    expect(text).toContain('"isError":true')
  })
})
