/**
 * CPU time of a forwarded call in process, with the real origin client: handlePost for a valid
 * tools/call (the benchmark's 10-property tool) sent through the checkout's undici origin client
 * to the benchmark origin (scripts/bench/origin.ts, started in a child process on CPU 1), 16 calls
 * in flight; median of 5 runs of N calls, in microseconds of CPU of this process
 * (process.cpuUsage). No HTTP server in front, so what it shows is the core plus the origin
 * client, the part `scripts/core-cpu.mts` (an origin that answers in memory) leaves out.
 * Point it at two checkouts to compare a change with its base, each run several times (one
 * process can land in a slower garbage-collection regime than the next; add `--trace-gc-nvp` to
 * the node flags and read `promoted=` to see which):
 *   taskset -c 0 node --import tsx scripts/forward-cpu.mts /path/to/base 8000
 *   taskset -c 0 node --import tsx scripts/forward-cpu.mts . 8000
 * Works with checkouts from before the library layout (src/adapters/node/index.ts `nodeDeps`).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
// The standalone server's engine (tiered: cfworker, then ajv); the package's Node build defaults to cfworker alone since the library split.
const tieredEngine = async () =>
  existsSync(`${root}/src/exports/engines/tiered.ts`) ? { engine: (await import(`${root}/src/exports/engines/tiered.ts`)).createTieredAjvEngine() } : {}
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(process.argv[2] ?? '.')
const N = Number(process.argv[3] ?? 8000)
const here = dirname(fileURLToPath(import.meta.url))
const origin = spawn('taskset', ['-c', '1', process.execPath, '--import', 'tsx', 'scripts/bench/origin.ts'], {
  cwd: resolve(here, '..'),
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
})
const port: number = await new Promise((done, fail) => {
  origin.once('message', (m) => done((m as { port: number }).port))
  origin.once('exit', (code) => fail(new Error(`the benchmark origin exited (${code})`)))
})
try {
  const { handlePost, originTarget } = await import(`${root}/src/core/pipeline.ts`)
  const { MemoryKv } = await import(`${root}/src/stores/memory-kv.ts`)
  const { createUndiciOriginClient } = await import(`${root}/src/adapters/node/origin-client.ts`)
  const { TOOLS } = await import('./bench/schemas')
  const tool = TOOLS.find((t: { size: number }) => t.size === 10)!
  const env = { ORIGIN_URL: `http://127.0.0.1:${port}/mcp`, ALLOWED_HOSTS: 'localhost', STORE_FILE: 'memory', SCHEMA_RECHECK_MS: '3600000' }
  const client = createUndiciOriginClient()
  const deps = existsSync(`${root}/src/adapters/node/node-edge.ts`)
    ? (await import(`${root}/src/adapters/node/node-edge.ts`)).mcpEdge({ env, store: new MemoryKv(), ...(await tieredEngine()), originClient: client, logger: () => undefined })
        .deps
    : (await import(`${root}/src/adapters/node/index.ts`)).nodeDeps((await import(`${root}/src/core/config.ts`)).loadConfig(env), {
        kv: new MemoryKv(),
        origin: client,
        log: () => undefined,
        env,
      })
  await deps.registry.learn('default', 'public', [{ name: tool.name, inputSchema: tool.inputSchema }], '2025-06-18')
  const target = originTarget(deps.config, undefined)!
  const headers = new Headers({ host: 'localhost:8787', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' })
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: tool.valid } })
  const run = async (n: number): Promise<number> => {
    const t0 = process.cpuUsage()
    let started = 0
    const lane = async () => {
      while (started++ < n) {
        const r = await handlePost(body, headers, target, deps)
        if (typeof r.body !== 'string' || !r.body.includes('"result"')) throw new Error('the call was not forwarded and answered')
      }
    }
    await Promise.all(Array.from({ length: 16 }, lane))
    const d = process.cpuUsage(t0)
    return (d.user + d.system) / n
  }
  await run(Math.min(5000, N))
  const runs: number[] = []
  for (let r = 0; r < 5; r++) runs.push(await run(N))
  const median = [...runs].sort((a, b) => a - b)[2]!
  console.log(JSON.stringify({ root, forwardedUs: median.toFixed(1), runs: runs.map((x) => Number(x.toFixed(1))) }))
} finally {
  origin.kill('SIGKILL')
}
process.exit(0)
