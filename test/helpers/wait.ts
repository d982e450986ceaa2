/**
 * Waiting for a condition instead of sleeping for a guessed time: a test that sleeps "long enough"
 * passes on an idle machine and fails on a loaded one. `waitFor` polls the condition at a short
 * interval and returns as soon as it holds; `timeoutMs` is only how long to wait before giving
 * up with a message naming what never happened, never part of what the test asserts.
 */

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** What is awaited, for the failure message ("the worker's log line for 13 calls"). */
  what: string
  /** Give up after this many ms (default 10,000): a bound on a hang, not a timing assertion. */
  timeoutMs?: number
  /** Pause between two probes in ms (default 20). */
  intervalMs?: number
  /** Extra text for the failure message (e.g. a child's output), read when it fails. */
  detail?: () => string
  /** A probe error for which waiting stops at once, rethrown (e.g. the awaited process exited). */
  fatal?: (e: unknown) => boolean
}

/**
 * Resolves with the first truthy value `probe` returns (a probe that throws counts as not yet),
 * polling every `intervalMs`; rejects with `<what> not seen after <timeoutMs> ms` (and the last
 * probe error or `detail()`) once `timeoutMs` has passed.
 * @param probe the condition: sync or async; its truthy result is returned
 */
export async function waitFor<T>(probe: () => T | Promise<T>, opts: WaitOptions): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const v = await probe()
      if (v) return v as NonNullable<T>
    } catch (e) {
      if (opts.fatal?.(e)) throw e
      lastError = e
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `; last probe failed: ${lastError.message}` : ''
      throw new Error(`${opts.what} not seen after ${timeoutMs} ms${why}${opts.detail ? `\n${opts.detail()}` : ''}`)
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20))
  }
}

/** Options of {@link pollUntil}. */
export interface PollOptions {
  /** Stop polling after this many ms (default 10,000) and hand back the last value. */
  timeoutMs?: number
  /** Pause between two probes in ms (default 20). */
  intervalMs?: number
}

/**
 * Polls `probe` until `ok(value)` holds or `timeoutMs` has passed, and resolves with the last value
 * either way, so that the caller's own `expect` on it shows what was seen when it fails.
 */
export async function pollUntil<T>(probe: () => T | Promise<T>, ok: (v: T) => boolean, opts: PollOptions = {}): Promise<T> {
  const end = Date.now() + (opts.timeoutMs ?? 10_000)
  for (;;) {
    const v = await probe()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20))
  }
}
