// The subset of autocannon 8's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface AutocannonRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
  }
  interface AutocannonOptions extends AutocannonRequest {
    url: string
    connections?: number
    duration?: number
    /** Stop after this many requests (instead of `duration`). */
    amount?: number
    pipelining?: number
    overallRate?: number
    timeout?: number
    requests?: AutocannonRequest[]
  }
  interface Histogram {
    average: number
    p50: number
    p90: number
    p99: number
    max: number
    total: number
  }
  interface AutocannonResult {
    latency: Histogram
    requests: Histogram & { sent: number }
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
  }
  /** The running instance; `response` fires per reply with its time in (fractional) ms. */
  interface AutocannonInstance {
    on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): void
  }
  function autocannon(opts: AutocannonOptions, cb: (err: Error | null, result: AutocannonResult) => void): AutocannonInstance
  export default autocannon
  export type { AutocannonOptions, AutocannonResult, AutocannonRequest }
}
