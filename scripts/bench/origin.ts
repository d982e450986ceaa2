/**
 * Benchmark origin: a raw `node:http` MCP tool server that answers at once, so what the
 * benchmark shows is the cost of whatever stands between client and origin.
 *
 * - `POST /mcp` with one `tools/call` -> one JSON result with the request's id
 *   (`application/json`); with a JSON-RPC batch -> an array of results, one per request.
 * - `POST /sse` -> `text/event-stream` with `SSE_EVENTS` events: `SSE_EVENTS - 1`
 *   `notifications/progress` events, then the result; `POST /sse/<n>` the same with `n` events.
 * - `POST /reply/<bytes>` -> one JSON result of about `bytes` bytes: `structuredContent` holds
 *   `ok: true` and an array of small objects filling the size (the reply-size axis).
 * - `POST /text/<bytes>` -> one JSON result of about `bytes` bytes whose single text content item
 *   holds lines of prose (with quotes and line breaks, escaped as a file's contents are): the
 *   large-text axis (file contents, pages, search results).
 * - `GET /stats` -> `{ calls, byId }`: POSTs holding a `tools/call`, and such calls per string
 *   JSON-RPC id (the benchmark's numeric ids are not counted there), so a run can prove that no
 *   call of one scenario was forwarded, whatever the other scenarios sent.
 *
 * The reply text is built from fixed templates plus the id's exact JSON text; the body is parsed
 * only to find the ids (one JSON.parse, as a minimal real server would).
 * Usage: `node --import tsx scripts/bench/origin.ts`; sends `{ port }` over IPC when listening
 * (or prints it on stdout when started without an IPC channel).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SSE_EVENTS } from './schemas'

const RESULT = '{"content":[{"type":"text","text":"ok"}],"structuredContent":{"ok":true,"value":42}}'
const resultFor = (id: unknown, result = RESULT) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
const progress = (events: number) =>
  Array.from(
    { length: events - 1 },
    (_, i) =>
      `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":${i + 1},"total":${events},"message":"step ${i + 1}"}}\n\n`
  ).join('')
/** Progress events per SSE length, built once. */
const PROGRESS = new Map<number, string>()
/** A tools/call result of about `bytes` bytes of JSON text, built once per size. */
const SIZED = new Map<number, string>()
function sizedResult(bytes: number): string {
  let r = SIZED.get(bytes)
  if (r === undefined) {
    const items: string[] = []
    let length = RESULT.length + 12
    for (let i = 0; length < bytes; i++) {
      const item = `{"id":${i},"name":"item ${i}","tags":["a","b"],"score":${i}.5}`
      items.push(item)
      length += item.length + 1
    }
    r = `{"content":[{"type":"text","text":"ok"}],"structuredContent":{"ok":true,"value":42,"items":[${items.join(',')}]}}`
    SIZED.set(bytes, r)
  }
  return r
}

/** A tools/call result of about `bytes` bytes holding one text item, built once per size. */
const TEXTS = new Map<number, string>()
function textResult(bytes: number): string {
  let r = TEXTS.get(bytes)
  if (r === undefined) {
    const lines: string[] = []
    let length = 60
    for (let i = 0; length < bytes; i++) {
      const line = `${i}: the "quick" brown fox jumps over the lazy dog, line ${i} of the file\n`
      lines.push(line)
      length += JSON.stringify(line).length - 2
    }
    r = `{"content":[{"type":"text","text":${JSON.stringify(lines.join(''))}}]}`
    TEXTS.set(bytes, r)
  }
  return r
}

let calls = 0
const byId: Record<string, number> = Object.create(null)
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls, byId }))
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    let msg: unknown
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      // Only tool calls count: the edge's own tool-list pulls (a rejection by a schema older than
      // SCHEMA_RECHECK_MS is rechecked first) are not calls the edge forwarded.
      const toolCalls = (Array.isArray(msg) ? msg : [msg]).filter((m) => (m as { method?: unknown } | null)?.method === 'tools/call') as { id?: unknown }[]
      if (toolCalls.length > 0) calls++
      for (const m of toolCalls) if (typeof m.id === 'string') byId[m.id] = (byId[m.id] ?? 0) + 1
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
      return
    }
    const url = req.url ?? '/'
    if (url === '/sse' || url.startsWith('/sse/')) {
      const events = url === '/sse' ? SSE_EVENTS : Number(url.slice(5)) || SSE_EVENTS
      let progressText = PROGRESS.get(events)
      if (progressText === undefined) PROGRESS.set(events, (progressText = progress(events)))
      const id = (msg as { id?: unknown }).id ?? null
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.end(`${progressText}event: message\ndata: ${resultFor(id)}\n\n`)
      return
    }
    const result = url.startsWith('/reply/') ? sizedResult(Number(url.slice(7)) || 1024) : url.startsWith('/text/') ? textResult(Number(url.slice(6)) || 1024) : RESULT
    const body = Array.isArray(msg)
      ? `[${msg
          .filter((m) => m && typeof m === 'object' && 'id' in m)
          .map((m) => resultFor((m as { id: unknown }).id, result))
          .join(',')}]`
      : resultFor((msg as { id?: unknown }).id ?? null, result)
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const ready = { port: (server.address() as AddressInfo).port }
  if (process.send) process.send(ready)
  else process.stdout.write(JSON.stringify(ready) + '\n')
})
process.on('disconnect', () => process.exit(0))
