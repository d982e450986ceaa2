/**
 * CPU time of the SSE relay (src/core/sse/sse-transform.ts) of two checkouts, compared in one
 * process: a stream of 200 progress notifications and one result (34 kB in 15 kB chunks) with the
 * edge's watch pattern, 10 alternating runs of 1,000 streams each; median and least microseconds
 * of CPU per stream. Usage: node --import tsx scripts/sse-cpu.mts /path/to/base .
 */
import { resolve } from 'node:path'
const A = (await import(`${resolve(process.argv[2]!)}/src/core/sse/sse-transform.ts`)).transformSse
const B = (await import(`${resolve(process.argv[3]!)}/src/core/sse/sse-transform.ts`)).transformSse
const enc = new TextEncoder()
let text = ''
for (let i = 0; i < 200; i++)
  text += `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":${i},"total":200,"message":"step ${i} of the long task"}}\n\n`
text += 'data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}\n\n'
const all = enc.encode(text)
const chunks: Uint8Array[] = []
for (let o = 0; o < all.length; o += 15000) chunks.push(all.subarray(o, o + 15000))
const WATCHED = /"result"|"error"|\\u|list_changed/
async function once(transformSse: typeof A): Promise<number> {
  let i = 0
  const source = { read: async () => (i < chunks.length ? { done: false as const, value: chunks[i++]! } : { done: true as const }), cancel: async () => undefined }
  const out = transformSse(
    source,
    { watch: WATCHED, onEvent: (ev: { data: string }) => (ev.data.includes('"result"') ? ev.data.replace('done', 'done') : undefined), onEnd: () => [] },
    { idleMs: 0 }
  )
  let n = 0
  for (;;) {
    const r = await out.read()
    if (r.done) break
    n += r.value.length
  }
  return n
}
const run = async (t: typeof A, k: number) => {
  const t0 = process.cpuUsage()
  for (let j = 0; j < k; j++) await once(t)
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / k
}
await run(A, 500)
await run(B, 500)
const ra: number[] = []
const rb: number[] = []
for (let r = 0; r < 10; r++) {
  ra.push(await run(A, 1000))
  rb.push(await run(B, 1000))
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[5]!.toFixed(1)
const min = (a: number[]) => Math.min(...a).toFixed(1)
console.log(JSON.stringify({ a: process.argv[2], aMedianUs: med(ra), aMinUs: min(ra), b: process.argv[3], bMedianUs: med(rb), bMinUs: min(rb) }))
