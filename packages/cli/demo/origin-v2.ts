/**
 * @module demo/origin-v2
 * A second demo origin written with the SDK v2 (@modelcontextprotocol/server 2.4 `McpServer` +
 * `createMcpHandler`, served on node:http through @modelcontextprotocol/node `toNodeHandler`).
 * It speaks 2026-07-28 (per-request `_meta` envelope, no sessions) and, through the SDK's
 * stateless legacy leg, the 2025 revisions. Used by the peer tests as the "other generation" of
 * server; it validates arguments itself (the SDK does), unlike demo/origin.ts.
 *
 * Tools: `echo {message}`, `add {a, b}`, `count_with_progress {steps}` (one
 * `notifications/progress` per step when the call has a progressToken).
 * Resource: `demo://greeting` (text). Prompt: `greet {name}`.
 */
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '@modelcontextprotocol/node'
import {
  createMcpHandler,
  fromJsonSchema,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  originValidationResponse,
} from '@modelcontextprotocol/server'

/** The v2 demo tools' input schemas, as published in tools/list. */
export const V2_TOOL_SCHEMAS = {
  echo: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  add: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  count_with_progress: { type: 'object', properties: { steps: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['steps'] },
} as const

function newServer(): McpServer {
  const server = new McpServer({ name: 'demo-origin-v2', version: '1.0.0' })
  server.registerTool('echo', { description: 'Echo a message.', inputSchema: fromJsonSchema<{ message: string }>(V2_TOOL_SCHEMAS.echo) }, async ({ message }) => ({
    content: [{ type: 'text', text: message }],
  }))
  server.registerTool('add', { description: 'Add two numbers.', inputSchema: fromJsonSchema<{ a: number; b: number }>(V2_TOOL_SCHEMAS.add) }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
    structuredContent: { sum: a + b },
  }))
  server.registerTool(
    'count_with_progress',
    { description: 'Counts to `steps`, reporting progress after each step.', inputSchema: fromJsonSchema<{ steps: number }>(V2_TOOL_SCHEMAS.count_with_progress) },
    async ({ steps }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, 10))
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } })
      }
      return { content: [{ type: 'text', text: `counted to ${steps}` }] }
    }
  )
  server.registerResource('greeting', 'demo://greeting', { description: 'A greeting.', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Hello from the v2 origin.' }],
  }))
  server.registerPrompt(
    'greet',
    { description: 'Greets someone.', argsSchema: fromJsonSchema<{ name: string }>({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }) },
    async ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}.` } }] })
  )
  return server
}

/** A running v2 origin: `url` is its MCP endpoint. */
export interface RunningV2Origin {
  url: string
  close(): Promise<void>
}

/** Starts the v2 demo origin on 127.0.0.1 (port 0 picks a free one). */
export async function startV2Origin(port = 0): Promise<RunningV2Origin> {
  const handler = createMcpHandler(newServer)
  // Host/Origin checks from the SDK (DNS-rebinding protection on loopback), then the handler.
  const guarded = {
    fetch: async (request: Request) =>
      hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? originValidationResponse(request, localhostAllowedOrigins()) ?? handler.fetch(request),
  }
  const node = toNodeHandler(guarded)
  const server: HttpServer = createServer((req, res) => {
    if (!(req.url ?? '').startsWith('/mcp')) {
      res.writeHead(404).end()
      return
    }
    void node(req, res)
  })
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await handler.close()
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
