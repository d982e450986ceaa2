/**
 * `npm run bench`: what the edge costs, against the real limits (method: docs/performance.md).
 *
 * Starts everything on 127.0.0.1 as separate processes: a raw `node:http` origin
 * (scripts/bench/origin.ts); the limit of every Node target, the validating floor (bare Node,
 * `node:http` + undici `Pool.dispatch`, that decodes and `JSON.parse`s the request and the reply,
 * validates the arguments with ajv compiled once on the same schema and writes one JSON log line
 * per POST: scripts/bench/bare-node.ts with `BARE_VALIDATE=1`); for context the parse floor (the
 * same without validation and log line, `BARE_PARSE=1`), bare Node without the parses, nginx with
 * one worker when it is installed (scripts/bench/nginx.ts) and the Hono floor
 * (scripts/bench/floor.ts); the edge on Node (scripts/bench/edge.ts); the built Worker in workerd
 * (scripts/bench/worker.ts) beside three bare Workers (scripts/bench/bare-worker.ts): the Workers
 * parse floor (decodes and parses the request and the reply, relays the bytes) and the Workers
 * validating floor (the same plus @cfworker/json-schema on the same schema), the limits of the
 * workerd targets, and the fetch-only bare Worker for context. Every limit is measured in the same
 * run as the edge. This process drives the load with autocannon. With two or more cores the
 * process under test runs alone on core 0; the origin, autocannon and this script share core 1.
 *
 * The report opens with the Targets table: each target of the performance issue (floor CPU /
 * edge CPU per call, judged on CPU; the throughput ratio beside it as context) with what is
 * wanted, what was measured, met or missed, and for a miss its measured cause: the CPU per call
 * above the floor, and with `--profile` the edge's top frames by self time in a profiled run of
 * that scenario (the Node edge through its inspector, the edge Worker through workerd's) and, for a
 * Node target, the functions where the edge spends more per call than its floor does in a profiled
 * run of the floor's scenario (cpu-profile.ts `excessOver`). Then: saturated
 * throughput and CPU per request of the main scenarios (every scenario warmed up, then `rounds`
 * alternating rounds, so each edge figure has its floor measured seconds before it; ratios are
 * medians of per-round ratios); latency (p50, p99, p99.9, recorded per reply) and CPU at one fixed
 * offered load (half saturation); the axes (`--axes`): schema size, reply size and kind, batch
 * size, tools held, concurrent connections (each row: the parse floor, bare Node and the edge on
 * the same request), reply size on workerd (the bare Worker and the edge Worker); the cold path,
 * the validation micro-benchmark, RSS over a constant-load run of 1 MB replies and the
 * compiled-validator cache bound. CPU per request is the process's CPU time (/proc schedstat in
 * ns, the whole process tree for workerd and nginx; docs/performance.md) over the 2xx replies.
 *
 * Writes the report to BENCHMARKS.md (or `--out FILE`) and prints it; progress goes to stderr,
 * after the estimated total time of the run.
 * Flags: `--quick` (1 round of 1 s runs, short warm-ups, 5 s memory run: every row measured, in a
 * few minutes; figures rough), `--smoke` (fractions of a second per run, shrunken axes, for CI:
 * figures meaningless), `--out FILE`, `--rounds N`, `--duration S` (per run), `--warmup S`,
 * `--memory-seconds S`, `--axes schema,reply,batch,tools,workerd,connections` (default all; `none`
 * for none: the targets measured on an axis then read "not run"), `--profile` (a missed target's
 * cause gets the edge's top frames from one more profiled run of its scenario, and on Node where
 * the edge spends more than its floor), `--plan` (print
 * the plan and the time it would take, run nothing).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { load, measure, originStats, setMinAnswers, setSettleMs, settledOriginCalls, type Run, type Target } from './bench/load'
import { findNginx, startNginx } from './bench/nginx'
import { ask, buildRunners, children, CORES, killAll, PINNING, pinSelf, ROOT, startChild, SUPPORT, UNDER_TEST, workerdPid, type Child } from './bench/processes'
import { makeDeepTool, makeTool, SSE_EVENTS, TOOLS, type BenchTool } from './bench/schemas'
import { clock, fmt, growth, mark, median, signed, spread, table } from './bench/stats'
import { excessOver, inspector, selfTimes, type Profile, type ProfiledRun } from './bench/cpu-profile'
import { buildWorkerBundle } from '../test/helpers/build-worker'

// ---------------------------------------------------------------------------------------------
// Flags (node:util parseArgs: the standard library's parser covers these few flags)

const ALL_AXES = ['schema', 'reply', 'batch', 'tools', 'workerd', 'connections'] as const
type Axis = (typeof ALL_AXES)[number]

const USAGE = `usage: npm run bench -- [--quick|--smoke] [--out FILE] [--rounds N] [--duration S] [--warmup S] [--memory-seconds S] [--axes ${ALL_AXES.join(',')}|all|none] [--profile] [--plan]

Runs the edge, the validating and parse floors, bare Node, nginx and the Workers rows (the Workers
parse and validating floors) on this machine and writes BENCHMARKS.md (or --out FILE): every issue
target (floor CPU / edge CPU per call) against its measured figure (docs/performance.md).
  --quick           every row, 1 round of 1 s runs (about 5 min; figures for a smoke look only)
  --smoke           the fewest rows, seconds long (the test suite's check that the bench runs)
  --rounds N        alternating rounds per scenario (default 3)
  --duration S      seconds per run (default 3)
  --warmup S        seconds of warm-up per scenario (default 5)
  --memory-seconds S  length of the 1 MB-reply memory run (default 60)
  --axes LIST       which growth axes run (default all)
  --profile         for each missed target, one more run of its scenario under the CPU profiler:
                    the edge's top frames (self time) are the cause column; on Node its floor
                    is profiled too, and the cause lists where the edge spends more per call
  --plan            print the plan and its expected length, run nothing
  --help            this text
Exit status: 0 written, 1 a run failed, 2 a bad flag.
`

function usage(problem: string): never {
  process.stderr.write(`bench: ${problem}\n${USAGE}`)
  process.exit(2)
}
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(USAGE)
  process.exit(0)
}

const { values: flags } = (() => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: {
        smoke: { type: 'boolean', default: false },
        quick: { type: 'boolean', default: false },
        out: { type: 'string' },
        rounds: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        'memory-seconds': { type: 'string' },
        axes: { type: 'string' },
        profile: { type: 'boolean', default: false },
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
/** The settings that turn off the result checks the edge runs by default (docs/result-checks.md). */
const RESULT_CHECKS_OFF = { RESULT_SECRETS: 'off', RESULT_CONTROL: 'off' }
/** `--quick`: the full set of rows and sizes, with 1 round of 1 s runs and short warm-ups. */
const QUICK = flags.quick === true && !SMOKE
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
  rounds: num('rounds', flags.rounds, SMOKE || QUICK ? 1 : 3, true),
  durationS: num('duration', flags.duration, SMOKE ? 0.2 : QUICK ? 1 : 3),
  warmupS: num('warmup', flags.warmup, SMOKE ? 0 : QUICK ? 1 : 5),
  /** Warm-up per axis scenario: the processes are already warm from the main scenarios. */
  axisWarmupS: SMOKE ? 0 : QUICK ? 0.5 : 1.5,
  memoryS: num('memory-seconds', flags['memory-seconds'], SMOKE ? 1 : QUICK ? 5 : 60),
  memoryWarmS: SMOKE ? 0.3 : QUICK ? 2 : 5,
  microMs: SMOKE ? 20 : QUICK ? 100 : 400,
  coldRepeats: SMOKE || QUICK ? 1 : 5,
  lruTools: SMOKE ? 30 : 500,
  lruSize: SMOKE ? 10 : 50,
  connections: SMOKE ? 4 : 32,
  connectionAxis: SMOKE ? [4, 16, 64] : [32, 256, 1024],
  toolCounts: SMOKE ? [20, 200] : [1000, 10_000],
  /** Text replies (one text content item, `POST /text/<bytes>`) of the Node reply axis and of workerd. */
  textBytes: [1024, 100 * 1024, 1024 * 1024],
  /** structuredContent replies (`POST /reply/<bytes>`) of the Node reply axis. */
  structuredBytes: [100 * 1024],
  /** The reply of the memory run (a text reply). */
  memoryBytes: 1024 * 1024,
  sseEvents: 1000,
  batchSizes: [1, 10, 100],
}
const EXTRA = process.argv.slice(2).filter((a, i, all) => a !== '--out' && all[i - 1] !== '--out')
const COMMAND = EXTRA.length ? `npm run bench -- ${EXTRA.join(' ')}` : 'npm run bench'

/** A TCP port free on 127.0.0.1 now (workerd's inspector, `--profile`). */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer()
    srv.once('error', rej)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => res(port))
    })
  })
}

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
/** The call of the small-reply targets and of the reply, batch, connections and workerd rows: 12 properties. */
const TOOL12 = makeTool(12)
const TOOL100 = makeTool(100)
const DEEP = makeDeepTool(16)
const SCHEMA_AXIS: { tool: BenchTool; label: string; x: number | null }[] = [
  { tool: TOOLS[0]!, label: '3 properties', x: 3 },
  { tool: TOOLS[2]!, label: '20 properties', x: 20 },
  { tool: TOOL100, label: '100 properties', x: 100 },
  { tool: DEEP, label: `nested ${DEEP.size} levels deep`, x: null },
]
const kb = (b: number) => (b >= 1048576 ? `${b / 1048576} MB` : `${b / 1024} KB`)
/** Names of the edge's origins (`ORIGINS`, served at `/mcp/<name>`) for the sized replies. */
const textName = (b: number) => `t${b}`
const structuredName = (b: number) => `r${b}`

async function post(url: string, body: string, headers: Record<string, string> = V2025): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: 'POST', headers, body })
  return { status: r.status, text: await r.text() }
}

type Check = (r: { status: number; text: string }) => string | null
const expectResult: Check = (r) => (r.status === 200 && JSON.parse(r.text).result?.structuredContent?.ok === true ? null : `expected a result, got ${r.status}`)
/** A result holding one text item of at least `bytes` characters (the `/text/<bytes>` replies). */
const expectText =
  (bytes: number): Check =>
  (r) => {
    const text = r.status === 200 ? (JSON.parse(r.text) as { result?: { content?: { type?: string; text?: string }[] } }).result?.content?.[0]?.text : undefined
    return typeof text === 'string' && text.length >= bytes * 0.9 ? null : `expected a text reply of about ${bytes} bytes, got ${r.status}`
  }
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

/**
 * Pre-flight: the scenario answers what it should and touches the origin only when it should.
 * A count that is off is taken again (up to three tries, a second apart): after a run of 1,024
 * connections on the loaded machine, calls the edge had queued still reached the origin after its
 * counter had stood still for the settle time (355 of them, in a quick run); a wrong count that
 * repeats is the scenario's.
 */
async function preflight(s: Scenario, originBase: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const before = await settledOriginCalls(originBase)
    const r = await post(s.url, s.body, s.headers)
    const problem = s.check(r)
    if (problem) throw new Error(`scenario ${s.key}: ${problem}`)
    const touched = (await settledOriginCalls(originBase)) - before
    if (touched === s.originPerRequest) return
    if (attempt === 3) throw new Error(`scenario ${s.key}: the origin received ${touched} POSTs, expected ${s.originPerRequest}`)
    await new Promise((res) => setTimeout(res, 1000))
  }
}

// ---------------------------------------------------------------------------------------------
// Time plan and progress

if (SMOKE) setSettleMs(40)
// A smoke run checks that every row runs and reports: each run holds a few answers, however busy the machine.
if (SMOKE) setMinAnswers(8)
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
  /** Size of every reply of the run (a text reply). */
  bytes: number
  /** Offered load: half the edge's saturated throughput on these replies. */
  rate: number
  saturatedRps: number
  /** Where `saturatedRps` comes from: the reply axis of this run, or a probe of the fresh edge. */
  rateFrom: 'reply axis' | 'probe'
  seconds: number
  /** RSS after each warm-up step, bytes (the last is {@link MemoryResult.warm}'s). */
  warmSamples: number[]
  warm: EdgeStats
  end: EdgeStats
  samples: number[]
  ok: number
  bad: number
}

/** Warm-up steps of the memory run: at least 2, at most 6, of `memoryWarmS` each. */
const MEMORY_WARM_STEPS = { min: 2, max: 6 }
/** The warm-up ends when a step's RSS is within this ratio of the step before (the steady size). */
const MEMORY_STEADY = 1.05

/**
 * RSS over a long run of large replies at half saturation: a fresh edge, a warm-up at that load
 * until RSS stops growing (steps of `memoryWarmS` until one ends within 5% of the one before: a
 * process holding 1 MB replies in flight keeps growing for 10-20 s before its size is steady, and
 * a baseline taken earlier read 110.9 MiB against a steady 143-185), then `memoryS` at it. The saturated rate is the main edge's on the
 * same replies in the reply axis (`saturatedRps`); without that axis, the fresh edge is warmed
 * saturated for `memoryWarmS` and probed for `durationS` first.
 */
async function memoryRun(originBase: string, toolsJson: string, saturatedRps: number | null): Promise<MemoryResult> {
  const bytes = P.memoryBytes
  const edge = await startChild<{ port: number }>(
    'edge',
    { ORIGIN_URL: `${originBase}/mcp`, ORIGINS: JSON.stringify({ [textName(bytes)]: `${originBase}/text/${bytes}` }), BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn' },
    UNDER_TEST
  )
  const url = `http://127.0.0.1:${edge.ready.port}/mcp/${textName(bytes)}`
  const target = { url, method: 'POST', headers: V2025, body: single(TOOL10, TOOL10.valid), connections: P.connections }
  try {
    const problem = expectText(bytes)(await post(url, target.body))
    if (problem) throw new Error(`memory run: ${problem}`)
    const rateFrom = saturatedRps === null ? 'probe' : 'reply axis'
    if (saturatedRps === null) {
      await load({ ...target, duration: P.memoryWarmS })
      const probe = await load({ ...target, duration: P.durationS })
      saturatedRps = probe.ok / probe.durationS
    }
    const rate = Math.max(2, Math.round(saturatedRps / 2))
    const warmSamples: number[] = []
    let warm: EdgeStats
    for (;;) {
      await load({ ...target, duration: P.memoryWarmS, overallRate: rate })
      warm = await ask<EdgeStats>(edge, { cmd: 'stats' })
      const before = warmSamples.at(-1)
      warmSamples.push(warm.rss)
      if (warmSamples.length >= MEMORY_WARM_STEPS.max) break
      if (warmSamples.length >= MEMORY_WARM_STEPS.min && before !== undefined && warm.rss <= before * MEMORY_STEADY) break
    }
    const samples: number[] = []
    const timer = setInterval(() => void ask<EdgeStats>(edge, { cmd: 'stats' }).then((s) => samples.push(s.rss)), 10_000)
    const r = await load({ ...target, duration: P.memoryS, overallRate: rate })
    clearInterval(timer)
    const end = await ask<EdgeStats>(edge, { cmd: 'stats' })
    return { bytes, rate, saturatedRps, rateFrom, seconds: P.memoryS, warmSamples, warm, end, samples, ok: r.ok, bad: r.bad }
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

/**
 * The line after which BENCHMARKS.md holds sections written by hand from other scripts
 * (`npm run bench:result-checks`, `npm run bench:virtual`): a run keeps them as they are.
 */
const HAND_WRITTEN_MARKER = '<!-- Below: sections from other benchmark scripts, written by hand; `npm run bench` keeps them. -->'

/** The marker and what follows it in the report file being replaced, or '' when it has none. */
function handWrittenTail(file: string): string {
  let old: string
  try {
    old = readFileSync(file, 'utf8')
  } catch {
    return ''
  }
  const at = old.indexOf(HAND_WRITTEN_MARKER)
  return at < 0 ? '' : `\n${old.slice(at)}`
}

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
  // direct, [nginx], bare, parse, validating, answer, hono, valid, invalid, bare Worker, Workers
  // parse floor, Workers validating floor, Worker valid, Worker invalid
  const nCore = 13 + (nginxBin ? 1 : 0)
  const nLatency = 6 + (nginxBin ? 1 : 0) // bare, parse, validating, [nginx], hono, valid, invalid
  plan.add(12) // bundles and process start-ups
  plan.add(roundsS(nCore, P.warmupS))
  plan.add(P.rounds * nLatency * runS(P.durationS))
  const axisRuns: Record<Axis, number> = {
    schema: SCHEMA_AXIS.length * 5,
    // each size: bare, parse, validating, edge, and the edge with the result checks off
    reply: (P.textBytes.length + P.structuredBytes.length) * 5 + 4,
    batch: P.batchSizes.length * 4,
    tools: 2 + P.toolCounts.length,
    connections: P.connectionAxis.length * 4,
    workerd: P.textBytes.length * 3,
  }
  for (const a of AXES) plan.add(roundsS(axisRuns[a], P.axisWarmupS) + (a === 'tools' ? [1, ...P.toolCounts].reduce((s, n) => s + seedS(n) + 1, 0) : 0))
  const memoryPlanS = 2 + (AXES.includes('reply') ? 0 : runS(P.memoryWarmS) + runS(P.durationS)) + 3 * runS(P.memoryWarmS) /* the warm-up: 2-4 steps seen */ + P.memoryS + 3
  plan.add(P.coldRepeats * 2 * 3 + (12 * P.microMs) / 1000 + 2 + memoryPlanS + 4)
  // --profile: at most one profiled run per target of an edge scenario (12), when every one is
  // missed, and one of its floor's for the 9 Node targets.
  if (flags.profile) plan.add(21 * runS(P.durationS))
  process.stderr.write(
    `bench: ${COMMAND}: ${P.rounds} round(s) of ${P.durationS} s runs, axes: ${AXES.join(', ') || 'none'}; nginx: ${nginxBin ? nginxBin.version : 'not installed'}.\n` +
      `bench: this run will take about ${clock(plan.totalS)} (m:ss).\n`
  )
  if (flags.plan) return

  plan.step('building the Worker bundle and the runners; starting the processes', 12)
  const bundle = await buildWorkerBundle(resolve(ROOT, 'dist/bench/edge-worker.js'))
  await buildRunners()
  const edgeTools = [...TOOLS, TOOL12, TOOL100, DEEP]
  const toolsJson = JSON.stringify(edgeTools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))
  const workerToolsJson = JSON.stringify([...TOOLS, TOOL12].map((t) => ({ name: t.name, inputSchema: t.inputSchema })))

  const origin = await startChild<{ port: number }>('origin', {}, SUPPORT)
  const originBase = `http://127.0.0.1:${origin.ready.port}`
  const bare = await startChild<{ port: number }>('bare-node', { ORIGIN_BASE: originBase }, UNDER_TEST)
  const parse = await startChild<{ port: number }>('bare-node', { ORIGIN_BASE: originBase, BARE_PARSE: '1' }, UNDER_TEST)
  const validating = await startChild<{ port: number }>('bare-node', { ORIGIN_BASE: originBase, BARE_VALIDATE: '1', BENCH_TOOLS: toolsJson }, UNDER_TEST)
  const hono = await startChild<{ port: number }>('floor', { ORIGIN_BASE: originBase, FLOOR_CLIENT: 'undici' }, UNDER_TEST)
  const origins: Record<string, string> = { sse: `${originBase}/sse`, sse1000: `${originBase}/sse/${P.sseEvents}` }
  const textOrigins: Record<string, string> = {}
  for (const b of P.textBytes) textOrigins[textName(b)] = `${originBase}/text/${b}`
  for (const b of P.structuredBytes) origins[structuredName(b)] = `${originBase}/reply/${b}`
  Object.assign(origins, textOrigins)
  const edge = await startChild<{ port: number }>(
    'edge',
    { ORIGIN_URL: `${originBase}/mcp`, ORIGINS: JSON.stringify(origins), BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn' },
    UNDER_TEST,
    ['--expose-gc']
  )
  // The same edge with the result checks (on by default, `audit`) off: the reply axis prices
  // them, so a text or structuredContent target can be read with and without them.
  const edgeNoChecks = AXES.includes('reply')
    ? await startChild<{ port: number }>(
        'edge',
        { ORIGIN_URL: `${originBase}/mcp`, ORIGINS: JSON.stringify(origins), BENCH_TOOLS: toolsJson, BENCH_SEED: 'learn', ...RESULT_CHECKS_OFF },
        UNDER_TEST
      )
    : null
  const inspectorPort = flags.profile ? await freePort() : null
  const worker = await startChild<{ url: string; bareUrl: string; parseUrl: string; validateUrl: string }>(
    'worker',
    {
      BENCH_WORKER_BUNDLE: bundle,
      BENCH_BARE_WORKER: resolve(ROOT, 'dist/bench/bare-worker.js'),
      BENCH_ORIGIN_BASE: originBase,
      BENCH_TOOLS: workerToolsJson,
      EDGE_ORIGIN_URL: `${originBase}/mcp`,
      EDGE_ORIGINS: JSON.stringify(textOrigins),
      ...(inspectorPort ? { BENCH_INSPECTOR_PORT: String(inspectorPort) } : {}),
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
  const parseUrl = `http://127.0.0.1:${parse.ready.port}`
  const validatingUrl = `http://127.0.0.1:${validating.ready.port}`
  const honoUrl = `http://127.0.0.1:${hono.ready.port}`
  const edgeUrl = `http://127.0.0.1:${edge.ready.port}/mcp`
  const pidOf = (c: { proc: ChildProcess }) => () => c.proc.pid ?? null
  // The workerd rows count workerd's tree, not the Miniflare host that drains its stdout (workerdPid says why).
  const workerdProc = workerdPid(worker.proc.pid!)
  const workerdOnly = () => workerdProc
  const valid12 = single(TOOL12, TOOL12.valid)
  const invalid12 = single(TOOL12, TOOL12.invalid)
  const nodeInvalid12 = single(TOOL12, TOOL12.invalid, NODE_REJECTED_ID)

  // --- Main scenarios: saturated throughput and CPU
  const core: Scenario[] = [
    S('direct', 'direct to the origin (context; CPU: the raw node:http origin, sharing its core with autocannon)', `${originBase}/mcp`, valid12, pidOf(origin), expectResult),
    ...(nginx
      ? [
          S(
            'nginx',
            `nginx ${nginxBin!.version.replace('nginx/', '')}, one worker, keep-alive upstream (context: native reference)`,
            `http://127.0.0.1:${nginx.port}/mcp`,
            valid12,
            pidOf(nginx),
            expectResult
          ),
        ]
      : []),
    S('bare', 'bare Node: `node:http` + undici `Pool.dispatch`, no parse (context)', `${bareUrl}/mcp`, valid12, pidOf(bare), expectResult),
    S('parse', 'parse floor: bare Node that decodes and `JSON.parse`s the request and the reply (context)', `${parseUrl}/mcp`, valid12, pidOf(parse), expectResult),
    S(
      'validating',
      'validating floor: the parse floor + ajv on the arguments + one JSON log line per POST (the Node floor)',
      `${validatingUrl}/mcp`,
      valid12,
      pidOf(validating),
      expectResult
    ),
    S('answer', 'bare Node answering a fixed text, no origin (context: the limit of a local answer)', `${bareUrl}/answer`, invalid12, pidOf(bare), expectInvalid, {
      originPerRequest: 0,
    }),
    S('hono', 'Hono floor: Hono + @hono/node-server + undici `request` (context)', `${honoUrl}/mcp`, valid12, pidOf(hono), expectResult),
    S('valid', 'edge, valid call (12 properties), forwarded, small reply', edgeUrl, valid12, pidOf(edge), expectResult),
    S('invalid', 'edge, invalid call (12 properties), answered locally', edgeUrl, nodeInvalid12, pidOf(edge), expectInvalid, { originPerRequest: 0 }),
    S('bareWorker', 'bare Worker: `fetch` only, same workerd (context)', `${worker.ready.bareUrl}/mcp`, valid12, workerdOnly, expectResult),
    S('wparse', 'Workers parse floor: a bare Worker that decodes and parses the request and the reply', `${worker.ready.parseUrl}/mcp`, valid12, workerdOnly, expectResult),
    S(
      'wvalidating',
      'Workers validating floor: the Workers parse floor + @cfworker/json-schema on the arguments',
      `${worker.ready.validateUrl}/mcp`,
      valid12,
      workerdOnly,
      expectResult
    ),
    S('wvalid', 'edge Worker, valid call (12 properties), forwarded, small reply', worker.ready.url, valid12, workerdOnly, expectResult),
    S('winvalid', 'edge Worker, invalid call (12 properties), answered locally', worker.ready.url, invalid12, workerdOnly, expectInvalid, { originPerRequest: 0 }),
  ]
  for (const s of core) await preflight(s, originBase)
  const runs = await runRounds('main scenarios', core, originBase, plan, P.warmupS)

  // --- Latency and CPU at one offered load: half the throughput of the slowest compared scenario,
  // so none of them runs saturated (queueing would swamp the comparison).
  const latencyKeys = ['bare', 'parse', 'validating', ...(nginx ? ['nginx'] : []), 'hono', 'valid', 'invalid']
  const slowest = Math.min(...['validating', 'valid', 'invalid'].map((k) => median(runs.get(k)!.map((r) => r.rps))))
  const rate = Math.max(50, Math.round(slowest / 2))
  const latency = await runRounds(
    `latency at ${fmt(rate)} req/s`,
    core.filter((s) => latencyKeys.includes(s.key)),
    originBase,
    plan,
    0,
    rate
  )

  // --- Axes
  const axes = new Map<Axis, { scenarios: Scenario[]; runs: Map<string, Run[]> }>()
  const axis = async (a: Axis, scenarios: Scenario[]) => {
    for (const s of scenarios) await preflight(s, originBase)
    axes.set(a, { scenarios, runs: await runRounds(`axis ${a}`, scenarios, originBase, plan, P.axisWarmupS) })
  }
  /**
   * One Node axis row: bare Node and the parse floor (context), the validating floor and the edge
   * on the same request (keys `bare:x`, `parse:x`, `val:x`, `edge:x`); `path` is the floors'
   * origin path, `edgeAt` the edge's URL.
   */
  const floorsAndEdge = (x: string | number, label: string, path: string, edgeAt: string, body: string, check: Check, more: Partial<Scenario> = {}): Scenario[] => [
    S(`bare:${x}`, `bare Node, ${label}`, `${bareUrl}${path}`, body, pidOf(bare), check, more),
    S(`parse:${x}`, `parse floor, ${label}`, `${parseUrl}${path}`, body, pidOf(parse), check, more),
    S(`val:${x}`, `validating floor, ${label}`, `${validatingUrl}${path}`, body, pidOf(validating), check, more),
    S(`edge:${x}`, `edge, ${label}`, edgeAt, body, pidOf(edge), check, more),
  ]
  let toolsHeld: { rows: ToolsHeld[]; runs: Map<string, Run[]>; scenarios: Scenario[] } | null = null
  for (const a of AXES) {
    if (a === 'schema') {
      await axis(
        a,
        SCHEMA_AXIS.flatMap(({ tool, label }) => [
          ...floorsAndEdge(tool.name, `valid call, ${label}`, '/mcp', edgeUrl, single(tool, tool.valid), expectResult),
          S(`invalid:${tool.name}`, `edge, invalid call, ${label}`, edgeUrl, single(tool, tool.invalid), pidOf(edge), expectInvalid, { originPerRequest: 0 }),
        ])
      )
    } else if (a === 'reply') {
      const noChecksUrl = `http://127.0.0.1:${edgeNoChecks!.ready.port}/mcp`
      const noChecks = (x: string, label: string, name: string, check: Check) =>
        S(`edgenochecks:${x}`, `edge with the result checks off, ${label}`, `${noChecksUrl}/${name}`, valid12, pidOf(edgeNoChecks!), check)
      await axis(a, [
        ...P.textBytes.flatMap((b) => [
          ...floorsAndEdge(`text${b}`, `${kb(b)} text reply`, `/text/${b}`, `${edgeUrl}/${textName(b)}`, valid12, expectText(b)),
          noChecks(`text${b}`, `${kb(b)} text reply`, textName(b), expectText(b)),
        ]),
        ...P.structuredBytes.flatMap((b) => [
          ...floorsAndEdge(`structured${b}`, `${kb(b)} structuredContent reply`, `/reply/${b}`, `${edgeUrl}/${structuredName(b)}`, valid12, expectResult),
          noChecks(`structured${b}`, `${kb(b)} structuredContent reply`, structuredName(b), expectResult),
        ]),
        ...floorsAndEdge('sse', `SSE reply of ${P.sseEvents} events`, `/sse/${P.sseEvents}`, `${edgeUrl}/sse1000`, single(TOOLS[0]!, TOOLS[0]!.valid), expectSse(P.sseEvents)),
      ])
    } else if (a === 'batch') {
      await axis(
        a,
        P.batchSizes.flatMap((n) => floorsAndEdge(n, `2025-03-26 batch of ${n} (12 properties)`, '/mcp', edgeUrl, batchOf(n, TOOL12), expectBatch(n), { headers: HEADERS }))
      )
    } else if (a === 'connections') {
      await axis(
        a,
        P.connectionAxis.flatMap((c) => floorsAndEdge(c, `valid call, ${c} connections`, '/mcp', edgeUrl, valid12, expectResult, { connections: c }))
      )
    } else if (a === 'workerd') {
      await axis(
        a,
        P.textBytes.flatMap((b) => [
          S(`bare:${b}`, `bare Worker, ${kb(b)} text reply`, `${worker.ready.bareUrl}/text/${b}`, valid12, workerdOnly, expectText(b)),
          S(`wparse:${b}`, `Workers parse floor, ${kb(b)} text reply`, `${worker.ready.parseUrl}/text/${b}`, valid12, workerdOnly, expectText(b)),
          S(`edge:${b}`, `edge Worker, ${kb(b)} text reply`, `${worker.ready.url}/${textName(b)}`, valid12, workerdOnly, expectText(b)),
        ])
      )
    } else {
      // Tools held: one fresh edge per count (10-property tools whose schemas all differ), the
      // validator cache as large as the count so every tool stays compiled in memory; memory
      // after a full GC, the hot-path lookup over every tool, then a valid call to one of them.
      const rows: ToolsHeld[] = []
      const held: Child<{ port: number }>[] = []
      const scenarios: Scenario[] = [S('floor', 'parse floor', `${parseUrl}/mcp`, valid12, pidOf(parse), expectResult)]
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
  // --- Profiles of the missed targets (`--profile`), while the processes under test still run.
  const profiles = flags.profile
    ? await profileMisses({ runs, latency, axes, rate, core, originBase, edgeChild: edge, floorChildren: [bare, parse, validating], inspectorPort, plan })
    : new Map<string, string>()
  await Promise.all([bare.stop(), parse.stop(), validating.stop(), hono.stop(), edge.stop(), edgeNoChecks?.stop(), worker.stop(), stopNginx()])

  // --- Cold path: the first call of a tool whose schema is only in KV (KV read + compile).
  plan.step('cold path', P.coldRepeats * 2 * 3)
  const cold = { node: [] as ColdRun[], worker: [] as ColdRun[] }
  for (let i = 0; i < P.coldRepeats; i++) {
    cold.node.push(await coldRun('node', originBase, bundle, i))
    cold.worker.push(await coldRun('worker', originBase, bundle, i))
  }
  plan.step('validation micro-benchmark', (12 * P.microMs) / 1000 + 2)
  const micro = await microBench()
  plan.step(`memory run (${kb(P.memoryBytes)} text replies, ${P.memoryS} s at half the edge's saturated rate)`, memoryPlanS)
  const replyRuns = axes.get('reply')?.runs.get(`edge:text${P.memoryBytes}`)
  const memory = await memoryRun(originBase, workerToolsJson, replyRuns ? median(replyRuns.map((x) => x.rps)) : null)
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
    profiles,
  })
  writeFileSync(OUT, report + handWrittenTail(OUT))
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
  /** `--profile`: per missed target id, the cause read from its profiled run. */
  profiles: Map<string, string>
}

const NOT_INSTALLED = 'not installed'
/** Where the cause of a missed target is written down (the lead's measured cause per target number). */
const CAUSES = 'docs/performance.md, "Causes of missed targets"'

/**
 * One row of the Targets table: `ok` null when the target is only reported (no bound); `value`
 * the figure the verdict rests on: when it is not a finite number (a run behind it had no 2xx
 * reply, so a ratio or difference has nothing to stand on), the target reads "not measured".
 */
type Outcome = { measured: string; ok: boolean | null; value: number; cause?: string } | { notRun: string }

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
type Over = ReturnType<typeof over>
const cpuOf = (x: Run) => x.cpuUsPerReq ?? NaN
const machine = `${CORES} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'})`
const p99Of = (x: Run) => x.p99

/** The edge scenario behind a target: run again under the profiler when the target is missed (`--profile`). */
interface ProfileAt {
  /** Scenario key in the main scenarios (`axis` null) or in that axis's. */
  key: string
  axis: Axis | null
  runtime: 'node' | 'workerd'
  /** The Node floor scenario the target is judged against (same axis): profiled alike, and the cause lists where the edge spends more. */
  floorKey?: string
}

/** One target of the performance issue, judged. */
interface Judged {
  id: string
  what: string
  wanted: string
  outcome: Outcome
  profileAt?: ProfileAt
}

/** What the targets are judged on: the runs of one bench run. */
type Measured = Pick<Report, 'runs' | 'latency' | 'axes' | 'rate'>

/**
 * The Targets of the performance issue against this run's figures. Every ratio is floor CPU /
 * edge CPU per 2xx answer, the median of the per-round ratios (each edge run has its floor's
 * measured in the same round); the throughput ratio (edge / floor) is printed beside it as context.
 * A miss's cause is the CPU per call above the floor; `--profile` adds the edge's top frames.
 */
function judge(r: Measured): Judged[] {
  const out: Judged[] = []
  const add = (what: string, wanted: string, outcome: Outcome, profileAt?: ProfileAt) =>
    out.push({ id: `T${out.length + 1}`, what, wanted, outcome, ...(profileAt ? { profileAt } : {}) })
  const notRun = (a: Axis): Outcome => ({ notRun: `not run (\`--axes\` without ${a})` })
  const axis = (a: Axis) => {
    const got = r.axes.get(a)
    return got ? over(got.runs) : null
  }
  /**
   * `floor` CPU / `edge` CPU per call on `m` against `min`; `parse` (a parse floor's key) adds its
   * ratio as context.
   */
  const cpuRatio = (m: Over, floor: string, edge: string, min: number, floorName: string, parse?: string, noChecks?: string): Outcome => {
    const v = m.ratio(floor, edge, cpuOf)
    const [f, e] = [m.cpu(floor), m.cpu(edge)]
    const context = [
      `throughput ${m.ratio(edge, floor).toFixed(2)}`,
      ...(parse ? [`of the parse floor ${m.ratio(parse, edge, cpuOf).toFixed(2)}`] : []),
      ...(noChecks ? [`with the result checks off ${m.ratio(floor, noChecks, cpuOf).toFixed(2)} (edge ${fmt(m.cpu(noChecks), 1)} µs)`] : []),
    ]
    return {
      measured: `${v.toFixed(2)} (${floorName} ${fmt(f, 1)} / edge ${fmt(e, 1)} µs per call; ${context.join('; ')})`,
      ok: v >= min,
      value: v,
      cause: `edge CPU ${signed(m.delta(edge, floor, cpuOf), 1)} µs per call above the ${floorName}'s`,
    }
  }
  const sat = over(r.runs)
  const lat = over(r.latency)
  add('Node, small reply (valid 12-property call): validating floor CPU / edge CPU per call', '>= 0.90', cpuRatio(sat, 'validating', 'valid', 0.9, 'validating floor', 'parse'), {
    key: 'valid',
    axis: null,
    runtime: 'node',
    floorKey: 'validating',
  })
  const nodeAxis = (a: Axis, x: string | number, what: string, min: number) => {
    const m = axis(a)
    add(
      `Node, ${what}: validating floor CPU / edge CPU per call`,
      `>= ${min.toFixed(2)}`,
      m ? cpuRatio(m, `val:${x}`, `edge:${x}`, min, 'validating floor', `parse:${x}`, a === 'reply' ? `edgenochecks:${x}` : undefined) : notRun(a),
      { key: `edge:${x}`, axis: a, runtime: 'node', floorKey: `val:${x}` }
    )
  }
  nodeAxis('reply', `text${100 * 1024}`, '100 KB text reply', 0.9)
  nodeAxis('reply', `text${1024 * 1024}`, '1 MB text reply', 0.9)
  nodeAxis('reply', `structured${100 * 1024}`, '100 KB structuredContent reply', 0.85)
  nodeAxis('batch', 10, 'batch of 10', 0.85)
  nodeAxis('batch', 100, 'batch of 100', 0.85)
  nodeAxis('schema', TOOL100.name, '100-property schema (valid call)', 0.85)
  const rejected = sat.ratio('invalid', 'bare')
  add(
    "Node, rejected call: saturated throughput vs bare Node's forwarding",
    '>= 1.3x',
    {
      measured: `${rejected.toFixed(2)}x (${fmt(sat.rps('invalid'))} / ${fmt(sat.rps('bare'))} req/s; CPU ${fmt(sat.cpu('invalid'), 1)} / ${fmt(sat.cpu('bare'), 1)} µs per call)`,
      ok: rejected >= 1.3,
      value: rejected,
      cause: `edge CPU per rejected call ${signed(sat.delta('invalid', 'bare', cpuOf), 1)} µs against bare Node's per forwarded call`,
    },
    { key: 'invalid', axis: null, runtime: 'node', floorKey: 'bare' }
  )
  add(
    'workerd, small reply (valid 12-property call): Workers validating floor CPU / edge Worker CPU per call',
    '>= 0.80',
    cpuRatio(sat, 'wvalidating', 'wvalid', 0.8, 'Workers validating floor', 'wparse'),
    {
      key: 'wvalid',
      axis: null,
      runtime: 'workerd',
    }
  )
  const wd = axis('workerd')
  for (const b of [100 * 1024, 1024 * 1024])
    add(
      `workerd, ${kb(b)} text reply: Workers parse floor CPU / edge Worker CPU per call`,
      '>= 0.85',
      wd ? cpuRatio(wd, `wparse:${b}`, `edge:${b}`, 0.85, 'Workers parse floor') : notRun('workerd'),
      {
        key: `edge:${b}`,
        axis: 'workerd',
        runtime: 'workerd',
      }
    )
  const p99Above = lat.delta('valid', 'validating', p99Of)
  add(
    `Node, valid call: p99 above the validating floor's at half saturation (${fmt(r.rate)} req/s)`,
    '<= +1 ms',
    {
      measured: `${signed(p99Above, 2)} ms (${fmt(lat.med('valid', p99Of), 2)} vs ${fmt(lat.med('validating', p99Of), 2)} ms)`,
      ok: p99Above <= 1,
      value: p99Above,
      cause: `edge CPU ${signed(lat.delta('valid', 'validating', cpuOf), 1)} µs per call above the validating floor's at that load`,
    },
    { key: 'valid', axis: null, runtime: 'node', floorKey: 'validating' }
  )
  const complete = !SMOKE && !QUICK && AXES.length === ALL_AXES.length
  add('every figure in BENCHMARKS.md from `npm run bench`, with the machine, Node version and command', 'yes', {
    measured: `\`${COMMAND}\`; ${machine}; Node ${process.version}`,
    ok: complete,
    value: 1,
    cause: 'a short or partial run (`--quick`, `--smoke` or `--axes`): the figures come from a full `npm run bench`',
  })
  return out
}

/** Frames listed per profiled miss. */
const PROFILE_TOP = 5

/**
 * `--profile`: for every missed target with an edge scenario behind it, one more run of that
 * scenario (`durationS`, as its rounds) under the V8 sampling profiler, the Node edge through its
 * own inspector (IPC to scripts/bench/edge.ts), the edge Worker through workerd's (`inspectorPort`).
 * Returns per target id the cause text (top frames by self time, share of the busy samples) and
 * saves each profile to dist/bench/profiles/bench-<id>.cpuprofile. A scenario behind several
 * misses is profiled once.
 */
async function profileMisses(o: {
  runs: Map<string, Run[]>
  latency: Map<string, Run[]>
  axes: Map<Axis, { scenarios: Scenario[]; runs: Map<string, Run[]> }>
  core: Scenario[]
  originBase: string
  edgeChild: Child<unknown>
  /** The Node floors' processes (bare Node, the parse and validating floors), found by a floor scenario's pid. */
  floorChildren: Child<unknown>[]
  inspectorPort: number | null
  plan: Plan
  rate: number
}): Promise<Map<string, string>> {
  const misses = judge(o).filter((t) => t.profileAt && !('notRun' in t.outcome) && t.outcome.ok === false)
  const out = new Map<string, string>()
  const done = new Map<string, string>()
  const dir = resolve(ROOT, 'dist/bench/profiles')
  mkdirSync(dir, { recursive: true })
  for (const t of misses) {
    const at = t.profileAt!
    const where = `${at.axis ?? 'main'}/${at.key}`
    const seen = done.get(where)
    if (seen !== undefined) {
      out.set(t.id, seen)
      continue
    }
    const s = (at.axis ? o.axes.get(at.axis)!.scenarios : o.core).find((x) => x.key === at.key)!
    o.plan.step(`profile of ${t.id} (${s.label})`, runS(P.durationS))
    let profile: Profile
    let calls: number
    let excess = ''
    const profiled = async (child: Child<unknown>, sc: Scenario): Promise<ProfiledRun> => {
      await ask(child, { cmd: 'profile-start' })
      const n = (await measure(sc, o.originBase, P.durationS, sc.connections ?? P.connections)).ok
      return { profile: (await ask<{ profile: Profile }>(child, { cmd: 'profile-stop' })).profile, calls: n }
    }
    if (at.runtime === 'node') {
      ;({ profile, calls } = await profiled(o.edgeChild, s))
      const fs = at.floorKey === undefined ? undefined : (at.axis ? o.axes.get(at.axis)!.scenarios : o.core).find((x) => x.key === at.floorKey)
      const floorChild = fs && o.floorChildren.find((c) => c.proc.pid === fs.pid())
      if (fs && floorChild) {
        o.plan.step(`profile of ${t.id}'s floor (${fs.label})`, runS(P.durationS))
        const floor = await profiled(floorChild, fs)
        writeFileSync(resolve(dir, `bench-${t.id}-floor.cpuprofile`), JSON.stringify(floor.profile))
        const x = excessOver({ profile, calls }, floor)
        const above = x.frames
          .filter((f) => f.us >= 0.05)
          .slice(0, PROFILE_TOP)
          .map((f) => `\`${f.frame}\` +${fmt(f.us, 1)}`)
          .join(', ')
        const own = x.floorOwn
          .slice(0, 2)
          .map((f) => `\`${f.frame}\` ${fmt(f.us, 1)}`)
          .join(', ')
        const spread = x.frames.filter((f) => f.us >= 0.3).length
        excess = `; against the floor's profile (${fmt(x.floorUs, 1)} µs of samples per call), µs per call above it: ${above} (${spread} frames above by 0.3 µs or more; the floor's own code: ${own})`
      }
    } else {
      const session = await inspector(o.inspectorPort!, 'edge')
      await session.send('Profiler.enable')
      await session.send('Profiler.setSamplingInterval', { interval: 100 })
      await session.send('Profiler.start')
      calls = (await measure(s, o.originBase, P.durationS, s.connections ?? P.connections)).ok
      profile = ((await session.send('Profiler.stop')) as { profile: Profile }).profile
      session.close()
    }
    writeFileSync(resolve(dir, `bench-${t.id}.cpuprofile`), JSON.stringify(profile))
    const { busyUs, frames } = selfTimes(profile)
    const top = frames
      .slice(0, PROFILE_TOP)
      .map((f) => `\`${f.frame}\` ${Math.round(f.share * 100)}%`)
      .join(', ')
    // workerd's console.log costs 100-1,000 µs per call while an inspector is attached (about 7
    // without): the log line's frame (`finish`, or the logger) reads far above its real cost.
    const inflated = at.runtime === 'workerd' ? '; the log line (`finish`, the logger) is inflated while the inspector is attached, see docs/performance.md "Workers"' : ''
    const text = `profile (${at.runtime === 'node' ? 'Node edge' : 'edge Worker isolate'}, ${fmt(busyUs / Math.max(1, calls), 1)} µs of samples per call): ${top}${inflated}${excess}`
    done.set(where, text)
    out.set(t.id, text)
  }
  return out
}

function render(r: Report): string {
  const mb = (b: number) => fmt(b / 1048576, 1)
  const sat = over(r.runs)
  const lat = over(r.latency)
  const hasNginx = sat.has('nginx')
  const axis = (a: Axis) => {
    const got = r.axes.get(a)
    return got ? over(got.runs) : null
  }

  // --- Main table
  const isWorker = (k: string) => k.startsWith('w') || k === 'bareWorker'
  const mainRows = r.core.map((s) => {
    const rs = sat.get(s.key)!
    const f = isWorker(s.key) ? 'wvalidating' : 'validating'
    return [
      s.label,
      fmt(sat.rps(s.key)),
      spread(rs.map((x) => x.rps)),
      s.key === f ? '1.00' : s.key === 'direct' ? '' : sat.ratio(s.key, f).toFixed(2),
      isWorker(s.key) || s.key === 'direct' ? '' : s.key === 'bare' ? '1.00' : sat.ratio(s.key, 'bare').toFixed(2),
      fmt(sat.cpu(s.key), 1),
      spread(rs.map(cpuOf), 1),
      s.key === f ? '1.00' : s.key === 'direct' ? '' : sat.ratio(f, s.key, cpuOf).toFixed(2),
      sat.errors(s.key),
    ]
  })
  if (!hasNginx) mainRows.splice(1, 0, ['nginx (context: native reference)', NOT_INSTALLED, '', '', '', '', '', '', ''])

  // --- Fixed load
  const latKeys = ['validating', 'parse', 'bare', 'nginx', 'hono', 'valid', 'invalid']
  const latRows = latKeys.map((k) => {
    const s = r.core.find((x) => x.key === k)
    if (!lat.has(k)) return ['nginx (context: native reference)', NOT_INSTALLED, '', '', '', '', '', '', '']
    return [
      s!.label,
      fmt(lat.rps(k)),
      fmt(
        lat.med(k, (x) => x.p50),
        2
      ),
      fmt(lat.med(k, p99Of), 2),
      fmt(
        lat.med(k, (x) => x.p999),
        2
      ),
      k === 'validating' ? '' : signed(lat.delta(k, 'validating', p99Of), 2),
      fmt(lat.cpu(k), 1),
      k === 'validating' ? '' : signed(lat.delta(k, 'validating', cpuOf), 1),
      hasNginx ? lat.ratio(k, 'nginx', cpuOf).toFixed(2) : NOT_INSTALLED,
    ]
  })

  // --- Targets (the performance issue's, every one against its floor) and the other checks
  const judged = judge(r)
  const targets = judged.map((t) => {
    const o = t.outcome
    if ('notRun' in o) return [t.id, t.what, t.wanted, '', 'not run', o.notRun]
    if (!Number.isFinite(o.value)) return [t.id, t.what, t.wanted, o.measured, 'not measured', 'a run behind it had no 2xx reply: see its row below']
    const status = o.ok === null ? 'reported' : mark(o.ok)
    const profiled = r.profiles.get(t.id)
    const cause = o.ok === false ? [o.cause ?? 'see its rows below', profiled ?? (t.profileAt ? '`--profile` for its top frames' : '')].filter(Boolean).join('; ') : ''
    return [t.id, t.what, t.wanted, o.measured, status, cause]
  })
  const wd = axis('workerd')
  const conns = axis('connections')
  const [c0, cN] = [P.connectionAxis[0]!, P.connectionAxis.at(-1)!]
  const rssRatio = r.memory.end.rss / r.memory.warm.rss

  const checks: string[][] = [
    ['Node, rejected call: origin POSTs during its runs', '0', String(r.nodeRejectedAtOrigin), mark(r.nodeRejectedAtOrigin === 0)],
    ['Node, rejected call vs bare Node answering a fixed text (saturated throughput)', 'none', sat.ratio('invalid', 'answer').toFixed(2), 'context'],
    ['Node, valid call: edge / bare Node (no parse), saturated throughput', 'none', sat.ratio('valid', 'bare').toFixed(2), 'context'],
    [
      `Node, valid call: CPU per call above the parse floor's (${fmt(lat.cpu('parse'), 1)} µs) / above bare Node's (${fmt(lat.cpu('bare'), 1)} µs) at ${fmt(r.rate)} req/s`,
      'none',
      `${signed(lat.delta('valid', 'parse', cpuOf), 1)} / ${signed(lat.delta('valid', 'bare', cpuOf), 1)} µs`,
      'context',
    ],
    [
      `Node, valid call: CPU per call vs nginx's at ${fmt(r.rate)} req/s`,
      'none',
      hasNginx ? `${lat.ratio('valid', 'nginx', cpuOf).toFixed(2)}x (${fmt(lat.cpu('valid'), 1)} vs ${fmt(lat.cpu('nginx'), 1)} µs)` : NOT_INSTALLED,
      hasNginx ? 'context' : NOT_INSTALLED,
    ],
    [
      'Workers, small reply: edge Worker / Workers validating floor, saturated throughput (valid / rejected call)',
      'none',
      `${sat.ratio('wvalid', 'wvalidating').toFixed(2)} / ${sat.ratio('winvalid', 'wvalidating').toFixed(2)}x`,
      'context',
    ],
    [
      `Workers, small reply: edge CPU per call above the Workers validating floor's (${fmt(sat.cpu('wvalidating'), 1)} µs) / parse floor's (${fmt(sat.cpu('wparse'), 1)} µs) / bare Worker's (${fmt(sat.cpu('bareWorker'), 1)} µs), valid call, saturated`,
      'none',
      `${signed(sat.delta('wvalid', 'wvalidating', cpuOf), 1)} / ${signed(sat.delta('wvalid', 'wparse', cpuOf), 1)} / ${signed(sat.delta('wvalid', 'bareWorker', cpuOf), 1)} µs`,
      'context',
    ],
    [
      `Node, ${fmt(cN)} connections: edge / parse floor at ${fmt(cN)}, over the same at ${fmt(c0)} (an earlier bound)`,
      '>= 0.85',
      ...((): [string, string] => {
        if (!conns) return ['not run (`--axes` without connections)', 'not run']
        const at = (c: number) => conns.get(`edge:${c}`)!.map((x, i) => x.rps / conns.get(`parse:${c}`)![i]!.rps)
        const [low, high] = [at(c0), at(cN)]
        const v = median(high.map((x, i) => x / low[i]!))
        return [`${v.toFixed(2)} (${median(high).toFixed(2)} at ${fmt(cN)}, ${median(low).toFixed(2)} at ${fmt(c0)})`, mark(v >= 0.85)]
      })(),
    ],
    ...P.textBytes.map((b) => [
      `workerd, ${kb(b)} text reply: edge Worker CPU per call above the Workers parse floor's / the bare Worker's (context)`,
      'none',
      wd
        ? `${signed(wd.delta(`edge:${b}`, `wparse:${b}`, cpuOf), 1)} / ${signed(wd.delta(`edge:${b}`, `bare:${b}`, cpuOf), 1)} µs (edge ${fmt(wd.cpu(`edge:${b}`), 1)} µs)`
        : 'not run (`--axes` without workerd)',
      wd ? 'context' : 'not run',
    ]),
    [
      `Node, memory: RSS after ${r.memory.seconds} s of ${kb(r.memory.bytes)} text replies at ${fmt(r.memory.rate)} req/s vs after warm-up (an earlier bound)`,
      '<= 1.10',
      `${rssRatio.toFixed(3)} (${mb(r.memory.warm.rss)} -> ${mb(r.memory.end.rss)} MiB)`,
      mark(rssRatio <= 1.1),
    ],
  ]

  // --- Axes
  const sections: string[] = []
  const growthRow = (what: string, xs: number[], ys: number[], unit: string) => {
    const g = growth(xs, ys)
    checks.push([
      `growth: ${what} (knee: ${g.knee === null ? 'none' : `${fmt(g.knee)} ${unit}`})`,
      'at most linear, no cliff',
      `worst step ${g.worst.toFixed(2)} of proportional`,
      mark(g.linear && g.knee === null),
    ])
  }
  const axisHead = [
    'row',
    'validating floor req/s',
    'edge req/s',
    'edge / validating floor',
    'parse floor req/s',
    'bare Node req/s',
    'validating floor CPU µs/req',
    'parse floor CPU µs/req',
    'edge CPU µs/req',
    'validating floor CPU / edge CPU',
    'parse floor CPU / edge CPU',
    'edge − validating floor µs',
    'edge p99 ms',
    'errors',
  ]
  /** One Node axis row: the edge's run `e` against the validating floor's, the parse floor's and bare Node's for `x`. */
  const axisRow = (m: Over, label: string, x: string | number, e = `edge:${x}`) => {
    const [v, f, b] = [`val:${x}`, `parse:${x}`, `bare:${x}`]
    return [
      label,
      fmt(m.rps(v)),
      fmt(m.rps(e)),
      m.ratio(e, v).toFixed(2),
      fmt(m.rps(f)),
      fmt(m.rps(b)),
      fmt(m.cpu(v), 1),
      fmt(m.cpu(f), 1),
      fmt(m.cpu(e), 1),
      m.ratio(v, e, cpuOf).toFixed(2),
      m.ratio(f, e, cpuOf).toFixed(2),
      signed(m.delta(e, v, cpuOf), 1),
      fmt(m.med(e, p99Of), 2),
      String([v, f, e, b].reduce((n, k) => n + Number(m.errors(k)), 0)),
    ]
  }
  for (const [a, { runs }] of r.axes) {
    const m = over(runs)
    if (a === 'schema') {
      const rows = SCHEMA_AXIS.flatMap(({ tool, label }) => [
        axisRow(m, `${label}, valid (forwarded)`, tool.name),
        axisRow(m, `${label}, invalid (answered)`, tool.name, `invalid:${tool.name}`),
      ])
      sections.push(
        `### Schema size (each schema's own valid arguments; the floors forward the same valid call, the validating floor after ajv on that schema; the invalid rows are against them)\n\n${table(axisHead, rows)}`
      )
      const lin = SCHEMA_AXIS.filter((s) => s.x !== null)
      growthRow(
        'edge CPU per valid call against schema size (3, 20, 100 properties)',
        lin.map((s) => s.x!),
        lin.map((s) => m.cpu(`edge:${s.tool.name}`)),
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
        ...P.textBytes.flatMap((b) => [axisRow(m, `${kb(b)} text reply`, `text${b}`), axisRow(m, `${kb(b)} text reply, result checks off`, `text${b}`, `edgenochecks:text${b}`)]),
        ...P.structuredBytes.flatMap((b) => [
          axisRow(m, `${kb(b)} structuredContent reply`, `structured${b}`),
          axisRow(m, `${kb(b)} structuredContent reply, result checks off`, `structured${b}`, `edgenochecks:structured${b}`),
        ]),
        axisRow(m, `SSE reply, ${P.sseEvents} events`, 'sse'),
      ]
      sections.push(
        `### Reply size and kind (valid call, 12 properties; text: one text content item of prose; structuredContent: an array of small objects; SSE: progress events, then the result; "result checks off": the same edge with \`RESULT_SECRETS=off RESULT_CONTROL=off\`, the checks being on (\`audit\`) by default)\n\n${table(axisHead, rows)}`
      )
      growthRow(
        `edge CPU per call against text reply size (${P.textBytes.map(kb).join(', ')})`,
        P.textBytes,
        P.textBytes.map((b) => m.cpu(`edge:text${b}`)),
        'bytes'
      )
      const sse = m.ratio('edge:sse', 'parse:sse')
      checks.push([`SSE (${P.sseEvents} events): edge / parse floor, replies per second`, '>= 0.90', sse.toFixed(2), mark(sse >= 0.9)])
    } else if (a === 'batch') {
      const rows = P.batchSizes.map((n) => axisRow(m, `batch of ${n}`, n))
      sections.push(`### Batch size (2025-03-26 batches of valid 12-property calls; per POST)\n\n${table(axisHead, rows)}`)
      growthRow(
        'edge CPU per POST against batch size (1, 10, 100)',
        P.batchSizes,
        P.batchSizes.map((n) => m.cpu(`edge:${n}`)),
        'calls'
      )
    } else if (a === 'connections') {
      const rows = P.connectionAxis.map((c) => axisRow(m, `${fmt(c)} connections`, c))
      sections.push(`### Concurrent connections (valid call, 12 properties, saturated)\n\n${table(axisHead, rows)}`)
    } else if (a === 'workerd') {
      const rows = P.textBytes.map((b) => [
        `${kb(b)} text reply`,
        fmt(m.rps(`wparse:${b}`)),
        fmt(m.rps(`edge:${b}`)),
        m.ratio(`edge:${b}`, `wparse:${b}`).toFixed(2),
        fmt(m.rps(`bare:${b}`)),
        fmt(m.cpu(`wparse:${b}`), 1),
        fmt(m.cpu(`bare:${b}`), 1),
        fmt(m.cpu(`edge:${b}`), 1),
        m.ratio(`wparse:${b}`, `edge:${b}`, cpuOf).toFixed(2),
        signed(m.delta(`edge:${b}`, `wparse:${b}`, cpuOf), 1),
        fmt(m.med(`edge:${b}`, p99Of), 2),
        String([`wparse:${b}`, `bare:${b}`, `edge:${b}`].reduce((n, k) => n + Number(m.errors(k)), 0)),
      ])
      sections.push(
        `### Reply size on workerd (valid call, 12 properties, text replies; the Workers parse floor, the bare Worker and the edge Worker in the same workerd; CPU: workerd's process tree)\n\n` +
          table(
            [
              'row',
              'Workers parse floor req/s',
              'edge Worker req/s',
              'edge / Workers parse floor',
              'bare Worker req/s',
              'Workers parse floor CPU µs/call',
              'bare Worker CPU µs/call',
              'edge Worker CPU µs/call',
              'Workers parse floor CPU / edge CPU',
              'edge − Workers parse floor µs',
              'edge p99 ms',
              'errors',
            ],
            rows
          )
      )
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
          fmt(m.med(k, p99Of), 2),
        ]
      }),
    ]
    sections.push(
      `### Tools held (10-property tools whose schemas all differ, learned and compiled, VALIDATOR_CACHE_SIZE = the count; memory after a full GC; lookup: \`registry.cached\` over every tool in turn; calls: one tool of them, against the parse floor in the same rounds, ${fmt(m.rps('floor'))} req/s, ${fmt(m.cpu('floor'), 1)} µs/req)\n\n` +
        table(
          [
            'tools',
            'seed s',
            'lookup ns',
            'RSS MiB',
            'heap MiB',
            'heap KiB per tool',
            'edge req/s',
            'edge / parse floor',
            'edge CPU µs/req',
            'edge − parse floor µs',
            'edge p99 ms',
          ],
          rows
        )
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

  // --- Cold path and cache-bound checks
  const coldMed = (rt: 'node' | 'worker', f: (c: ColdRun) => number) => median(r.cold[rt].map(f))
  const coldTool = (rt: 'node' | 'worker') => coldMed(rt, (c) => c.firstOfToolMs - c.warmMs)
  checks.push(
    [
      'cold path, 20 properties, Node (cfworker first, ajv after 16 calls): first call of a tool minus a warm call',
      '< 15 ms',
      `${fmt(coldTool('node'), 2)} ms`,
      mark(coldTool('node') < 15),
    ],
    ['cold path, 20 properties, workerd (cfworker): first call of a tool minus a warm call', '< 3 ms', `${fmt(coldTool('worker'), 2)} ms`, mark(coldTool('worker') < 3)],
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
  const shortRun = SMOKE
    ? '> **Smoke run** (CI): a fraction of a second per run, figures are not meaningful.\n\n'
    : QUICK
      ? '> **Quick run** (`--quick`): one round of 1 s runs, figures are rough.\n\n'
      : ''

  return `# Benchmarks

${shortRun}What the edge costs next to the limits this machine runs, as CPU per call: on Node the validating floor (bare Node that reads and \`JSON.parse\`s both messages, validates the arguments with ajv and writes one JSON log line per POST), on workerd the Workers parse floor (a bare Worker that decodes and parses both messages) and, for the small call, the Workers validating floor (the same plus @cfworker/json-schema); the parse floor, bare Node, the fetch-only bare Worker and nginx as context. Generated by \`scripts/bench.ts\`; do not edit by hand. Method: docs/performance.md.

- command: \`${COMMAND}\`
- date: ${r.started.toISOString()}
- machine: ${machine}, ${mb(os.totalmem())} MiB, ${os.platform()} ${os.release()}
- Node ${process.version}; nginx: ${r.nginx ?? NOT_INSTALLED}
- load average at start ${r.loadStart}, at end ${r.loadEnd}
- pinning: ${PINNING}
- ${P.rounds} alternating round(s) of ${P.durationS} s per scenario after a ${P.warmupS} s warm-up each (${P.axisWarmupS} s for the axes); ${P.connections} connections unless a row says otherwise; figures are medians over rounds, spread is min–max; ratios and differences are medians of per-round ratios and differences
- CPU: user + system time of the process under test (the workerd process tree for the workerd rows, without the Miniflare host that drains its log lines; master and worker for nginx) over the 2xx replies of the run; latency: every 2xx reply's time as autocannon measures it, percentiles from the raw list
- axes run: ${axesRun.join(', ') || 'none'}

## Targets

${table(['#', 'target', 'wanted', 'measured', '', 'cause of a miss'], targets)}

## Other checks (earlier bounds and context)

${table(['check', 'wanted', 'measured', ''], checks)}

## Throughput (saturated)

${table(['scenario', 'req/s (median)', 'req/s spread', 'vs floor', 'vs bare Node', 'CPU µs/req (median)', 'CPU spread', 'floor CPU / CPU', 'errors'], mainRows)}

"vs floor" (throughput) and "floor CPU / CPU": against the validating floor for the Node rows, against the Workers validating floor for the workerd rows.

## Latency and CPU at one offered load (${fmt(r.rate)} req/s, half the slowest of the validating floor, the valid and the rejected call)

${table(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'p99 vs validating floor', 'CPU µs/req', 'CPU vs validating floor', 'CPU / nginx'], latRows)}

## How cost grows

${sections.join('\n\n') || 'No axis was run (`--axes none`).'}

## Cold path (20-property schema, schema only in KV; median of ${r.cold.node.length} fresh processes)

"First call of the process": the first \`tools/call\` after start (KV read, engine set-up, compile, first run of the data path).
"First call of a tool": a second tool in the same process, never called before (KV read and compile). Latency seen by the client.

${table(['runtime, engine', 'first call of the process ms', 'first call of a tool ms', 'warm call ms', 'process cold cost ms', 'tool cold cost ms'], coldRows)}

## Validation micro-benchmark (Node ${process.version}, one core, through the edge's engine adapters)

${table(['engine', 'properties', 'valid args /s', 'invalid args /s', 'compile ms'], microRows)}

## Memory

- Node edge, valid 10-property calls answered with ${kb(r.memory.bytes)} text replies at ${fmt(r.memory.rate)} req/s (half the edge's saturated ${fmt(r.memory.saturatedRps)} req/s on them, ${r.memory.rateFrom === 'probe' ? 'probed on this edge after a saturated warm-up' : 'from the reply axis'}) for ${r.memory.seconds} s after a warm-up at that load until RSS stopped growing (${r.memory.warmSamples.length} steps of ${P.memoryWarmS} s, RSS after each: ${r.memory.warmSamples.map(mb).join(', ')} MiB; it ends when a step is within ${Math.round((MEMORY_STEADY - 1) * 100)}% of the one before, after ${MEMORY_WARM_STEPS.min} to ${MEMORY_WARM_STEPS.max} steps); ${fmt(r.memory.ok)} replies, ${r.memory.bad} errors
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
