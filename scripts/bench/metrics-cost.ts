/**
 * What observability costs per POST on Node, in-process: the metric calls the core makes for
 * one forwarded valid tools/call (one graded id, one POST with two histogram observations, bytes
 * in and out) on the Node and Workers metrics (src/observe/prom-metrics.ts,
 * src/observe/text-metrics.ts); the request id of a POST without X-Request-Id (a random UUID);
 * and its three spans (mcp.post, mcp.validate, mcp.origin) with no tracer provider registered
 * (src/observe/otel-tracer.ts). Prints ns per POST.
 * Run: `node --import tsx scripts/bench/metrics-cost.ts`
 */
import { PromMetrics } from '../../src/observe/prom-metrics'
import { TextMetrics } from '../../src/observe/text-metrics'
import type { EdgeMetrics } from '../../src/core/ports'
import { requestIdOf } from '../../src/core/observe/request-id'
import { createOtelTracer } from '../../src/observe/otel-tracer'

function perPost(m: EdgeMetrics, n: number): number {
  const one = (i: number) => {
    m.countGrade('default', 'tools/call', 'get_forecast', 'ok')
    m.observePost({ origin: 'default', edgeSeconds: 0.00004 + (i % 7) * 0.00001, originSeconds: 0.0004, forwarded: true })
    m.countBytes('default', 'in', 180)
    m.countBytes('default', 'out', 120)
  }
  for (let i = 0; i < 20_000; i++) one(i) // warm-up (JIT)
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) one(i)
  return Number(process.hrtime.bigint() - t0) / n
}

function timed(n: number, fn: () => void): number {
  for (let i = 0; i < 20_000; i++) fn()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) fn()
  return Number(process.hrtime.bigint() - t0) / n
}

const N = 1_000_000
const headers = { get: (name: string) => (name === 'traceparent' ? null : null), forEach: () => undefined }
const tracer = createOtelTracer()
let sink = ''
for (let round = 0; round < 3; round++) {
  const prom = perPost(new PromMetrics(undefined, { defaultMetrics: false }), N)
  const text = perPost(new TextMetrics(), N)
  const rid = timed(N, () => void (sink = requestIdOf(headers)))
  const spans = timed(N, () => {
    // As the stages do: with no provider there is no POST span, and the child sites are skipped.
    const post = tracer.start('mcp.post', { traceparent: null }, 'server')
    if (post) {
      const v = tracer.start('mcp.validate', post, 'internal')
      v?.end()
      const o = tracer.start('mcp.origin', post, 'client')
      sink = o?.traceparent() ?? sink
      o?.end()
      post.end()
    }
  })
  console.log(
    `round ${round + 1}: metrics ${prom.toFixed(0)} ns (Node) / ${text.toFixed(0)} ns (Workers), request id ${rid.toFixed(0)} ns, the span sites with no provider ${spans.toFixed(0)} ns per POST`
  )
}
void sink
