/**
 * `npm run private-scopes -- [--callers N] [--tools T] [--concurrency C] [--env K=V ...]`: what N
 * distinct callers (default 10,000) of an origin that marks its tool list `cacheScope: "private"`
 * cost the Node edge (docs/scope.md, docs/reliability.md). Builds and starts the real `mcp-edge serve`
 * (dist/private-scopes/cli.js, a child process on 127.0.0.1) with the file store in a fresh temporary folder, in
 * front of a real HTTP origin on 127.0.0.1 whose list of T tools (default 3) is private. Each caller, with
 * its own `Authorization: Bearer caller-<i>`, sends a `tools/list` (relayed; the edge learns the
 * list in passing under the caller's scope) and then a `tools/call` with invalid arguments (the
 * edge refuses it from that scope). Prints, after the first caller and every N/5 callers: the
 * edge's RSS (VmRSS, MiB), the store file's size and its number of private scopes and records
 * (tool records, and the pin step's `pins:` and `pinserved:` records); then the same after the
 * edge had 3 s to settle, and the median time of a new caller's `tools/list` (5 new callers, one
 * at a time). `--env` passes settings on (for example
 * `--env MAX_PRIVATE_SCOPES=5000`). Bounded: the edge and the origin are stopped before exit.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'

const { values } = parseArgs({
  options: {
    callers: { type: 'string', default: '10000' },
    tools: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
    env: { type: 'string', multiple: true, default: [] },
  },
})
const N = Number(values.callers)
const C = Number(values.concurrency)
const T = Number(values.tools)
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(C) || C < 1 || !Number.isInteger(T) || T < 1 || T > 1000) {
  console.error('usage: npm run private-scopes -- [--callers N] [--tools T (1..1000)] [--concurrency C] [--env K=V ...]')
  process.exit(2)
}
const extra: Record<string, string> = {}
for (const kv of values.env as string[]) {
  const i = kv.indexOf('=')
  if (i < 1) {
    console.error(`--env takes K=V, got ${JSON.stringify(kv)}`)
    process.exit(2)
  }
  extra[kv.slice(0, i)] = kv.slice(i + 1)
}

const ROOT = resolve(import.meta.dirname, '..')
const TOOLS = ['get_weather', 'get_forecast', 'get_alerts', ...Array.from({ length: Math.max(0, T - 3) }, (_, i) => `tool_${i + 4}`)].slice(0, T).map((name) => ({
  name,
  description: `The ${name} tool of a private list`,
  inputSchema: { type: 'object', properties: { city: { type: 'string', maxLength: 64 }, units: { enum: ['c', 'f'] } }, required: ['city'] },
}))

const origin = createServer((req, res) => {
  let body = ''
  req.on('data', (d: Buffer) => (body += d.toString()))
  req.on('end', () => {
    let m: { id?: unknown; method?: string } = {}
    try {
      m = JSON.parse(body) as typeof m
    } catch {
      // not JSON
    }
    const send = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }))
    if (m.method === 'initialize') send({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'private-origin', version: '1' } })
    else if (m.method === 'tools/list') send({ tools: TOOLS, cacheScope: 'private' })
    else if (m.id === undefined) res.writeHead(202).end()
    else send({ content: [{ type: 'text', text: 'ok' }] })
  })
})
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp`

// The command with the library bundled from its sources (what the tests run), so no stale build is measured.
const built = spawnSync(process.execPath, ['scripts/build-node.mjs', '--from-source', '--outdir', 'dist/private-scopes'], { cwd: ROOT, stdio: 'inherit' })
if (built.status !== 0) process.exit(1)
const dir = mkdtempSync(join(tmpdir(), 'mcp-edge-private-scopes-'))
const storeFile = join(dir, 'kv.json')
const child = spawn(process.execPath, ['dist/private-scopes/cli.js', 'serve'], {
  cwd: ROOT,
  env: { ...process.env, ORIGIN_URL: originUrl, STORE_FILE: storeFile, PORT: '0', HOST: '127.0.0.1', ...extra },
  stdio: ['ignore', 'pipe', 'pipe'],
})
// The edge's log: the sweeps of private scopes it reports (registry.private_scopes_swept).
const swept = { sweeps: 0, evicted: 0, expired: 0 }
let logBuf = ''
child.stdout!.on('data', (d: Buffer) => {
  logBuf += d.toString()
  let i
  while ((i = logBuf.indexOf('\n')) >= 0) {
    const line = logBuf.slice(0, i)
    logBuf = logBuf.slice(i + 1)
    if (!line.includes('registry.private_scopes_swept')) continue
    try {
      const r = JSON.parse(line) as { evicted: number; expired: number }
      swept.sweeps++
      swept.evicted += r.evicted
      swept.expired += r.expired
    } catch {
      // not a log record
    }
  }
})
const base = await new Promise<string>((ok, fail) => {
  let err = ''
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString()
    const m = /mcp-edge-validator: (http:\/\/[^/]+)\/mcp/.exec(err)
    if (m) ok(m[1]!)
  })
  child.on('exit', (code) => fail(new Error(`edge exited (${code}): ${err.slice(0, 500)}`)))
})

function rssMiB(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

function storeFigures(): { bytes: number; scopes: number; records: number; pins: number; pinserved: number } {
  let bytes = 0
  let keys: string[] = []
  try {
    bytes = statSync(storeFile).size
    keys = Object.keys((JSON.parse(readFileSync(storeFile, 'utf8')) as { entries: Record<string, unknown> }).entries)
  } catch {
    // not written yet
  }
  const privateKeys = keys.filter((k) => /^tools:default:u-/.test(k))
  return {
    bytes,
    scopes: new Set(privateKeys.map((k) => k.split(':')[2])).size,
    records: privateKeys.length,
    pins: keys.filter((k) => k.startsWith('pins:')).length,
    pinserved: keys.filter((k) => k.startsWith('pinserved:')).length,
  }
}

const pool = new Pool(base, { connections: C })
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
async function post(i: number, body: unknown): Promise<string> {
  const r = await pool.request({ method: 'POST', path: '/mcp', headers: { ...HEADERS, authorization: `Bearer caller-${i}` }, body: JSON.stringify(body) })
  return r.body.text()
}

let refused = 0
async function caller(i: number): Promise<void> {
  await post(i, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
  // The list is learned in the background after the reply: give it a moment before the call.
  await new Promise((r) => setTimeout(r, 5))
  const answer = await post(i, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_weather', arguments: { units: 'k' } } })
  if (answer.includes('-32602')) refused++
}

function row(label: string): void {
  const s = storeFigures()
  console.log(
    `${label.padEnd(22)} RSS ${rssMiB().toFixed(1).padStart(6)} MiB   store ${(s.bytes / 1024).toFixed(0).padStart(6)} KiB   private scopes ${String(s.scopes).padStart(6)}   records ${String(s.records).padStart(6)}   pins: ${String(s.pins).padStart(5)}   pinserved: ${String(s.pinserved).padStart(5)}`
  )
}

const t0 = Date.now()
try {
  await caller(0)
  await new Promise((r) => setTimeout(r, 500))
  row('after 1 caller')
  let next = 1
  const step = Math.max(1, Math.ceil(N / 5))
  let mark = step
  while (next < N) {
    const end = Math.min(N, mark)
    const workers = Array.from({ length: C }, async () => {
      while (next < end) await caller(next++)
    })
    await Promise.all(workers)
    row(`after ${end} callers`)
    mark += step
  }
  await new Promise((r) => setTimeout(r, 3_000))
  row('3 s later')
  const times: number[] = []
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    await post(N + i, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  console.log(`a new caller's tools/list: median ${times[2]!.toFixed(1)} ms (5 new callers: ${times.map((t) => t.toFixed(1)).join(', ')} ms)`)
  console.log(`${N} callers in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${refused} invalid calls refused -32602 by the edge (validated in the caller's scope)`)
  console.log(
    `the edge logged ${swept.sweeps} sweeps that removed scopes it did not hold: ${swept.evicted} past the bound, ${swept.expired} expired (scopes it dropped itself are deleted without a log line)`
  )
  console.log(`settings: ${JSON.stringify(extra)}`)
} finally {
  await pool.close()
  child.kill('SIGKILL')
  origin.close()
  rmSync(dir, { recursive: true, force: true })
}
