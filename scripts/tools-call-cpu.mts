import { resolve } from 'node:path'
/**
 * CPU time of one `tools/call` decision with a fresh tool in memory (the hot path of stage 5:
 * `validateToolsCall` -> `ToolRegistry.cached` -> the compiled validator), in process, no I/O:
 * nanoseconds of CPU per decision (process.cpuUsage), median of 7 runs of N decisions each, for
 * valid arguments (forwarded) and for invalid ones (answered locally, the rejection body cached),
 * and for `registry.cached` alone. Point it at two checkouts to compare a change with its base:
 *   taskset -c 0 node --import tsx scripts/tools-call-cpu.mts /path/to/base 200000
 *   taskset -c 0 node --import tsx scripts/tools-call-cpu.mts . 200000
 * The whole POST in process is scripts/core-cpu.mts; end-to-end figures are `npm run bench`'s.
 */
const root = process.argv[2] ?? '.'
const N = Number(process.argv[3] ?? 200000)
const { ToolRegistry } = await import(`${resolve(root)}/src/core/validation/tool-registry.ts`)
const { validateToolsCall } = await import(`${resolve(root)}/src/core/validation/tools-call.ts`)
const { MemoryKv } = await import(`${resolve(root)}/src/stores/memory-kv.ts`)
const { createAjvEngine } = await import(`${resolve(root)}/src/validators/ajv.ts`)

const registry = new ToolRegistry({ kv: new MemoryKv(), engine: createAjvEngine(), schemaTtlS: 3600, validatorCacheSize: 1000, refreshMinIntervalMs: 1000 })
const schema = { type: 'object', properties: { city: { type: 'string' }, units: { enum: ['c', 'f'] } }, required: ['city'], additionalProperties: false }
await registry.learn('default', 'public', [{ name: 'weather', inputSchema: schema }], '2025-06-18')
const ctx = {
  registry,
  originId: 'default',
  scope: 'public',
  era: '2025-06-18',
  config: { invalidArgs: 'auto', unknownTool: 'reject', onSchemaError: 'forward', schemaRecheckMs: 3_600_000 },
  pull: async () => {
    throw new Error('no pull in this measurement')
  },
}
const valid = { name: 'weather', arguments: { city: 'Oslo', units: 'c' } }
const invalid = { name: 'weather', arguments: { city: 7, units: 'k' } }

function decide(params: object, kind: 'forward' | 'call'): void {
  const v = validateToolsCall(1, params as Record<string, unknown>, ctx, 60)
  if (v instanceof Promise || v.kind !== kind) throw new Error(`expected a synchronous ${kind} verdict`)
}
function run(fn: () => void, n: number): number {
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) fn()
  const d = process.cpuUsage(t0)
  return ((d.user + d.system) * 1000) / n
}
const cases: Record<string, () => void> = {
  valid: () => decide(valid, 'forward'),
  rejected: () => decide(invalid, 'call'),
  cached: () => {
    if (!registry.cached('default', 'public', 'weather')) throw new Error('not held')
  },
}
for (const fn of Object.values(cases)) run(fn, 20000)
const out: Record<string, number[]> = { valid: [], rejected: [], cached: [] }
for (let r = 0; r < 7; r++) for (const [k, fn] of Object.entries(cases)) out[k]!.push(run(fn, N))
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
console.log(JSON.stringify({ root, validNs: Math.round(med(out.valid!)), rejectedNs: Math.round(med(out.rejected!)), cachedNs: Math.round(med(out.cached!)) }))
process.exit(0)
