/**
 * `npm run fuzz:schemas -- --cases N [--seed S]`: the long run of the schema fuzz
 * (test/helpers/schema-fuzz.ts; docs/reliability.md): random schemas built from the
 * JSON-Schema-Test-Suite's schemas x random and hostile arguments, through the edge's gate and both
 * engines (ajv and @cfworker/json-schema) in this process. Prints progress every 10% of the cases,
 * then the summary: cases, refused at ingest (with the reasons counted), validations, the slowest
 * validation per engine (wall and CPU ms, with its case index and argument size), every fault and
 * every disagreement with its seed and index. Exits 1 on a fault or a disagreement, 2 on bad arguments.
 */
import { parseArgs } from 'node:util'
import { runSchemaFuzz } from '../test/helpers/schema-fuzz'

function usage(msg: string): never {
  console.error(`${msg}\nusage: npm run fuzz:schemas -- --cases N [--seed S]`)
  process.exit(2)
}

let values: Record<string, string | undefined>
try {
  values = parseArgs({ options: { cases: { type: 'string', default: '5000' }, seed: { type: 'string' } } }).values as Record<string, string | undefined>
} catch (e) {
  usage(e instanceof Error ? e.message : String(e))
}
const cases = Number(values.cases)
if (!Number.isInteger(cases) || cases < 1) usage(`--cases must be a positive integer, got ${JSON.stringify(values.cases)}`)
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
if (!Number.isInteger(seed)) usage(`--seed must be an integer, got ${JSON.stringify(values.seed)}`)

const t0 = performance.now()
const step = Math.max(1, Math.floor(cases / 10))
const r = runSchemaFuzz(cases, seed, (done) => {
  if (done % step === 0) console.log(`${done}/${cases} (${((performance.now() - t0) / 1000).toFixed(1)} s)`)
})
console.log(
  `seed ${seed}: ${r.cases} schemas, ${r.refusedAtIngest} refused at ingest, refused by an engine: ${JSON.stringify(r.refusedByEngine)}, ${r.validations} validations in ${((performance.now() - t0) / 1000).toFixed(1)} s`
)
for (const [reason, n] of Object.entries(r.reasons).sort((a, b) => b[1] - a[1])) console.log(`  ${n} x ${reason}`)
for (const [e, s] of Object.entries(r.slowest))
  console.log(`slowest on ${e} (wall): ${s.ms.toFixed(1)} ms (${s.cpuMs.toFixed(1)} ms CPU), case ${s.index}, ${s.argsBytes} bytes of arguments`)
for (const [e, s] of Object.entries(r.slowestCpu))
  console.log(`slowest on ${e} (CPU): ${s.cpuMs.toFixed(1)} ms (${s.ms.toFixed(1)} ms wall), case ${s.index}, ${s.argsBytes} bytes of arguments`)
for (const f of r.faults) console.log(`FAULT seed ${seed} case ${f.index} ${f.engine}: ${f.error}`)
for (const d of r.disagreements) console.log(`DISAGREEMENT seed ${seed} case ${d.index}: ${JSON.stringify(d.valid)} schema ${JSON.stringify(d.schema).slice(0, 500)}`)
process.exit(r.faults.length || r.disagreements.length ? 1 : 0)
