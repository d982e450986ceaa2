import { resolve } from 'node:path'
/**
 * CPU time of the core per POST, in process (no sockets): admitPost + handlePost for a valid
 * tools/call (forwarded to an origin client that answers at once) and for one with invalid
 * arguments (answered locally), median of 5 runs of N calls each, in microseconds of CPU
 * (process.cpuUsage, so a busy machine distorts it less than wall time). Point it at two checkouts
 * to compare a change with its base:
 *   node --import tsx scripts/core-cpu.mts /path/to/base 20000
 *   node --import tsx scripts/core-cpu.mts . 20000
 * The end-to-end figures are `npm run bench`'s (BENCHMARKS.md).
 */
const root = process.argv[2] ?? '.'
const N = Number(process.argv[3] ?? 20000)
const { existsSync } = await import('node:fs')
const { admitPost, handlePost, originTarget } = await import(`${resolve(root)}/src/core/pipeline.ts`)
const { MemoryKv } = await import(`${resolve(root)}/src/stores/memory-kv.ts`)
const env = { ORIGIN_URL: 'http://127.0.0.1:1/mcp', ALLOWED_HOSTS: 'localhost', STORE_FILE: 'memory' }
const reply = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}'
const origin = async () => ({ status: 200, headers: { 'content-type': 'application/json' }, text: async () => reply, stream: () => null, discard: () => undefined })
// The Node build's deps as the edge builds them (mcpEdge since the library layout; nodeDeps before it).
// The standalone server's engine (tiered: cfworker, then ajv); the package's Node build defaults to cfworker alone since the library split.
const tieredEngine = async () =>
  existsSync(`${resolve(root)}/src/exports/engines/tiered.ts`) ? { engine: (await import(`${resolve(root)}/src/exports/engines/tiered.ts`)).createTieredAjvEngine() } : {}
const deps = existsSync(`${resolve(root)}/src/adapters/node/node-edge.ts`)
  ? (await import(`${resolve(root)}/src/adapters/node/node-edge.ts`)).mcpEdge({
      env,
      store: new MemoryKv(),
      ...(await tieredEngine()),
      originClient: origin,
      logger: () => undefined,
    }).deps
  : (await import(`${resolve(root)}/src/adapters/node/index.ts`)).nodeDeps((await import(`${resolve(root)}/src/core/config.ts`)).loadConfig(env), {
      kv: new MemoryKv(),
      origin,
      log: () => undefined,
      env,
    })
const config = deps.config
const schema = { type: 'object', properties: { city: { type: 'string' }, units: { enum: ['c', 'f'] } }, required: ['city'], additionalProperties: false }
await deps.registry.learn('default', 'public', [{ name: 'weather', inputSchema: schema }], '2025-06-18')
const target = originTarget(config, undefined)!
const headers = new Headers({ host: 'localhost:8787', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' })
const valid = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'weather', arguments: { city: 'Oslo', units: 'c' } } })
const invalid = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'weather', arguments: { city: 7, units: 'k' } } })
async function run(body: string, n: number): Promise<number> {
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    if (admitPost(headers, target, deps) !== null) throw new Error('refused')
    await handlePost(body, headers, target, deps)
  }
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}
await run(valid, 3000)
await run(invalid, 3000)
const out: Record<string, number[]> = { valid: [], rejected: [] }
for (let r = 0; r < 5; r++) {
  out.valid!.push(await run(valid, N))
  out.rejected!.push(await run(invalid, N))
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
console.log(JSON.stringify({ root, validUs: med(out.valid!).toFixed(2), rejectedUs: med(out.rejected!).toFixed(2), runs: out }))
process.exit(0)
