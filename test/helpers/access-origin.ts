/**
 * A real SDK MCP server (SDK v1 low-level `Server`, stateless Streamable HTTP) for the access
 * tests: its tools/list is paginated (two tools per page, `nextCursor` to the next page), every
 * tools/call it receives is recorded by tool name, and it answers in JSON (`enableJsonResponse`)
 * or as an SSE stream. `tools` names the tools it has; a tool's result carries an origin-owned
 * `_meta` (the SEP-3313 `io.modelcontextprotocol/toolFailure` key) when its name starts with `fail_`;
 * a `hidden_*` tool answers a failure hidden in a success (`{"ok":false}` text, no isError) with a `_meta` of its own.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAsyncServer } from './async-listener'

export interface AccessOrigin {
  url: string
  /** The tool names of every tools/call received, in order. */
  calls: string[]
  /** HTTP requests received so far (notifications and responses included). */
  readonly requests: number
  close(): Promise<void>
}

/** The `_meta` a `fail_*` tool's result carries (relayed unchanged by the edge). */
export const ORIGIN_FAILURE_META = { 'io.modelcontextprotocol/toolFailure': { class: 'upstream', code: 'quota_exceeded', retryable: false }, 'com.example/trace': 'abc' }

export async function startAccessOrigin(opts: { tools: string[]; json: boolean; pageSize?: number }): Promise<AccessOrigin> {
  const calls: string[] = []
  const pageSize = opts.pageSize ?? 2
  let requests = 0
  const http: HttpServer = createAsyncServer(async (req, res) => {
    requests++
    const server = new Server({ name: 'access-origin', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, (r) => {
      const start = r.params?.cursor ? Number(r.params.cursor) : 0
      const page = opts.tools.slice(start, start + pageSize).map((name) => ({
        name,
        description: `the ${name} tool`,
        inputSchema: { type: 'object' as const, properties: { q: { type: 'string' } } },
      }))
      const next = start + pageSize < opts.tools.length ? { nextCursor: String(start + pageSize) } : {}
      return { tools: page, ...next }
    })
    server.setRequestHandler(CallToolRequestSchema, (r) => {
      calls.push(r.params.name)
      if (r.params.name.startsWith('fail_')) return { content: [{ type: 'text', text: 'quota exceeded' }], isError: true, _meta: ORIGIN_FAILURE_META }
      // A failure hidden in a success (D11): the edge marks it isError.
      if (r.params.name.startsWith('hidden_')) return { content: [{ type: 'text', text: '{"ok":false,"reason":"quota"}' }], _meta: { 'com.example/trace': 'abc' } }
      return { content: [{ type: 'text', text: `${r.params.name} ok` }] }
    })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: opts.json })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    get requests() {
      return requests
    },
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}
