/**
 * `npm run bench:virtual`: CPU per `tools/call` through a virtual server (`VIRTUAL_SERVERS`,
 * docs/virtual-servers.md) against the same call through its origin's own route `/mcp/<origin>`,
 * on the real Node edge (`startEdge`: node:http, undici to the origin, ajv, the grader). Everything
 * runs in this process on 127.0.0.1: a plain node:http MCP origin (stateless 2025-06-18, JSON
 * answers from prepared buffers: one tool with a small schema) and a sequential `fetch` client.
 * Process CPU (process.cpuUsage: edge, origin and client together) per call; the origin and the
 * client do the same work on every route, so the difference between the rows is what the virtual
 * server adds. Rounds are interleaved (origin route, virtual server without a session, virtual
 * server in a client session, each round starting at the next route), after a warm-up of each,
 * and each row is the median over rounds. Bounded: `--calls N` per route and round (default 2000), `--rounds N` (default 5).
 *   npm run bench:virtual
 *   npm run bench:virtual -- --calls 500 --rounds 3
 * Figures on a shared machine are noisy: compare rows of one run, not runs of different days.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { startEdge } from '../src/adapters/node/index'
import { MemoryKv } from '../src/stores/memory-kv'

const { values } = parseArgs({ options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } } })
const CALLS = Math.max(1, Number(values.calls))
const ROUNDS = Math.max(1, Number(values.rounds))

const TOOL = {
  name: 'get_forecast',
  description: 'Forecast for a city',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1, maximum: 16 } },
    required: ['city'],
    additionalProperties: false,
  },
}

/** The origin's answer to one JSON-RPC request, with its id spliced in (null: a notification, 202). */
function answer(msg: { id?: unknown; method?: string }): string | null {
  if (msg.id === undefined) return null
  const id = JSON.stringify(msg.id)
  switch (msg.method) {
    case 'initialize':
      return `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"bench-origin","version":"1"}}}`
    case 'tools/list':
      return `{"jsonrpc":"2.0","id":${id},"result":{"tools":[${JSON.stringify(TOOL)}]}}`
    case 'tools/call':
      return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"Forecast for Paris: 3 days, 21°C, sunny"}]}}`
    default:
      return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"Method not found"}}`
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const origin = createServer((req: IncomingMessage, res: ServerResponse) => {
  void body(req).then((text) => {
    if (req.method !== 'POST') return void res.writeHead(405).end()
    const out = answer(JSON.parse(text) as { id?: unknown; method?: string })
    if (out === null) return void res.writeHead(202).end()
    res.writeHead(200, { 'content-type': 'application/json' }).end(out)
  })
})
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp`

const edge = await startEdge({
  env: {
    STORE_FILE: 'memory',
    ORIGINS: JSON.stringify({ weather: originUrl }),
    VIRTUAL_SERVERS: JSON.stringify({ v: { origins: ['weather'], prefix: 'always' } }),
    VIRTUAL_SESSION_KEY: 'b'.repeat(40),
  },
  port: 0,
  kv: new MemoryKv(),
  // The log lines are built as in production, and dropped (this script prints its table).
  log: () => undefined,
})
const base = edge.url.replace(/\/mcp$/, '')
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

async function post(url: string, msg: unknown, extra: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url, { method: 'POST', headers: { ...HEADERS, ...extra }, body: JSON.stringify(msg) })
  await res.arrayBuffer()
  if (res.status >= 300) throw new Error(`${url}: HTTP ${res.status}`)
  return res
}

// A client session with the virtual server (the edge holds its origin connection in the session id).
const init = await post(`${base}/mcp/v`, {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
})
const sid = init.headers.get('mcp-session-id')!

interface Route {
  name: string
  url: string
  tool: string
  headers: Record<string, string>
}
const ROUTES: Route[] = [
  { name: 'origin route /mcp/weather', url: `${base}/mcp/weather`, tool: 'get_forecast', headers: {} },
  { name: 'virtual server /mcp/v, no session', url: `${base}/mcp/v`, tool: 'weather__get_forecast', headers: {} },
  { name: 'virtual server /mcp/v, client session', url: `${base}/mcp/v`, tool: 'weather__get_forecast', headers: { 'mcp-session-id': sid } },
]

/** Process CPU in µs per call over `n` sequential calls on one route. */
async function cpuPerCall(r: Route, n: number): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) await post(r.url, { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: r.tool, arguments: { city: 'Paris', days: 3 } } }, r.headers)
  const d = process.cpuUsage(before)
  return (d.user + d.system) / n
}

// Lists first (each route learns the tool), then a warm-up of every route.
for (const r of ROUTES) await post(r.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, r.headers)
for (const r of ROUTES) await cpuPerCall(r, Math.min(CALLS, 500))

const samples = ROUTES.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts at another route, so no route always runs right after the same one.
  for (let k = 0; k < ROUTES.length; k++) {
    const i = (round + k) % ROUTES.length
    samples[i]!.push(await cpuPerCall(ROUTES[i]!, CALLS))
  }
  process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`)
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const own = median(samples[0]!)
console.log(`CPU per tools/call (µs, process CPU of edge + origin + client, median of ${ROUNDS} interleaved rounds of ${CALLS} calls; Node ${process.version})\n`)
console.log('| route | CPU per call (µs) | rounds min–max (µs) | vs the origin route |')
console.log('|---|---:|---:|---:|')
for (const [i, r] of ROUTES.entries()) {
  const m = median(samples[i]!)
  console.log(
    `| ${r.name} | ${m.toFixed(0)} | ${Math.min(...samples[i]!).toFixed(0)}–${Math.max(...samples[i]!).toFixed(0)} | ${i === 0 ? '' : `${m - own >= 0 ? '+' : ''}${(m - own).toFixed(0)} (${((m / own - 1) * 100).toFixed(0)} %)`} |`
  )
}
await edge.close()
origin.closeAllConnections()
origin.close()
