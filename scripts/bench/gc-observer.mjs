/**
 * A garbage-collection observer to preload into a benchmark child (`node --import
 * ./scripts/bench/gc-observer.mjs dist/bench/edge.js`, or as `nodeArgs` of `startChild` in
 * scripts/bench/processes.ts): records every GC pause (`PerformanceObserver`, entry type `gc`).
 * IPC `{ cmd: 'gc-reset' }` forgets what was recorded; `{ cmd: 'gc-report' }` writes one line to
 * stderr: per kind (scavenge, mark-compact, incremental, weakcb) the count, total and longest
 * pause in ms, labelled with `GC_LABEL`. Used for the tail analysis in docs/performance.md.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks'

const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
}
let pauses = []
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push([kinds[e.detail?.kind] ?? String(e.detail?.kind), e.duration])
}).observe({ entryTypes: ['gc'] })

process.on('message', (m) => {
  if (m?.cmd === 'gc-reset') pauses = []
  if (m?.cmd !== 'gc-report') return
  const by = {}
  for (const [kind, ms] of pauses) {
    const b = (by[kind] ??= { n: 0, totalMs: 0, maxMs: 0 })
    b.n++
    b.totalMs += ms
    b.maxMs = Math.max(b.maxMs, ms)
  }
  for (const b of Object.values(by)) ((b.totalMs = +b.totalMs.toFixed(1)), (b.maxMs = +b.maxMs.toFixed(2)))
  process.stderr.write(`GC ${process.env.GC_LABEL ?? process.pid}: ${JSON.stringify(by)}\n`)
})
