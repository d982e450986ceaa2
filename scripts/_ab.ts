import { loadConfig } from '../src/core/config'
import { replyChain } from '../src/core/grading/reply-guards'
import { runReplyGuards } from '../src/core/guards/reply-chain'
import { loadConfig as loadConfigOld } from '../dist/old/src/core/config'
import { replyChain as replyChainOld } from '../dist/old/src/core/grading/reply-guards'
import { runReplyGuards as runOld } from '../dist/old/src/core/guards/reply-chain'
const rounds = Number(process.argv[2] ?? 9)
function prose(bytes: number): string {
  let t = ''
  for (let i = 0; t.length < bytes; i++) t += `${i}: the "quick" brown fox jumps over the lazy dog, commit 3f786850e387550fdab836ed7e6dc881de23001b, line ${i}\n`
  return t.slice(0, bytes)
}
function records(): Record<string, unknown> {
  const items = Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `item-${i}`, status: i % 3 === 0 ? 'active' : 'archived', owner: `user${i % 17}@example.com`, note: `created by the nightly import, batch ${i >> 4}`, score: i * 1.5, ok: true }))
  return { structuredContent: { items, total: 1000 }, content: [{ type: 'text', text: 'see structuredContent' }] }
}
const rec = records()
const CASES = [
  { name: 'small text', result: { content: [{ type: 'text', text: prose(200) }] }, n: 100_000 },
  { name: '100 KB text', result: { content: [{ type: 'text', text: prose(100_000) }] }, n: 300 },
  { name: '1 MB text', result: { content: [{ type: 'text', text: prose(1_000_000) }] }, n: 30 },
  { name: '100 KB structuredContent', result: rec, n: 300 },
  { name: '100 KB sC + its JSON text', result: { ...rec, content: [{ type: 'text', text: JSON.stringify(rec.structuredContent) }] }, n: 200 },
]
const env = { ORIGIN_URL: 'http://127.0.0.1:1/mcp' }
const envOff = { ...env, RESULT_SECRETS: 'off', RESULT_CONTROL: 'off' }
const ctx = { originId: 'default', era: '2025-06-18' as const, method: 'tools/call', tool: 'read', report: () => {} }
const V: [string, (m: Record<string, unknown>, t: string) => unknown][] = [
  ['off', ((c) => (m, t) => runReplyGuards(c, { msg: m, text: t }, ctx))(replyChain(loadConfig(envOff)))],
  ['before', ((c) => (m, t) => runOld(c, { msg: m, text: t }, ctx as never))(replyChainOld(loadConfigOld(env)))],
  ['after', ((c) => (m, t) => runReplyGuards(c, { msg: m, text: t }, ctx))(replyChain(loadConfig(env)))],
]
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
console.log(`| reply | off (parse only) | before | after | checks' cost before | after |`)
for (const c of CASES) {
  const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result: c.result })
  const per: Record<string, number[]> = {}
  for (let r = -1; r < rounds; r++) for (const [name, f] of r & 1 ? V : [...V].reverse()) {
    const t0 = process.cpuUsage()
    for (let i = 0; i < c.n; i++) f(JSON.parse(text), text)
    const d = process.cpuUsage(t0)
    if (r >= 0) (per[name] ??= []).push((d.user + d.system) / c.n)
  }
  const [o, b, a] = ['off', 'before', 'after'].map((k) => med(per[k]!))
  console.log(`| ${c.name} | ${o!.toFixed(1)} | ${b!.toFixed(1)} | ${a!.toFixed(1)} | ${(b! - o!).toFixed(1)} | ${(a! - o!).toFixed(1)} |`)
}
