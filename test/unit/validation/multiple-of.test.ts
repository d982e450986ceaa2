/**
 * `multipleOf` (src/validators/numbers.ts, used by both engines): exact decimal verdicts, and a
 * cost per number that does not grow with the gap between the exponents of value and divisor
 * (`1.797e308` against `5e-324` built 10^632 per number: 25-36 us, 4-6 s for a 4 MiB body).
 */
import { describe, expect, it } from 'vitest'
import { isMultipleOf } from '../../../src/validators/numbers'
import { createAjvEngine } from '../../../src/validators/ajv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'

/** The unbounded reference: both decimals as BigInts, the powers of ten built. */
function reference(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  const dec = (x: number): [bigint, number] => {
    const [c = '0', e = '0'] = Math.abs(x).toString().split('e')
    const p = c.indexOf('.')
    return [BigInt(c.replace('.', '')), Number(e) - (p === -1 ? 0 : c.length - p - 1)]
  }
  const [vc, ve] = dec(value)
  const [dc, de] = dec(divisor)
  const d = ve - de
  return d >= 0 ? (vc * 10n ** BigInt(d)) % dc === 0n : vc % (dc * 10n ** BigInt(-d)) === 0n
}

/** CPU time (process.cpuUsage) of `fn`, in ms. */
function cpuMs(fn: () => void): number {
  const c0 = process.cpuUsage()
  fn()
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / 1000
}

describe('multipleOf', () => {
  it('gives the exact decimal verdict of the unbounded check for values and divisors of every exponent', () => {
    let x = 987654321
    const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
    const pick = (): number => {
      const k = rnd()
      if (k < 0.2) return [5e-324, 3e-323, 1e-308, 1.7976931348623157e308, 1e308, 0.01, 0.5, 2.5e-7, 1e21, 1.5e300][Math.floor(rnd() * 10)]!
      if (k < 0.5) return Math.floor(rnd() * 1000) * 10 ** Math.floor(rnd() * 640 - 324)
      return Number((rnd() * 100).toPrecision(1 + Math.floor(rnd() * 17))) * 10 ** Math.floor(rnd() * 60 - 30)
    }
    const pairs: [number, number][] = [
      [1.7976931348623157e308, 5e-324],
      [1.7976931348623157e308, 3e-323],
      [1e308, 1e-308],
      [1.2345678901234567e-300, 7e-324],
      [0, 5e-324],
      [5e-324, 1e308],
      [19.99, 0.01],
      [1e21, 3],
      [4.5e-7, 1.5e-7],
    ]
    for (let i = 0; i < 20_000; i++) pairs.push([pick(), pick()])
    for (const [v, d] of pairs) {
      if (!Number.isFinite(v) || !Number.isFinite(d) || d <= 0) continue
      expect([v, d, isMultipleOf(v, d)]).toEqual([v, d, reference(v, d)])
      expect([-v, d, isMultipleOf(-v, d)]).toEqual([-v, d, reference(-v, d)])
    }
  })

  it('costs about the same per number whatever the exponents (1.797e308 against 5e-324 as 12.34 against 0.01)', () => {
    const n = 40_000
    // Interleaved rounds, so a busy machine slows both sides alike; the figure is the least of 3.
    const wide: number[] = []
    const plain: number[] = []
    for (let r = 0; r < 3; r++) {
      wide.push(
        cpuMs(() => {
          for (let i = 0; i < n; i++) isMultipleOf(1.7976931348623157e308, 5e-324)
        })
      )
      plain.push(
        cpuMs(() => {
          for (let i = 0; i < n; i++) isMultipleOf(12.34, 0.01)
        })
      )
    }
    const w = Math.min(...wide)
    const p = Math.min(...plain)
    console.log(`[multipleOf] ${n} numbers: 1.797e308 / 5e-324 ${w.toFixed(0)} ms CPU, 12.34 / 0.01 ${p.toFixed(0)} ms CPU`)
    expect(w).toBeLessThan(2 * p + 10)
  })

  it('a 4 MiB body of 1.797e308 against multipleOf 5e-324 validates in under 600 ms of CPU on both engines (was 0.8-6 s)', { timeout: 30_000 }, () => {
    const schema = { type: 'object', properties: { l: { type: 'array', items: { multipleOf: 5e-324 } } } }
    const args = { l: Array.from({ length: Math.floor((4 * 1024 * 1024) / 24) }, () => 1.7976931348623157e308) }
    for (const [name, engine] of [
      ['ajv', createAjvEngine()],
      ['cfworker', createCfworkerEngine()],
    ] as const) {
      const v = engine.compile(schema, '2020-12')
      v({ l: [1] })
      const ms = cpuMs(() => expect(v(args)).toBeNull())
      console.log(`[multipleOf] ${args.l.length} x 1.797e308, ${name}: ${ms.toFixed(0)} ms CPU`)
      expect(ms).toBeLessThan(600)
    }
  })
})
