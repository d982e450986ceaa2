/**
 * CPU of the result checks alone (docs/result-checks.md), in process: the reply chain of one
 * configuration (grading/reply-guards.ts `replyChain`, run by guards/reply-chain.ts) over a parsed
 * `tools/call` reply, with the checks at their defaults (RESULT_SECRETS=audit, RESULT_CONTROL=audit)
 * and with them off, for a small text reply, 100 KB and 1 MB of text and 100 KB of
 * `structuredContent` (1,000 objects of a few string and number fields). No sockets:
 * the parse of the reply in both rows, so the difference is what the checks add. Microseconds of process CPU per reply, median of interleaved
 * rounds (on and off alternate, so a busy neighbour weighs on both alike).
 * Run bundled (`npm run bench:result-checks:chain`): tsx adds a call to every closure and skews
 * the figures.
 *   npm run bench:result-checks:chain
 *   npm run bench:result-checks:chain -- --rounds 9
 * Figures on a shared machine are noisy: compare rows of one run.
 */
import { loadConfig } from '../src/core/config'
import { replyChain } from '../src/core/grading/reply-guards'
import { runReplyGuards } from '../src/core/guards/reply-chain'
import type { ReplyFinding } from '../src/core/guards/guard'
import { prose, records } from './bench/result-shapes'

const args = process.argv.slice(2)
const roundsAt = args.indexOf('--rounds')
const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 7

/** The same, with the serialized JSON also in a text item, as the spec asks of a tool that returns structured content. */
function recordsWithText(): Record<string, unknown> {
  const r = records()
  return { ...r, content: [{ type: 'text', text: JSON.stringify(r.structuredContent) }] }
}

const CASES: { name: string; result: Record<string, unknown>; n: number }[] = [
  { name: 'small text', result: { content: [{ type: 'text', text: prose(200) }] }, n: 20_000 },
  { name: '100 KB text', result: { content: [{ type: 'text', text: prose(100_000) }] }, n: 400 },
  { name: '1 MB text', result: { content: [{ type: 'text', text: prose(1_000_000) }] }, n: 40 },
  { name: '100 KB structuredContent', result: records(), n: 400 },
  { name: '100 KB structuredContent + its JSON text', result: recordsWithText(), n: 400 },
]

const on = replyChain(loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp' }))
const off = replyChain(loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', RESULT_SECRETS: 'off', RESULT_CONTROL: 'off' }))
const findings: ReplyFinding[] = []
const ctx = { originId: 'default', era: '2025-06-18' as const, method: 'tools/call', tool: 'read', report: (f: ReplyFinding) => void findings.push(f) }

/**
 * Microseconds of CPU per reply over `n` runs of the chain, each over a message parsed from `text`
 * (as the edge parses each reply: a fresh object every time, so nothing learned of one reply is
 * reused for the next). The parse is in both rows; the difference is the checks.
 */
function time(chain: typeof on, text: string, n: number): number {
  const t0 = process.cpuUsage()
  // Without a relay only the result checks run, synchronously: no promise to wait for.
  for (let i = 0; i < n; i++) void runReplyGuards(chain, { msg: JSON.parse(text) as Record<string, unknown>, text }, ctx)
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / n
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`result checks in process (the reply chain alone), CPU per reply, median of ${rounds} interleaved rounds; Node ${process.version}`)
console.log("| reply | checks off | checks on (defaults) | checks' cost |")
console.log('|---|---:|---:|---:|')
for (const c of CASES) {
  const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result: c.result })
  time(on, text, Math.ceil(c.n / 4)) // warm-up
  time(off, text, Math.ceil(c.n / 4))
  const a: number[] = []
  const b: number[] = []
  for (let r = 0; r < rounds; r++) {
    b.push(time(off, text, c.n))
    a.push(time(on, text, c.n))
  }
  const [x, y] = [median(b), median(a)]
  console.log(`| ${c.name} | ${x.toFixed(1)} us | ${y.toFixed(1)} us | ${(y - x).toFixed(1)} us |`)
}
if (findings.length > 0) throw new Error(`the bench's replies are meant to be clean, yet the checks found ${findings.length} things`)
