/**
 * The edge under test on Workers: the built Worker bundle (`BENCH_WORKER_BUNDLE`) in workerd under
 * plain Miniflare, with the Workers engine (@cfworker/json-schema), `fetch` to the origin and the
 * local KV binding `TOOL_SCHEMAS`. The Worker's `console.log` lines are drained and dropped.
 * `BENCH_TOOLS` (JSON array of MCP tool entries) is written to KV before the first request,
 * as records produced by the real registry, for the default origin and every origin named in
 * `EDGE_ORIGINS` (the reply-size rows). Requests go straight to workerd's socket.
 * Variables: every `EDGE_*` environment variable becomes a Worker var without the prefix.
 *
 * The same workerd also runs the bare Worker (`BENCH_BARE_WORKER`, scripts/bench/bare-worker.ts)
 * three times, forwarding to `BENCH_ORIGIN_BASE` behind the same Miniflare entry as the edge: on
 * the route `127.0.0.1/bare*` as is (context), on `127.0.0.1/floor-parse/*` as the Workers parse
 * floor and on `127.0.0.1/floor-validate/*` as the Workers validating floor (with `BENCH_TOOLS`).
 * `BENCH_LOOP` (the bundle of scripts/bench/worker-loop.ts) runs the edge inside that loop Worker
 * (the edge bundle as its module `./edge.js`), for CPU per call measured inside the isolate.
 * `BENCH_INSPECTOR_PORT` opens workerd's inspector on that port (Chrome DevTools Protocol, one
 * WebSocket per worker at `/core:user:<name>`: scripts/bench/worker-profile.ts takes CPU profiles there).
 * IPC: sends `{ url, bareUrl, parseUrl, validateUrl }` when ready (the floors' URLs end in their
 * prefix; append the origin path).
 */
import { Miniflare } from 'miniflare'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Readable } from 'node:stream'
import { ToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../src/validators/cfworker'

const bindings: Record<string, string> = {}
for (const [k, v] of Object.entries(process.env)) if (k.startsWith('EDGE_') && v !== undefined) bindings[k.slice(5)] = v
const bare = process.env.BENCH_BARE_WORKER
const bundle = process.env.BENCH_WORKER_BUNDLE!
const loop = process.env.BENCH_LOOP
const edgeScript = loop
  ? {
      modulesRoot: dirname(loop),
      modules: [
        { type: 'ESModule' as const, path: loop, contents: readFileSync(loop, 'utf8') },
        { type: 'ESModule' as const, path: join(dirname(loop), 'edge.js'), contents: readFileSync(bundle, 'utf8') },
      ],
    }
  : { modules: true, scriptPath: bundle }
if (loop) bindings.BENCH_ORIGIN_BASE = process.env.BENCH_ORIGIN_BASE ?? ''
const mf = new Miniflare({
  workers: [
    { name: 'edge', ...edgeScript, compatibilityDate: '2026-04-20', kvNamespaces: ['TOOL_SCHEMAS'], bindings },
    ...(bare
      ? [
          {
            name: 'bare',
            modules: true,
            scriptPath: bare,
            compatibilityDate: '2026-04-20',
            bindings: { ORIGIN_BASE: process.env.BENCH_ORIGIN_BASE ?? '', BARE_BODY: process.env.BENCH_BARE_BODY ?? 'whole' },
            routes: ['127.0.0.1/bare*'],
          },
          ...(
            [
              ['parse', '/floor-parse'],
              ['validate', '/floor-validate'],
            ] as const
          ).map(([mode, prefix]) => ({
            name: `floor-${mode}`,
            modules: true,
            scriptPath: bare,
            compatibilityDate: '2026-04-20',
            bindings: { ORIGIN_BASE: process.env.BENCH_ORIGIN_BASE ?? '', BARE_BODY: mode, PREFIX: prefix, TOOLS: process.env.BENCH_TOOLS ?? '[]' },
            routes: [`127.0.0.1${prefix}/*`],
          })),
        ]
      : []),
  ],
  host: '127.0.0.1',
  port: 0,
  ...(process.env.BENCH_INSPECTOR_PORT ? { inspectorPort: Number(process.env.BENCH_INSPECTOR_PORT) } : {}),
  handleRuntimeStdio(stdout: Readable, stderr: Readable) {
    stdout.resume()
    stderr.resume()
  },
})
const base = await mf.ready
const tools = JSON.parse(process.env.BENCH_TOOLS ?? '[]') as unknown[]
const scratchKv = new MemoryKv()
const scratch = new ToolRegistry({ kv: scratchKv, engine: createCfworkerEngine(), schemaTtlS: 3600, validatorCacheSize: 1, refreshMinIntervalMs: 0 })
for (const origin of ['default', ...Object.keys(JSON.parse(bindings.ORIGINS ?? '{}') as object)]) await scratch.learn(origin, 'public', tools, '2025-06-18')
const kv = await mf.getKVNamespace('TOOL_SCHEMAS', 'edge')
// Written as an operator's `wrangler kv` push would be: without `fetchedAt`, so the records are
// never stale and a rejection is not rechecked against the bench origin (which only answers calls).
for (const key of await scratchKv.keys()) {
  const record = JSON.parse((await scratchKv.get(key))!) as Record<string, unknown>
  delete record.fetchedAt
  await kv.put(key, JSON.stringify(record))
}
process.send!({
  url: new URL('/mcp', base).toString(),
  bareUrl: new URL('/bare', base).toString(),
  parseUrl: new URL('/floor-parse', base).toString(),
  validateUrl: new URL('/floor-validate', base).toString(),
})
process.on('disconnect', () => {
  void mf.dispose().finally(() => process.exit(0))
})
