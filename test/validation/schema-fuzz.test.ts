/**
 * A short seeded run of the schema fuzz (test/helpers/schema-fuzz.ts; the long run is
 * `npm run fuzz:schemas`, figures in docs/reliability.md): random schemas built from the
 * JSON-Schema-Test-Suite's schemas x random and hostile arguments, through the edge's gate and both
 * engines. Every validation must return (no engine throws on a call), and the two engines must
 * give one verdict on every schema the gate lets through. The slowest validation is printed (wall
 * and CPU); its bound is asserted where it can be measured without flaking, in
 * test/unit/validation/validation-cost.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { runSchemaFuzz } from '../helpers/schema-fuzz'

const SEED = Number(process.env.SCHEMA_FUZZ_SEED ?? 2121)
const CASES = Number(process.env.SCHEMA_FUZZ_CASES ?? 150)

describe('schema fuzz (short seeded run)', () => {
  it(`${CASES} random schemas from the suite's keywords x hostile arguments: no fault, one verdict on both engines`, () => {
    const r = runSchemaFuzz(CASES, SEED)
    console.log(
      `[schema-fuzz seed ${SEED}] ${r.cases} schemas, ${r.refusedAtIngest} refused at ingest, ${r.validations} validations; slowest wall: ` +
        Object.entries(r.slowest)
          .map(([e, s]) => `${e} ${s.ms.toFixed(1)} ms (${s.cpuMs.toFixed(1)} ms CPU, ${s.argsBytes} bytes of arguments)`)
          .join(', ') +
        '; slowest CPU: ' +
        Object.entries(r.slowestCpu)
          .map(([e, s]) => `${e} ${s.cpuMs.toFixed(1)} ms`)
          .join(', ')
    )
    expect(r.faults).toEqual([])
    expect(r.disagreements.map((d) => ({ index: d.index, valid: d.valid, schema: JSON.stringify(d.schema).slice(0, 300) }))).toEqual([])
    expect(r.validations).toBeGreaterThan(CASES)
    // The gate refuses some schemas (embedded $id resources, unresolvable $refs ...), never all.
    expect(r.refusedAtIngest).toBeLessThan(CASES / 2)
  })
})
