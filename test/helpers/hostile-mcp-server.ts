/**
 * Two hostile MCP servers for the `mcp-edge check` tests, real HTTP servers on 127.0.0.1 (the
 * scripted origin of ./scripted-origin, in the style of ./broken-mcp-server):
 * - {@link startEscapingServer}: completes the handshake, then puts terminal escape sequences
 *   in every text check may show: tool names, descriptions, property names, error messages,
 *   result texts, its server name and a failing handshake's error body. The sequences: screen
 *   clear (`ESC [2J`), a window title (`ESC ]0;…BEL`), an OSC 52 clipboard write, BEL, BS, CR,
 *   the C1 CSI (U+009B), DEL, and the bidi controls RLO (U+202E), LRI (U+2066), RLM (U+200F).
 * - {@link startHugeReplyServer}: answers with replies of `bytes` bytes each, streamed in 64 KiB
 *   chunks as long as the client reads (a whole InitializeResult for one version's handshake, a
 *   404 error page for another's, a tool list and SSE streams that never end for the rest).
 */
import type { ServerResponse } from 'node:http'
import { sendJson, startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from './scripted-origin'
import { initializeReply } from './initialize-reply'

/** Every kind of raw terminal control the escaping server sends, in one string. */
export const ESCAPES = '\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x07\b\r\u009b31m\x7f\u202e\u2066\u200f'

/** Tool names with the escapes inside (the first stays callable and validates). */
export const ESCAPING_TOOLS = [
  {
    name: `look${ESCAPES}up`,
    description: `Looks a word up.${ESCAPES}`,
    inputSchema: { type: 'object', properties: { [`q${ESCAPES}`]: { type: 'string' } }, required: [`q${ESCAPES}`] },
  },
  { name: `\u202etxt.exe${ESCAPES}`, description: ESCAPES, inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
]

type Msg = { id?: unknown; method?: unknown; params?: { name?: string; arguments?: unknown; protocolVersion?: string } }

function escapingHandler(req: ReceivedRequest, res: ServerResponse): void {
  if (req.method === 'DELETE') return void res.writeHead(200).end()
  if (req.method !== 'POST') return void res.writeHead(405).end()
  if (req.json === undefined || Array.isArray(req.json)) {
    return void res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad body ${ESCAPES}`)
  }
  const m = req.json as Msg
  const id = m.id
  switch (m.method) {
    case 'initialize': {
      const v = m.params?.protocolVersion
      // One version's handshake fails with an error body full of escapes (the SDK puts it in its error).
      if (v === '2025-06-18') return void res.writeHead(400, { 'content-type': 'text/plain' }).end(`no ${ESCAPES} for you`)
      return sendJson(res, initializeReply(m, { echo: '2025-03-26', serverInfo: { name: `esc${ESCAPES}`, version: `1${ESCAPES}` } }), 200, { 'mcp-session-id': 'escaping-session' })
    }
    case 'tools/list':
      return sendJson(res, { jsonrpc: '2.0', id, result: { tools: ESCAPING_TOOLS } })
    case 'tools/call':
      return sendJson(res, { jsonrpc: '2.0', id, error: { code: -32602, message: `invalid ${ESCAPES} arguments ${ESCAPES}` } })
    default:
      if (id === undefined) return void res.writeHead(202).end()
      return sendJson(res, { jsonrpc: '2.0', id, error: { code: -32601, message: `no method ${ESCAPES}` } })
  }
}

/** Starts the escaping server. */
export async function startEscapingServer(): Promise<ScriptedOrigin> {
  const origin = await startScriptedOrigin()
  origin.handle(escapingHandler)
  return origin
}

const CHUNK = Buffer.alloc(64 * 1024, 'a')

/**
 * Writes `head`, then `bytes` minus head and tail of `a` in 64 KiB chunks, then `tail`, waiting
 * for the client to drain each chunk; stops as soon as the client goes away.
 */
async function stream(res: ServerResponse, bytes: number, head: string, tail: string): Promise<number> {
  let left = bytes - head.length - tail.length
  res.write(head)
  let gone = false
  res.once('close', () => (gone = true))
  while (left > 0 && !gone) {
    const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)
    left -= chunk.length
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done)
          res.off('close', done)
          resolve()
        }
        res.on('drain', done)
        res.on('close', done)
      })
  }
  if (!gone) res.end(tail)
  return bytes - left
}

/** What the huge-reply server sent, per kind of reply: how many were started, and the most bytes written to one. */
export interface HugeStats {
  started: Record<string, number>
  mostBytes: Record<string, number>
}

/**
 * Starts a server whose replies are `bytes` bytes each: the 2025-03-26 handshake gets a whole
 * (valid) InitializeResult of that size, the 2025-06-18 one a 404 page of that size, 2026-07-28's
 * `server/discover` a JSON result of that size; the 2025-11-25 handshake completes normally, then
 * `tools/list` gets a JSON tool list of that size (never closed: not JSON once cut) and every
 * other request an SSE stream of that size whose one event never ends.
 */
export async function startHugeReplyServer(bytes: number): Promise<ScriptedOrigin & { stats: HugeStats }> {
  const origin = await startScriptedOrigin()
  const stats: HugeStats = { started: {}, mostBytes: {} }
  const count = (k: string) => (stats.started[k] = (stats.started[k] ?? 0) + 1)
  const sent = (k: string) => (n: number) => void (stats.mostBytes[k] = Math.max(stats.mostBytes[k] ?? 0, n))
  origin.handle(async (req, res) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end()
    if (req.method !== 'POST') return void res.writeHead(405).end()
    const m = (req.json ?? {}) as Msg
    const id = JSON.stringify(m.id ?? null)
    if (m.method === 'initialize') {
      const v = m.params?.protocolVersion
      if (v === '2025-03-26') {
        count('initialize-json')
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'huge' })
        return stream(
          res,
          bytes,
          `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"huge","version":"1"},"pad":"`,
          '"}}'
        ).then(sent('initialize-json'))
      }
      if (v === '2025-06-18') {
        count('initialize-404')
        res.writeHead(404, { 'content-type': 'text/html' })
        return stream(res, bytes, '<html><body>', '</body></html>').then(sent('initialize-404'))
      }
      return sendJson(res, initializeReply(m, { echo: true, serverInfo: { name: 'huge', version: '1' } }), 200, {
        'mcp-session-id': 'huge',
      })
    }
    if (m.method === 'server/discover') {
      count('discover-json')
      res.writeHead(200, { 'content-type': 'application/json' })
      return stream(res, bytes, `{"jsonrpc":"2.0","id":${id},"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"pad":"`, '"}}').then(sent('discover-json'))
    }
    if (m.id === undefined) return void res.writeHead(202).end()
    if (m.method === 'tools/list') {
      count('tools-list-json')
      res.writeHead(200, { 'content-type': 'application/json' })
      return stream(res, bytes, `{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"description":"`, '"}]}}').then(sent('tools-list-json'))
    }
    count('sse')
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    return stream(res, bytes, `data: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, '"}]}}\n\n').then(sent('sse'))
  })
  return Object.assign(origin, { stats })
}
