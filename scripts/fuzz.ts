/**
 * `npm run fuzz -- --cases N [--target inprocess|node|worker] [--seed S] [--concurrency C]`: the
 * long run of the POST-path fuzz (test/helpers/post-fuzz.ts; docs/reliability.md). Prints progress
 * every 1% of the cases, then a summary (cases, failures, time, cases per second, cases per body
 * generator) and each failure with its seed and index; exits 1 on any failure, 2 on bad arguments.
 * `node` starts the Node edge in this process, `worker` the built Worker bundle in workerd under
 * Miniflare; both front a scripted HTTP origin on 127.0.0.1, and both are stopped before exit.
 * With `FUZZ_STDERR=1` workerd's stderr is shown (the Worker target). docs/reliability.md has the
 * figures of the long runs.
 */
import { parseArgs } from 'node:util'
import { startEdge } from '../src/adapters/node/index'
import { buildWorkerBundle } from '../test/helpers/build-worker'
import { FUZZ_VARS, httpTarget, inprocessTarget, runFuzz, startFuzzOrigin, type FuzzTarget } from '../test/helpers/post-fuzz'
import { MemoryKv } from '../src/stores/memory-kv'

function usage(msg: string): never {
  console.error(`${msg}\nusage: npm run fuzz -- --cases N [--target inprocess|node|worker] [--seed S] [--concurrency C]`)
  process.exit(2)
}

let values: Record<string, string | undefined>
try {
  values = parseArgs({
    options: { cases: { type: 'string', default: '10000' }, target: { type: 'string', default: 'inprocess' }, seed: { type: 'string' }, concurrency: { type: 'string' } },
  }).values as Record<string, string | undefined>
} catch (e) {
  usage(e instanceof Error ? e.message : String(e))
}
const cases = Number(values.cases)
if (!Number.isInteger(cases) || cases < 1) usage(`--cases must be a positive integer, got ${JSON.stringify(values.cases)}`)
const targetName = values.target!
if (!['inprocess', 'node', 'worker'].includes(targetName)) usage(`--target must be inprocess, node or worker, got ${JSON.stringify(targetName)}`)
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
if (!Number.isInteger(seed)) usage(`--seed must be an integer, got ${JSON.stringify(values.seed)}`)
const concurrency = values.concurrency === undefined ? (targetName === 'inprocess' ? 16 : 8) : Number(values.concurrency)
if (!Number.isInteger(concurrency) || concurrency < 1) usage(`--concurrency must be a positive integer, got ${JSON.stringify(values.concurrency)}`)

async function makeTarget(): Promise<FuzzTarget> {
  if (targetName === 'inprocess') return inprocessTarget()
  const origin = await startFuzzOrigin()
  if (targetName === 'node') {
    const edge = await startEdge({ env: { ORIGIN_URL: origin.url, STORE_FILE: 'memory', ...FUZZ_VARS }, port: 0, kv: new MemoryKv(), log: () => undefined })
    return httpTarget('node', edge.url, async () => {
      await edge.close()
      await origin.close()
    })
  }
  const { Miniflare } = await import('miniflare')
  const bundle = await buildWorkerBundle()
  const mf = new Miniflare({
    modules: true,
    scriptPath: bundle,
    compatibilityDate: '2026-04-20',
    kvNamespaces: ['TOOL_SCHEMAS'],
    bindings: { ORIGIN_URL: origin.url, ...FUZZ_VARS },
    host: '127.0.0.1',
    port: 0,
    handleRuntimeStdio: (o: NodeJS.ReadableStream, e: NodeJS.ReadableStream) => (o.resume(), e.on('data', (d: Buffer) => process.env.FUZZ_STDERR && process.stderr.write(d))),
  })
  const base = await mf.ready
  return httpTarget(
    'worker',
    new URL('/mcp', base).toString(),
    async () => {
      await mf.dispose()
      await origin.close()
    },
    { freshConnections: true }
  )
}

const target = await makeTarget()
console.log(`fuzz: ${cases} cases against ${targetName}, seed ${seed}, concurrency ${concurrency}`)
const summary = await runFuzz(target, {
  cases,
  seed,
  concurrency,
  onFailure: (f) => console.log(`  FAIL seed ${seed} index ${f.index} [${f.kind}, origin ${f.behaviour}]: ${f.reason}`),
  progress: (done, failures, ms) => console.log(`  ${done}/${cases} cases, ${failures} failures, ${(ms / 1000).toFixed(0)} s (${Math.round(done / (ms / 1000))} cases/s)`),
})
await target.close()
const secs = summary.ms / 1000
console.log(
  `summary: target ${summary.target}, seed ${summary.seed}: ${summary.cases} cases, ${summary.failures.length} failures, ${secs.toFixed(1)} s (${Math.round(summary.cases / secs)} cases/s)`
)
console.log(`  late under load and sent again alone: ${summary.lateRetried} (each a failure if late again)`)
console.log(
  `  by generator: ${Object.entries(summary.kinds)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`
)
for (const f of summary.failures)
  console.log(`  FAIL seed ${summary.seed} index ${f.index} [${f.kind}, origin ${f.behaviour}]: ${f.reason}\n    headers ${JSON.stringify(f.headers)}\n    body ${f.body}`)
process.exit(summary.failures.length ? 1 : 0)
