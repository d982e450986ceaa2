/**
 * Validation micro-benchmark: validations per second per engine (ajv, @cfworker/json-schema, both
 * through the edge's own engine adapters, so issue normalisation is included for failures) and
 * schema size, for passing and failing arguments. Runs in its own process (pinned by the parent);
 * prints one JSON array on stdout. `BENCH_MICRO_MS` is the measuring time per cell.
 */
import type { ValidatorEngine } from '../../src/core/ports'
import { createAjvEngine } from '../../src/validators/ajv'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { TOOLS } from './schemas'

const ms = Number(process.env.BENCH_MICRO_MS ?? 500)

function rate(fn: () => unknown): number {
  for (let i = 0; i < 2000; i++) fn() // warm-up (JIT)
  let n = 0
  const t0 = process.hrtime.bigint()
  const end = t0 + BigInt(ms) * 1_000_000n
  let now = t0
  while (now < end) {
    for (let i = 0; i < 200; i++) fn()
    n += 200
    now = process.hrtime.bigint()
  }
  return n / (Number(now - t0) / 1e9)
}

const out: { engine: string; size: number; validPerS: number; invalidPerS: number; compileMs: number }[] = []
for (const make of [createAjvEngine, createCfworkerEngine] as (() => ValidatorEngine)[]) {
  const engine = make()
  for (const t of TOOLS) {
    const c0 = process.hrtime.bigint()
    const v = engine.compile(t.inputSchema, 'draft-07')
    const compileMs = Number(process.hrtime.bigint() - c0) / 1e6
    if (v(t.valid) !== null || v(t.invalid) === null) throw new Error(`${engine.name}: wrong verdict for ${t.name}`)
    out.push({ engine: engine.name, size: t.size, validPerS: rate(() => v(t.valid)), invalidPerS: rate(() => v(t.invalid)), compileMs })
  }
}
process.stdout.write(JSON.stringify(out) + '\n')
