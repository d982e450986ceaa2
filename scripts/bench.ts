/**
 * `npm run bench`: what the edge costs, against a pass-through proxy that does nothing (issue 7).
 *
 * Starts everything on 127.0.0.1 as separate processes: a raw `node:http` origin
 * (scripts/bench/origin.ts), the floor proxies (scripts/bench/floor.ts, undici and fetch), the
 * edge on Node (scripts/bench/edge.ts) and the built Worker in workerd (scripts/bench/worker.ts).
 * This process drives the load with autocannon. With two or more cores the process under test
 * runs alone on core 0; the origin, autocannon and this script share core 1.
 *
 * Every throughput scenario runs once as a warm-up, then `rounds` times in alternation, so each
 * edge figure has a floor figure measured next to it; ratios are medians of per-round ratios.
 * CPU per request is the process's CPU time (/proc, user + system, the whole process tree for
 * workerd) over the 2xx replies of the run.
 *
 * Also measured: latency and CPU at the same offered load (half the slowest compared scenario's
 * throughput), the cold path
 * per engine, validations per second per engine and schema size, RSS across a constant-load run,
 * and the bound of the compiled-validator cache (VALIDATOR_CACHE_SIZE).
 *
 * Writes the report to BENCHMARKS.md (or `--out FILE`) and prints it.
 * Flags: `--smoke` (a few seconds, for CI: figures meaningless), `--out FILE`, `--rounds N`,
 * `--duration S` (per run), `--memory-seconds S`.
 */
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { resolve } from 'node:path'
import { build } from 'esbuild'
import { Pool } from 'undici'
import { makeTool, SSE_EVENTS, TOOLS, type BenchTool } from './bench/schemas'
import { buildWorkerBundle } from '../test/helpers/build-worker'

const ROOT = resolve(import.meta.dirname, '..')
const argv = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const SMOKE = argv.includes('--smoke')
const OUT = resolve(flag('--out') ?? resolve(ROOT, 'BENCHMARKS.md'))
const P = {
  rounds: Number(flag('--rounds') ?? (SMOKE ? 1 : 3)),
  durationS: Number(flag('--duration') ?? (SMOKE ? 0.3 : 3)),
  warmupS: SMOKE ? 0.2 : 5,
  memoryS: Number(flag('--memory-seconds') ?? (SMOKE ? 1 : 120)),
  memoryWarmS: SMOKE ? 0.3 : 5,
  microMs: SMOKE ? 20 : 400,
  coldRepeats: SMOKE ? 1 : 5,
  lruTools: SMOKE ? 30 : 500,
  lruSize: SMOKE ? 10 : 50,
  connections: SMOKE ? 4 : 32,
}
const EXTRA = argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out')
const COMMAND = EXTRA.length ? `npm run bench -- ${EXTRA.join(' ')}` : 'npm run bench'

// ---------------------------------------------------------------------------------------------
// Processes, pinning and CPU accounting

const CORES = os.availableParallelism()
const HAS_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
const PIN = HAS_TASKSET && CORES >= 2
const UNDER_TEST = PIN ? ['taskset', '-c', '0'] : []
const SUPPORT = PIN ? ['taskset', '-c', CORES >= 3 ? '2' : '1'] : []
if (PIN) execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' })
const PINNING = PIN
  ? `process under test alone on core 0; ${CORES >= 3 ? 'autocannon and this script on core 1, the origin on core 2' : 'the origin, autocannon and this script share core 1'}`
  : 'no pinning (taskset missing or a single core)'

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
  } catch {
    return 100
  }
})()

/** Pids of a process and all its descendants (for workerd under Miniflare). */
function tree(pid: number): number[] {
  const out = [pid]
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim()
      if (kids) for (const k of kids.split(/\s+/)) out.push(...tree(Number(k)))
    }
  } catch {
    // process gone
  }
  return out
}

/** CPU time (user + system) of a process tree, in microseconds. */
function cpuUs(pid: number): number {
  let ticks = 0
  for (const p of tree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15)
    } catch {
      // process gone
    }
  }
  return (ticks * 1e6) / CLK_TCK
}

interface Child<T> {
  proc: ChildProcess
  ready: T
  stop(): Promise<void>
}

const children = new Set<ChildProcess>()

/**
 * Bundles the child processes' scripts with esbuild into dist/bench/ (packages external, as
 * `npm start` does), so the processes under test run plain JavaScript: under tsx every function
 * would also carry a `__name` call (keepNames) and module loading would go through its loader.
 */
async function buildRunners(): Promise<void> {
  await build({
    entryPoints: ['origin', 'floor', 'edge', 'worker', 'micro'].map((n) => resolve(ROOT, `scripts/bench/${n}.ts`)),
    outdir: resolve(ROOT, 'dist/bench'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  })
}

/** Starts `node dist/bench/<name>.js` (pinned with `pin`), resolves with its first IPC message. */
function startChild<T>(script: string, env: Record<string, string>, pin: string[]): Promise<Child<T>> {
  const cmd = [...pin, process.execPath, resolve(ROOT, script.replace(/^scripts\/bench\/(.*)\.ts$/, 'dist/bench/$1.js'))]
  const proc = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  children.add(proc)
  proc.once('exit', (code, signal) => {
    // A process under test dying mid-run would turn its figures into garbage: stop the run.
    if (children.has(proc)) {
      process.stderr.write(`bench: ${script} died (${signal ?? code}) during the run\n`)
      for (const c of children) c.kill('SIGKILL')
      process.exit(1)
    }
  })
  return new Promise((res, rej) => {
    proc.once('message', (ready) =>
      res({
        proc,
        ready: ready as T,
        stop: () =>
          new Promise<void>((done) => {
            children.delete(proc)
            if (proc.exitCode !== null) return done()
            const t = setTimeout(() => proc.kill('SIGKILL'), 5000)
            proc.once('exit', () => {
              clearTimeout(t)
              done()
            })
            proc.disconnect()
          }),
      })
    )
    proc.once('exit', (code) => rej(new Error(`${script} exited with ${code} before it was ready`)))
  })
}

/** Asks a child for a reply over IPC. */
function ask<T>(child: Child<unknown>, msg: object): Promise<T> {
  return new Promise((res) => {
    child.proc.once('message', (m) => res(m as T))
    child.proc.send(msg)
  })
}

process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL')
})

// ---------------------------------------------------------------------------------------------
// Requests

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const V2025 = { ...HEADERS, 'mcp-protocol-version': '2025-06-18' }
const call = (id: number, tool: BenchTool, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: args } })
const TOOL3 = TOOLS[0]!
const TOOL10 = TOOLS[1]!
const BATCH = JSON.stringify(Array.from({ length: 10 }, (_, i) => call(i + 1, TOOL10, TOOL10.valid)))

function load(opts: AutocannonOptions): Promise<AutocannonResult> {
  return new Promise((res, rej) => {
    autocannon({ connections: P.connections, timeout: 10, ...opts }, (err, r) => (err ? rej(err) : res(r)))
  })
}

async function post(url: string, body: string, headers: Record<string, string> = V2025): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: 'POST', headers, body })
  return { status: r.status, text: await r.text() }
}

async function originCalls(base: string): Promise<number> {
  return ((await (await fetch(`${base}/stats`)).json()) as { calls: number }).calls
}

// ---------------------------------------------------------------------------------------------
// Scenarios

type Check = (r: { status: number; text: string }) => string | null

interface Scenario {
  key: string
  label: string
  url: string
  body: string
  headers: Record<string, string>
  /** Process whose CPU is charged to the scenario (null: none, e.g. direct). */
  pid: () => number | null
  /** SSE events per reply (scenario 6), for events per second. */
  events?: number
  /** Expected origin POSTs per request: 1, or 0 when the edge answers locally. */
  originPerRequest: number
  check: Check
}

const expectResult: Check = (r) => (r.status === 200 && JSON.parse(r.text).result?.structuredContent?.ok === true ? null : `expected a result, got ${r.status}`)
const expectInvalid: Check = (r) => (r.status === 200 && JSON.parse(r.text).error?.code === -32602 ? null : `expected -32602, got ${r.status}`)
const expectBatch: Check = (r) => {
  const v = JSON.parse(r.text) as { result?: unknown }[]
  return r.status === 200 && Array.isArray(v) && v.length === 10 && v.every((m) => m.result) ? null : `expected 10 results, got ${r.status}`
}
const expectSse: Check = (r) => {
  const data = r.text.split('\n').filter((l) => l.startsWith('data:'))
  return r.status === 200 && data.length === SSE_EVENTS && data.at(-1)!.includes('"result"') ? null : `expected ${SSE_EVENTS} events ending in a result, got ${data.length}`
}

interface Run {
  rps: number
  p50: number
  p99: number
  cpuUsPerReq: number | null
  ok: number
  bad: number
  originDelta: number
}

/**
 * The origin's POST count once it has stopped moving: when a run ends autocannon drops its
 * connections, but requests the edge already forwarded still reach the origin for a moment and
 * must not be charged to the next run.
 */
async function settledOriginCalls(originBase: string): Promise<number> {
  let last = await originCalls(originBase)
  for (;;) {
    await new Promise((r) => setTimeout(r, 150))
    const now = await originCalls(originBase)
    if (now === last) return now
    last = now
  }
}

async function measure(s: Scenario, originBase: string, durationS: number, overallRate?: number): Promise<Run> {
  const pid = s.pid()
  const before = await settledOriginCalls(originBase)
  const c0 = pid ? cpuUs(pid) : 0
  const r = await load({ url: s.url, method: 'POST', headers: s.headers, body: s.body, duration: durationS, ...(overallRate ? { overallRate } : {}) })
  const c1 = pid ? cpuUs(pid) : 0
  const originDelta = (await settledOriginCalls(originBase)) - before
  const ok = r['2xx']
  return {
    rps: ok / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUsPerReq: pid && ok ? (c1 - c0) / ok : null,
    ok,
    bad: r.non2xx + r.errors + r.timeouts,
    originDelta,
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const spread = (xs: number[], digits = 0): string => (xs.length > 1 ? `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}` : '')
const signed = (n: number, digits = 0): string => (n >= 0 ? '+' : '') + fmt(n, digits)
const mark = (ok: boolean): string => (ok ? 'met' : '**missed**')

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

// ---------------------------------------------------------------------------------------------
// Main

async function buildWorker(): Promise<string> {
  // Same settings as the test bundle and wrangler's module Worker.
  return buildWorkerBundle(resolve(ROOT, 'dist/bench/edge-worker.js'))
}

function loadAvg(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(', ')
}

async function main(): Promise<void> {
  const started = new Date()
  const loadStart = loadAvg()
  const log = (s: string) => process.stderr.write(`[bench ${((Date.now() - started.getTime()) / 1000).toFixed(0)}s] ${s}\n`)
  const bundle = await buildWorker()
  await buildRunners()
  const toolsJson = JSON.stringify(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))

  const origin = await startChild<{ port: number }>('scripts/bench/origin.ts', {}, SUPPORT)
  const originBase = `http://127.0.0.1:${origin.ready.port}`
  const floor = await startChild<{ port: number }>('scripts/bench/floor.ts', { ORIGIN_BASE: originBase, FLOOR_CLIENT: 'undici' }, UNDER_TEST)
  const floorFetch = await startChild<{ port: number }>('scripts/bench/floor.ts', { ORIGIN_BASE: originBase, FLOOR_CLIENT: 'fetch' }, UNDER_TEST)
  const floorDispatch = await startChild<{ port: number }>('scripts/bench/floor.ts', { ORIGIN_BASE: originBase, FLOOR_CLIENT: 'dispatch' }, UNDER_TEST)
  const edgeEnv = { ORIGIN_URL: `${originBase}/mcp`, ORIGINS: JSON.stringify({ sse: `${originBase}/sse` }), BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn' }
  const edge = await startChild<{ port: number }>('scripts/bench/edge.ts', edgeEnv, UNDER_TEST)
  const worker = await startChild<{ url: string }>('scripts/bench/worker.ts', { BENCH_WORKER_BUNDLE: bundle, BENCH_TOOLS: toolsJson, EDGE_ORIGIN_URL: `${originBase}/mcp` }, UNDER_TEST)
  log(`origin ${originBase}, floor :${floor.ready.port}, floor-fetch :${floorFetch.ready.port}, edge :${edge.ready.port}, worker ${worker.ready.url}`)

  const floorUrl = `http://127.0.0.1:${floor.ready.port}`
  const fetchUrl = `http://127.0.0.1:${floorFetch.ready.port}`
  const edgeUrl = `http://127.0.0.1:${edge.ready.port}/mcp`
  const pidOf = (c: Child<unknown>) => () => c.proc.pid ?? null
  const single = (t: BenchTool, args: Record<string, unknown>) => JSON.stringify(call(1, t, args))
  const S = (key: string, label: string, url: string, body: string, pid: () => number | null, check: Check, more: Partial<Scenario> = {}): Scenario => ({
    key, label, url, body, pid, check, headers: V2025, originPerRequest: 1, ...more,
  })
  const scenarios: Scenario[] = [
    S('direct', '1 direct to the origin (CPU: the raw node:http origin, sharing its core with autocannon)', `${originBase}/mcp`, single(TOOL10, TOOL10.valid), pidOf(origin), expectResult),
    S('floor', '2 floor: Hono + undici `request`', `${floorUrl}/mcp`, single(TOOL10, TOOL10.valid), pidOf(floor), expectResult),
    S('floorFetch', '2 floor with `fetch` (context)', `${fetchUrl}/mcp`, single(TOOL10, TOOL10.valid), pidOf(floorFetch), expectResult),
    S('floorDispatch', "2 floor with the edge's undici `dispatch` client (context)", `http://127.0.0.1:${floorDispatch.ready.port}/mcp`, single(TOOL10, TOOL10.valid), pidOf(floorDispatch), expectResult),
    ...TOOLS.map((t) => S(`valid${t.size}`, `3 edge, valid call, ${t.size} properties`, edgeUrl, single(t, t.valid), pidOf(edge), expectResult)),
    S('invalid', '4 edge, invalid call (10 properties) answered locally', edgeUrl, single(TOOL10, TOOL10.invalid), pidOf(edge), expectInvalid, { originPerRequest: 0 }),
    S('batch', '5 edge, 2025-03-26 batch of 10 calls (10 properties)', edgeUrl, BATCH, pidOf(edge), expectBatch, { headers: HEADERS }),
    S('sseFloor', `6 floor relaying SSE (${SSE_EVENTS} events)`, `${floorUrl}/sse`, single(TOOL3, TOOL3.valid), pidOf(floor), expectSse, { events: SSE_EVENTS }),
    S('sse', `6 edge relaying SSE (${SSE_EVENTS} events)`, `${edgeUrl}/sse`, single(TOOL3, TOOL3.valid), pidOf(edge), expectSse, { events: SSE_EVENTS }),
    ...TOOLS.map((t) => S(`wvalid${t.size}`, `7 Worker (workerd), valid call, ${t.size} properties`, worker.ready.url, single(t, t.valid), pidOf(worker), expectResult)),
    S('winvalid', '7 Worker (workerd), invalid call (10 properties)', worker.ready.url, single(TOOL10, TOOL10.invalid), pidOf(worker), expectInvalid, { originPerRequest: 0 }),
  ]

  // Pre-flight: every scenario answers what it should, and the origin is touched only when it should be.
  for (const s of scenarios) {
    const before = await originCalls(originBase)
    const r = await post(s.url, s.body, s.headers)
    const problem = s.check(r)
    if (problem) throw new Error(`scenario ${s.key}: ${problem}`)
    const touched = (await originCalls(originBase)) - before
    if (touched !== s.originPerRequest) throw new Error(`scenario ${s.key}: the origin received ${touched} POSTs, expected ${s.originPerRequest}`)
  }
  log('pre-flight checks passed; warm-up')
  for (const s of scenarios) await measure(s, originBase, P.warmupS)

  const runs = new Map<string, Run[]>(scenarios.map((s) => [s.key, []]))
  for (let round = 1; round <= P.rounds; round++) {
    log(`round ${round}/${P.rounds}`)
    for (const s of scenarios) runs.get(s.key)!.push(await measure(s, originBase, P.durationS))
  }

  // Latency and CPU at the same offered load: half the throughput of the slowest of the compared
  // scenarios, so every one of them runs below saturation (queueing would swamp the comparison).
  const latencyKeys = ['floor', 'valid3', 'valid10', 'valid20', 'invalid']
  const slowest = Math.min(...latencyKeys.map((k) => median(runs.get(k)!.map((r) => r.rps))))
  const rate = Math.max(50, Math.round(slowest / 2))
  const latency = new Map<string, Run[]>(latencyKeys.map((k) => [k, []]))
  log(`latency at ${rate} req/s`)
  for (let round = 1; round <= P.rounds; round++) {
    for (const k of latencyKeys) latency.get(k)!.push(await measure(scenarios.find((s) => s.key === k)!, originBase, P.durationS, rate))
  }
  await Promise.all([floor.stop(), floorFetch.stop(), floorDispatch.stop(), edge.stop(), worker.stop()])

  // Cold path: the first call of a tool whose schema is only in KV (KV read + compile).
  log('cold path')
  const cold = { node: [] as ColdRun[], worker: [] as ColdRun[] }
  for (let i = 0; i < P.coldRepeats; i++) {
    cold.node.push(await coldRun('node', originBase, bundle, i))
    cold.worker.push(await coldRun('worker', originBase, bundle, i))
  }

  // Validation micro-benchmark.
  log('validation micro-benchmark')
  const micro = await microBench()

  // Memory: RSS across a constant-load run; the compiled-validator cache bound.
  log(`memory run (${P.memoryS} s at ${rate} req/s)`)
  const memory = await memoryRun(originBase, toolsJson, rate)
  log('validator cache bound')
  const lru = await lruRun(originBase)
  await origin.stop()

  const report = render({ started, loadStart, loadEnd: loadAvg(), scenarios, runs, latency, rate, cold, micro, memory, lru })
  writeFileSync(OUT, report)
  process.stdout.write(report)
  log(`wrote ${OUT}`)
}

// ---------------------------------------------------------------------------------------------
// Cold path, micro-benchmark, memory

interface ColdRun {
  firstOfProcessMs: number
  firstOfToolMs: number
  warmMs: number
}

async function timedPost(pool: Pool, path: string, body: string): Promise<number> {
  const t0 = process.hrtime.bigint()
  const r = await pool.request({ method: 'POST', path, headers: V2025, body })
  const text = await r.body.text()
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (!JSON.parse(text).result) throw new Error(`cold path: expected a result, got ${r.statusCode}`)
  return ms
}

async function coldRun(runtime: 'node' | 'worker', originBase: string, bundle: string, i: number): Promise<ColdRun> {
  // Two 20-property tools whose schemas differ, so the second is a compile cache miss too.
  const a = makeTool(20, 'cold_a', `a${i}`)
  const b = makeTool(20, 'cold_b', `b${i}`)
  const tools = JSON.stringify([a, b].map((t) => ({ name: t.name, inputSchema: t.inputSchema })))
  const child =
    runtime === 'node'
      ? await startChild<{ port: number }>('scripts/bench/edge.ts', { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS: tools, BENCH_SEED: 'kv' }, UNDER_TEST)
      : await startChild<{ url: string }>('scripts/bench/worker.ts', { BENCH_WORKER_BUNDLE: bundle, BENCH_TOOLS: tools, EDGE_ORIGIN_URL: `${originBase}/mcp` }, UNDER_TEST)
  const url = new URL('port' in child.ready ? `http://127.0.0.1:${child.ready.port}/mcp` : child.ready.url)
  const pool = new Pool(url.origin, { connections: 1 })
  try {
    // Connection and HTTP server warm (GET /healthz touches no tool), then the first tool call.
    await (await pool.request({ method: 'GET', path: '/healthz' })).body.text()
    const firstOfProcessMs = await timedPost(pool, url.pathname, JSON.stringify(call(1, a, a.valid)))
    const warmA: number[] = []
    for (let k = 0; k < 20; k++) warmA.push(await timedPost(pool, url.pathname, JSON.stringify(call(1, a, a.valid))))
    const firstOfToolMs = await timedPost(pool, url.pathname, JSON.stringify(call(1, b, b.valid)))
    const warmB: number[] = []
    for (let k = 0; k < 20; k++) warmB.push(await timedPost(pool, url.pathname, JSON.stringify(call(1, b, b.valid))))
    return { firstOfProcessMs, firstOfToolMs, warmMs: median([...warmA.slice(10), ...warmB.slice(10)]) }
  } finally {
    await pool.close()
    await child.stop()
  }
}

interface MicroRow {
  engine: string
  size: number
  validPerS: number
  invalidPerS: number
  compileMs: number
}

function microBench(): Promise<MicroRow[]> {
  const cmd = [...UNDER_TEST, process.execPath, resolve(ROOT, 'dist/bench/micro.js')]
  const proc = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env: { ...process.env, BENCH_MICRO_MS: String(P.microMs) }, stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(proc)
  let out = ''
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  return new Promise((res, rej) =>
    proc.once('exit', (code) => {
      children.delete(proc)
      if (code !== 0) rej(new Error(`micro-benchmark exited with ${code}`))
      else res(JSON.parse(out) as MicroRow[])
    })
  )
}

interface EdgeStats {
  rss: number
  heapUsed: number
  compiled: number
  memoryEntries: number
  kvReads: number
  compiles: number
}

interface MemoryResult {
  rate: number
  seconds: number
  warm: EdgeStats
  end: EdgeStats
  samples: number[]
  ok: number
  bad: number
}

async function memoryRun(originBase: string, toolsJson: string, rate: number): Promise<MemoryResult> {
  const edge = await startChild<{ port: number }>('scripts/bench/edge.ts', { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn' }, UNDER_TEST)
  const url = `http://127.0.0.1:${edge.ready.port}/mcp`
  const requests = [...TOOLS.map((t) => ({ body: JSON.stringify(call(1, t, t.valid)) })), { body: JSON.stringify(call(1, TOOL10, TOOL10.invalid)) }].map((r) => ({ ...r, method: 'POST', headers: V2025 }))
  try {
    await load({ url, requests, duration: P.memoryWarmS, overallRate: rate })
    const warm = await ask<EdgeStats>(edge, { cmd: 'stats' })
    const samples: number[] = []
    const timer = setInterval(() => void ask<EdgeStats>(edge, { cmd: 'stats' }).then((s) => samples.push(s.rss)), 10_000)
    const r = await load({ url, requests, duration: P.memoryS, overallRate: rate })
    clearInterval(timer)
    const end = await ask<EdgeStats>(edge, { cmd: 'stats' })
    return { rate, seconds: P.memoryS, warm, end, samples, ok: r['2xx'], bad: r.non2xx + r.errors + r.timeouts }
  } finally {
    await edge.stop()
  }
}

interface LruResult {
  bound: number
  tools: number
  afterFirstPass: EdgeStats
  afterSecondPass: EdgeStats
}

async function lruRun(originBase: string): Promise<LruResult> {
  const tools = Array.from({ length: P.lruTools }, (_, i) => makeTool(10, `lru_${i}`, String(i)))
  const file = resolve(ROOT, 'dist/bench/lru-tools.json')
  writeFileSync(file, JSON.stringify(tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema }))))
  const edge = await startChild<{ port: number }>('scripts/bench/edge.ts', { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS_FILE: file, BENCH_SEED: 'kv', VALIDATOR_CACHE_SIZE: String(P.lruSize) }, UNDER_TEST)
  const pool = new Pool(`http://127.0.0.1:${edge.ready.port}`, { connections: 4 })
  const pass = async () => {
    for (let i = 0; i < tools.length; i += 4) {
      await Promise.all(tools.slice(i, i + 4).map((t) => timedPost(pool, '/mcp', JSON.stringify(call(1, t, t.valid)))))
    }
    return ask<EdgeStats>(edge, { cmd: 'stats' })
  }
  try {
    const afterFirstPass = await pass()
    const afterSecondPass = await pass()
    return { bound: P.lruSize, tools: P.lruTools, afterFirstPass, afterSecondPass }
  } finally {
    await pool.close()
    await edge.stop()
  }
}

// ---------------------------------------------------------------------------------------------
// Report

interface Report {
  started: Date
  loadStart: string
  loadEnd: string
  scenarios: Scenario[]
  runs: Map<string, Run[]>
  latency: Map<string, Run[]>
  rate: number
  cold: { node: ColdRun[]; worker: ColdRun[] }
  micro: MicroRow[]
  memory: MemoryResult
  lru: LruResult
}

function render(r: Report): string {
  const get = (k: string) => r.runs.get(k)!
  const med = (k: string, f: (x: Run) => number) => median(get(k).map(f))
  /** Median over rounds of a per-round ratio a/b. */
  const ratio = (a: string, b: string, f: (x: Run) => number = (x) => x.rps) => median(get(a).map((x, i) => f(x) / f(get(b)[i]!)))
  const cpu = (k: string) => (get(k)[0]!.cpuUsPerReq === null ? null : get(k).map((x) => x.cpuUsPerReq!))
  const lat = (k: string) => r.latency.get(k)!

  const rows = r.scenarios.map((s) => {
    const rs = get(s.key)
    const rps = rs.map((x) => x.rps)
    const c = cpu(s.key)
    const base = s.key.startsWith('sse') ? 'sseFloor' : 'floor'
    const unit = s.events ? `${fmt(median(rps) * s.events)} ev/s` : ''
    return [
      s.label,
      `${fmt(median(rps))}${unit ? ` (${unit})` : ''}`,
      spread(rps),
      s.key === base ? '1.00' : s.key === 'direct' ? '' : ratio(s.key, base).toFixed(2),
      fmt(median(rs.map((x) => x.p50)), 1),
      fmt(median(rs.map((x) => x.p99)), 1),
      c ? fmt(median(c), 1) : '',
      c ? spread(c, 1) : '',
      String(rs.reduce((n, x) => n + x.bad, 0)),
    ]
  })
  const main = table(['scenario', 'req/s (median)', 'req/s spread', 'vs floor', 'p50 ms', 'p99 ms', 'CPU µs/req (median)', 'CPU spread', 'errors'], rows)

  const latRows = ['floor', 'valid3', 'valid10', 'valid20', 'invalid'].map((k) => {
    const s = r.scenarios.find((x) => x.key === k)!
    const p50 = median(lat(k).map((x) => x.p50))
    const p99 = median(lat(k).map((x) => x.p99))
    const d50 = k === 'floor' ? '' : signed(median(lat(k).map((x, i) => x.p50 - lat('floor')[i]!.p50)), 2)
    const d99 = k === 'floor' ? '' : signed(median(lat(k).map((x, i) => x.p99 - lat('floor')[i]!.p99)), 2)
    const c = median(lat(k).map((x) => x.cpuUsPerReq!))
    const dc = k === 'floor' ? '' : signed(median(lat(k).map((x, i) => x.cpuUsPerReq! - lat('floor')[i]!.cpuUsPerReq!)), 1)
    return [s.label, fmt(median(lat(k).map((x) => x.rps))), fmt(p50, 2), d50, fmt(p99, 2), d99, fmt(c, 1), dc]
  })

  // CPU per request falls as throughput rises (more requests per event-loop turn), so the edge
  // is compared with the floor at the same offered load (the latency runs), not at saturation.
  const floorCpu = median(lat('floor').map((x) => x.cpuUsPerReq!))
  const validCpuAbove = (k: string) => median(lat(k).map((x, i) => x.cpuUsPerReq! - lat('floor')[i]!.cpuUsPerReq!))
  const sizes = TOOLS.map((t) => t.size)
  const latDelta = (k: string, f: (x: Run) => number) => median(lat(k).map((x, i) => f(x) - f(lat('floor')[i]!)))
  const coldMed = (rt: 'node' | 'worker', f: (c: ColdRun) => number) => median(r.cold[rt].map(f))
  const coldTool = (rt: 'node' | 'worker') => coldMed(rt, (c) => c.firstOfToolMs - c.warmMs)
  const batchCpu = med('batch', (x) => x.cpuUsPerReq!)
  const singleCpu = med('valid10', (x) => x.cpuUsPerReq!)
  const rssRatio = r.memory.end.rss / r.memory.warm.rss

  const targets: string[][] = [
    ...sizes.map((n) => [`3 throughput vs floor, ${n} properties`, '>= 0.85 (aim 0.90)', ratio(`valid${n}`, 'floor').toFixed(2), mark(ratio(`valid${n}`, 'floor') >= 0.85)]),
    ["context: valid call (10 properties) vs the floor forwarding with the edge's own `dispatch` client", 'none', ratio('valid10', 'floorDispatch').toFixed(2), 'context'],
    ...sizes.map((n) => [`3 p50 / p99 above floor at ${fmt(r.rate)} req/s, ${n} properties`, '<= 1 ms / <= 2 ms', `${fmt(latDelta(`valid${n}`, (x) => x.p50), 2)} / ${fmt(latDelta(`valid${n}`, (x) => x.p99), 2)} ms`, mark(latDelta(`valid${n}`, (x) => x.p50) <= 1 && latDelta(`valid${n}`, (x) => x.p99) <= 2)]),
    ...sizes.map((n) => [`edge CPU per valid forwarded call above the floor's (${fmt(floorCpu, 1)} µs) at ${fmt(r.rate)} req/s, ${n} properties`, '<= 15 µs', `${fmt(validCpuAbove(`valid${n}`), 1)} µs`, mark(validCpuAbove(`valid${n}`) <= 15)]),
    ['4 invalid throughput vs scenario 3 (10 properties)', '>= 2x', `${ratio('invalid', 'valid10').toFixed(2)}x`, mark(ratio('invalid', 'valid10') >= 2)],
    ['4 edge CPU per rejected call (saturated / at the offered load)', '<= 50 µs', `${fmt(med('invalid', (x) => x.cpuUsPerReq!), 1)} / ${fmt(median(lat('invalid').map((x) => x.cpuUsPerReq!)), 1)} µs`, mark(Math.min(med('invalid', (x) => x.cpuUsPerReq!), median(lat('invalid').map((x) => x.cpuUsPerReq!))) <= 50)],
    ['4 origin POSTs during invalid runs', '0', String(get('invalid').reduce((n, x) => n + x.originDelta, 0)), mark(get('invalid').every((x) => x.originDelta === 0))],
    ['5 edge CPU of a batch of 10 vs 3 single calls', '< 3 single calls', `${fmt(batchCpu, 1)} µs vs ${fmt(3 * singleCpu, 1)} µs (${(batchCpu / singleCpu).toFixed(2)} single calls)`, mark(batchCpu < 3 * singleCpu)],
    ['6 SSE events per second vs floor relaying the same stream', '>= 0.90', ratio('sse', 'sseFloor').toFixed(2), mark(ratio('sse', 'sseFloor') >= 0.9)],
    ['cold path, 20 properties, Node (cfworker first, ajv after 16 calls): first call of a tool minus a warm call', '< 15 ms', `${fmt(coldTool('node'), 2)} ms`, mark(coldTool('node') < 15)],
    ['cold path, 20 properties, workerd (cfworker): first call of a tool minus a warm call', '< 3 ms', `${fmt(coldTool('worker'), 2)} ms`, mark(coldTool('worker') < 3)],
    [`RSS after ${r.memory.seconds} s at ${fmt(r.memory.rate)} req/s vs after warm-up`, '<= 1.10', rssRatio.toFixed(3), mark(rssRatio <= 1.1)],
    [`compiled validators held after ${r.lru.tools} tools, VALIDATOR_CACHE_SIZE=${r.lru.bound}`, `<= ${r.lru.bound}`, String(r.lru.afterFirstPass.compiled), mark(r.lru.afterFirstPass.compiled <= r.lru.bound)],
  ]

  const coldRows = (['node', 'worker'] as const).map((rt) => [
    rt === 'node' ? 'Node, cfworker then ajv' : 'workerd, @cfworker/json-schema',
    fmt(coldMed(rt, (c) => c.firstOfProcessMs), 2),
    fmt(coldMed(rt, (c) => c.firstOfToolMs), 2),
    fmt(coldMed(rt, (c) => c.warmMs), 2),
    fmt(coldMed(rt, (c) => c.firstOfProcessMs - c.warmMs), 2),
    fmt(coldTool(rt), 2),
  ])
  const microRows = r.micro.map((m) => [m.engine, String(m.size), fmt(m.validPerS), fmt(m.invalidPerS), fmt(m.compileMs, 2)])
  const mb = (b: number) => fmt(b / 1048576, 1)

  return `# Benchmarks

${SMOKE ? '> **Smoke run** (CI): a few seconds per section, figures are not meaningful.\n\n' : ''}What the edge costs next to a proxy that does nothing (issue 7). Generated by \`scripts/bench.ts\`; do not edit by hand.

- command: \`${COMMAND}\`
- date: ${r.started.toISOString()}
- machine: ${CORES} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${mb(os.totalmem())} MiB, ${os.platform()} ${os.release()}
- Node ${process.version}; load average at start ${r.loadStart}, at end ${r.loadEnd}
- pinning: ${PINNING}
- ${P.rounds} alternating rounds of ${P.durationS} s per scenario after a ${P.warmupS} s warm-up each; ${P.connections} connections; figures are medians over rounds, spread is min–max; ratios are medians of per-round ratios
- CPU: user + system time of the process under test (whole process tree for workerd) over the 2xx replies of the run

## Throughput

${main}

## Targets

${table(['target', 'wanted', 'measured', ''], targets)}

## Latency and CPU at the same offered load (${fmt(r.rate)} req/s, half the slowest compared scenario's throughput)

${table(['scenario', 'req/s', 'p50 ms', 'p50 vs floor', 'p99 ms', 'p99 vs floor', 'CPU µs/req', 'CPU vs floor'], latRows)}

## Cold path (20-property schema, schema only in KV; median of ${r.cold.node.length} fresh processes)

"First call of the process": the first \`tools/call\` after start (KV read, engine set-up, compile, first run of the data path).
"First call of a tool": a second tool in the same process, never called before (KV read and compile). Latency seen by the client.

${table(['runtime, engine', 'first call of the process ms', 'first call of a tool ms', 'warm call ms', 'process cold cost ms', 'tool cold cost ms'], coldRows)}

## Validation micro-benchmark (Node ${process.version}, one core, through the edge's engine adapters)

${table(['engine', 'properties', 'valid args /s', 'invalid args /s', 'compile ms'], microRows)}

## Memory

- Node edge, ${fmt(r.memory.rate)} req/s for ${r.memory.seconds} s (valid calls of all three sizes and invalid calls, in turn); ${fmt(r.memory.ok)} replies, ${r.memory.bad} errors
- RSS after warm-up ${mb(r.memory.warm.rss)} MiB, after the run ${mb(r.memory.end.rss)} MiB (ratio ${rssRatio.toFixed(3)}); heap used ${mb(r.memory.warm.heapUsed)} -> ${mb(r.memory.end.heapUsed)} MiB
- RSS every 10 s: ${r.memory.samples.map(mb).join(', ') || '(run shorter than 10 s)'} MiB
- validator cache: ${r.lru.tools} distinct tools called twice with VALIDATOR_CACHE_SIZE=${r.lru.bound}: compiled validators held ${r.lru.afterFirstPass.compiled} after the first pass, ${r.lru.afterSecondPass.compiled} after the second; tool entries in memory ${r.lru.afterSecondPass.memoryEntries}; compiles ${r.lru.afterFirstPass.compiles} then ${r.lru.afterSecondPass.compiles}; KV reads ${r.lru.afterFirstPass.kvReads} then ${r.lru.afterSecondPass.kvReads}; RSS ${mb(r.lru.afterSecondPass.rss)} MiB

See docs/performance.md for the method, the choices and the causes behind missed targets.
`
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
  for (const c of children) c.kill('SIGKILL')
  process.exit(1)
})
