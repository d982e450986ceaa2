/**
 * @module client-signal
 * "The client went away" as the edge needs it: something that can be asked `aborted` and told to
 * call back once on `abort`. A web `AbortSignal` satisfies {@link ClientSignal}, and so does
 * {@link LinkSignal}, a plain listener list: on Node 20 each AbortController/EventTarget costs
 * tens of microseconds per request once undici and the edge attach listeners to it (measured with
 * `npm run bench`), which is why the hot path avoids them. undici and the fetch origin client take
 * any object with `addEventListener`/`removeEventListener`.
 */

/** The subset of `AbortSignal` the edge uses. */
export interface ClientSignal {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

/** A one-shot abort signal without EventTarget: `abort()` calls each listener once. */
export class LinkSignal implements ClientSignal {
  aborted = false
  private listeners: (() => void)[] = []

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return
    this.listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners.indexOf(listener)
    if (i >= 0) this.listeners.splice(i, 1)
  }

  /** Fires once; later calls do nothing. */
  abort(): void {
    if (this.aborted) return
    this.aborted = true
    const ls = this.listeners
    this.listeners = []
    for (const l of ls) l()
  }
}
