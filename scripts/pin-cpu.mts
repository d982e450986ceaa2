/**
 * CPU cost of tool pinning per forwarded tools/call, in process (no sockets): the same valid call
 * through admitPost + handlePost with `TOOL_PINNING=off` and `enforce` (the pins held, as after a
 * relayed tools/list), median of 5 runs of N calls each, in microseconds of CPU (process.cpuUsage);
 * and the pin gate alone (`gateToolsCall`, one Map lookup and the verdict). The bound to hold:
 * enforce adds at most 2 us of CPU per forwarded call (docs/pinning.md "Cost").
 *   node --import tsx scripts/pin-cpu.mts 20000
 */
import { admitPost, handlePost, originTarget } from '../src/core/pipeline'
import { MemoryKv } from '../src/stores/memory-kv'
import { mcpEdge } from '../src/adapters/node/node-edge'
import { gateToolsCall } from '../src/core/pinning/apply-pins'
import { pinBook } from '../src/core/exchange'

const N = Number(process.argv[2] ?? 20000)
const schema = { type: 'object', properties: { city: { type: 'string' }, units: { enum: ['c', 'f'] } }, required: ['city'], additionalProperties: false }
const list = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'weather', description: 'Weather', inputSchema: schema }] } })
const called = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}'
const answer = (body: string) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  text: async () => (body.includes('tools/list') ? list : called),
  stream: () => null,
  discard: () => undefined,
})
const origin = async (req: { body?: string }) => answer(req.body ?? '')

async function edgeFor(mode: 'off' | 'enforce') {
  const env = { ORIGIN_URL: 'http://127.0.0.1:1/mcp', ALLOWED_HOSTS: 'localhost', STORE_FILE: 'memory', TOOL_PINNING: mode }
  const deps = mcpEdge({ env, store: new MemoryKv(), originClient: origin, logger: () => undefined }).deps!
  return deps
}
const headers = new Headers({ host: 'localhost:8787', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' })
const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
const callBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'weather', arguments: { city: 'Oslo', units: 'c' } } })

const off = await edgeFor('off')
const enforce = await edgeFor('enforce')
for (const deps of [off, enforce]) {
  const target = originTarget(deps.config, undefined)!
  await handlePost(listBody, headers, target, deps)
  // The call measured is forwarded (approved), not answered by the edge.
  const first = await handlePost(callBody, headers, target, deps)
  if (typeof first.body !== 'string' || !first.body.includes('"text":"ok"')) throw new Error(`the call was not forwarded: ${String(first.body)}`)
}
async function run(deps: typeof off, n: number): Promise<number> {
  const target = originTarget(deps.config, undefined)!
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    if (admitPost(headers, target, deps) !== null) throw new Error('refused')
    await handlePost(callBody, headers, target, deps)
  }
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}
const gate = (n: number): number => {
  const book = pinBook(enforce)
  const c = {
    originId: 'default',
    scope: 'public',
    era: '2025-06-18' as const,
    id: { raw: '1', key: 'n:1' },
    name: 'weather',
    asToolError: false,
    pull: () => Promise.reject(new Error('no pull')),
  }
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) if (gateToolsCall(book, c) instanceof Promise) throw new Error('the gate was not synchronous: pins not held')
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}
await run(off, 3000)
await run(enforce, 3000)
gate(100000)
const out: Record<'off' | 'enforce' | 'gate', number[]> = { off: [], enforce: [], gate: [] }
for (let r = 0; r < 5; r++) {
  out.off.push(await run(off, N))
  out.enforce.push(await run(enforce, N))
  out.gate.push(gate(N * 10))
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
console.log(
  JSON.stringify({
    offUs: med(out.off).toFixed(2),
    enforceUs: med(out.enforce).toFixed(2),
    addedUs: (med(out.enforce) - med(out.off)).toFixed(2),
    gateUs: med(out.gate).toFixed(3),
    runs: out,
  })
)
process.exit(0)
