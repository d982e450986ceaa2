/**
 * @module validators/numbers
 * `multipleOf` on the decimal values written in JSON, shared by both engines.
 *
 * Own code, because ajv's check divides in binary floating point (`x / d !== parseInt(x / d)`),
 * which refuses 19.99 as a multiple of 0.01 and fails for numbers of 1e21 and above, while
 * @cfworker/json-schema compares exact decimals. A tool author who writes `multipleOf: 0.01`
 * means cents, so the exact decimal check is the shared behaviour: the cfworker engine already
 * does it, and the ajv engine gets this function as its `multipleOf` keyword.
 */

/** A finite number as an exact decimal: coefficient x 10^exponent (from its shortest text form). */
function decimal(value: number): [bigint, number] {
  const [coefficient = '0', exponent = '0'] = Math.abs(value).toString().split('e')
  const point = coefficient.indexOf('.')
  const fractionLength = point === -1 ? 0 : coefficient.length - point - 1
  return [BigInt(coefficient.replace('.', '')), Number(exponent) - fractionLength]
}

/** Divisors as decimals: a schema's `multipleOf` is one value met on every call (bounded). */
const divisors = new Map<number, [bigint, number]>()

/** A coefficient's factor prime to 10: the coefficient with every factor 2 and 5 divided out (memoised per divisor). */
const primeToTen = new Map<bigint, bigint>()
function withoutTwosAndFives(c: bigint): bigint {
  let r = primeToTen.get(c)
  if (r !== undefined) return r
  r = c
  while (r % 2n === 0n) r /= 2n
  while (r % 5n === 0n) r /= 5n
  if (primeToTen.size >= 1_024) primeToTen.clear()
  primeToTen.set(c, r)
  return r
}

/**
 * Exponent gaps past which the powers of ten are not built. A coefficient (the shortest text of
 * a double, point removed) is below 10^21 (JavaScript prints up to 1e21 without an exponent), so
 * below 2^70 and 5^31. Building 10^632 for `1.797e308` with `multipleOf: 5e-324` cost 25-36 us
 * per number (a 4 MiB body of them: 4-6 s); each exact rule below is a few small-integer steps.
 */
const WIDE_GAP = 72

/**
 * True when `value` is an integer multiple of `divisor`, both read as the decimals they print as
 * (JSON Schema validation, "multipleOf"). Non-finite values and a divisor <= 0 are never multiples.
 * Exact for every pair of doubles, in time independent of their exponents.
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  // Integers below 2^53 are exact doubles: their remainder is exact too.
  if (Number.isSafeInteger(value) && Number.isSafeInteger(divisor)) return value % divisor === 0
  const [vc, ve] = decimal(value)
  let d = divisors.get(divisor)
  if (d === undefined) {
    if (divisors.size >= 1_024) divisors.clear()
    divisors.set(divisor, (d = decimal(divisor)))
  }
  const [dc, de] = d
  const diff = ve - de
  if (diff > WIDE_GAP) {
    // dc = 2^a 5^b r with r prime to 10, a < 70, b < 31 <= diff: 10^diff holds 2^a 5^b, so dc divides vc 10^diff exactly when r divides vc.
    return vc % withoutTwosAndFives(dc) === 0n
  }
  // dc 10^-diff > 10^21 > vc: only 0 is a multiple.
  if (diff < -WIDE_GAP) return vc === 0n
  return diff >= 0 ? (vc * 10n ** BigInt(diff)) % dc === 0n : vc % (dc * 10n ** BigInt(-diff)) === 0n
}
