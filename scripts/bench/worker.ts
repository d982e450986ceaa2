/**
 * The edge under test on Workers: the built Worker bundle (`BENCH_WORKER_BUNDLE`) in workerd under
 * plain Miniflare, with the Workers engine (@cfworker/json-schema), `fetch` to the origin and the
 * local KV binding `TOOL_SCHEMAS`. The Worker's `console.log` lines are drained and dropped.
 * `BENCH_TOOLS` (JSON array of MCP tool entries) is written to KV before the first request,
 * as records produced by the real registry. Requests go straight to workerd's socket.
 * Variables: every `EDGE_*` environment variable becomes a Worker var without the prefix.
 * IPC: sends `{ url }` when ready.
 */
import { Miniflare } from 'miniflare'
import type { Readable } from 'node:stream'
import { ToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../src/validators/cfworker'

const bindings: Record<string, string> = {}
for (const [k, v] of Object.entries(process.env)) if (k.startsWith('EDGE_') && v !== undefined) bindings[k.slice(5)] = v
const mf = new Miniflare({
  modules: true,
  scriptPath: process.env.BENCH_WORKER_BUNDLE!,
  compatibilityDate: '2026-04-20',
  kvNamespaces: ['TOOL_SCHEMAS'],
  bindings,
  host: '127.0.0.1',
  port: 0,
  handleRuntimeStdio(stdout: Readable, stderr: Readable) {
    stdout.resume()
    stderr.resume()
  },
})
const base = await mf.ready
const tools = JSON.parse(process.env.BENCH_TOOLS ?? '[]') as unknown[]
const scratchKv = new MemoryKv()
const scratch = new ToolRegistry({ kv: scratchKv, engine: createCfworkerEngine(), schemaTtlS: 3600, validatorCacheSize: 1, refreshMinIntervalMs: 0 })
await scratch.learn('default', 'public', tools, '2025-06-18')
const kv = await mf.getKVNamespace('TOOL_SCHEMAS')
// Written as an operator's `wrangler kv` push would be: without `fetchedAt`, so the records are
// never stale and a rejection is not rechecked against the bench origin (which only answers calls).
for (const key of await scratchKv.keys()) {
  const record = JSON.parse((await scratchKv.get(key))!) as Record<string, unknown>
  delete record.fetchedAt
  await kv.put(key, JSON.stringify(record))
}
process.send!({ url: new URL('/mcp', base).toString() })
process.on('disconnect', () => {
  void mf.dispose().finally(() => process.exit(0))
})
