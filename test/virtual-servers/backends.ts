/**
 * Real SDK MCP servers behind a virtual server, for the tests of test/virtual-servers:
 * - {@link startStatefulOrigin}: a stateful 2025 server (SDK v1 `McpServer`, Streamable HTTP with
 *   session ids, SSE answers), each session its own server; it refuses any request without the
 *   session id it gave (400), and an unknown session id with 404 as the SDK does. It can be stopped
 *   and started again on the same port (its sessions are then gone);
 * - {@link startModernOrigin}: a stateless 2026-07-28 server (SDK v2 `createMcpHandler`);
 * - {@link startPerCallerOrigin}: a stateless 2025 server whose list depends on the caller's token.
 * Each tool answers `<origin label>:<tool>:<arguments as JSON>` and records the call.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { Server as SdkServer } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { createAsyncServer } from '../helpers/async-listener'

/** A running origin: its URL, the calls it served (`<session or '-'>:<tool>`), and how to stop and restart it. */
export interface TestOrigin {
  url: string
  calls: string[]
  /** Session ids it gave (stateful origins). */
  sessions: string[]
  /** Every `Mcp-Session-Id` it received, in order (stateful origins). */
  sessionIdsSeen?: string[]
  /** The calls of the `wait` tool that the client cancelled (`<session>:wait`), stateful origins with `waitTool`. */
  cancelled?: string[]
  stop(): Promise<void>
  /** Starts again on the same port (a stateful origin forgets its sessions). */
  restart(): Promise<void>
  /** Adds a tool to every live session's server (the SDK then sends `notifications/tools/list_changed` on each session's GET stream); stateful origins only. */
  addTool?(name: string): void
  /** Publishes a change to every open `subscriptions/listen` of the origin that opted in (SDK v2 `handler.notify`); 2026-07-28 origins only. */
  notify?: { toolsChanged(): void; promptsChanged(): void; resourcesChanged(): void }
  close(): Promise<void>
}

async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r))
  return (server.address() as AddressInfo).port
}

async function stopServer(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
}

/** Reads a request body as JSON (the SDK v1 transport takes it parsed). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text ? JSON.parse(text) : undefined
}

/**
 * A stateful 2025 origin with `tools` (name -> whether it takes a required string `q`).
 * @param label written in each result, so a test sees which origin answered
 */
/** @param opts.unknownSession the status of its answer to a session id it does not know: 404 (the SDK's, default) or 400 (as servers built on the SDK's examples, server-everything among them) */
export async function startStatefulOrigin(
  label: string,
  tools: string[],
  opts: { waitTool?: boolean; extra?: (server: McpServerV1) => void; unknownSession?: 404 | 400 } = {}
): Promise<TestOrigin> {
  const calls: string[] = []
  const cancelled: string[] = []
  const given: string[] = []
  const seen: string[] = []
  const names = [...tools]
  const servers = new Set<McpServerV1>()
  let transports = new Map<string, StreamableHTTPServerTransport>()
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id']
    const body = req.method === 'POST' ? await readJson(req) : undefined
    if (typeof sid === 'string') {
      seen.push(sid)
      const t = transports.get(sid)
      if (!t) {
        if (opts.unknownSession === 400)
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}')
        else res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}')
        return
      }
      await t.handleRequest(req, res, body)
      return
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}')
      return
    }
    const map = transports
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        map.set(id, transport)
        given.push(id)
      },
    })
    const server = new McpServerV1({ name: `${label}-origin`, version: '1.0.0' })
    transport.onclose = () => {
      if (transport.sessionId) map.delete(transport.sessionId)
      servers.delete(server)
    }
    for (const name of names) register(server, name)
    opts.extra?.(server)
    // `wait` answers only when its request is cancelled (notifications/cancelled aborts its signal).
    if (opts.waitTool)
      server.registerTool('wait', { inputSchema: { q: z.string() } }, async (_args, extra) => {
        calls.push(`${extra.sessionId ?? '-'}:wait`)
        await new Promise<void>((r) => extra.signal.addEventListener('abort', () => r()))
        cancelled.push(`${extra.sessionId ?? '-'}:wait`)
        return { content: [{ type: 'text', text: 'cancelled' }] }
      })
    servers.add(server)
    await server.connect(transport)
    await transport.handleRequest(req, res, body)
  }
  const register = (server: McpServerV1, name: string) =>
    server.registerTool(name, { description: `${label} ${name}`, inputSchema: { q: z.string() } }, async (args, extra) => {
      calls.push(`${extra.sessionId ?? '-'}:${name}`)
      return { content: [{ type: 'text', text: `${label}:${name}:${JSON.stringify(args)}` }] }
    })
  let http = createAsyncServer(handler)
  const port = await listen(http)
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    sessions: given,
    sessionIdsSeen: seen,
    cancelled,
    addTool: (name) => {
      names.push(name)
      for (const s of servers) register(s, name)
    },
    stop: () => stopServer(http),
    restart: async () => {
      transports = new Map()
      http = createAsyncServer(handler)
      await listen(http, port)
    },
    close: () => (http.listening ? stopServer(http) : Promise.resolve()),
  }
}

const Q = { type: 'object' as const, properties: { q: { type: 'string' as const } }, required: ['q'] }

/** A stateless 2026-07-28 origin (SDK v2 `createMcpHandler`) with `tools`, each taking a required string `q`. */
/** @param extra registers more on each request's server (prompts, resources) */
export async function startModernOrigin(label: string, tools: string[], extra?: (server: McpServer) => void): Promise<TestOrigin> {
  const calls: string[] = []
  const make = () =>
    createMcpHandler(() => {
      const s = new McpServer({ name: `${label}-origin`, version: '1.0.0' })
      for (const name of tools)
        s.registerTool(name, { description: `${label} ${name}`, inputSchema: fromJsonSchema<{ q: string }>(Q) }, async (args: { q: string }) => {
          calls.push(`-:${name}`)
          return { content: [{ type: 'text' as const, text: `${label}:${name}:${JSON.stringify(args)}` }] }
        })
      extra?.(s)
      return s
    })
  let handler = make()
  let http = createAsyncServer(toNodeHandler(handler))
  const port = await listen(http)
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    sessions: [],
    notify: {
      toolsChanged: () => handler.notify.toolsChanged(),
      promptsChanged: () => handler.notify.promptsChanged(),
      resourcesChanged: () => handler.notify.resourcesChanged(),
    },
    stop: async () => {
      await handler.close()
      await stopServer(http)
    },
    restart: async () => {
      handler = make()
      http = createAsyncServer(toNodeHandler(handler))
      await listen(http, port)
    },
    close: async () => {
      if (!http.listening) return
      await handler.close()
      await stopServer(http)
    },
  }
}

/**
 * A stateless 2025 origin (SDK v1 low-level `Server`, JSON answers) whose tool list depends on the
 * caller: `common`, and `only_<token>` for `Authorization: Bearer <token>` (a private list).
 */
export async function startPerCallerOrigin(): Promise<{ url: string; readonly requests: number; close(): Promise<void> }> {
  let requests = 0
  const http = createAsyncServer(async (req, res) => {
    requests++
    const token = /^Bearer (\w+)$/.exec(req.headers.authorization ?? '')?.[1] ?? 'nobody'
    const server = new SdkServer({ name: 'per-caller', version: '1.0.0' }, { capabilities: { tools: {} } })
    const schema = { type: 'object' as const, properties: {} }
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: 'common', inputSchema: schema },
        { name: `only_${token}`, inputSchema: schema },
      ],
    }))
    server.setRequestHandler(CallToolRequestSchema, (r) => ({ content: [{ type: 'text', text: `${r.params.name} for ${token}` }] }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  const port = await listen(http)
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get requests() {
      return requests
    },
    close: () => stopServer(http),
  }
}
