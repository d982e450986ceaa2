/**
 * @module core/work-slices
 * Work that grows with an origin's answer, cut into slices so that one POST never holds the event
 * loop (docs/reliability.md "One POST does not hold the others"): a batch of 100 `tools/list`
 * answers of a 700-tool origin is 13 MB of JSON to parse, grade, learn and digest, which done in
 * one go held every other client of the process for seconds. The grading loop spends from a
 * {@link WorkSlices} budget per element it handles and, when a slice is used up, awaits
 * {@link yieldToLoop} before the next element, so other requests (and the timers and I/O of this
 * one) run in between. Slices are counted in characters of the reply, not in milliseconds, so the
 * order of work is the same on every machine and under any load. Pure: only `setImmediate` (Node)
 * or `setTimeout` (Workers).
 */

/**
 * UTF-16 code units of an origin's reply handled between two yields. About 1-3 ms of parsing and
 * grading a `tools/list` answer on Node 20 on the shared 2-core machine (scripts/batch-stall.ts),
 * so a 13 MB batch answer yields a few hundred times, each yield one turn of the event loop.
 */
export const SLICE_CHARS = 64 * 1024

/** A per-POST budget of work between yields (module comment). */
export class WorkSlices {
  private used = 0
  /** Yields taken so far (for tests and the log). */
  yields = 0
  /** @param sliceChars characters of reply handled between two yields ({@link SLICE_CHARS}) */
  constructor(readonly sliceChars = SLICE_CHARS) {}

  /**
   * Spends `chars` of the slice.
   * @returns a promise to await before the next piece of work when the slice is used up, else null
   *   (the caller goes on synchronously: small replies never wait)
   */
  spend(chars: number): Promise<void> | null {
    this.used += chars
    if (this.used < this.sliceChars) return null
    this.used = 0
    this.yields++
    return yieldToLoop()
  }
}

/** `setImmediate` where the runtime has it (Node: after the I/O callbacks of this turn, with no 1 ms timer floor), else a 0 ms timer (Workers). */
const later: (f: () => void) => void = typeof globalThis.setImmediate === 'function' ? (f) => void globalThis.setImmediate(f) : (f) => void setTimeout(f, 0)

/** Resolves on a later turn of the event loop, so pending I/O and other requests' work run first. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => later(resolve))
}
