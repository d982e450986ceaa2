/**
 * A scripted fake origin for tests: a real HTTP server on 127.0.0.1 whose answers a test sets,
 * and which records every request it received (method, headers, body text). It answers through a
 * handler, so a test can return JSON, SSE written over time, garbage, a status, or nothing at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAsyncServer } from './async-listener'
import { initializeReply } from './initialize-reply'

/** One request as the origin received it. */
export interface ReceivedRequest {
  method: string
  headers: Record<string, string | string[] | undefined>
  body: string
  /** The parsed body, when it was JSON. */
  json?: unknown
}

/** Answers one request. `res` is the raw Node response: write anything, or hang. */
export type ScriptedHandler = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>

/** A running scripted origin. */
export interface ScriptedOrigin {
  url: string
  received: ReceivedRequest[]
  /** Sets the handler for the next requests. */
  handle(h: ScriptedHandler): void
  /** Received requests excluding the edge's own tool-list pulls (initialize, tools/list, initialized, DELETE). */
  forwarded(): ReceivedRequest[]
  reset(): void
  close(): Promise<void>
}

/** Sends a JSON body with a status (default 200). */
export function sendJson(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text)
}

/** Starts a scripted origin; the default handler answers 202 to everything. */
export async function startScriptedOrigin(): Promise<ScriptedOrigin> {
  const received: ReceivedRequest[] = []
  let handler: ScriptedHandler = (_req, res) => void res.writeHead(202).end()
  const server = createAsyncServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const r: ReceivedRequest = { method: req.method ?? '', headers: req.headers, body }
    try {
      r.json = body ? JSON.parse(body) : undefined
    } catch {
      // not JSON
    }
    received.push(r)
    try {
      await handler(r, res)
    } catch {
      if (!res.headersSent) res.writeHead(500).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const isPull = (r: ReceivedRequest) => {
    const m = (r.json as { method?: string } | undefined)?.method
    return r.method === 'DELETE' || m === 'initialize' || m === 'notifications/initialized' || m === 'tools/list'
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    handle: (h) => void (handler = h),
    forwarded: () => received.filter((r) => !isPull(r)),
    reset: () => void (received.length = 0),
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/**
 * The handler of an origin that lists no tools, so every schema the edge knows was pushed to it:
 * `initialize` answers 2025-06-18, `tools/list` an empty list, notifications and GETs 202, and any
 * other request a text result `forwarded` (or 202 as well with `forward: false`).
 */
export function emptyToolsOrigin(opts: { forward?: boolean } = {}): ScriptedHandler {
  return (req, res) => {
    const m = req.json as { id?: unknown; method?: string }
    if (m.method === 'initialize') return sendJson(res, initializeReply(m))
    if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } })
    if (opts.forward === false || m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
    sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'forwarded' }] } })
  }
}
