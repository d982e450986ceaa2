/**
 * Benchmark origin: a raw `node:http` MCP tool server that answers at once, so what the
 * benchmark shows is the cost of whatever stands between client and origin.
 *
 * - `POST /mcp` with one `tools/call` -> one JSON result with the request's id
 *   (`application/json`); with a JSON-RPC batch -> an array of results, one per request.
 * - `POST /sse` -> `text/event-stream` with `SSE_EVENTS` events: `SSE_EVENTS - 1`
 *   `notifications/progress` events, then the result (scenario 6).
 * - `GET /stats` -> `{ calls }` (POSTs holding a `tools/call`), so a run can prove no call was forwarded.
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
const resultFor = (id: unknown) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${RESULT}}`
const PROGRESS = Array.from({ length: SSE_EVENTS - 1 }, (_, i) =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":${i + 1},"total":${SSE_EVENTS},"message":"step ${i + 1}"}}\n\n`
).join('')

let calls = 0
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls }))
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
      if ((Array.isArray(msg) ? msg : [msg]).some((m) => (m as { method?: unknown } | null)?.method === 'tools/call')) calls++
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
      return
    }
    if (req.url === '/sse') {
      const id = (msg as { id?: unknown }).id ?? null
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.end(`${PROGRESS}event: message\ndata: ${resultFor(id)}\n\n`)
      return
    }
    const body = Array.isArray(msg)
      ? `[${msg.filter((m) => m && typeof m === 'object' && 'id' in m).map((m) => resultFor((m as { id: unknown }).id)).join(',')}]`
      : resultFor((msg as { id?: unknown }).id ?? null)
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
