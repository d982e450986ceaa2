/**
 * The standalone GET stream (`GET /mcp`, MCP 2025 Streamable HTTP) on the Node entry and on the
 * built Worker in workerd (docs/scope.md):
 * - relayed byte for byte: the exact bytes the origin wrote (CRLF, comments, `id:`-only blocks,
 *   `retry`, named events, a UTF-8 character split across chunks) reach the client unchanged;
 * - a `notifications/tools/list_changed` event on it invalidates the origin's tools, so the next
 *   call refreshes the list; other events (another notification, the method name inside a string,
 *   a named event) do not;
 * - with a real SDK server (low-level `Server`, stateful Streamable HTTP, one server per session)
 *   and the official SDK client: after the server changes a tool's schema and sends list_changed
 *   on the client's GET stream, the edge validates the next call against the new schema.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, countMethod, rpc } from '../helpers/mcp-script'
import { initializeReply } from '../helpers/initialize-reply'

const LIST_CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
const ALPHA = { name: 'alpha', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }

type Rpc = { id?: unknown; method?: string; params?: { protocolVersion?: string } }

/** Resolves when `p` does, or rejects after `ms` (so a hanging stream fails the test, not the run). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))])
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('GET stream pass-through on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  /** What the origin writes on the next GET stream, one write after another (15 ms apart); the stream then stays open. */
  let writes: Buffer[] = []
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    // A minimal MCP server (the edge's pull: initialize, tools/list, DELETE; tools/call) plus a scripted GET stream.
    origin.handle((r, res) => {
      if (r.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        const queue = [...writes]
        const next = () => {
          const w = queue.shift()
          if (w === undefined || res.destroyed) return
          res.write(w)
          setTimeout(next, 15)
        }
        return next()
      }
      if (r.method === 'DELETE') return void res.writeHead(200).end()
      const m = r.json as Rpc | undefined
      if (m?.method === 'initialize')
        return sendJson(res, initializeReply(m, { echo: '2025-03-26', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'scripted', version: '1' } }), 200, {
          'mcp-session-id': 'pull-1',
        })
      if (m?.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [ALPHA] } })
      if (m?.method === 'tools/call') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } })
      res.writeHead(202).end()
    })
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  /** Opens the GET stream through the edge and reads until `bytes` bytes arrived; then closes it. */
  async function readGet(bytes: number): Promise<Buffer> {
    const controller = new AbortController()
    const res = await fetch(edge.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 'sess-1' },
      signal: controller.signal,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const reader = res.body!.getReader()
    const chunks: Uint8Array[] = []
    let n = 0
    try {
      await within(
        (async () => {
          while (n < bytes) {
            const { value, done } = await reader.read()
            if (done) break
            chunks.push(value)
            n += value.byteLength
          }
        })(),
        4000,
        `${bytes} bytes of the GET stream`
      )
    } finally {
      controller.abort()
    }
    return Buffer.concat(chunks)
  }

  /** Makes the edge know `alpha` (one pull), and returns how many tools/list the origin has seen. */
  async function warm(): Promise<number> {
    const r = await rpc(edge.url, call(1, 'alpha', { n: 'x' }))
    expect(r.json.result?.isError, r.text).toBe(true)
    const again = await rpc(edge.url, call(2, 'alpha', { n: 'y' }))
    expect(again.json.result?.isError).toBe(true)
    return countMethod(origin, 'tools/list')
  }

  it('answers HEAD 405 without opening a stream at the origin', async () => {
    const gets = () => origin.received.filter((r) => r.method === 'GET' || r.method === 'HEAD').length
    const before = gets()
    const res = await within(fetch(edge.url, { method: 'HEAD', headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } }), 4000, 'HEAD')
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, POST, DELETE')
    expect(gets()).toBe(before)
  })

  it('relays the origin bytes unchanged, and list_changed on the stream makes the next call refresh the tool list', async () => {
    const pulls = await warm()
    const euro = Buffer.from('€', 'utf8')
    writes = [
      Buffer.from(': keep-alive\r\n\r\nretry: 2500\r\nid: ev-1\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'),
      Buffer.concat([euro.subarray(0, 1)]),
      Buffer.concat([
        euro.subarray(1),
        Buffer.from(
          '"}}\r\n\r\nid: only-an-id\n\n:comment without space\n\ndata:{"jsonrpc":"2.0",\ndata: "method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n'
        ),
      ]),
      Buffer.from(`id: ev-2\ndata: ${LIST_CHANGED.slice(0, 20)}`),
      Buffer.from(`${LIST_CHANGED.slice(20)}\n\n`),
    ]
    const sent = Buffer.concat(writes)
    const got = await readGet(sent.length)
    expect(got.equals(sent), `client received:\n${got.toString('utf8')}`).toBe(true)
    // The event was seen before its last chunk was relayed: the next call pulls the list again.
    const r = await rpc(edge.url, call(3, 'alpha', { n: 'z' }))
    expect(r.json.result?.isError).toBe(true)
    expect(countMethod(origin, 'tools/list')).toBe(pulls + 1)
  })

  it('other events on the stream do not invalidate', async () => {
    const pulls = await warm()
    writes = [
      Buffer.from('data: {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}\n\n'),
      Buffer.from('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"notifications/tools/list_changed"}}\n\n'),
      Buffer.from(`event: other\ndata: ${LIST_CHANGED}\n\n`),
      Buffer.from('data: not json notifications/tools/list_changed\n\n'),
    ]
    const sent = Buffer.concat(writes)
    const got = await readGet(sent.length)
    expect(got.equals(sent)).toBe(true)
    const r = await rpc(edge.url, call(4, 'alpha', { n: 'z' }))
    expect(r.json.result?.isError).toBe(true)
    expect(countMethod(origin, 'tools/list')).toBe(pulls)
  })
})

/** A real SDK origin whose one tool's schema can be changed; every session's server then sends list_changed. */
async function startChangingOrigin(): Promise<{ url: string; calls: unknown[]; gets: number; change(): Promise<void>; close(): Promise<void> }> {
  let alphaType: 'integer' | 'string' = 'integer'
  const calls: unknown[] = []
  const servers = new Set<Server>()
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const state = { gets: 0 }
  const newServer = () => {
    const server = new Server({ name: 'changing-origin', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'alpha', inputSchema: { type: 'object' as const, properties: { n: { type: alphaType } }, required: ['n'] } }],
    }))
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      calls.push(req.params.arguments)
      return { content: [{ type: 'text' as const, text: 'ok' }] }
    })
    servers.add(server)
    return server
  }
  const readJson = async (req: IncomingMessage) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    return text ? JSON.parse(text) : undefined
  }
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined
    if (req.method === 'POST') {
      const body: unknown = await readJson(req)
      let transport = sid ? transports.get(sid) : undefined
      if (!transport) {
        if (sid || !isInitializeRequest(body)) return void res.writeHead(sid ? 404 : 400).end()
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, t),
        })
        const server = newServer()
        t.onclose = () => {
          if (t.sessionId) transports.delete(t.sessionId)
          servers.delete(server)
        }
        await server.connect(t)
        transport = t
      }
      return transport.handleRequest(req, res, body)
    }
    const transport = sid ? transports.get(sid) : undefined
    if (!transport) return void res.writeHead(sid ? 404 : 400).end()
    if (req.method === 'GET') state.gets++
    return transport.handleRequest(req, res)
  }
  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    get gets() {
      return state.gets
    },
    async change() {
      alphaType = 'string'
      for (const s of servers) await s.sendToolListChanged().catch(() => undefined)
    },
    async close() {
      for (const t of transports.values()) await t.close().catch(() => undefined)
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('list_changed from a real SDK server on the GET stream, on $name', ({ start }) => {
  let origin: Awaited<ReturnType<typeof startChangingOrigin>>
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startChangingOrigin()
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('the next call is validated against the changed schema', async () => {
    const client = new Client({ name: 'list-changed-test', version: '1.0.0' })
    let notified!: () => void
    const changed = new Promise<void>((r) => (notified = r))
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => notified())
    await client.connect(new StreamableHTTPClientTransport(new URL(edge.url)))
    // The SDK client opens the GET stream after initialization.
    await within(
      (async () => {
        while (origin.gets === 0) await new Promise((r) => setTimeout(r, 20))
      })(),
      4000,
      'the client GET stream'
    )
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['alpha'])
    // Validated by the edge against n: integer; the origin never sees it.
    const refused = await client.callTool({ name: 'alpha', arguments: { n: 'seven' } })
    expect(refused.isError).toBe(true)
    expect(origin.calls).toEqual([])

    // The tool changes; the SDK server announces it on the session's GET stream (through the edge).
    await new Promise((r) => setTimeout(r, 100))
    await origin.change()
    await within(changed, 4000, 'list_changed at the client')
    const accepted = await client.callTool({ name: 'alpha', arguments: { n: 'seven' } })
    expect(accepted.isError, JSON.stringify(accepted)).toBeUndefined()
    expect(origin.calls).toEqual([{ n: 'seven' }])
    const refusedNow = await client.callTool({ name: 'alpha', arguments: { n: 7 } })
    expect(refusedNow.isError).toBe(true)
    expect(origin.calls).toEqual([{ n: 'seven' }])
    await client.close()
  })
})
