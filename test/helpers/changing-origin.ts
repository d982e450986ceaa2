/**
 * A real MCP SDK server (low-level `Server`, stateless Streamable HTTP) whose tool definitions a test
 * changes between lists: it serves `state.tools` as they are when each request comes, records the
 * tools called in `state.calls`, and pages its list when `state.pageSize` > 0 (the cursor is the
 * index of the page's first tool), adding to each page's result the members `state.listExtra` gives
 * for that page (e.g. `cacheScope: "private"`). Used by the tool-pinning tests (test/pinning/tool-pinning.test.ts) and
 * the `mcp-edge tools` command's tests (test/production/tools-cli.test.ts).
 */
import type { AddressInfo } from 'node:net'
import type { Server as HttpServer } from 'node:http'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { createAsyncServer } from './async-listener'

/** A tool definition as the server serves it (every field passed on as given). */
export type Tool = Record<string, unknown> & { name: string }

/** The running server: its mutable state, its MCP endpoint URL, and `close`. */
export interface ChangingOrigin {
  state: {
    tools: Tool[]
    /** Tool names called, with the argument names sent (`echo(text,exfil)`) when `recordArgs` is set. */
    calls: string[]
    /** The text of a call's result, when set and it returns a string (else `called <name>`). */
    resultText?: (name: string, args: Record<string, unknown>) => string | undefined
    pageSize: number
    /** Extra members of the list result of page `page` (0 first), e.g. `{ cacheScope: 'private' }`. */
    listExtra?: (page: number) => Record<string, unknown>
    recordArgs?: boolean
    /** The `instructions` its `initialize` answer carries, when set (read at each request). */
    instructions?: string
  }
  url: string
  close(): Promise<void>
}

/**
 * Starts the server on 127.0.0.1 (a free port).
 * @param tools the tools it serves first
 * @param json JSON replies (true, the default) or SSE replies
 */
export async function startChangingOrigin(tools: Tool[], json = true): Promise<ChangingOrigin> {
  const state: ChangingOrigin['state'] = { tools, calls: [], pageSize: 0 }
  const http: HttpServer = createAsyncServer(async (req, res) => {
    const server = new Server(
      { name: 'changing-origin', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } }, ...(state.instructions !== undefined ? { instructions: state.instructions } : {}) }
    )
    server.setRequestHandler(ListToolsRequestSchema, (r) => {
      if (state.pageSize === 0) return { tools: state.tools, ...state.listExtra?.(0) } as never
      const from = Number(r.params?.cursor ?? 0)
      const to = from + state.pageSize
      return { tools: state.tools.slice(from, to), ...(to < state.tools.length ? { nextCursor: String(to) } : {}), ...state.listExtra?.(from / state.pageSize) } as never
    })
    server.setRequestHandler(CallToolRequestSchema, (r) => {
      state.calls.push(state.recordArgs ? `${r.params.name}(${Object.keys(r.params.arguments ?? {}).join(',')})` : r.params.name)
      return { content: [{ type: 'text', text: state.resultText?.(r.params.name, r.params.arguments ?? {}) ?? `called ${r.params.name}` }] }
    })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  return {
    state,
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}
