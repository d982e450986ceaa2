/**
 * Whole-edge A/B: the Node edge of two checkouts, side by side in one run, so a change can be
 * shown not to cost speed (docs/performance.md). Each checkout's own `scripts/bench/edge.ts` is bundled with
 * esbuild (packages left external: each runs on its own node_modules) and started with the same
 * seeded tools; one benchmark origin (this checkout's) serves both. The edges run alone on CPU 0,
 * the origin and autocannon on CPU 1 (taskset, as `npm run bench` pins; scripts/bench/processes.ts). Per round, for the valid call (forwarded) and the
 * invalid call (answered locally), each edge gets one run, in alternating order; CPU per reply is
 * the edge process's user + system time (`cpuUs`, /proc) over its 2xx replies.
 *
 *   node --import tsx scripts/bench/ab.ts <base-checkout> [<new-checkout>] [--rounds 5] [--duration 4] [--rate R]
 *
 * `<new-checkout>` defaults to this one; `--rate` offers a fixed load (req/s) instead of saturating.
 * Both checkouts need `npm ci` done. Prints every round and, per call, the medians with their
 * spread and new/old. Exit 1 when an edge answers a check call wrongly (then the figures would not
 * compare like with like). Linux only (taskset, /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'
import autocannon from 'autocannon'
import { cpuUs, pinSelf, ROOT, SUPPORT, UNDER_TEST } from './processes'
import { TOOLS } from './schemas'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '4' }, rate: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
})
if (values.help || positionals.length === 0) {
  console.log('usage: node --import tsx scripts/bench/ab.ts <base-checkout> [<new-checkout>] [--rounds N] [--duration S] [--rate REQ_PER_S]')
  process.exit(values.help ? 0 : 2)
}
const checkouts = { old: resolve(positionals[0]!), new: resolve(positionals[1] ?? ROOT) }
const rounds = Number(values.rounds)
const duration = Number(values.duration)
const rate = values.rate === undefined ? undefined : Number(values.rate)
for (const [name, n] of [
  ['--rounds', rounds],
  ['--duration', duration],
  ['--rate', rate ?? 1],
] as const) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`ab: ${name} must be a whole number >= 1`)
    process.exit(2)
  }
}

const tool = TOOLS.find((t) => t.size === 10)!
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
const call = (args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: args } })
const BODIES = { valid: call(tool.valid), invalid: call(tool.invalid) } as const
type Kind = keyof typeof BODIES

const children: ChildProcess[] = []
/** Starts a script under node behind the `taskset` prefix `pin` (processes.ts); resolves with its `{ port }` IPC message. */
function start(cwd: string, args: string[], env: Record<string, string>, pin: string[]): Promise<{ p: ChildProcess; port: number }> {
  const [cmd, ...pre] = [...pin, process.execPath]
  const p = spawn(cmd!, [...pre, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  children.push(p)
  return new Promise((done, fail) => {
    p.once('message', (m) => done({ p, port: (m as { port: number }).port }))
    p.once('exit', (code) => fail(new Error(`${args.at(-1)} in ${cwd} exited (${code})`)))
  })
}
/** Bundles a checkout's benchmark edge into its node_modules/.cache (so its own packages resolve). */
async function bundle(checkout: string): Promise<string> {
  const out = join(checkout, 'node_modules/.cache/mcp-edge-ab/edge.mjs')
  mkdirSync(dirname(out), { recursive: true })
  await build({
    entryPoints: [join(checkout, 'scripts/bench/edge.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  })
  return out
}
const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

// autocannon (this process) off the edges' core, as the benchmark does.
pinSelf()
try {
  const origin = await start(ROOT, ['--import', 'tsx', 'scripts/bench/origin.ts'], {}, SUPPORT)
  const env = {
    ORIGIN_URL: `http://127.0.0.1:${origin.port}/mcp`,
    BENCH_TOOLS: JSON.stringify(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema }))),
    BENCH_SEED: 'learn',
    SCHEMA_RECHECK_MS: '3600000',
  }
  const edges = {
    old: await start(checkouts.old, [await bundle(checkouts.old)], env, UNDER_TEST),
    new: await start(checkouts.new, [await bundle(checkouts.new)], env, UNDER_TEST),
  }
  for (const [name, e] of Object.entries(edges)) {
    for (const kind of ['valid', 'invalid'] as const) {
      const r = await fetch(`http://127.0.0.1:${e.port}/mcp`, { method: 'POST', headers, body: BODIES[kind] })
      const j = (await r.json()) as { result?: { structuredContent?: { value?: number } }; error?: { code?: number } }
      if (kind === 'valid' ? j.result?.structuredContent?.value !== 42 : j.error?.code !== -32602) {
        console.error(`ab: the ${name} edge (${checkouts[name as 'old']}) answered the ${kind} check call wrongly`)
        process.exitCode = 1
        throw new Error('check call')
      }
    }
  }
  const run = (e: { p: ChildProcess; port: number }, kind: Kind, seconds: number) =>
    new Promise<{ rps: number; cpuUs: number; p99: number }>((done, fail) => {
      const c0 = cpuUs(e.p.pid!)
      autocannon(
        { url: `http://127.0.0.1:${e.port}/mcp`, method: 'POST', headers, body: BODIES[kind], connections: 32, duration: seconds, ...(rate ? { overallRate: rate } : {}) },
        (err, r) => {
          if (err) return fail(err)
          const ok = r['2xx']
          done({ rps: ok / seconds, cpuUs: (cpuUs(e.p.pid!) - c0) / ok, p99: r.latency.p99 })
        }
      )
    })
  for (const e of Object.values(edges)) for (const kind of ['valid', 'invalid'] as const) await run(e, kind, 3) // warm-up
  const res = {
    old: { valid: [] as { rps: number; cpuUs: number }[], invalid: [] as { rps: number; cpuUs: number }[] },
    new: { valid: [], invalid: [] } as Record<Kind, { rps: number; cpuUs: number }[]>,
  }
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 ? (['new', 'old'] as const) : (['old', 'new'] as const)
    for (const kind of ['valid', 'invalid'] as const)
      for (const name of order) {
        const r = await run(edges[name], kind, duration)
        res[name][kind].push(r)
        console.log(`round ${i + 1} ${kind.padEnd(7)} ${name}: ${r.rps.toFixed(0)} req/s, ${r.cpuUs.toFixed(1)} us CPU/reply, p99 ${r.p99} ms`)
      }
  }
  console.log(`\nold: ${checkouts.old}\nnew: ${checkouts.new}\n${rate ? `offered ${rate} req/s` : 'saturated'}, 32 connections, ${rounds} rounds of ${duration} s`)
  for (const kind of ['valid', 'invalid'] as const)
    for (const k of ['cpuUs', 'rps'] as const) {
      const o = res.old[kind].map((r) => r[k])
      const n = res.new[kind].map((r) => r[k])
      const span = (a: number[]) => `${Math.min(...a).toFixed(1)}-${Math.max(...a).toFixed(1)}`
      console.log(
        `${kind.padEnd(7)} ${k === 'cpuUs' ? 'CPU us/reply' : 'req/s      '}: old ${median(o).toFixed(1)} (${span(o)})  new ${median(n).toFixed(1)} (${span(n)})  new/old ${(median(n) / median(o)).toFixed(3)}`
      )
    }
} catch (e) {
  if (process.exitCode !== 1) {
    console.error(`ab: ${(e as Error).message}`)
    process.exitCode = 1
  }
} finally {
  for (const c of children) c.kill('SIGKILL')
}
