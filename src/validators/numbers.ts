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

/**
 * True when `value` is an integer multiple of `divisor`, both read as the decimals they print as
 * (JSON Schema validation, "multipleOf"). Non-finite values and a divisor <= 0 are never multiples.
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false
  const [vc, ve] = decimal(value)
  const [dc, de] = decimal(divisor)
  const diff = ve - de
  return diff >= 0 ? (vc * 10n ** BigInt(diff)) % dc === 0n : vc % (dc * 10n ** BigInt(-diff)) === 0n
}
