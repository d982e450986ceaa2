/**
 * A scripted MCP tool server on top of the scripted origin: answers `initialize` (with a session
 * id), `notifications/initialized`, paged `tools/list` (cursor = page index) and `tools/call`, so a
 * test controls exactly what the edge can learn and counts every pull it makes.
 */
import type { ServerResponse } from 'node:http'
import { sendJson, type ReceivedRequest, type ScriptedOrigin } from './scripted-origin'
import { mcpHeaders } from './mcp'
import { waitFor } from './wait'
import { initializeReply } from './initialize-reply'

/** What the scripted server publishes and answers; tests change it between calls. */
export interface McpScript {
  /** `tools/list` pages, in order (one array of tools per page). */
  pages: unknown[][]
  /** `ttlMs` put on every `tools/list` page, when set. */
  ttlMs?: number
  /** Answers 500 to `initialize` and `tools/list` (the edge's pull fails). */
  failPull?: boolean
  /** Answers a `tools/call`; default: a text result "ok". */
  call?: (name: string, args: Record<string, unknown>, id: unknown, res: ServerResponse) => unknown
}

interface RpcLike {
  id?: unknown
  method?: string
  params?: { cursor?: string; name?: string; arguments?: Record<string, unknown>; protocolVersion?: string }
}

/** Installs the script on the origin; returns it so a test can mutate it. */
export function serveMcp(origin: ScriptedOrigin, script: McpScript): McpScript {
  origin.handle((req: ReceivedRequest, res) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end()
    const m = req.json as RpcLike | undefined
    switch (m?.method) {
      case 'initialize':
        if (script.failPull) return void res.writeHead(500).end('internal failure')
        return sendJson(res, initializeReply(m, { echo: '2025-03-26', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'scripted', version: '1.0.0' } }), 200, {
          'mcp-session-id': 'sess-1',
        })
      case 'notifications/initialized':
        return void res.writeHead(202).end()
      case 'tools/list': {
        if (script.failPull) return void res.writeHead(500).end('internal failure')
        const page = m.params?.cursor ? Number(m.params.cursor) : 0
        const result: Record<string, unknown> = { tools: script.pages[page] ?? [] }
        if (page + 1 < script.pages.length) result.nextCursor = String(page + 1)
        if (script.ttlMs !== undefined) result.ttlMs = script.ttlMs
        return sendJson(res, { jsonrpc: '2.0', id: m.id, result })
      }
      case 'tools/call': {
        const answer = script.call?.(m.params?.name ?? '', m.params?.arguments ?? {}, m.id, res)
        if (answer === undefined && res.headersSent) return
        return sendJson(res, { jsonrpc: '2.0', id: m.id, result: answer ?? { content: [{ type: 'text', text: 'ok' }] } })
      }
      default:
        return void res.writeHead(202).end()
    }
  })
  return script
}

/** How many JSON-RPC messages with `method` the origin received. */
export function countMethod(origin: ScriptedOrigin, method: string): number {
  return origin.received.filter((r) => (r.json as RpcLike | undefined)?.method === method).length
}

/** The `tools/call` requests that reached the origin. */
export function toolCalls(origin: ScriptedOrigin): { name?: string; arguments?: Record<string, unknown> }[] {
  return origin.received.filter((r) => (r.json as RpcLike | undefined)?.method === 'tools/call').map((r) => (r.json as RpcLike).params ?? {})
}

/** Headers of a 2025-11-25 client POST. */
export const MCP_HEADERS = mcpHeaders('2025-11-25')

/** POSTs a JSON-RPC message to the edge; returns status, headers, body text and parsed JSON. */
export async function rpc(url: string, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: typeof message === 'string' ? message : JSON.stringify(message) })
  const text = await res.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** A `tools/call` message. */
export function call(id: number | string, name: string, args?: unknown): unknown {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: args === undefined ? { name } : { name, arguments: args } }
}

/**
 * Waits until `check` returns a truthy value and resolves with it ({@link waitFor}, polling every
 * 25 ms); `ms` (default 10 s) only bounds a hang.
 */
export async function eventually<T>(check: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 10_000): Promise<T> {
  return (await waitFor(check, { what: 'the awaited condition', timeoutMs: ms, intervalMs: 25 })) as T
}
