/**
 * The edge under test on Node: `startEdge` (undici origin client, ajv, @hono/node-server) with an
 * in-memory KV and the real batched stdout logger (the parent points stdout at /dev/null, so
 * logging is paid for as in production). Origins come from the environment (`ORIGIN_URL`,
 * `ORIGINS`, `VALIDATOR_CACHE_SIZE`, ...).
 *
 * Schemas are seeded before the edge serves, so no `tools/list` pull happens:
 * `BENCH_TOOLS` is a JSON array of MCP tool entries (or `BENCH_TOOLS_FILE` a file holding it); `BENCH_SEED=learn` stores them through
 * `registry.learn` (memory and KV, as after a `tools/list` passed through), `BENCH_SEED=kv`
 * writes only the KV records (the cold path: first call reads KV and compiles).
 *
 * `BENCH_LOG=off` replaces the logger with a no-op (for profiling only; the benchmark logs).
 *
 * IPC: sends `{ port }` when listening; answers `{ cmd: 'stats' }` with memory and registry
 * counters (after a full garbage collection when the process runs with `--expose-gc`), and
 * `{ cmd: 'lookup' }` with the time of the hot-path tool lookup (`registry.cached`), in
 * nanoseconds per lookup, over every seeded tool name in turn (the tools-held axis);
 * and the profiler commands of scripts/bench/profile-ipc.ts (`npm run bench -- --profile`).
 */
import { readFileSync } from 'node:fs'
import { startEdge } from '../../src/adapters/node/index'
import { ToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createAjvEngine } from '../../src/validators/ajv'
import { profileCommand } from './profile-ipc'

const kv = new MemoryKv()
const tools = JSON.parse(process.env.BENCH_TOOLS_FILE ? readFileSync(process.env.BENCH_TOOLS_FILE, 'utf8') : (process.env.BENCH_TOOLS ?? '[]')) as unknown[]
const origins = ['default', ...Object.keys(JSON.parse(process.env.ORIGINS ?? '{}') as object)]
if (process.env.BENCH_SEED === 'kv') {
  // Records exactly as the registry writes them, produced by a throw-away registry.
  const scratch = new ToolRegistry({ kv, engine: createAjvEngine(), schemaTtlS: 3600, validatorCacheSize: 1, refreshMinIntervalMs: 0 })
  for (const o of origins) await scratch.learn(o, 'public', tools, '2025-06-18')
}
// SCHEMA_RECHECK_MS: a rejection by a schema older than 30 s would first be confirmed by a
// tools/list pull, which the bench origin (it answers only calls) cannot serve; the records are
// treated as fresh for the run instead, as the Worker's are (scripts/bench/worker.ts).
const edge = await startEdge({
  env: { SCHEMA_RECHECK_MS: '3600000', ...process.env, STORE_FILE: 'memory', SCHEMA_TTL_S: '3600' },
  port: 0,
  kv,
  ...(process.env.BENCH_LOG === 'off' ? { log: () => undefined } : {}),
})
if (process.env.BENCH_SEED !== 'kv') for (const o of origins) await edge.deps.registry.learn(o, 'public', tools, '2025-06-18')

const names = (tools as { name?: unknown }[]).map((t) => t.name).filter((n): n is string => typeof n === 'string')

/** ns per `registry.cached` call, over `names` in turn for at least 200 ms (after a warm pass). */
function lookupNs(): number {
  const reg = edge.deps.registry
  if (names.length === 0) return NaN
  for (const n of names) reg.cached('default', 'public', n)
  let calls = 0
  const t0 = process.hrtime.bigint()
  let t = t0
  while (t - t0 < 200_000_000n) {
    for (const n of names) if (reg.cached('default', 'public', n) === undefined) throw new Error(`tool ${n} not held in memory`)
    calls += names.length
    t = process.hrtime.bigint()
  }
  return Number(t - t0) / calls
}

process.on('message', (m: { cmd?: string }) => {
  if (m.cmd === 'lookup') return void process.send!({ ns: lookupNs() })
  if (profileCommand(m)) return
  if (m.cmd === 'stats') {
    ;(globalThis as { gc?: () => void }).gc?.()
    const reg = edge.deps.registry as unknown as { compiledCount: number; stats: object; memory: Map<string, unknown> }
    process.send!({ rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed, compiled: reg.compiledCount, memoryEntries: reg.memory.size, ...reg.stats })
  }
})
process.send!({ port: edge.port })
process.on('disconnect', () => process.exit(0))
