/**
 * @module demo/origin
 * A small MCP server written with the official SDK (@modelcontextprotocol/sdk), Streamable HTTP
 * on 127.0.0.1, used by `npm start` and by the tests as a real origin. It does not validate
 * arguments itself (it uses the low-level `Server`), so the edge's validation is what protects it,
 * and it counts every call it receives (`GET /stats`), so tests can prove a call never arrived.
 *
 * Tools:
 * - `get_forecast`: required string, an enum and a bounded integer;
 * - `create_order`: nested objects, arrays and `$defs`/`$ref`;
 * - `run_query`: answers a text result that is a JSON object with `success: false` (a hidden failure);
 * - `echo`: returns its text.
 *
 * Plus, with `fixtures: true` (what `npm start` uses), on the same session the fixtures of the
 * official conformance suite (demo/fixtures.ts): `test_*` tools, `test://` resources, prompts,
 * completion, logging, progress, sampling and elicitation, so `npm start` fronts an origin on which
 * the whole suite can run. With `modern: true` it also speaks MCP 2026-07-28 (stateless, an SDK v2
 * server with the fixtures of the suite's 2026-07-28 requirements, demo/fixtures-2026.ts) for every
 * request outside a 2025 session. Bound to loopback (the default), it answers only loopback Host/Origin.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { callFixtureTool, FIXTURE_TOOL_NAMES, FIXTURE_TOOLS, installFixtureHandlers } from './fixtures'
import { newFixtureServer2026, newStateKey } from './fixtures-2026'

/** The demo tools with their JSON Schemas, exactly as published in tools/list. */
export const DEMO_TOOLS = [
  {
    name: 'get_forecast',
    description: 'Weather forecast for a city.',
    inputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 1, description: 'City name' },
        units: { type: 'string', enum: ['c', 'f'], description: 'Temperature units' },
        days: { type: 'integer', minimum: 1, maximum: 16, description: 'Number of forecast days' },
      },
      required: ['city'],
      additionalProperties: false,
    },
  },
  {
    name: 'create_order',
    description: 'Create an order with a customer and line items.',
    inputSchema: {
      type: 'object',
      $defs: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{5}$' } },
          required: ['street', 'city'],
        },
        lineItem: {
          type: 'object',
          properties: { sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{3}$' }, qty: { type: 'integer', minimum: 1 } },
          required: ['sku', 'qty'],
          additionalProperties: false,
        },
      },
      properties: {
        customer: {
          type: 'object',
          properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' }, address: { $ref: '#/$defs/address' } },
          required: ['name'],
        },
        items: { type: 'array', items: { $ref: '#/$defs/lineItem' }, minItems: 1 },
        priority: { type: 'string', enum: ['low', 'normal', 'high'] },
      },
      required: ['customer', 'items'],
    },
  },
  {
    name: 'run_query',
    description: 'Run a read-only query. Reports failures inside its JSON text.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  {
    name: 'echo',
    description: 'Echo a message.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
] as const

/** Counts of what the origin received. */
export interface OriginStats {
  calls: Record<string, number>
  toolsList: number
  posts: number
}

function callTool(name: string, args: Record<string, unknown>) {
  switch (name) {
    case 'get_forecast': {
      const days = typeof args.days === 'number' ? args.days : 3
      const units = args.units === 'f' ? 'F' : 'C'
      return { content: [{ type: 'text', text: `Forecast for ${String(args.city)}: ${days} days, 21°${units}, sunny` }] }
    }
    case 'create_order':
      return { content: [{ type: 'text', text: JSON.stringify({ success: true, orderId: 'ord-1001' }) }], structuredContent: { success: true, orderId: 'ord-1001' } }
    case 'run_query':
      return { content: [{ type: 'text', text: JSON.stringify({ success: false, error_code: 'SQL_ERROR', error: 'table not found' }) }] }
    case 'echo':
      return { content: [{ type: 'text', text: String(args.message) }] }
    default:
      return { content: [{ type: 'text', text: `Unknown tool ${name}` }], isError: true }
  }
}

function newMcpServer(stats: OriginStats, fixtures: boolean): Server {
  const server = new Server(
    { name: 'demo-origin', version: '1.0.0' },
    fixtures
      ? { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} } }
      : { capabilities: { tools: { listChanged: true } } }
  )
  const tools = [...DEMO_TOOLS, ...(fixtures ? FIXTURE_TOOLS : [])] as unknown as { name: string; inputSchema: { type: 'object' } }[]
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    stats.toolsList++
    return { tools }
  })
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const name = req.params.name
    stats.calls[name] = (stats.calls[name] ?? 0) + 1
    const args = (req.params.arguments ?? {}) as Record<string, unknown>
    return fixtures && FIXTURE_TOOL_NAMES.has(name) ? callFixtureTool(name, args, extra, server) : callTool(name, args)
  })
  if (fixtures) installFixtureHandlers(server, new Set())
  return server
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * DNS-rebinding protection (MCP 2025-11-25, Transports, "Security Warning"): the origin listens on
 * loopback, so it answers only requests whose Host, and Origin when present, name a loopback host.
 * The SDK's transport option compares Host byte for byte with a fixed list (port included), which
 * does not fit a port picked at listen time, hence this small check.
 */
function loopbackOnly(req: IncomingMessage): boolean {
  const hostname = (value: string) => {
    try {
      return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase()
    } catch {
      return ''
    }
  }
  if (!LOOPBACK_NAMES.has(hostname(req.headers.host ?? ''))) return false
  const origin = req.headers.origin
  return origin === undefined || LOOPBACK_NAMES.has(hostname(origin))
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** A node:http request as a fetch `Request` (body given as text, already read). */
function toRequest(req: IncomingMessage, body: string | undefined): Request {
  const headers = new Headers()
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v)
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method: req.method, headers, ...(body !== undefined ? { body } : {}) })
}

/** Writes a fetch `Response` to node:http, chunk by chunk (SSE streams are not buffered). */
async function writeResponse(r: Response, res: ServerResponse): Promise<void> {
  res.writeHead(r.status, Object.fromEntries(r.headers))
  if (r.body) for await (const chunk of r.body) res.write(chunk)
  res.end()
}

/** Options of {@link startDemoOrigin}. */
export interface DemoOriginOptions {
  port?: number
  host?: string
  /** Answer POSTs with application/json instead of SSE. */
  jsonResponse?: boolean
  /**
   * Also serve the conformance-suite fixtures (demo/fixtures.ts). Default false, so the demo's
   * tool list stays the four demo tools for tests that count them; `npm start` turns it on.
   */
  fixtures?: boolean
  /**
   * Also speak MCP 2026-07-28 (stateless, SDK v2) with the fixtures of the conformance suite's
   * 2026-07-28 requirements (demo/fixtures-2026.ts): every POST that belongs to no 2025 session and
   * is not an `initialize`, and every GET or DELETE without a session id, goes there. Default
   * false, so tests that need a 2025-only origin keep one; `npm start` turns it on.
   */
  modern?: boolean
}

/** A running demo origin: `url` is its MCP endpoint. */
export interface RunningOrigin {
  url: string
  stats: OriginStats
  close(): Promise<void>
}

/** Starts the demo origin (stateful sessions, one SDK server per session). */
export async function startDemoOrigin(opts: DemoOriginOptions = {}): Promise<RunningOrigin> {
  const stats: OriginStats = { calls: {}, toolsList: 0, posts: 0 }
  const loopbackBound = ['127.0.0.1', 'localhost', '::1'].includes(opts.host ?? '127.0.0.1')
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const stateKey = newStateKey()
  const modern = opts.modern ? createMcpHandler(() => newFixtureServer2026(stateKey)) : null
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats))
      return
    }
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end()
      return
    }
    if (loopbackBound && !loopbackOnly(req)) {
      res
        .writeHead(403, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Forbidden: Host or Origin is not a loopback name' } }))
      return
    }
    const sid = req.headers['mcp-session-id']
    const sessionId = Array.isArray(sid) ? sid[0] : sid
    if (req.method === 'POST') {
      stats.posts++
      let text = ''
      let body: unknown
      try {
        text = await readText(req)
        body = text ? JSON.parse(text) : undefined
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }))
        return
      }
      if (modern && !sessionId && !isInitializeRequest(body)) {
        await writeResponse(await modern.fetch(toRequest(req, text)), res)
        return
      }
      let transport = sessionId ? transports.get(sessionId) : undefined
      if (!transport) {
        if (sessionId || !isInitializeRequest(body)) {
          res
            .writeHead(sessionId ? 404 : 400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: sessionId ? 'Session not found' : 'Bad Request: no valid session' } }))
          return
        }
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: opts.jsonResponse ?? false,
          onsessioninitialized: (id) => void transports.set(id, t),
        })
        t.onclose = () => {
          if (t.sessionId) transports.delete(t.sessionId)
        }
        await newMcpServer(stats, opts.fixtures ?? false).connect(t)
        transport = t
      }
      await transport.handleRequest(req, res, body)
      return
    }
    if (modern && !sessionId && (req.method === 'GET' || req.method === 'DELETE')) {
      await writeResponse(await modern.fetch(toRequest(req, undefined)), res)
      return
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const transport = sessionId ? transports.get(sessionId) : undefined
      if (!transport) {
        res.writeHead(sessionId ? 404 : 400).end()
        return
      }
      await transport.handleRequest(req, res)
      return
    }
    res.writeHead(405, { allow: 'GET, POST, DELETE' }).end()
  }
  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/mcp`,
    stats,
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => undefined)
      await modern?.close()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
