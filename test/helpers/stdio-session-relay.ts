/**
 * A stdio MCP server from npm put on Streamable HTTP by a plain message relay, as
 * `supergateway --stdio ... --outputTransport streamableHttp --stateful` does: one child process
 * per session, every JSON-RPC message passed through unchanged in both directions (the SDK's
 * Streamable HTTP server transport on one
 * side, its stdio client transport on the other; no SDK `Server` in between, so the child answers
 * `initialize` in its own words, its own protocol version included).
 *
 * The archived reference servers need the network for every call; the child runs with a `fetch`
 * that fails at once as Node's does offline (`TypeError: fetch failed`, ./offline-fetch.mjs), so
 * a test stays on loopback and the server answers its real failure shape.
 */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { createAsyncServer } from './async-listener'

/** A running relay: its MCP URL, every message it passed to a child (in order), and `close`. */
export interface StdioRelay {
  url: string
  /** The client messages handed to the children, as parsed JSON-RPC. */
  toServer: JSONRPCMessage[]
  close(): Promise<void>
}

/** What to start per session: an npm package's bin (resolved from this repository) and its environment. */
export interface StdioServerSpec {
  /** The package name, e.g. `@modelcontextprotocol/server-slack`. */
  pkg: string
  /** Its bin file relative to the package folder, e.g. `dist/index.js`. */
  bin: string
  env?: Record<string, string>
}

const OFFLINE_FETCH = pathToFileURL(resolve(import.meta.dirname, 'offline-fetch.mjs')).href

/** The absolute path of `spec`'s bin (the package's own folder, found through its package.json). */
function binPath(spec: StdioServerSpec): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve(`${spec.pkg}/package.json`)), spec.bin)
}

/** Starts the relay on 127.0.0.1 (a free port). */
export async function startStdioRelay(spec: StdioServerSpec): Promise<StdioRelay> {
  const bin = binPath(spec)
  const toServer: JSONRPCMessage[] = []
  const sessions = new Map<string, { http: StreamableHTTPServerTransport; child: StdioClientTransport }>()
  const open = new Set<StdioClientTransport>()

  const server = createAsyncServer(async (req, res) => {
    const sid = req.headers['mcp-session-id']
    if (typeof sid === 'string') {
      const s = sessions.get(sid)
      if (!s) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}')
        return
      }
      await s.http.handleRequest(req, res)
      return
    }
    // A request without a session: the transport accepts only an initialize here, which starts a child.
    const child = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', OFFLINE_FETCH, bin],
      env: { PATH: process.env.PATH ?? '', ...(spec.env ?? {}) },
      stderr: 'ignore',
    })
    const http = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { http, child }),
    })
    http.onmessage = (m) => {
      toServer.push(m)
      void child.send(m)
    }
    child.onmessage = (m) => void http.send(m)
    http.onclose = () => {
      if (http.sessionId) sessions.delete(http.sessionId)
      open.delete(child)
      void child.close()
    }
    open.add(child)
    await child.start()
    await http.start()
    await http.handleRequest(req, res)
    if (http.sessionId === undefined) {
      // Not an initialize: nothing was started for good.
      open.delete(child)
      await child.close()
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    toServer,
    close: async () => {
      await Promise.all([...sessions.values()].map((s) => s.http.close()))
      await Promise.all([...open].map((c) => c.close()))
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
