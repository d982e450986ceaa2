import { resolve } from 'node:path'
/**
 * CPU time of the reply path per POST, in process (no sockets), for the reply shapes that cost
 * per byte or per element: the core's `servePost` (admission, validation, forwarding to an origin
 * client that answers at once from memory, grading, the answer-bytes metric) plus the encode the
 * Node writer does for a text answer (`Buffer.from`; a byte answer is written as it is). Besides
 * each shape, the work a grading proxy cannot skip: decoding the reply and `JSON.parse` of the
 * request and the reply (the parse floor's own work, docs/performance.md).
 * Microseconds of CPU (process.cpuUsage) per POST, median of 5 runs. Point it at two checkouts to
 * compare a change with its base:
 *   taskset -c 0 node --import tsx scripts/reply-cpu.mts /path/to/base
 *   taskset -c 0 node --import tsx scripts/reply-cpu.mts .
 *   taskset -c 0 node --import tsx scripts/reply-cpu.mts . structuredContent   # only the shapes so named
 * The end-to-end figures are `npm run bench`'s (BENCHMARKS.md).
 */
const root = resolve(process.argv[2] ?? '.')
const { servePost } = await import(`${root}/src/core/front-door.ts`)
const { mcpEdge } = await import(`${root}/src/adapters/node/node-edge.ts`)
const { MemoryKv } = await import(`${root}/src/stores/memory-kv.ts`)
const enc = new TextEncoder()
const dec = new TextDecoder()

/**
 * A tools/call result of about `bytes` bytes: one text item of prose, structuredContent of small
 * objects, or (`json`) the same objects also serialized in the text item, as the spec asks of a
 * tool that returns structured content.
 */
function result(kind: 'text' | 'structured' | 'json', bytes: number): string {
  if (kind === 'text') {
    let t = ''
    for (let i = 0; t.length < bytes; i++) t += `${i}: the "quick" brown fox jumps over the lazy dog, line ${i} of the file\n`
    return `{"content":[{"type":"text","text":${JSON.stringify(t)}}]}`
  }
  const items: string[] = []
  for (let i = 0, n = 0; n < bytes; i++) {
    const s = `{"id":${i},"name":"item ${i}","tags":["a","b"],"score":${i}.5}`
    items.push(s)
    n += s.length + 1
  }
  const structured = `{"ok":true,"items":[${items.join(',')}]}`
  return `{"content":[{"type":"text","text":${kind === 'json' ? JSON.stringify(structured) : '"ok"'}}],"structuredContent":${structured}}`
}
const small = '{"content":[{"type":"text","text":"ok"}],"structuredContent":{"ok":true,"value":42}}'
const response = (id: number, r: string) => `{"jsonrpc":"2.0","id":${id},"result":${r}}`
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'weather', arguments: { city: 'Oslo', units: 'c' } } })
const batch = (n: number) => ({
  request: JSON.stringify(Array.from({ length: n }, (_, i) => call(i + 1))),
  reply: `[${Array.from({ length: n }, (_, i) => response(i + 1, small)).join(',')}]`,
  version: '2025-03-26',
})
const one = (r: string) => ({ request: JSON.stringify(call(1)), reply: response(1, r), version: '2025-06-18' })
const SHAPES: Record<string, { request: string; reply: string; version: string; n: number }> = {
  'small reply': { ...one(small), n: 20000 },
  '100 KB text': { ...one(result('text', 100_000)), n: 2000 },
  '1 MB text': { ...one(result('text', 1_000_000)), n: 200 },
  '100 KB structuredContent': { ...one(result('structured', 100_000)), n: 1000 },
  '100 KB structuredContent + JSON text': { ...one(result('json', 100_000)), n: 500 },
  'batch of 10': { ...batch(10), n: 4000 },
  'batch of 100': { ...batch(100), n: 400 },
}

let current = SHAPES['small reply']!
let replyBytes = enc.encode(current.reply)
const origin = async () => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  text: async () => dec.decode(replyBytes),
  bytes: async () => replyBytes,
  stream: () => null,
  discard: () => undefined,
})
const deps = mcpEdge({ env: { ORIGIN_URL: 'http://127.0.0.1:1/mcp', STORE_FILE: 'memory' }, store: new MemoryKv(), originClient: origin, logger: () => undefined }).deps
const schema = { type: 'object', properties: { city: { type: 'string' }, units: { enum: ['c', 'f'] } }, required: ['city'], additionalProperties: false }
await deps.registry.learn('default', 'public', [{ name: 'weather', inputSchema: schema }], '2025-06-18')

function headersFor(version: string) {
  const h = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version })
  return h
}
async function edgeRun(n: number): Promise<number> {
  const headers = headersFor(current.version)
  const body = enc.encode(current.request)
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const r = await servePost(deps, { originName: undefined, headers, readBody: async () => body })
    if (r.status !== 200) throw new Error(`status ${r.status}`)
    // The Node writer's encode of a text answer (a byte answer is written as it is).
    if (typeof r.body === 'string') Buffer.from(r.body)
  }
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}
/** The least a grading proxy does per POST: decode and parse the request and the reply. */
function floorRun(n: number): number {
  const body = enc.encode(current.request)
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    JSON.parse(dec.decode(body))
    JSON.parse(dec.decode(replyBytes))
  }
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
const rows: Record<string, { edgeUs: number; parseUs: number; aboveUs: number }> = {}
// An optional second argument keeps the shapes whose name holds it (`structuredContent`, `batch`).
for (const [name, shape] of Object.entries(SHAPES).filter(([n]) => n.includes(process.argv[3] ?? ''))) {
  current = shape
  replyBytes = enc.encode(shape.reply)
  await edgeRun(Math.ceil(shape.n / 4))
  floorRun(Math.ceil(shape.n / 4))
  const e: number[] = []
  const f: number[] = []
  for (let r = 0; r < 5; r++) {
    e.push(await edgeRun(shape.n))
    f.push(floorRun(shape.n))
  }
  rows[name] = { edgeUs: +med(e).toFixed(1), parseUs: +med(f).toFixed(1), aboveUs: +(med(e) - med(f)).toFixed(1) }
}
console.log(`reply path in process, ${root}`)
console.table(rows)
process.exit(0)
