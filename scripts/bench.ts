/**
 * `npm run bench`: what the edge costs, against the real limits (the fastest pass-through proxies
 * this machine runs; method: docs/performance.md).
 *
 * Starts everything on 127.0.0.1 as separate processes: a raw `node:http` origin
 * (scripts/bench/origin.ts); the floors, each measured in the same run as the edge: bare Node
 * (`node:http` + undici `Pool.dispatch`, scripts/bench/bare-node.ts), nginx with one worker when
 * it is installed (scripts/bench/nginx.ts), the Hono floor for context (scripts/bench/floor.ts)
 * and a bare Worker in the same workerd as the edge Worker (scripts/bench/bare-worker.ts); the
 * edge on Node (scripts/bench/edge.ts) and the built Worker in workerd (scripts/bench/worker.ts).
 * This process drives the load with autocannon. With two or more cores the process under test
 * runs alone on core 0; the origin, autocannon and this script share core 1.
 *
 * Sections: saturated throughput and CPU per request (every scenario warmed up, then `rounds`
 * alternating rounds, so each edge figure has its floor measured seconds before it; ratios are
 * medians of per-round ratios); latency (p50, p99, p99.9, recorded per reply) and CPU at one fixed
 * offered load; growth axes (`--axes`): schema size, reply size, batch size, tools held,
 * concurrent connections, one table each with the ratio to the bare Node floor; the cold path,
 * the validation micro-benchmark, RSS over a constant-load run and the compiled-validator cache
 * bound. CPU per request is the process's CPU time (/proc schedstat in ns, the whole process tree
 * for workerd and nginx; docs/performance.md) over the 2xx replies of the run.
 *
 * Writes the report to BENCHMARKS.md (or `--out FILE`) and prints it; progress goes to stderr,
 * after the estimated total time of the run.
 * Flags: `--smoke` (a few seconds per section, for CI: figures meaningless), `--out FILE`,
 * `--rounds N`, `--duration S` (per run), `--warmup S`, `--memory-seconds S`,
 * `--axes schema,reply,batch,tools,connections` (default all; `none` for none), `--plan` (print
 * the plan and the time it would take, run nothing).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { load, measure, originStats, setSettleMs, settledOriginCalls, type Run, type Target } from './bench/load'
import { findNginx, startNginx } from './bench/nginx'
import { ask, buildRunners, children, CORES, killAll, PINNING, pinSelf, ROOT, startChild, SUPPORT, UNDER_TEST, type Child } from './bench/processes'
import { makeDeepTool, makeTool, SSE_EVENTS, TOOLS, type BenchTool } from './bench/schemas'
import { clock, fmt, growth, mark, median, signed, spread, table } from './bench/stats'
import { buildWorkerBundle } from '../test/helpers/build-worker'

// ---------------------------------------------------------------------------------------------
// Flags (node:util parseArgs: the standard library's parser covers these few flags)

const ALL_AXES = ['schema', 'reply', 'batch', 'tools', 'connections'] as const
type Axis = (typeof ALL_AXES)[number]

function usage(problem: string): never {
  process.stderr.write(
    `bench: ${problem}\nusage: npm run bench -- [--smoke] [--out FILE] [--rounds N] [--duration S] [--warmup S] [--memory-seconds S] [--axes ${ALL_AXES.join(',')}|all|none] [--plan]\n`
  )
  process.exit(2)
}

const { values: flags } = (() => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: {
        smoke: { type: 'boolean', default: false },
        out: { type: 'string' },
        rounds: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        'memory-seconds': { type: 'string' },
        axes: { type: 'string' },
        plan: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    })
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e))
  }
})()

/** A flag's positive number, or `fallback`; a bad value stops with a message naming it. */
function num(name: string, value: string | undefined, fallback: number, integer = false): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0 || (n === 0 && name !== 'warmup') || (integer && !Number.isInteger(n)))
    usage(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`)
  return n
}

const SMOKE = flags.smoke === true
const AXES: Axis[] = (() => {
  const v = flags.axes ?? 'all'
  if (v === 'all') return [...ALL_AXES]
  if (v === 'none') return []
  const list = v.split(',').map((a) => a.trim())
  for (const a of list) if (!(ALL_AXES as readonly string[]).includes(a)) usage(`--axes takes a comma-separated list of ${ALL_AXES.join(', ')} (or all, none), got "${a}"`)
  return ALL_AXES.filter((a) => list.includes(a))
})()
const OUT = resolve(flags.out ?? resolve(ROOT, 'BENCHMARKS.md'))
const P = {
  rounds: num('rounds', flags.rounds, SMOKE ? 1 : 3, true),
  durationS: num('duration', flags.duration, SMOKE ? 0.2 : 3),
  warmupS: num('warmup', flags.warmup, SMOKE ? 0 : 5),
  /** Warm-up per axis scenario: the processes are already warm from the main scenarios. */
  axisWarmupS: SMOKE ? 0 : 1.5,
  memoryS: num('memory-seconds', flags['memory-seconds'], SMOKE ? 1 : 60),
  memoryWarmS: SMOKE ? 0.3 : 5,
  microMs: SMOKE ? 20 : 400,
  coldRepeats: SMOKE ? 1 : 5,
  lruTools: SMOKE ? 30 : 500,
  lruSize: SMOKE ? 10 : 50,
  connections: SMOKE ? 4 : 32,
  connectionAxis: SMOKE ? [4, 16, 64] : [32, 256, 1024],
  toolCounts: SMOKE ? [20, 200] : [1000, 10_000],
  replyBytes: [1024, 100 * 1024, 1024 * 1024],
  sseEvents: 1000,
  batchSizes: [1, 10, 100],
}
const EXTRA = process.argv.slice(2).filter((a, i, all) => a !== '--out' && all[i - 1] !== '--out')
const COMMAND = EXTRA.length ? `npm run bench -- ${EXTRA.join(' ')}` : 'npm run bench'

// ---------------------------------------------------------------------------------------------
// Requests and checks

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const V2025 = { ...HEADERS, 'mcp-protocol-version': '2025-06-18' }
const call = (id: number | string, tool: BenchTool, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: args } })
const single = (t: BenchTool, args: Record<string, unknown>, id: number | string = 1) => JSON.stringify(call(id, t, args))
/**
 * The JSON-RPC id of the Node edge's rejected calls: the origin counts the calls it receives per
 * string id (`GET /stats`), so "no rejected call reached the origin" is the count of calls holding
 * this id over the whole run, whatever else the origin receives and however late: a valid call
 * still in flight when the run before ends (up to one per connection) cannot be charged to it.
 */
const NODE_REJECTED_ID = 'node-rejected'
const batchOf = (n: number, t: BenchTool) => JSON.stringify(Array.from({ length: n }, (_, i) => call(i + 1, t, t.valid)))
const TOOL10 = TOOLS[1]!
const TOOL100 = makeTool(100)
const DEEP = makeDeepTool(16)
const SCHEMA_AXIS: { tool: BenchTool; label: string; x: number | null }[] = [
  { tool: TOOLS[0]!, label: '3 properties', x: 3 },
  { tool: TOOLS[2]!, label: '20 properties', x: 20 },
  { tool: TOOL100, label: '100 properties', x: 100 },
  { tool: DEEP, label: `nested ${DEEP.size} levels deep`, x: null },
]
const kb = (b: number) => (b >= 1048576 ? `${b / 1048576} MB` : `${b / 1024} KB`)
const replyName = (b: number) => `r${b}`

async function post(url: string, body: string, headers: Record<string, string> = V2025): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: 'POST', headers, body })
  return { status: r.status, text: await r.text() }
}

type Check = (r: { status: number; text: string }) => string | null
const expectResult: Check = (r) => (r.status === 200 && JSON.parse(r.text).result?.structuredContent?.ok === true ? null : `expected a result, got ${r.status}`)
const expectInvalid: Check = (r) => (r.status === 200 && JSON.parse(r.text).error?.code === -32602 ? null : `expected -32602, got ${r.status}`)
const expectBatch =
  (n: number): Check =>
  (r) => {
    const v = JSON.parse(r.text) as { result?: unknown }[]
    return r.status === 200 && Array.isArray(v) && v.length === n && v.every((m) => m.result) ? null : `expected ${n} results, got ${r.status}`
  }
const expectSse =
  (events: number): Check =>
  (r) => {
    const data = r.text.split('\n').filter((l) => l.startsWith('data:'))
    return r.status === 200 && data.length === events && data.at(-1)!.includes('"result"') ? null : `expected ${events} events ending in a result, got ${data.length}`
  }

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Scenario extends Target {
  key: string
  label: string
  check: Check
  /** Expected origin POSTs per request: 1, or 0 when the request is answered without the origin. */
  originPerRequest: number
  /** Connections of its load runs (default P.connections). */
  connections?: number
}

function S(key: string, label: string, url: string, body: string, pid: () => number | null, check: Check, more: Partial<Scenario> = {}): Scenario {
  return { key, label, url, body, pid, check, headers: V2025, originPerRequest: 1, ...more }
}

/** Pre-flight: the scenario answers what it should and touches the origin only when it should. */
async function preflight(s: Scenario, originBase: string): Promise<void> {
  const before = await settledOriginCalls(originBase)
  const r = await post(s.url, s.body, s.headers)
  const problem = s.check(r)
  if (problem) throw new Error(`scenario ${s.key}: ${problem}`)
  const touched = (await settledOriginCalls(originBase)) - before
  if (touched !== s.originPerRequest) throw new Error(`scenario ${s.key}: the origin received ${touched} POSTs, expected ${s.originPerRequest}`)
}

// ---------------------------------------------------------------------------------------------
// Time plan and progress

if (SMOKE) setSettleMs(40)
/** Per load run: settling the origin's counter before and after, autocannon's start. */
const OVERHEAD_S = SMOKE ? 0.3 : 0.6

/** Planned seconds of the run's steps, so the total can be printed first and progress after. */
class Plan {
  private total = 0
  private done = 0
  private readonly t0 = Date.now()
  add(seconds: number): void {
    this.total += seconds
  }
  get totalS(): number {
    return this.total
  }
  /** Logs `what`, then counts `seconds` of the plan as done. */
  step(what: string, seconds: number): void {
    const elapsed = (Date.now() - this.t0) / 1000
    const left = Math.max(0, this.total - this.done)
    process.stderr.write(`[bench ${clock(elapsed)} elapsed, about ${clock(left)} left] ${what}\n`)
    this.done += seconds
  }
}

const runS = (durationS: number) => durationS + OVERHEAD_S

/** Seconds a set of `n` scenarios takes: one warm-up each, then `rounds` alternating rounds. */
const roundsS = (n: number, warmS: number) => (warmS > 0 ? n * runS(warmS) : 0) + P.rounds * n * runS(P.durationS)

/**
 * Warms every scenario once, then runs `rounds` alternating rounds of all of them; returns the
 * runs per scenario key.
 */
async function runRounds(what: string, scenarios: Scenario[], originBase: string, plan: Plan, warmS: number, rate?: number): Promise<Map<string, Run[]>> {
  const out = new Map<string, Run[]>(scenarios.map((s) => [s.key, []]))
  if (warmS > 0) {
    plan.step(`${what}: warm-up (${scenarios.length} × ${warmS} s)`, scenarios.length * runS(warmS))
    for (const s of scenarios) await measure(s, originBase, warmS, s.connections ?? P.connections, rate)
  }
  for (let round = 1; round <= P.rounds; round++) {
    plan.step(`${what}: round ${round}/${P.rounds} (${scenarios.length} runs of ${P.durationS} s)`, scenarios.length * runS(P.durationS))
    for (const s of scenarios) out.get(s.key)!.push(await measure(s, originBase, P.durationS, s.connections ?? P.connections, rate))
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Cold path, micro-benchmark, memory, cache bound

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
      ? await startChild<{ port: number }>('edge', { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS: tools, BENCH_SEED: 'kv' }, UNDER_TEST)
      : await startChild<{ url: string }>('worker', { BENCH_WORKER_BUNDLE: bundle, BENCH_TOOLS: tools, EDGE_ORIGIN_URL: `${originBase}/mcp` }, UNDER_TEST)
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
  const edge = await startChild<{ port: number }>('edge', { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn' }, UNDER_TEST)
  const url = `http://127.0.0.1:${edge.ready.port}/mcp`
  const requests = [...TOOLS.map((t) => ({ body: JSON.stringify(call(1, t, t.valid)) })), { body: JSON.stringify(call(1, TOOL10, TOOL10.invalid)) }].map((r) => ({
    ...r,
    method: 'POST',
    headers: V2025,
  }))
  try {
    await load({ url, requests, duration: P.memoryWarmS, overallRate: rate, connections: P.connections })
    const warm = await ask<EdgeStats>(edge, { cmd: 'stats' })
    const samples: number[] = []
    const timer = setInterval(() => void ask<EdgeStats>(edge, { cmd: 'stats' }).then((s) => samples.push(s.rss)), 10_000)
    const r = await load({ url, requests, duration: P.memoryS, overallRate: rate, connections: P.connections })
    clearInterval(timer)
    const end = await ask<EdgeStats>(edge, { cmd: 'stats' })
    return { rate, seconds: P.memoryS, warm, end, samples, ok: r.ok, bad: r.bad }
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
  const edge = await startChild<{ port: number }>(
    'edge',
    { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS_FILE: file, BENCH_SEED: 'kv', VALIDATOR_CACHE_SIZE: String(P.lruSize) },
    UNDER_TEST
  )
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
// Tools held (its own edge processes)

interface ToolsHeld {
  count: number
  seedS: number
  stats: EdgeStats
  lookupNs: number
}

/** Seconds to seed `n` tools (learn: cfworker compile and normalisation per tool), planned. */
const seedS = (n: number) => 3 + n / 1500

// ---------------------------------------------------------------------------------------------
// Main

function loadAvg(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')
}

async function main(): Promise<void> {
  pinSelf()
  const started = new Date()
  const loadStart = loadAvg()
  const nginxBin = findNginx()
  const plan = new Plan()

  // The plan: what runs, how long it takes (printed before anything starts).
  const nCore = 8 + (nginxBin ? 1 : 0) + 1 // direct, [nginx], bare, answer, hono, valid, invalid, bare Worker, Worker valid, Worker invalid
  const nLatency = 4 + (nginxBin ? 1 : 0)
  plan.add(12) // bundles and process start-ups
  plan.add(roundsS(nCore, P.warmupS))
  plan.add(P.rounds * nLatency * runS(P.durationS))
  const axisRuns: Record<Axis, number> = {
    schema: SCHEMA_AXIS.length * 3,
    reply: (P.replyBytes.length + 1) * 2,
    batch: P.batchSizes.length * 2,
    tools: 2 + P.toolCounts.length,
    connections: P.connectionAxis.length * 2,
  }
  for (const a of AXES) plan.add(roundsS(axisRuns[a], P.axisWarmupS) + (a === 'tools' ? [1, ...P.toolCounts].reduce((s, n) => s + seedS(n) + 1, 0) : 0))
  plan.add(P.coldRepeats * 2 * 3 + (12 * P.microMs) / 1000 + 4 * 2 + 2 + P.memoryWarmS + P.memoryS + 3 + 4)
  process.stderr.write(
    `bench: ${COMMAND}: ${P.rounds} round(s) of ${P.durationS} s runs, axes: ${AXES.join(', ') || 'none'}; nginx: ${nginxBin ? nginxBin.version : 'not installed'}.\n` +
      `bench: this run will take about ${clock(plan.totalS)} (m:ss).\n`
  )
  if (flags.plan) return

  plan.step('building the Worker bundle and the runners; starting the processes', 12)
  const bundle = await buildWorkerBundle(resolve(ROOT, 'dist/bench/edge-worker.js'))
  await buildRunners()
  const edgeTools = [...TOOLS, TOOL100, DEEP]
  const toolsJson = JSON.stringify(edgeTools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))
  const workerToolsJson = JSON.stringify(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))

  const origin = await startChild<{ port: number }>('origin', {}, SUPPORT)
  const originBase = `http://127.0.0.1:${origin.ready.port}`
  const bare = await startChild<{ port: number }>('bare-node', { ORIGIN_BASE: originBase }, UNDER_TEST)
  const hono = await startChild<{ port: number }>('floor', { ORIGIN_BASE: originBase, FLOOR_CLIENT: 'undici' }, UNDER_TEST)
  const origins: Record<string, string> = { sse: `${originBase}/sse`, sse1000: `${originBase}/sse/${P.sseEvents}` }
  for (const b of P.replyBytes) origins[replyName(b)] = `${originBase}/reply/${b}`
  const edge = await startChild<{ port: number }>(
    'edge',
    { ORIGIN_URL: `${originBase}/mcp`, ORIGINS: JSON.stringify(origins), BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn' },
    UNDER_TEST,
    ['--expose-gc']
  )
  const worker = await startChild<{ url: string; bareUrl: string }>(
    'worker',
    {
      BENCH_WORKER_BUNDLE: bundle,
      BENCH_BARE_WORKER: resolve(ROOT, 'dist/bench/bare-worker.js'),
      BENCH_ORIGIN_BASE: originBase,
      BENCH_TOOLS: workerToolsJson,
      EDGE_ORIGIN_URL: `${originBase}/mcp`,
    },
    UNDER_TEST
  )
  let nginx: { proc: ChildProcess; port: number; stop(): Promise<void> } | null = null
  if (nginxBin) {
    nginx = await startNginx(nginxBin.bin, origin.ready.port, UNDER_TEST)
    children.add(nginx.proc)
    nginx.proc.once('exit', (code, signal) => {
      if (children.has(nginx!.proc)) {
        process.stderr.write(`bench: nginx died (${signal ?? code}) during the run\n`)
        killAll()
        process.exit(1)
      }
    })
  }
  const stopNginx = async () => {
    if (!nginx) return
    children.delete(nginx.proc)
    await nginx.stop()
  }

  const bareUrl = `http://127.0.0.1:${bare.ready.port}`
  const honoUrl = `http://127.0.0.1:${hono.ready.port}`
  const edgeUrl = `http://127.0.0.1:${edge.ready.port}/mcp`
  const pidOf = (c: { proc: ChildProcess }) => () => c.proc.pid ?? null
  const valid10 = single(TOOL10, TOOL10.valid)
  const invalid10 = single(TOOL10, TOOL10.invalid)
  const nodeInvalid10 = single(TOOL10, TOOL10.invalid, NODE_REJECTED_ID)

  // --- Main scenarios: saturated throughput and CPU
  const core: Scenario[] = [
    S('direct', 'direct to the origin (context; CPU: the raw node:http origin, sharing its core with autocannon)', `${originBase}/mcp`, valid10, pidOf(origin), expectResult),
    ...(nginx
      ? [
          S(
            'nginx',
            `nginx ${nginxBin!.version.replace('nginx/', '')}, one worker, keep-alive upstream (native reference)`,
            `http://127.0.0.1:${nginx.port}/mcp`,
            valid10,
            pidOf(nginx),
            expectResult
          ),
        ]
      : []),
    S('bare', 'bare Node: `node:http` + undici `Pool.dispatch` (the floor)', `${bareUrl}/mcp`, valid10, pidOf(bare), expectResult),
    S('answer', 'bare Node answering a fixed text, no origin (context: the limit of a local answer)', `${bareUrl}/answer`, invalid10, pidOf(bare), expectInvalid, {
      originPerRequest: 0,
    }),
    S('hono', 'Hono floor: Hono + @hono/node-server + undici `request` (context)', `${honoUrl}/mcp`, valid10, pidOf(hono), expectResult),
    S('valid', 'edge, valid call (10 properties), forwarded', edgeUrl, valid10, pidOf(edge), expectResult),
    S('invalid', 'edge, invalid call (10 properties), answered locally', edgeUrl, nodeInvalid10, pidOf(edge), expectInvalid, { originPerRequest: 0 }),
    S('bareWorker', 'bare Worker: `fetch` only, same workerd (the Workers floor)', `${worker.ready.bareUrl}/mcp`, valid10, pidOf(worker), expectResult),
    S('wvalid', 'edge Worker, valid call (10 properties), forwarded', worker.ready.url, valid10, pidOf(worker), expectResult),
    S('winvalid', 'edge Worker, invalid call (10 properties), answered locally', worker.ready.url, invalid10, pidOf(worker), expectInvalid, { originPerRequest: 0 }),
  ]
  for (const s of core) await preflight(s, originBase)
  const runs = await runRounds('main scenarios', core, originBase, plan, P.warmupS)

  // --- Latency and CPU at one offered load: half the throughput of the slowest compared scenario,
  // so none of them runs saturated (queueing would swamp the comparison).
  const latencyKeys = ['bare', ...(nginx ? ['nginx'] : []), 'hono', 'valid', 'invalid']
  const slowest = Math.min(...['bare', 'valid', 'invalid'].map((k) => median(runs.get(k)!.map((r) => r.rps))))
  const rate = Math.max(50, Math.round(slowest / 2))
  const latency = await runRounds(
    `latency at ${fmt(rate)} req/s`,
    core.filter((s) => latencyKeys.includes(s.key)),
    originBase,
    plan,
    0,
    rate
  )

  // --- Growth axes
  const axes = new Map<Axis, { scenarios: Scenario[]; runs: Map<string, Run[]> }>()
  const axis = async (a: Axis, scenarios: Scenario[]) => {
    for (const s of scenarios) await preflight(s, originBase)
    axes.set(a, { scenarios, runs: await runRounds(`axis ${a}`, scenarios, originBase, plan, P.axisWarmupS) })
  }
  let toolsHeld: { rows: ToolsHeld[]; runs: Map<string, Run[]>; scenarios: Scenario[] } | null = null
  for (const a of AXES) {
    if (a === 'schema') {
      await axis(
        a,
        SCHEMA_AXIS.flatMap(({ tool, label }) => [
          S(`floor:${tool.name}`, `bare Node, ${label}`, `${bareUrl}/mcp`, single(tool, tool.valid), pidOf(bare), expectResult),
          S(`valid:${tool.name}`, `edge, valid call, ${label}`, edgeUrl, single(tool, tool.valid), pidOf(edge), expectResult),
          S(`invalid:${tool.name}`, `edge, invalid call, ${label}`, edgeUrl, single(tool, tool.invalid), pidOf(edge), expectInvalid, { originPerRequest: 0 }),
        ])
      )
    } else if (a === 'reply') {
      await axis(a, [
        ...P.replyBytes.flatMap((b) => [
          S(`floor:${b}`, `bare Node, ${kb(b)} JSON reply`, `${bareUrl}/reply/${b}`, valid10, pidOf(bare), expectResult),
          S(`edge:${b}`, `edge, ${kb(b)} JSON reply`, `${edgeUrl}/${replyName(b)}`, valid10, pidOf(edge), expectResult),
        ]),
        S('floor:sse', `bare Node, SSE reply of ${P.sseEvents} events`, `${bareUrl}/sse/${P.sseEvents}`, single(TOOLS[0]!, TOOLS[0]!.valid), pidOf(bare), expectSse(P.sseEvents)),
        S('edge:sse', `edge, SSE reply of ${P.sseEvents} events`, `${edgeUrl}/sse1000`, single(TOOLS[0]!, TOOLS[0]!.valid), pidOf(edge), expectSse(P.sseEvents)),
      ])
    } else if (a === 'batch') {
      await axis(
        a,
        P.batchSizes.flatMap((n) => [
          S(`floor:${n}`, `bare Node, batch of ${n}`, `${bareUrl}/mcp`, batchOf(n, TOOL10), pidOf(bare), expectBatch(n), { headers: HEADERS }),
          S(`edge:${n}`, `edge, 2025-03-26 batch of ${n} (10 properties)`, edgeUrl, batchOf(n, TOOL10), pidOf(edge), expectBatch(n), { headers: HEADERS }),
        ])
      )
    } else if (a === 'connections') {
      await axis(
        a,
        P.connectionAxis.flatMap((c) => [
          S(`floor:${c}`, `bare Node, ${c} connections`, `${bareUrl}/mcp`, valid10, pidOf(bare), expectResult, { connections: c }),
          S(`edge:${c}`, `edge, valid call, ${c} connections`, edgeUrl, valid10, pidOf(edge), expectResult, { connections: c }),
        ])
      )
    } else {
      // Tools held: one fresh edge per count (10-property tools whose schemas all differ), the
      // validator cache as large as the count so every tool stays compiled in memory; memory
      // after a full GC, the hot-path lookup over every tool, then a valid call to one of them.
      const rows: ToolsHeld[] = []
      const held: Child<{ port: number }>[] = []
      const scenarios: Scenario[] = [S('floor', 'bare Node', `${bareUrl}/mcp`, valid10, pidOf(bare), expectResult)]
      try {
        for (const n of [1, ...P.toolCounts]) {
          plan.step(`axis tools: seeding an edge with ${fmt(n)} tools`, seedS(n) + 1)
          const tools = Array.from({ length: n }, (_, i) => makeTool(10, `held_${i}`, String(i)))
          const file = resolve(ROOT, `dist/bench/tools-${n}.json`)
          writeFileSync(file, JSON.stringify(tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema }))))
          const t0 = Date.now()
          const child = await startChild<{ port: number }>(
            'edge',
            { ORIGIN_URL: `${originBase}/mcp`, BENCH_TOOLS_FILE: file, BENCH_SEED: 'learn', VALIDATOR_CACHE_SIZE: String(n) },
            UNDER_TEST,
            ['--expose-gc']
          )
          const seeded = (Date.now() - t0) / 1000
          held.push(child)
          const stats = await ask<EdgeStats>(child, { cmd: 'stats' })
          const lookup = await ask<{ ns: number }>(child, { cmd: 'lookup' })
          rows.push({ count: n, seedS: seeded, stats, lookupNs: lookup.ns })
          const hot = tools[n >> 1]!
          scenarios.push(S(`edge:${n}`, `edge holding ${fmt(n)} tools, valid call`, `http://127.0.0.1:${child.ready.port}/mcp`, single(hot, hot.valid), pidOf(child), expectResult))
        }
        for (const s of scenarios) await preflight(s, originBase)
        const tr = await runRounds('axis tools', scenarios, originBase, plan, P.axisWarmupS)
        toolsHeld = { rows, runs: tr, scenarios }
      } finally {
        for (const c of held) await c.stop()
      }
    }
  }
  await Promise.all([bare.stop(), hono.stop(), edge.stop(), worker.stop(), stopNginx()])

  // --- Cold path: the first call of a tool whose schema is only in KV (KV read + compile).
  plan.step('cold path', P.coldRepeats * 2 * 3)
  const cold = { node: [] as ColdRun[], worker: [] as ColdRun[] }
  for (let i = 0; i < P.coldRepeats; i++) {
    cold.node.push(await coldRun('node', originBase, bundle, i))
    cold.worker.push(await coldRun('worker', originBase, bundle, i))
  }
  plan.step('validation micro-benchmark', (12 * P.microMs) / 1000 + 2)
  const micro = await microBench()
  plan.step(`memory run (${P.memoryS} s at ${fmt(rate)} req/s)`, P.memoryWarmS + P.memoryS + 3)
  const memory = await memoryRun(originBase, workerToolsJson, rate)
  plan.step('validator cache bound', 4)
  const lru = await lruRun(originBase)
  const nodeRejectedAtOrigin = (await originStats(originBase)).byId[NODE_REJECTED_ID] ?? 0
  await origin.stop()

  const report = render({
    started,
    loadStart,
    loadEnd: loadAvg(),
    nginx: nginxBin?.version ?? null,
    core,
    runs,
    latency,
    rate,
    axes,
    toolsHeld,
    cold,
    micro,
    memory,
    lru,
    nodeRejectedAtOrigin,
  })
  writeFileSync(OUT, report)
  process.stdout.write(report)
  process.stderr.write(`bench: wrote ${OUT} after ${clock((Date.now() - started.getTime()) / 1000)} (planned ${clock(plan.totalS)})\n`)
}

// ---------------------------------------------------------------------------------------------
// Report

interface Report {
  started: Date
  loadStart: string
  loadEnd: string
  nginx: string | null
  core: Scenario[]
  runs: Map<string, Run[]>
  latency: Map<string, Run[]>
  rate: number
  axes: Map<Axis, { scenarios: Scenario[]; runs: Map<string, Run[]> }>
  toolsHeld: { rows: ToolsHeld[]; runs: Map<string, Run[]>; scenarios: Scenario[] } | null
  cold: { node: ColdRun[]; worker: ColdRun[] }
  micro: MicroRow[]
  memory: MemoryResult
  lru: LruResult
  /** tools/call POSTs holding the Node edge's rejected-call id that reached the origin, over the whole run. */
  nodeRejectedAtOrigin: number
}

const NOT_INSTALLED = 'not installed'

function render(r: Report): string {
  const mb = (b: number) => fmt(b / 1048576, 1)
  /** Accessors over one set of runs (saturated, fixed load, an axis). */
  const over = (m: Map<string, Run[]>) => {
    const get = (k: string) => m.get(k)
    const has = (k: string) => m.has(k)
    const med = (k: string, f: (x: Run) => number) => median(get(k)!.map(f))
    const rps = (k: string) => med(k, (x) => x.rps)
    const cpu = (k: string) => med(k, (x) => x.cpuUsPerReq ?? NaN)
    /** Median over rounds of a per-round ratio a/b. */
    const ratio = (a: string, b: string, f: (x: Run) => number = (x) => x.rps) => median(get(a)!.map((x, i) => f(x) / f(get(b)![i]!)))
    /** Median over rounds of a per-round difference a - b. */
    const delta = (a: string, b: string, f: (x: Run) => number) => median(get(a)!.map((x, i) => f(x) - f(get(b)![i]!)))
    const errors = (k: string) => String(get(k)!.reduce((n, x) => n + x.bad, 0))
    return { get, has, med, rps, cpu, ratio, delta, errors }
  }
  const sat = over(r.runs)
  const lat = over(r.latency)
  const cpuOf = (x: Run) => x.cpuUsPerReq ?? NaN
  const hasNginx = sat.has('nginx')

  // --- Main table
  const floorOf = (k: string) => (k.startsWith('w') || k === 'bareWorker' ? 'bareWorker' : 'bare')
  const mainRows = r.core.map((s) => {
    const rs = sat.get(s.key)!
    const f = floorOf(s.key)
    return [
      s.label,
      fmt(sat.rps(s.key)),
      spread(rs.map((x) => x.rps)),
      s.key === f ? '1.00' : s.key === 'direct' ? '' : sat.ratio(s.key, f).toFixed(2),
      fmt(sat.cpu(s.key), 1),
      spread(rs.map(cpuOf), 1),
      sat.errors(s.key),
    ]
  })
  if (!hasNginx) mainRows.splice(1, 0, ['nginx (native reference)', NOT_INSTALLED, '', '', '', '', ''])

  // --- Fixed load
  const latKeys = ['bare', 'nginx', 'hono', 'valid', 'invalid']
  const latRows = latKeys.map((k) => {
    const s = r.core.find((x) => x.key === k)
    if (!lat.has(k)) return ['nginx (native reference)', NOT_INSTALLED, '', '', '', '', '', '', '']
    return [
      s!.label,
      fmt(lat.rps(k)),
      fmt(
        lat.med(k, (x) => x.p50),
        2
      ),
      fmt(
        lat.med(k, (x) => x.p99),
        2
      ),
      fmt(
        lat.med(k, (x) => x.p999),
        2
      ),
      k === 'bare'
        ? ''
        : signed(
            lat.delta(k, 'bare', (x) => x.p99),
            2
          ),
      fmt(lat.cpu(k), 1),
      k === 'bare' ? '' : signed(lat.delta(k, 'bare', cpuOf), 1),
      hasNginx ? lat.ratio(k, 'nginx', cpuOf).toFixed(2) : NOT_INSTALLED,
    ]
  })

  // --- Targets: the edge against the floors
  const validRps = sat.ratio('valid', 'bare')
  const validCpuAbove = lat.delta('valid', 'bare', cpuOf)
  const validP99Above = lat.delta('valid', 'bare', (x) => x.p99)
  const validVsNginx = hasNginx ? lat.ratio('valid', 'nginx', cpuOf) : NaN
  const invalidCpu = lat.cpu('invalid')
  const invalidCpuSat = sat.cpu('invalid')
  const invalidRps = sat.ratio('invalid', 'bare')
  const wValid = sat.ratio('wvalid', 'bareWorker')
  const wInvalid = sat.ratio('winvalid', 'bareWorker')
  const targets: string[][] = [
    ['Node, valid call: saturated throughput vs bare Node', '>= 0.85', validRps.toFixed(2), mark(validRps >= 0.85)],
    [
      `Node, valid call: CPU per call above bare Node's (${fmt(lat.cpu('bare'), 1)} µs) at ${fmt(r.rate)} req/s`,
      '<= +12 µs',
      `${signed(validCpuAbove, 1)} µs`,
      mark(validCpuAbove <= 12),
    ],
    [
      `Node, valid call: p99 above bare Node's (${fmt(
        lat.med('bare', (x) => x.p99),
        2
      )} ms) at ${fmt(r.rate)} req/s`,
      '<= +1 ms',
      `${signed(validP99Above, 2)} ms`,
      mark(validP99Above <= 1),
    ],
    [
      `Node, valid call: CPU per call vs nginx's at ${fmt(r.rate)} req/s`,
      '<= 2.5x',
      hasNginx ? `${validVsNginx.toFixed(2)}x (${fmt(lat.cpu('valid'), 1)} vs ${fmt(lat.cpu('nginx'), 1)} µs)` : NOT_INSTALLED,
      hasNginx ? mark(validVsNginx <= 2.5) : NOT_INSTALLED,
    ],
    [`Node, rejected call: CPU per call at ${fmt(r.rate)} req/s (saturated: ${fmt(invalidCpuSat, 1)} µs)`, '<= 32 µs', `${fmt(invalidCpu, 1)} µs`, mark(invalidCpu <= 32)],
    ['Node, rejected call: saturated throughput vs bare Node forwarding', '>= 1.3x', `${invalidRps.toFixed(2)}x`, mark(invalidRps >= 1.3)],
    ['context: rejected call vs bare Node answering a fixed text (saturated throughput)', 'none', sat.ratio('invalid', 'answer').toFixed(2), 'context'],
    ['Node, rejected call: origin POSTs during its runs', '0', String(r.nodeRejectedAtOrigin), mark(r.nodeRejectedAtOrigin === 0)],
    ['Workers, valid call: saturated throughput vs the bare Worker', '>= 0.85', wValid.toFixed(2), mark(wValid >= 0.85)],
    ['Workers, rejected call: saturated throughput vs the bare Worker', '>= 1.5x', `${wInvalid.toFixed(2)}x`, mark(wInvalid >= 1.5)],
    [
      `context: Workers, edge CPU per call above the bare Worker's (${fmt(sat.cpu('bareWorker'), 1)} µs), valid / rejected, saturated`,
      'none',
      `${signed(sat.delta('wvalid', 'bareWorker', cpuOf), 1)} / ${signed(sat.delta('winvalid', 'bareWorker', cpuOf), 1)} µs`,
      'context',
    ],
  ]

  // --- Axes
  const sections: string[] = []
  const growthRow = (what: string, xs: number[], ys: number[], unit: string) => {
    const g = growth(xs, ys)
    targets.push([
      `growth: ${what} (knee: ${g.knee === null ? 'none' : `${fmt(g.knee)} ${unit}`})`,
      'at most linear, no cliff',
      `worst step ${g.worst.toFixed(2)} of proportional`,
      mark(g.linear && g.knee === null),
    ])
  }
  const axisHead = ['row', 'bare Node req/s', 'edge req/s', 'edge / bare', 'bare CPU µs/req', 'edge CPU µs/req', 'edge − bare µs', 'edge p99 ms', 'errors']
  const pairRow = (m: ReturnType<typeof over>, label: string, f: string, e: string) => [
    label,
    fmt(m.rps(f)),
    fmt(m.rps(e)),
    m.ratio(e, f).toFixed(2),
    fmt(m.cpu(f), 1),
    fmt(m.cpu(e), 1),
    signed(m.delta(e, f, cpuOf), 1),
    fmt(
      m.med(e, (x) => x.p99),
      2
    ),
    String(Number(m.errors(f)) + Number(m.errors(e))),
  ]
  for (const [a, { runs }] of r.axes) {
    const m = over(runs)
    if (a === 'schema') {
      const rows = SCHEMA_AXIS.flatMap(({ tool, label }) => [
        pairRow(m, `${label}, valid (forwarded)`, `floor:${tool.name}`, `valid:${tool.name}`),
        pairRow(m, `${label}, invalid (answered)`, `floor:${tool.name}`, `invalid:${tool.name}`),
      ])
      sections.push(`### Schema size (10-property arguments replaced by each schema's own; the bare Node floor forwards the same body)\n\n${table(axisHead, rows)}`)
      const lin = SCHEMA_AXIS.filter((s) => s.x !== null)
      growthRow(
        'edge CPU per valid call against schema size (3, 20, 100 properties)',
        lin.map((s) => s.x!),
        lin.map((s) => m.cpu(`valid:${s.tool.name}`)),
        'properties'
      )
      growthRow(
        'edge CPU per rejected call against schema size',
        lin.map((s) => s.x!),
        lin.map((s) => m.cpu(`invalid:${s.tool.name}`)),
        'properties'
      )
    } else if (a === 'reply') {
      const rows = [
        ...P.replyBytes.map((b) => pairRow(m, `${kb(b)} JSON reply`, `floor:${b}`, `edge:${b}`)),
        pairRow(m, `SSE reply, ${P.sseEvents} events`, 'floor:sse', 'edge:sse'),
      ]
      sections.push(`### Reply size (valid call, 10 properties; the origin's reply grows)\n\n${table(axisHead, rows)}`)
      growthRow(
        'edge CPU per call against JSON reply size (1 KB, 100 KB, 1 MB)',
        P.replyBytes,
        P.replyBytes.map((b) => m.cpu(`edge:${b}`)),
        'bytes'
      )
      const sse = m.ratio('edge:sse', 'floor:sse')
      targets.push([`SSE (${P.sseEvents} events) replies per second vs the floor relaying the same stream (now bare Node)`, '>= 0.90', sse.toFixed(2), mark(sse >= 0.9)])
    } else if (a === 'batch') {
      const rows = P.batchSizes.map((n) => pairRow(m, `batch of ${n}`, `floor:${n}`, `edge:${n}`))
      sections.push(`### Batch size (2025-03-26 batches of valid 10-property calls; per POST)\n\n${table(axisHead, rows)}`)
      growthRow(
        'edge CPU per POST against batch size (1, 10, 100)',
        P.batchSizes,
        P.batchSizes.map((n) => m.cpu(`edge:${n}`)),
        'calls'
      )
    } else if (a === 'connections') {
      const rows = P.connectionAxis.map((c) => pairRow(m, `${fmt(c)} connections`, `floor:${c}`, `edge:${c}`))
      sections.push(`### Concurrent connections (valid call, 10 properties, saturated)\n\n${table(axisHead, rows)}`)
      const ratios = P.connectionAxis.map((c) => m.ratio(`edge:${c}`, `floor:${c}`))
      const first = ratios[0]!
      const cliff = P.connectionAxis.find((_, i) => ratios[i]! < 0.8 * first)
      const drop = Math.min(...ratios) / first
      targets.push([
        `growth: edge / bare Node throughput from ${P.connectionAxis[0]} to ${fmt(P.connectionAxis.at(-1)!)} connections (knee: ${cliff === undefined ? 'none' : `${fmt(cliff)} connections`})`,
        'no cliff (>= 0.8 of the first)',
        `lowest ${drop.toFixed(2)} of the first (${ratios.map((x) => x.toFixed(2)).join(' / ')})`,
        mark(cliff === undefined),
      ])
    }
  }
  if (r.toolsHeld) {
    const t = r.toolsHeld
    const m = over(t.runs)
    const base = t.rows[0]!
    const rows = [
      ...t.rows.map((row) => {
        const k = `edge:${row.count}`
        return [
          fmt(row.count),
          fmt(row.seedS, 1),
          fmt(row.lookupNs, 0),
          mb(row.stats.rss),
          mb(row.stats.heapUsed),
          row === base ? '' : fmt((row.stats.heapUsed - base.stats.heapUsed) / (row.count - base.count) / 1024, 1),
          fmt(m.rps(k)),
          m.ratio(k, 'floor').toFixed(2),
          fmt(m.cpu(k), 1),
          signed(m.delta(k, 'floor', cpuOf), 1),
          fmt(
            m.med(k, (x) => x.p99),
            2
          ),
        ]
      }),
    ]
    sections.push(
      `### Tools held (10-property tools whose schemas all differ, learned and compiled, VALIDATOR_CACHE_SIZE = the count; memory after a full GC; lookup: \`registry.cached\` over every tool in turn; calls: one tool of them, against bare Node in the same rounds, ${fmt(m.rps('floor'))} req/s, ${fmt(m.cpu('floor'), 1)} µs/req)\n\n` +
        table(['tools', 'seed s', 'lookup ns', 'RSS MiB', 'heap MiB', 'heap KiB per tool', 'edge req/s', 'edge / bare', 'edge CPU µs/req', 'edge − bare µs', 'edge p99 ms'], rows)
    )
    const grown = t.rows.slice(1)
    const counts = grown.map((x) => x.count)
    growthRow(
      `heap against tools held (${counts.map((c) => fmt(c)).join(', ')}; above an edge holding 1)`,
      counts,
      grown.map((x) => Math.max(1, x.stats.heapUsed - base.stats.heapUsed)),
      'tools'
    )
    growthRow(
      'hot-path lookup time against tools held',
      counts,
      grown.map((x) => x.lookupNs),
      'tools'
    )
  }

  // --- Cold path, memory and cache-bound targets
  const coldMed = (rt: 'node' | 'worker', f: (c: ColdRun) => number) => median(r.cold[rt].map(f))
  const coldTool = (rt: 'node' | 'worker') => coldMed(rt, (c) => c.firstOfToolMs - c.warmMs)
  const rssRatio = r.memory.end.rss / r.memory.warm.rss
  targets.push(
    [
      'cold path, 20 properties, Node (cfworker first, ajv after 16 calls): first call of a tool minus a warm call',
      '< 15 ms',
      `${fmt(coldTool('node'), 2)} ms`,
      mark(coldTool('node') < 15),
    ],
    ['cold path, 20 properties, workerd (cfworker): first call of a tool minus a warm call', '< 3 ms', `${fmt(coldTool('worker'), 2)} ms`, mark(coldTool('worker') < 3)],
    [`RSS after ${r.memory.seconds} s at ${fmt(r.memory.rate)} req/s vs after warm-up`, '<= 1.10', rssRatio.toFixed(3), mark(rssRatio <= 1.1)],
    [
      `compiled validators held after ${r.lru.tools} tools, VALIDATOR_CACHE_SIZE=${r.lru.bound}`,
      `<= ${r.lru.bound}`,
      String(r.lru.afterFirstPass.compiled),
      mark(r.lru.afterFirstPass.compiled <= r.lru.bound),
    ]
  )

  const coldRows = (['node', 'worker'] as const).map((rt) => [
    rt === 'node' ? 'Node, cfworker then ajv' : 'workerd, @cfworker/json-schema',
    fmt(
      coldMed(rt, (c) => c.firstOfProcessMs),
      2
    ),
    fmt(
      coldMed(rt, (c) => c.firstOfToolMs),
      2
    ),
    fmt(
      coldMed(rt, (c) => c.warmMs),
      2
    ),
    fmt(
      coldMed(rt, (c) => c.firstOfProcessMs - c.warmMs),
      2
    ),
    fmt(coldTool(rt), 2),
  ])
  const microRows = r.micro.map((m) => [m.engine, String(m.size), fmt(m.validPerS), fmt(m.invalidPerS), fmt(m.compileMs, 2)])
  const axesRun = [...r.axes.keys(), ...(r.toolsHeld ? ['tools'] : [])]

  return `# Benchmarks

${SMOKE ? '> **Smoke run** (CI): a fraction of a second per run, figures are not meaningful.\n\n' : ''}What the edge costs next to the fastest pass-through proxies this machine runs. Generated by \`scripts/bench.ts\`; do not edit by hand. Method: docs/performance.md.

- command: \`${COMMAND}\`
- date: ${r.started.toISOString()}
- machine: ${CORES} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${mb(os.totalmem())} MiB, ${os.platform()} ${os.release()}
- Node ${process.version}; nginx: ${r.nginx ?? NOT_INSTALLED}
- load average at start ${r.loadStart}, at end ${r.loadEnd}
- pinning: ${PINNING}
- ${P.rounds} alternating round(s) of ${P.durationS} s per scenario after a ${P.warmupS} s warm-up each (${P.axisWarmupS} s for the axes); ${P.connections} connections unless a row says otherwise; figures are medians over rounds, spread is min–max; ratios and differences are medians of per-round ratios and differences
- CPU: user + system time of the process under test (whole process tree for workerd and nginx) over the 2xx replies of the run; latency: every 2xx reply's time as autocannon measures it, percentiles from the raw list
- axes run: ${axesRun.join(', ') || 'none'}

## Targets

${table(['target', 'wanted', 'measured', ''], targets)}

## Throughput (saturated)

${table(['scenario', 'req/s (median)', 'req/s spread', 'vs floor', 'CPU µs/req (median)', 'CPU spread', 'errors'], mainRows)}

"vs floor": against bare Node for the Node rows, against the bare Worker for the workerd rows.

## Latency and CPU at one offered load (${fmt(r.rate)} req/s, half the slowest of bare Node, the valid and the rejected call)

${table(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'p99 vs bare Node', 'CPU µs/req', 'CPU vs bare Node', 'CPU / nginx'], latRows)}

## How cost grows

${sections.join('\n\n') || 'No axis was run (`--axes none`).'}

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
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  killAll()
  process.exit(1)
})
