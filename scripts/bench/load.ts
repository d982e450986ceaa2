/**
 * Load runs: autocannon against one scenario, with the CPU of the process under test and the
 * latency of every 2xx reply recorded.
 *
 * autocannon's own histogram keeps whole milliseconds (hdr-histogram with a lowest discernible
 * value of 1), too coarse for "p99 within 1 ms". Its `response` event carries each reply's time
 * from `process.hrtime` as a fractional millisecond, so latencies are recorded here from that
 * event and the percentiles (p50, p99, p99.9) computed from the raw list. At a fixed offered load
 * (`overallRate`) a request is sent only when its connection is free, so time spent queued
 * behind a slow reply before sending is not counted (coordinated omission); at the rates used
 * (half of saturation) connections are almost always free.
 */
import autocannon, { type AutocannonOptions } from 'autocannon'
import { cpuUs } from './processes'
import { percentile } from './stats'

/** What one load run measured. Latencies in ms, CPU in microseconds per 2xx reply. */
export interface Run {
  rps: number
  p50: number
  p99: number
  p999: number
  cpuUsPerReq: number | null
  ok: number
  bad: number
  /** POSTs the origin received during the run (settled). */
  originDelta: number
}

/** One autocannon run; resolves with the 2xx count, errors, duration (s) and sorted latencies (ms). */
export function load(opts: AutocannonOptions): Promise<{ ok: number; bad: number; durationS: number; latencies: Float64Array }> {
  const lat: number[] = []
  return new Promise((res, rej) => {
    const instance = autocannon({ timeout: 10, ...opts }, (err, r) => {
      if (err) return rej(err)
      const sorted = Float64Array.from(lat).sort()
      res({ ok: r['2xx'], bad: r.non2xx + r.errors + r.timeouts, durationS: r.duration, latencies: sorted })
    })
    instance.on('response', (_c, status, _b, ms) => {
      if (status >= 200 && status < 300) lat.push(ms)
    })
  })
}

/** How long the origin's counter must stand still to count as settled (ms); shorter for smoke runs. */
let SETTLE_MS = 150
export function setSettleMs(ms: number): void {
  SETTLE_MS = ms
}

/**
 * Fewest 2xx answers a run must hold (0: none required). A smoke run lasts 0.2 s: on a saturated
 * machine the first request of a cold scenario (a validator compiled on first use) can outlast
 * that window, and the run then holds no answer at all. A run short of this many answers is
 * followed by one run of exactly this many requests, and the two are counted together.
 */
let MIN_ANSWERS = 0
export function setMinAnswers(n: number): void {
  MIN_ANSWERS = n
}

/** The bench origin's counters (scripts/bench/origin.ts): tools/call POSTs, in all and per string JSON-RPC id. */
export async function originStats(base: string): Promise<{ calls: number; byId: Record<string, number> }> {
  return (await (await fetch(`${base}/stats`)).json()) as { calls: number; byId: Record<string, number> }
}

async function originCalls(base: string): Promise<number> {
  return (await originStats(base)).calls
}

/**
 * The origin's POST count once it has stopped moving: when a run ends autocannon drops its
 * connections, but requests already forwarded still reach the origin for a moment and must not
 * be charged to the next run.
 */
export async function settledOriginCalls(originBase: string): Promise<number> {
  let last = await originCalls(originBase)
  for (;;) {
    await new Promise((r) => setTimeout(r, SETTLE_MS))
    const now = await originCalls(originBase)
    if (now === last) return now
    last = now
  }
}

/** What a load run sends, and whose CPU it is charged to. */
export interface Target {
  url: string
  method?: string
  headers: Record<string, string>
  body: string
  /** autocannon cycles through these instead of `body` when given. */
  requests?: { method: string; headers: Record<string, string>; body: string }[]
  /** Process whose CPU is charged (its whole tree); null: none. */
  pid: () => number | null
}

/**
 * Runs `t` for `durationS` seconds with `connections` connections, saturated or at `overallRate`
 * requests per second, and returns what it measured.
 */
export async function measure(t: Target, originBase: string, durationS: number, connections: number, overallRate?: number): Promise<Run> {
  const pid = t.pid()
  const before = await settledOriginCalls(originBase)
  const c0 = pid ? cpuUs(pid) : 0
  const base = {
    url: t.url,
    method: t.method ?? 'POST',
    headers: t.headers,
    body: t.body,
    connections,
    ...(t.requests ? { requests: t.requests } : {}),
    ...(overallRate ? { overallRate } : {}),
  }
  let r = await load({ ...base, duration: durationS })
  if (r.ok < MIN_ANSWERS) {
    const more = await load({ ...base, amount: MIN_ANSWERS })
    const latencies = Float64Array.from([...r.latencies, ...more.latencies]).sort()
    r = { ok: r.ok + more.ok, bad: r.bad + more.bad, durationS: r.durationS + more.durationS, latencies }
  }
  const c1 = pid ? cpuUs(pid) : 0
  const originDelta = (await settledOriginCalls(originBase)) - before
  return {
    rps: r.ok / r.durationS,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    p999: percentile(r.latencies, 99.9),
    cpuUsPerReq: pid && r.ok ? (c1 - c0) / r.ok : null,
    ok: r.ok,
    bad: r.bad,
    originDelta,
  }
}
