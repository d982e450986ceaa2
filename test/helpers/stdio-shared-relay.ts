/**
 * A plain message relay that puts a stdio MCP server on Streamable HTTP (JSON answers): each POSTed
 * message is written to the server's stdin as received, and the server's own answer is sent back,
 * so the edge sees the server's words, not a relay's. Request ids are renumbered on the way in and
 * restored on the way out (the edge's pulls and the clients' calls share one server process).
 * The server's first `initialize` answer is replayed for later ones (a stdio server is initialised
 * once per process); DELETE and notifications get 202.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** A running relay: its MCP URL and the messages the server received. */
export interface StdioRelay {
  url: string
  /** The `tools/call` messages written to the server, as parsed. */
  calls: { name?: string; arguments?: Record<string, unknown> }[]
  close(): Promise<void>
}

/**
 * Spawns `command args` (stdio) and serves it on 127.0.0.1.
 * @param env the server's whole environment
 * @param cwd its working directory (a scratch folder)
 */
export async function startStdioRelay(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<StdioRelay> {
  const stdio = new StdioClientTransport({ command, args, env, cwd, stderr: 'ignore' })
  const pending = new Map<number, { id: unknown; done: (m: unknown) => void }>()
  let next = 1
  let initialized: Record<string, unknown> | null = null
  const calls: StdioRelay['calls'] = []
  stdio.onmessage = (m: JSONRPCMessage) => {
    const id = (m as { id?: unknown }).id
    const p = typeof id === 'number' ? pending.get(id) : undefined
    if (!p) return
    pending.delete(id as number)
    p.done({ ...m, id: p.id })
  }
  await stdio.start()
  const server: Server = createServer((req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(202).end()
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', (): void => {
      let m: { id?: unknown; method?: string; params?: Record<string, unknown> }
      try {
        m = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        return void res.writeHead(400).end()
      }
      if (m.id === undefined || m.id === null) {
        if (m.method !== 'notifications/initialized' || initialized === null) void stdio.send(m as JSONRPCMessage)
        return void res.writeHead(202).end()
      }
      const send = (answer: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
      if (m.method === 'initialize' && initialized !== null) return send({ jsonrpc: '2.0', id: m.id, result: initialized })
      if (m.method === 'tools/call') calls.push((m.params ?? {}) as StdioRelay['calls'][number])
      const id = next++
      pending.set(id, {
        id: m.id,
        done: (a) => {
          if (m.method === 'initialize' && initialized === null) initialized = (a as { result?: Record<string, unknown> }).result ?? null
          send(a)
        },
      })
      void stdio.send({ ...m, id } as JSONRPCMessage)
      return undefined
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    calls,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
      await stdio.close()
    },
  }
}
