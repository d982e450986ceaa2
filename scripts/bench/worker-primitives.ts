/**
 * What the pieces of the edge Worker's small call cost in workerd, apart from each other:
 * scripts/bench/worker-primitives-worker.ts under plain Miniflare runs each case `n` times per
 * request; the CPU of workerd's process tree is read around each request (the Miniflare host,
 * which drains the log lines, is left out as in `npm run bench`), the cases alternate within a
 * round (order reversed every other round), and each case's figure is the median over rounds of
 * its per-iteration CPU minus the empty loop's of the same round.
 *
 * Usage: `taskset -c 0 node --import tsx scripts/bench/worker-primitives.ts [--n N] [--rounds R]
 * [--cases a,b,...]` (default 2000 iterations, 7 rounds, every case; the `fetch*` cases make a
 * real subrequest to a loopback origin in this process: give them a smaller `--n`). Prints one
 * line per case: the median µs per iteration, the median above the empty loop and each round's.
 */
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Readable } from 'node:stream'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { WORKER_BUILD } from '../../test/helpers/build-worker'
import { cpuUs, ROOT, workerdPid } from './processes'
import { fmt, median } from './stats'

const { values: flags } = parseArgs({ options: { n: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '7' }, cases: { type: 'string' } } })
const N = Number(flags.n)
const ROUNDS = Number(flags.rounds)
const ALL = [
  'noop',
  'stringify',
  'log',
  'timer',
  'listener',
  'response',
  'responseHeadersRecord',
  'bodyArrayBuffer',
  'bodyReadAtLeast',
  'decoderNew',
  'decoderShared',
  'fetchArrayBuffer',
  'fetchReadAtLeast',
]
const cases = ['noop', ...(flags.cases?.split(',') ?? ALL).filter((c) => c !== 'noop')]

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }], structuredContent: { ok: true } } })
const origin = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body))
})
origin.keepAliveTimeout = 60_000
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))

const script = resolve(ROOT, 'dist/bench/worker-primitives-worker.js')
await build({ entryPoints: [resolve(ROOT, 'scripts/bench/worker-primitives-worker.ts')], outfile: script, ...WORKER_BUILD, logLevel: 'warning' })
const mf = new Miniflare({
  modules: true,
  scriptPath: script,
  compatibilityDate: '2026-04-20',
  bindings: { ORIGIN: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp` },
  host: '127.0.0.1',
  port: 0,
  handleRuntimeStdio(stdout: Readable, stderr: Readable) {
    stdout.resume()
    stderr.resume()
  },
})
const base = (await mf.ready).origin
const workerd = workerdPid(process.pid)

/** workerd's CPU per iteration of one request running `name` N times, µs. */
async function one(name: string): Promise<number> {
  const c0 = cpuUs(workerd)
  const r = await fetch(`${base}/${name}/${N}`, { method: 'POST' })
  if ((await r.text()) !== 'ok') throw new Error(`case ${name}: ${r.status}`)
  return (cpuUs(workerd) - c0) / N
}

for (const c of cases) await one(c)
const per = new Map(cases.map((c) => [c, [] as number[]]))
for (let r = 0; r < ROUNDS; r++) for (const c of r % 2 ? [...cases].reverse() : cases) per.get(c)!.push(await one(c))
process.stdout.write(`workerd CPU per iteration, ${N} iterations per request, ${ROUNDS} rounds\n`)
for (const c of cases) {
  const above = per.get(c)!.map((x, i) => x - per.get('noop')![i]!)
  process.stdout.write(
    `${c.padEnd(22)} ${fmt(median(per.get(c)!), 2).padStart(8)} µs   above the empty loop ${fmt(median(above), 2).padStart(7)}   (rounds ${above.map((x) => fmt(x, 1)).join(', ')})\n`
  )
}
await mf.dispose()
origin.close()
