/**
 * Where the edge Worker's CPU goes, per call, against the bare Worker in the same workerd
 * (docs/performance.md, "Workers"). Builds the Worker bundle as `npm run bench` does, runs it and
 * the bare Worker under plain Miniflare (scripts/bench/worker.ts, pinned to core 0), the bench
 * origin on core 1, and drives a valid 10-property `tools/call` with autocannon.
 *
 * Per reply (small `/mcp`; a text item of 1 KB, 100 KB and 1 MB, `/text/<bytes>`; with
 * `--kinds text,reply` also `structuredContent` of those sizes, `/reply/<bytes>`):
 * - saturated throughput and CPU per call of workerd (its process tree: the isolates, KV, the
 *   HTTP stack) and of the Miniflare host, edge and bare Worker in alternating rounds; the table
 *   gives medians of the per-round figures;
 * - with `--profile`, one more edge run (and one bare run) under the V8 sampling profiler, over
 *   workerd's inspector (Chrome DevTools Protocol `Profiler.start`/`Profiler.stop` on
 *   `/core:user:edge`): the JavaScript time per call, self time per function and the inclusive
 *   time of the stages named in {@link STAGES}. Samples count JavaScript and the native calls it
 *   makes (a `TextDecoder.decode`, `new Response`); workerd's own HTTP work outside JavaScript
 *   is "(program)" or outside the isolate, and shows only in the CPU per call. Profiles are saved
 *   to dist/bench/profiles/ (open them in Chrome DevTools).
 *
 * Usage: `node --import tsx scripts/bench/worker-profile.ts [--duration S] [--rounds N]
 * [--sizes 1024,102400,1048576] [--kinds text,reply] [--connections N] [--profile] [--top N]
 * [--interval US] [--only small,t1024,...] [--bundle FILE] [--vs FILE]`. `--bundle`: a Worker
 * bundle built elsewhere instead of building src/; `--vs`: a second bundle (B, e.g. a variant with
 * one stage switched off, or the base branch's) in a second Miniflare with its own bare Worker,
 * measured in the same rounds: the table adds B − A per round, the way to see a change of tens of
 * µs on a loaded machine. Figures are relative: run it on a quiet machine (`uptime` below 0.5).
 */
import { copyFileSync, readdirSync, readFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'
import { buildWorkerBundle, WORKER_BUILD } from '../../test/helpers/build-worker'
import { inspector, type Profile, type ProfileNode } from './cpu-profile'
import { load } from './load'
import { buildRunners, cpuUs, PINNING, pinSelf, ROOT, startChild, SUPPORT, UNDER_TEST, workerdPid } from './processes'
import { TOOLS } from './schemas'
import { fmt, median, table } from './stats'

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    sizes: { type: 'string', default: '1024,102400,1048576' },
    kinds: { type: 'string', default: 'text' },
    connections: { type: 'string', default: '16' },
    profile: { type: 'boolean', default: false },
    top: { type: 'string', default: '25' },
    interval: { type: 'string', default: '100' },
    only: { type: 'string' },
    bundle: { type: 'string' },
    vs: { type: 'string' },
    rate: { type: 'string' },
    loop: { type: 'string' },
    'memory-origin': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (flags.help) {
  process.stdout.write(`usage: node --import tsx scripts/bench/worker-profile.ts [options]
  the edge Worker's CPU per call against the bare Worker in the same workerd (docs/performance.md, "Workers")
  --duration S        seconds per run (default 3)
  --rounds N          alternating rounds, edge and bare Worker (default 3)
  --sizes LIST        text reply sizes in bytes (default 1024,102400,1048576; the small /mcp reply is always run)
  --kinds LIST        text (one text item) and/or reply (structuredContent) (default text)
  --connections N     autocannon connections (default 16)
  --rate R            a fixed offered load in req/s instead of saturation
  --only LIST         only these rows (small, t1024, t102400, ...)
  --loop N            in-isolate loop mode: N calls per loop request (scripts/bench/worker-loop.ts)
  --memory-origin     with --loop: the origin answered from bytes kept in the isolate
  --profile           one more run under the V8 sampling profiler (dist/bench/profiles/)
  --top N             functions listed per profile (default 25)
  --interval US       sampling interval of the profiler in µs (default 100)
  --bundle FILE       a Worker bundle built elsewhere instead of building src/
  --vs FILE           a second bundle measured in the same rounds (the table adds B − A)
  -h, --help          this text
Run it on a quiet machine (uptime below 0.5): figures are relative.
`)
  process.exit(0)
}
const DURATION_S = Number(flags.duration)
const ROUNDS = Number(flags.rounds)
const SIZES = flags.sizes.split(',').map(Number)
const KINDS = flags.kinds.split(',') as ('text' | 'reply')[]
const CONNECTIONS = Number(flags.connections)
const TOP = Number(flags.top)
/** A fixed offered load (req/s) instead of saturation: CPU per call then varies less with what else the machine runs. */
const RATE = flags.rate ? Number(flags.rate) : undefined
/** In-isolate loop mode (worker-loop.ts): calls per loop request for the small reply. */
const LOOP = flags.loop ? Number(flags.loop) : undefined
const INSPECTOR_PORT = 9230 + Math.floor(Math.random() * 500)

const TOOL10 = TOOLS[1]!
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: TOOL10.name, arguments: TOOL10.valid } })
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

// ---------------------------------------------------------------------------------------------
// Processes

pinSelf()
const bundle = flags.bundle ? resolve(flags.bundle) : await buildWorkerBundle(resolve(ROOT, 'dist/bench/edge-worker.js'))
await buildRunners()
const origin = await startChild<{ port: number }>('origin', {}, SUPPORT)
const originBase = `http://127.0.0.1:${origin.ready.port}`

interface Scenario {
  key: string
  label: string
  /** Path after the edge's `/mcp` (a named origin) and after the bare Worker's `/bare`. */
  edgePath: string
  barePath: string
  /** About how large the reply is (bytes). */
  bytes: number
}
const kb = (b: number) => (b >= 1048576 ? `${b / 1048576} MB` : `${b / 1024} KB`)
const scenarios: Scenario[] = [{ key: 'small', label: 'small reply (/mcp, 86 B result)', edgePath: '', barePath: '/mcp', bytes: 120 }]
const origins: Record<string, string> = {}
for (const kind of KINDS)
  for (const b of SIZES) {
    const name = `${kind[0]}${b}`
    origins[name] = `${originBase}/${kind}/${b}`
    scenarios.push({
      key: name,
      label: `${kind === 'text' ? 'one text item' : 'structuredContent'} of ${kb(b)} (/${kind}/${b})`,
      edgePath: `/${name}`,
      barePath: `/${kind}/${b}`,
      bytes: b,
    })
  }
const only = flags.only?.split(',')
const run = only ? scenarios.filter((s) => only.includes(s.key)) : scenarios

/** One Miniflare child (scripts/bench/worker.ts): an edge bundle and the bare Worker in one workerd. */
interface Side {
  name: string
  bundle: string
  url: string
  bareUrl: string
  /** The Miniflare entry (`http://127.0.0.1:<port>`). */
  origin: string
  hostPid: number
  runtimePid: number
  inspectorPort: number
  stop(): Promise<void>
}

/**
 * The loop Worker (worker-loop.ts) for one side, in a directory of its own beside a copy of the
 * edge bundle as `edge.js` (the module the loop imports); returns the loop bundle's path.
 */
async function loopBundle(name: string, edgeBundle: string): Promise<string> {
  const dir = resolve(ROOT, `dist/bench/loop-${name}`)
  mkdirSync(dir, { recursive: true })
  copyFileSync(edgeBundle, resolve(dir, 'edge.js'))
  const outfile = resolve(dir, 'worker-loop.js')
  await build({ entryPoints: [resolve(ROOT, 'scripts/bench/worker-loop.ts')], outfile, ...WORKER_BUILD, external: ['./edge.js'], logLevel: 'warning' })
  return outfile
}

async function startSide(name: string, bundle: string, inspectorPort: number): Promise<Side> {
  const child = await startChild<{ url: string; bareUrl: string }>(
    'worker',
    {
      BENCH_WORKER_BUNDLE: bundle,
      BENCH_BARE_WORKER: resolve(ROOT, 'dist/bench/bare-worker.js'),
      BENCH_ORIGIN_BASE: originBase,
      BENCH_TOOLS: JSON.stringify(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema }))),
      EDGE_ORIGIN_URL: `${originBase}/mcp`,
      EDGE_ORIGINS: JSON.stringify(origins),
      ...(flags.profile ? { BENCH_INSPECTOR_PORT: String(inspectorPort) } : {}),
      ...(LOOP !== undefined ? { BENCH_LOOP: await loopBundle(name, bundle) } : {}),
      ...(LOOP !== undefined && flags['memory-origin'] ? { EDGE_BENCH_LOOP_ORIGIN: 'memory' } : {}),
    },
    UNDER_TEST
  )
  const hostPid = child.proc.pid!
  return { name, bundle, ...child.ready, origin: new URL(child.ready.url).origin, hostPid, runtimePid: workerdPid(hostPid), inspectorPort, stop: child.stop }
}

const sides = [await startSide('A', bundle, INSPECTOR_PORT)]
if (flags.vs) sides.push(await startSide('B', resolve(flags.vs), INSPECTOR_PORT + 1))

// ---------------------------------------------------------------------------------------------
// Load and CPU

interface Measured {
  rps: number
  /** workerd's CPU per 2xx reply, µs. */
  workerd: number
  /**
   * The CPU of workerd's main thread per 2xx reply, µs: where the isolates run (V8's helper
   * threads for concurrent GC and compilation are left out, and so is their spill from one
   * run into the next).
   */
  main: number
  /** The Miniflare host's own CPU per 2xx reply, µs (it drains workerd's stdout: the log lines). */
  host: number
  ok: number
  bad: number
}

/** The loop calls per loop request: `--loop` for the small reply, fewer for large ones (about as long each). */
const loopCalls = (s: Scenario) => Math.max(1, Math.round(LOOP! * Math.min(1, 8192 / Math.max(s.bytes, 8192))))

/**
 * Runs one Worker of `side` for `durationS`: autocannon (saturated, or at `--rate`) against its
 * URL; with `--loop`, back-to-back loop requests (worker-loop.ts) of {@link loopCalls} calls each.
 * `ok`: the calls answered 2xx.
 */
async function drive(side: Side, which: 'edge' | 'bare', s: Scenario, durationS: number): Promise<{ ok: number; bad: number; durationS: number }> {
  if (LOOP === undefined) {
    const url = which === 'edge' ? side.url + s.edgePath : side.bareUrl + s.barePath
    return load({ url, method: 'POST', headers: HEADERS, body: BODY, connections: CONNECTIONS, duration: durationS, ...(RATE ? { overallRate: RATE } : {}) })
  }
  const n = loopCalls(s)
  const url = `${side.origin}/loop/${which}/${n}${which === 'edge' ? `/mcp${s.edgePath}` : s.barePath}`
  const t0 = performance.now()
  let ok = 0
  let bad = 0
  do {
    const res = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY })
    const r = (await res.json()) as { status: number }
    if (res.status === 200 && r.status === 200) ok += n
    else bad += n
  } while (performance.now() - t0 < durationS * 1000)
  return { ok, bad, durationS: (performance.now() - t0) / 1000 }
}

/** CPU time of one thread (`/proc/<pid>/task/<tid>/schedstat`), µs. */
function threadUs(pid: number, tid = pid): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1000
}

async function measure(side: Side, which: 'edge' | 'bare', s: Scenario, durationS: number): Promise<Measured> {
  const w0 = cpuUs(side.runtimePid)
  const m0 = threadUs(side.runtimePid)
  const all0 = cpuUs(side.hostPid)
  const r = await drive(side, which, s, durationS)
  const w1 = cpuUs(side.runtimePid)
  const m1 = threadUs(side.runtimePid)
  const all1 = cpuUs(side.hostPid)
  const ok = Math.max(r.ok, 1)
  return { rps: r.ok / r.durationS, workerd: (w1 - w0) / ok, main: (m1 - m0) / ok, host: (all1 - all0 - (w1 - w0)) / ok, ok: r.ok, bad: r.bad }
}

/**
 * Loop mode: one loop request at a time, bare then edge on each side in turn, for `durationS`;
 * workerd's CPU is read around each request, and the figure per call is the median over the
 * requests (a request stalled by the scheduler or a neighbour moves a sum, not a median). Interleaved request by request
 * (tens of ms each) so that a neighbour's load, which changes the speed of both Workers alike,
 * falls on both within the same second.
 */
async function interleaved(s: Scenario, durationS: number): Promise<{ bare: Measured; edge: Measured }[]> {
  const zero = () => ({ cpu: [] as number[], main: [] as number[], host: 0, ok: 0, bad: 0, s: 0 })
  const acc = sides.map(() => ({ bare: zero(), edge: zero() }))
  const n = loopCalls(s)
  const t0 = performance.now()
  do {
    for (const [j, side] of sides.entries())
      for (const which of ['bare', 'edge'] as const) {
        const a = acc[j]![which]
        const url = `${side.origin}/loop/${which}/${n}${which === 'edge' ? `/mcp${s.edgePath}` : s.barePath}`
        const w0 = cpuUs(side.runtimePid)
        const m0 = threadUs(side.runtimePid)
        const h0 = cpuUs(side.hostPid)
        const t = performance.now()
        const res = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY })
        const body = (await res.json()) as { status: number }
        const w1 = cpuUs(side.runtimePid)
        a.main.push((threadUs(side.runtimePid) - m0) / n)
        a.s += (performance.now() - t) / 1000
        a.cpu.push((w1 - w0) / n)
        a.host += cpuUs(side.hostPid) - h0 - (w1 - w0)
        if (res.status === 200 && body.status === 200) a.ok += n
        else a.bad += n
      }
  } while (performance.now() - t0 < durationS * 1000)
  const m = (x: ReturnType<typeof zero>): Measured => ({
    rps: x.ok / x.s,
    // Medians over the loop requests: a request the scheduler (or the hypervisor) stalled moves a mean, not these.
    workerd: median(x.cpu),
    main: median(x.main),
    host: x.host / Math.max(x.ok, 1),
    ok: x.ok,
    bad: x.bad,
  })
  return acc.map((x) => ({ bare: m(x.bare), edge: m(x.edge) }))
}

const edgeUrl = (side: Side, s: Scenario) => side.url + s.edgePath
const bareUrl = (side: Side, s: Scenario) => side.bareUrl + s.barePath

// Each reply checked once: a graded result, not an error (a wrong seed or origin would bench errors).
for (const side of sides)
  for (const s of run) {
    for (const url of [edgeUrl(side, s), bareUrl(side, s)]) {
      const res = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY })
      const text = await res.text()
      if (res.status !== 200 || !text.includes('"result"') || text.includes('"isError":true')) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`)
    }
  }

process.stderr.write(`worker-profile: ${PINNING}; ${ROUNDS} round(s) of ${DURATION_S} s, ${CONNECTIONS} connections; ${sides.map((x) => `${x.name}: ${x.bundle}`).join(', ')}\n`)
/** Per scenario and side: the bare and edge runs of each round. */
const results = new Map<string, { edge: Measured[]; bare: Measured[] }[]>()
for (const s of run) {
  for (const side of sides) {
    await measure(side, 'bare', s, 1)
    await measure(side, 'edge', s, 1.5)
  }
  const r = sides.map(() => ({ edge: [] as Measured[], bare: [] as Measured[] }))
  for (let i = 0; i < ROUNDS; i++) {
    if (LOOP !== undefined) {
      const round = await interleaved(s, DURATION_S)
      for (const [j, m] of round.entries()) {
        r[j]!.bare.push(m.bare)
        r[j]!.edge.push(m.edge)
      }
      continue
    }
    for (const [j, side] of sides.entries()) {
      r[j]!.bare.push(await measure(side, 'bare', s, DURATION_S))
      r[j]!.edge.push(await measure(side, 'edge', s, DURATION_S))
    }
  }
  results.set(s.key, r)
  process.stderr.write(`worker-profile: ${s.key} done\n`)
}

const med = (xs: Measured[], f: (m: Measured) => number) => median(xs.map(f))
const rows = run.flatMap((s) =>
  sides.map((side, j) => {
    const r = results.get(s.key)![j]!
    const ratio = median(r.edge.map((e, i) => e.rps / r.bare[i]!.rps))
    const above = median(r.edge.map((e, i) => e.workerd - r.bare[i]!.workerd))
    const aboveMain = median(r.edge.map((e, i) => e.main - r.bare[i]!.main))
    const errors = [...r.edge, ...r.bare].reduce((n, m) => n + m.bad, 0)
    return [
      sides.length > 1 ? `${side.name}: ${s.label}` : s.label,
      fmt(med(r.bare, (m) => m.rps)),
      fmt(med(r.edge, (m) => m.rps)),
      ratio.toFixed(2),
      fmt(
        med(r.bare, (m) => m.workerd),
        1
      ),
      fmt(
        med(r.edge, (m) => m.workerd),
        1
      ),
      fmt(above, 1),
      fmt(aboveMain, 1),
      `${fmt(
        med(r.bare, (m) => m.host),
        1
      )} / ${fmt(
        med(r.edge, (m) => m.host),
        1
      )}`,
      String(errors),
    ]
  })
)
process.stdout.write(
  `\n${table(['reply', 'bare req/s', 'edge req/s', 'edge / bare', 'bare workerd µs/call', 'edge workerd µs/call', 'edge − bare µs', 'edge − bare µs, main thread', 'host µs/call bare / edge', 'errors'], rows)}\n`
)
if (sides.length > 1) {
  // B against A: the per-round differences of edge − bare, so each figure has both floors measured seconds apart.
  const ab = run.map((s) => {
    const [a, b] = results.get(s.key)!
    const above = (x: { edge: Measured[]; bare: Measured[] }, i: number) => x.edge[i]!.workerd - x.bare[i]!.workerd
    const aboveMain = (x: { edge: Measured[]; bare: Measured[] }, i: number) => x.edge[i]!.main - x.bare[i]!.main
    const d = a!.edge.map((_, i) => above(b!, i) - above(a!, i))
    const dm = a!.edge.map((_, i) => aboveMain(b!, i) - aboveMain(a!, i))
    const ratio = a!.edge.map((_, i) => b!.edge[i]!.rps / b!.bare[i]!.rps / (a!.edge[i]!.rps / a!.bare[i]!.rps))
    return [s.label, fmt(median(d), 1), d.map((x) => fmt(x, 0)).join(', '), fmt(median(dm), 1), dm.map((x) => fmt(x, 0)).join(', '), median(ratio).toFixed(2)]
  })
  process.stdout.write(
    `\n${table(['reply', 'B − A: edge − bare workerd µs/call (median)', 'per round', 'B − A, main thread', 'per round', 'B / A: edge / bare throughput'], ab)}\n`
  )
}

// ---------------------------------------------------------------------------------------------
// Profiles (Chrome DevTools Protocol over workerd's inspector)

/**
 * The stages of the edge Worker's path: inclusive time of the first frame (outermost on the
 * stack) whose function name matches. A stage nested in another is counted in both.
 */
const STAGES: [string, RegExp][] = [
  ['Worker fetch -> Hono app.fetch (all JavaScript under the request)', /^(fetch|dispatch)$/],
  ['Hono routing and middleware (compose, dispatch, match)', /^(compose|dispatch|match|matchRoute|getPath|getPathNoStrict|mergePath)$/],
  ['CORS middleware (mcpCors)', /^(mcpCors|corsMiddleware)$/],
  ['servePost (front door, pipeline, grading)', /^servePost$/],
  ['admitPost (transport checks)', /^admitPost$/],
  ['body read (readHonoBody / arrayBuffer)', /^(readHonoBody|bodyLimit|arrayBuffer)$/],
  ['handlePost (pipeline)', /^handlePost$/],
  ['tools/call validation (cfworker)', /^(validate|dereference)$/],
  ['origin call (fetch client)', /^(createFetchOriginClient|callOrigin|forwardToOrigin)$/],
  ['origin reply text (boundedText / text / decode)', /^(boundedText|text|decode)$/],
  ['reply grading', /^(gradeReply|gradeJsonReply|jsonReply|gradeBody)$/],
  ['JSON scans', /^(scan\w*|jsonScan\w*|skip\w*|findResult\w*)$/],
  ['JSON.parse / stringify', /^(parse|stringify)$/],
  ['answer bytes metric (observeAnswer)', /^(observeAnswer|utf8Length|byteLength\w*)$/],
  ['metrics (TextMetrics)', /^(record\w*|observe\w*|inc|add)$/],
  ['log line (console.log / JSON.stringify of the record)', /^(log|logLine|logRecord)$/],
  ['toWebResponse / new Response', /^(toWebResponse|Response)$/],
  ['TextEncoder.encode', /^encode$/],
  ['garbage collector', /^\(garbage collector\)$/],
]

function analyse(p: Profile, calls: number, label: string): void {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  // Sample time per node from timeDeltas (µs); hitCount is per sample too, but deltas carry the real interval.
  const selfUs = new Map<number, number>()
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + dt)
  }
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const name = (n: ProfileNode) => n.callFrame.functionName || '(anonymous)'
  const where = (n: ProfileNode) => `${n.callFrame.url.split('/').pop() ?? ''}:${n.callFrame.lineNumber + 1}`
  const idle = [...selfUs].filter(([id]) => ['(idle)', '(program)'].includes(name(byId.get(id)!))).reduce((a, [, t]) => a + t, 0)
  // Self time per function (name + place).
  const self = new Map<string, number>()
  for (const [id, t] of selfUs) {
    const n = byId.get(id)!
    const k = `${name(n)} ${where(n)}`
    self.set(k, (self.get(k) ?? 0) + t)
  }
  // Inclusive time per stage: each sample counts once for a stage, at its outermost matching frame.
  const stage = new Map<string, number>()
  for (const [id, t] of selfUs) {
    const hit = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!
      for (const [s, re] of STAGES) if (re.test(name(n))) hit.add(s)
    }
    for (const s of hit) stage.set(s, (stage.get(s) ?? 0) + t)
  }
  const per = (us: number) => fmt(us / calls, 1)
  process.stdout.write(`\n### ${label}: ${calls} calls profiled, ${per(totalUs - idle)} µs of samples per call outside (idle)/(program) (${per(idle)} µs there)\n\n`)
  process.stdout.write(
    table(
      ['stage (inclusive)', 'µs per call'],
      STAGES.map(([s]) => [s, per(stage.get(s) ?? 0)])
    ) + '\n\n'
  )
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)
  process.stdout.write(
    table(
      ['function (self time)', 'µs per call'],
      top.map(([k, t]) => [k, per(t)])
    ) + '\n'
  )
}

async function profileRun(side: Side, workerName: 'edge' | 'bare', s: Scenario): Promise<void> {
  const key = s.key
  const session = await inspector(side.inspectorPort, LOOP === undefined ? workerName : 'edge')
  await session.send('Profiler.enable')
  await session.send('Profiler.setSamplingInterval', { interval: Number(flags.interval) })
  await session.send('Profiler.start')
  const r = await drive(side, workerName, s, DURATION_S)
  const { profile } = (await session.send('Profiler.stop')) as { profile: Profile }
  session.close()
  const dir = resolve(ROOT, 'dist/bench/profiles')
  mkdirSync(dir, { recursive: true })
  const file = `${workerName}-${key}${sides.length > 1 ? `-${side.name}` : ''}`
  writeFileSync(resolve(dir, `${file}.cpuprofile`), JSON.stringify(profile))
  writeFileSync(resolve(dir, `${file}.json`), JSON.stringify({ calls: r.ok, durationS: r.durationS }))
  analyse(profile, r.ok, `${sides.length > 1 ? `${side.name}: ` : ''}${workerName} Worker, ${key}`)
}

if (flags.profile) {
  for (const s of run) {
    for (const side of sides) {
      // In loop mode both Workers run in the edge's isolate (worker-loop.ts), so both are profiled there.
      await profileRun(side, 'bare', s)
      await profileRun(side, 'edge', s)
    }
  }
}

await Promise.all([...sides.map((x) => x.stop()), origin.stop()])
process.exit(0)
