/**
 * CPU per call of the result checks (docs/result-checks.md), through the real Node edge
 * (`startEdge`: node:http, undici to the origin, the reply grader) on 127.0.0.1, for each mode of
 * RESULT_SECRETS, RESULT_CONTROL and MAX_RESULT_TEXT_BYTES / OVERSIZE_RESULT, at small, 100 KB and
 * 1 MB text replies. The origin is a plain node:http server in the same process answering from a
 * buffer; the client is `fetch`, sequential. Microseconds of process CPU (process.cpuUsage: edge,
 * origin and client together) per call, median of 3 runs, and the difference to the row with every
 * check off: the checks' own cost. Each reply's text holds one fake credential and one terminal
 * escape (so redact, block and strip act on it), or none (`--clean`); so does one value of the
 * 100 KB `structuredContent` row (1,000 objects). Bounded: a fixed number of calls per size
 * (`--calls-scale 0.1` for a tenth); `--modes` picks rows. The checks alone, in process and bundled
 * (steadier on a busy machine): `npm run bench:result-checks:chain`.
 *   npm run bench:result-checks
 *   npm run bench:result-checks -- --clean
 *   npm run bench:result-checks -- --modes 'defaults' --calls-scale 0.2
 * Figures on a shared machine are noisy: compare rows of one run, not runs of different days.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startEdge } from '../src/adapters/node/index'
import { MemoryKv } from '../src/stores/memory-kv'
import { findSecrets } from '../src/core/guards/secret-scan'
import { findControls } from '../src/core/guards/result-control'
import { utf8Bytes } from '../src/core/guards/oversize-result'
import { prose, records as recordsOf } from './bench/result-shapes'

const args = process.argv.slice(2)
const clean = args.includes('--clean')
const scaleAt = args.indexOf('--calls-scale')
const scale = scaleAt >= 0 ? Number(args[scaleAt + 1]) : 1

/** The text of one reply of about `bytes` bytes: prose, plus one credential and one escape unless `--clean`. */
const text = (bytes: number) => prose(bytes, !clean)
const records = () => recordsOf(!clean)

const SIZES: { name: string; result: () => Record<string, unknown>; calls: number }[] = [
  { name: 'small', result: () => ({ content: [{ type: 'text', text: text(200) }] }), calls: Math.max(1, Math.round(2000 * scale)) },
  { name: '100 KB', result: () => ({ content: [{ type: 'text', text: text(100_000) }] }), calls: Math.max(1, Math.round(300 * scale)) },
  { name: '1 MB', result: () => ({ content: [{ type: 'text', text: text(1_000_000) }] }), calls: Math.max(1, Math.round(40 * scale)) },
  { name: '100 KB structuredContent', result: records, calls: Math.max(1, Math.round(300 * scale)) },
]

const ALL_MODES: { name: string; env: Record<string, string> }[] = [
  { name: 'all off', env: { RESULT_SECRETS: 'off', RESULT_CONTROL: 'off' } },
  { name: 'defaults (secrets audit, control audit)', env: {} },
  { name: 'RESULT_SECRETS=audit', env: { RESULT_SECRETS: 'audit', RESULT_CONTROL: 'off' } },
  { name: 'RESULT_SECRETS=redact', env: { RESULT_SECRETS: 'redact', RESULT_CONTROL: 'off' } },
  { name: 'RESULT_SECRETS=block', env: { RESULT_SECRETS: 'block', RESULT_CONTROL: 'off' } },
  { name: 'RESULT_CONTROL=audit', env: { RESULT_SECRETS: 'off', RESULT_CONTROL: 'audit' } },
  { name: 'RESULT_CONTROL=strip', env: { RESULT_SECRETS: 'off', RESULT_CONTROL: 'strip' } },
  { name: 'MAX_RESULT_TEXT_BYTES=65536 truncate', env: { RESULT_SECRETS: 'off', RESULT_CONTROL: 'off', MAX_RESULT_TEXT_BYTES: '65536', OVERSIZE_RESULT: 'truncate' } },
  { name: 'MAX_RESULT_TEXT_BYTES=65536 error', env: { RESULT_SECRETS: 'off', RESULT_CONTROL: 'off', MAX_RESULT_TEXT_BYTES: '65536', OVERSIZE_RESULT: 'error' } },
]

// `--modes 'all off,defaults'`: only these rows (by name prefix; `all off` is always measured, it is the base).
const modesAt = args.indexOf('--modes')
const only = modesAt >= 0 ? args[modesAt + 1]!.split(',').map((m) => m.trim()) : null
const MODES = ALL_MODES.filter((m) => m.name === 'all off' || only === null || only.some((o) => m.name.startsWith(o)))

/** The origin: initialize, tools/list and tools/call (answered from `reply`). */
let reply = Buffer.alloc(0)
const origin = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const msg = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { id?: unknown; method?: string }
    if (msg.id === undefined) return void res.writeHead(202).end()
    const head = { 'content-type': 'application/json' }
    if (msg.method === 'tools/call') return void res.writeHead(200, head).end(reply)
    const result =
      msg.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench-origin', version: '1.0.0' } }
        : msg.method === 'tools/list'
          ? { tools: [{ name: 'read', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }] }
          : {}
    res.writeHead(200, head).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }))
  })
})
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp`

const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: { path: 'a.log' } } })

/** Microseconds of CPU per call over `n` sequential calls. */
async function run(url: string, n: number): Promise<number> {
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const res = await fetch(url, { method: 'POST', headers, body })
    await res.arrayBuffer()
  }
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
// Every mode's edge at once, and the runs interleaved (size by size, mode after mode, three
// rounds), so the process's warm-up and a busy neighbour weigh on every row alike.
const edges: { mode: string; url: string; close(): Promise<void> }[] = []
for (const mode of MODES) {
  // Log lines are serialised as the real logger would, not written (a terminal would dominate).
  const edge = await startEdge({ env: { ORIGIN_URL: originUrl, STORE_FILE: 'memory', ...mode.env }, port: 0, kv: new MemoryKv(), log: (r) => void JSON.stringify(r) })
  edges.push({ mode: mode.name, url: edge.url, close: () => edge.close() })
}
const runs: Record<string, Record<string, number[]>> = {}
for (const size of SIZES) {
  reply = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: size.result() }))
  for (const e of edges) await run(e.url, Math.min(size.calls, 20)) // warm-up
  for (let r = 0; r < 3; r++) for (const e of edges) ((runs[e.mode] ??= {})[size.name] ??= []).push(await run(e.url, size.calls))
}
const table: Record<string, Record<string, number>> = {}
for (const e of edges) {
  table[e.mode] = Object.fromEntries(SIZES.map((s) => [s.name, median(runs[e.mode]![s.name]!)]))
  await e.close()
}
origin.close()

const base = table['all off']!
const cell = (mode: string, size: string) => {
  const v = table[mode]![size]!
  const d = v - base[size]!
  return mode === 'all off' ? `${v.toFixed(0)} us` : `${v.toFixed(0)} us (${d >= 0 ? '+' : ''}${d.toFixed(0)})`
}
console.log(`result checks, CPU per call (process: edge + origin + client), median of 3 runs; ${clean ? 'clean text' : 'text with one credential and one escape'}`)
console.log(`| mode | ${SIZES.map((s) => s.name).join(' | ')} |`)
console.log(`|---|${SIZES.map(() => '---:').join('|')}|`)
for (const mode of MODES) console.log(`| ${mode.name} | ${SIZES.map((s) => cell(mode.name, s.name)).join(' | ')} |`)

// The scans alone, in process (no edge, no sockets): the per-byte work each check adds to a reply.
console.log('\nthe scans alone, CPU per 1 MB text, median of 5 runs of 20')
for (const [name, scan] of [
  ['findSecrets', findSecrets],
  ['findControls', findControls],
  ['utf8Bytes', utf8Bytes],
] as const) {
  const t = text(1_000_000)
  const per: number[] = []
  for (let r = 0; r < 5; r++) {
    const t0 = process.cpuUsage()
    for (let i = 0; i < 20; i++) scan(t)
    const d = process.cpuUsage(t0)
    per.push((d.user + d.system) / 20)
  }
  console.log(`| ${name} | ${(median(per) / 1000).toFixed(2)} ms |`)
}
