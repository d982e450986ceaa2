/** Statistics and Markdown formatting for the benchmark report. */

/** Median of a non-empty list. */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/**
 * The `p`-th percentile (0-100) of `sorted` (ascending), nearest rank: the smallest value with at
 * least p% of the values at or below it. NaN for an empty list.
 */
export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

export const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a')
export const spread = (xs: number[], digits = 0): string => (xs.length > 1 ? `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}` : '')
export const signed = (n: number, digits = 0): string => (n >= 0 ? '+' : '') + fmt(n, digits)
export const mark = (ok: boolean): string => (ok ? 'met' : '**missed**')

/** A Markdown table. */
export function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

/** Seconds as `m:ss`. */
export const clock = (s: number): string => {
  const t = Math.round(s)
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, '0')}`
}

/**
 * Growth of a cost along an axis: a cost should grow at most linearly with the size, and where
 * it bends upward (the knee) is reported.
 * `xs` ascending sizes, `ys` the costs at those sizes (CPU per call, bytes, ...).
 * - `linear`: between every two consecutive points the cost grows at most in proportion to
 *   the size, with `slack` for noise: y[i+1] / y[i] <= slack * x[i+1] / x[i].
 * - `knee`: the first size whose marginal cost per unit of size (the slope from the point
 *   before) is more than twice the slope of the step before it, when that step adds at least
 *   10% to the cost; null when none.
 */
export function growth(xs: number[], ys: number[], slack = 1.2): { linear: boolean; knee: number | null; worst: number } {
  let linear = true
  let worst = 0
  for (let i = 0; i + 1 < xs.length; i++) {
    const r = ys[i + 1]! / ys[i]! / (xs[i + 1]! / xs[i]!)
    worst = Math.max(worst, r)
    if (r > slack) linear = false
  }
  let knee: number | null = null
  for (let i = 2; i < xs.length && knee === null; i++) {
    const before = (ys[i - 1]! - ys[i - 2]!) / (xs[i - 1]! - xs[i - 2]!)
    const now = (ys[i]! - ys[i - 1]!) / (xs[i]! - xs[i - 1]!)
    if (before > 0 && now > 2 * before && ys[i]! - ys[i - 1]! > 0.1 * ys[i - 1]!) knee = xs[i]!
  }
  return { linear, knee, worst }
}
