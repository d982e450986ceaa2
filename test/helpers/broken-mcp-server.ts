/**
 * A deliberately broken MCP server for the `mcp-edge check` tests: a real HTTP server on
 * 127.0.0.1 (the scripted origin of ./scripted-origin) that completes the handshake like any
 * server, then gets every case wrong in a known way:
 * - a body that is not JSON: HTTP 500 with a stack trace;
 * - an unknown tool: a JSON-RPC error reported as a result (`{"ok":false,…}` text, no isError);
 * - a missing required argument: -32603 whose message is a Node stack trace;
 * - an argument of the wrong type: an isError result echoing the rejected value;
 * - `arguments` not an object: a success result;
 * - a batch: one id-less error for the whole batch (the batch fails whole);
 * - a notification: HTTP 200 with a JSON-RPC response;
 * - a foreign Origin and a bogus MCP-Protocol-Version: served as if nothing were wrong;
 * - `tools/list`: answered with `Content-Type: text/plain`;
 * - valid calls: `lookup` answers a result and an error together, `stats` breaks its outputSchema;
 * - 2026-07-28: it answers `server/discover` offering 2026-07-28, then checks no standard header
 *   and no envelope, and its results carry no `resultType` and no caching hints.
 * Every request it received is kept (`received`), so tests can count them and read headers.
 */
import type { ServerResponse } from 'node:http'
import { sendJson, startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from './scripted-origin'
import { initializeReply } from './initialize-reply'

/** The tools the broken server lists. */
export const BROKEN_TOOLS = [
  { name: 'lookup', description: 'Looks a word up.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  {
    name: 'stats',
    description: 'Counts things.',
    inputSchema: { type: 'object', properties: { limit: { type: 'integer', minimum: 1 } }, required: ['limit'] },
    outputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
  },
]

/** The stack trace the broken server leaks. */
export const LEAKED_STACK = "TypeError: Cannot read properties of undefined (reading 'trim')\n    at lookup (/srv/app/tools.js:12:19)\n    at handle (/srv/app/server.js:40:5)"

type Msg = { id?: unknown; method?: unknown; params?: { name?: string; arguments?: unknown; protocolVersion?: string } }

function answerCall(m: Msg, res: ServerResponse): void {
  const id = m.id
  const name = m.params?.name
  const args = m.params?.arguments
  if (name !== 'lookup' && name !== 'stats') {
    return sendJson(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: JSON.stringify({ ok: false, error: `no tool named ${String(name)}` }) }] } })
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return sendJson(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })
  const a = args as Record<string, unknown>
  const key = name === 'lookup' ? 'query' : 'limit'
  if (!(key in a)) return sendJson(res, { jsonrpc: '2.0', id, error: { code: -32603, message: LEAKED_STACK } })
  if (name === 'lookup' ? typeof a.query !== 'string' : typeof a.limit !== 'number') {
    return sendJson(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `Invalid ${key}: ${JSON.stringify(a[key])}` }], isError: true } })
  }
  if (name === 'lookup')
    return sendJson(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'found it' }] }, error: { code: -32000, message: 'lookup backend down' } })
  return sendJson(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: '{"count":"many"}' }], structuredContent: { count: 'many' } } })
}

function handle(req: ReceivedRequest, res: ServerResponse): void {
  if (req.method === 'DELETE') return void res.writeHead(200).end()
  if (req.method !== 'POST') return void res.writeHead(405).end()
  if (req.json === undefined) {
    res
      .writeHead(500, { 'content-type': 'text/html' })
      .end(`<pre>SyntaxError: Unexpected end of JSON input\n    at JSON.parse (<anonymous>)\n    at handle (/srv/app/server.js:22:18)</pre>`)
    return
  }
  if (Array.isArray(req.json)) return sendJson(res, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batches are not supported' } })
  const m = req.json as Msg
  if (typeof m.method !== 'string') return sendJson(res, { jsonrpc: '2.0', id: m.id ?? null, error: { code: -32600, message: 'Invalid Request' } })
  switch (m.method) {
    case 'initialize':
      return sendJson(res, initializeReply(m, { echo: '2025-03-26', serverInfo: { name: 'broken', version: '0.0.1' } }), 200, { 'mcp-session-id': 'broken-session' })
    case 'server/discover':
      // claims 2026-07-28, then checks none of its headers or envelopes
      return sendJson(res, {
        jsonrpc: '2.0',
        id: m.id,
        result: {
          supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
          capabilities: { tools: {} },
          resultType: 'complete',
          ttlMs: 0,
          cacheScope: 'private',
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'broken', version: '0.0.1' } },
        },
      })
    case 'tools/list':
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: BROKEN_TOOLS } }))
    case 'tools/call':
      return answerCall(m, res)
    case 'ping':
      return sendJson(res, { jsonrpc: '2.0', id: m.id, result: {} })
    default:
      if (m.id === undefined) {
        if (m.method === 'notifications/initialized') return void res.writeHead(202).end()
        return sendJson(res, { jsonrpc: '2.0', result: 'ok' })
      }
      return sendJson(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } })
  }
}

/** Starts the broken server; `close()` stops it. */
export async function startBrokenServer(): Promise<ScriptedOrigin> {
  const origin = await startScriptedOrigin()
  origin.handle(handle)
  return origin
}
