/**
 * CPU cost of the access gate per forwarded tools/call, in process (`node --import tsx
 * scripts/bench/access-gate-cost.ts`): the whole POST pipeline (handlePost: parse, classify, era,
 * gate, validation, forward, grade, log line) against an in-process origin that answers at once,
 * once with no access settings and once with TOOLS_ALLOW, TOOLS_DENY and a two-budget RATE_LIMIT
 * (in memory), the rounds alternated; the difference is the gate's cost. Also a tools/list page
 * through the list filter with one hidden tool (rewritten) and with none (unchanged). Prints
 * microseconds of process CPU (user + system) per POST, the median over the rounds.
 */
import { handlePost, originTarget } from '../../src/core/pipeline'
import type { OriginClient, OriginReply } from '../../src/core/ports'
import type { EdgeDeps } from '../../src/core/exchange'
import { buildEdgeDeps } from '../../src/mcp-edge'
import { nodeRuntime } from '../../src/adapters/node/node-edge'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { Exchange } from '../../src/core/exchange'
import { messageChain, runRequestGuards } from '../../src/core/guards/request-chain'
import type { RequestGuardContext } from '../../src/core/guards/guard'
import type { Classified } from '../../src/core/request/classify'

const TOOLS = ['search_docs', 'get_weather', 'drop_table', 'echo'].map((name) => ({
  name,
  inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
}))
const LIST_TEXT = JSON.stringify({ tools: TOOLS })
const CALL_RESULT = '{"content":[{"type":"text","text":"ok"}]}'

/** An origin answering at once: tools/list with {@link TOOLS}, tools/call with a text result. */
const origin: OriginClient = (req) => {
  const m = /"id":(\d+|"[^"]*"),"method":"([^"]+)"/.exec(req.body ?? '')
  const id = m?.[1] ?? '1'
  const text = `{"jsonrpc":"2.0","id":${id},"result":${m?.[2] === 'tools/list' ? LIST_TEXT : CALL_RESULT}}`
  const reply: OriginReply = { status: 200, headers: { 'content-type': 'application/json' }, text: () => Promise.resolve(text), stream: () => null, discard: () => undefined }
  return Promise.resolve(reply)
}

function deps(env: Record<string, string>): EdgeDeps {
  return buildEdgeDeps(
    { env: { ORIGIN_URL: 'http://origin.invalid/mcp', ...env }, originClient: origin, logger: () => undefined, engine: createCfworkerEngine() },
    nodeRuntime,
    (p) => void p.catch(() => undefined)
  )
}

const headers = new Headers({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  authorization: 'Bearer caller-1',
})
const callBody = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"q"}}}'
const listBody = '{"jsonrpc":"2.0","id":8,"method":"tools/list"}'

async function cpuPerPost(d: EdgeDeps, body: string, n: number): Promise<number> {
  const target = originTarget(d.config, undefined)!
  const t = process.cpuUsage()
  for (let i = 0; i < n; i++) await handlePost(body, headers, target, d)
  const u = process.cpuUsage(t)
  return (u.user + u.system) / n
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const plain = deps({})
const gated = deps({ TOOLS_ALLOW: 'search_*,get_*,echo', TOOLS_DENY: 'drop_*,*_admin', RATE_LIMIT: '1000000000/min,search_*=1000000000/min' })
const denyOnly = deps({ TOOLS_DENY: 'drop_*' })
for (const d of [plain, gated, denyOnly]) {
  // Learn the tools (relayed list), then warm up the JIT.
  await handlePost(listBody, headers, originTarget(d.config, undefined)!, d)
  await new Promise((r) => setTimeout(r, 20))
  await cpuPerPost(d, callBody, 20_000)
  await cpuPerPost(d, listBody, 5_000)
}
const N = 20_000
const rounds: Record<string, number[]> = { plain: [], gated: [], listPlain: [], listFiltered: [] }
for (let r = 0; r < 9; r++) {
  rounds.plain!.push(await cpuPerPost(plain, callBody, N))
  rounds.gated!.push(await cpuPerPost(gated, callBody, N))
  rounds.listPlain!.push(await cpuPerPost(plain, listBody, N / 4))
  rounds.listFiltered!.push(await cpuPerPost(denyOnly, listBody, N / 4))
}
const diffs = rounds.plain!.map((p, i) => rounds.gated![i]! - p)

/** The access guards alone (no pipeline around it): the rate budget and the tool filter of the request chain, as stage 5 runs them. */
function gateOnly(d: EdgeDeps, n: number): number {
  const ex = new Exchange(d, originTarget(d.config, undefined)!, '2025-06-18')
  const c = {
    kind: 'request',
    id: { raw: '7', key: 'n:7' },
    method: 'tools/call',
    params: { name: 'search_docs', arguments: { query: 'q' } },
    text: callBody,
  } as unknown as Extract<Classified, { kind: 'request' }>
  const caller = 'k6JmQ0m1yE2Qd0m3QnOQ8Zx2kqf0wE5YxR1a9Lq3c0s'
  const chain = messageChain(d.config).filter((g) => g.name === 'rate_budget' || g.name === 'tool_filter')
  const ctx = { ex, headers: { get: () => null, forEach: () => undefined }, scope: caller, info: {} } as unknown as RequestGuardContext
  const t = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const v = runRequestGuards(chain, c, ctx)
    if (v instanceof Promise || v.kind !== 'pass') throw new Error('refused')
  }
  const u = process.cpuUsage(t)
  return (u.user + u.system) / n
}
gateOnly(gated, 200_000)
const gateAlone = median([1, 2, 3, 4, 5].map(() => gateOnly(gated, 500_000)))
const gateOff = median([1, 2, 3, 4, 5].map(() => gateOnly(plain, 500_000)))
console.log(
  JSON.stringify(
    {
      node: process.version,
      usPerPost: {
        'tools/call, no access settings': median(rounds.plain!).toFixed(2),
        'tools/call, TOOLS_ALLOW + TOOLS_DENY + RATE_LIMIT (2 budgets, memory)': median(rounds.gated!).toFixed(2),
        'gate cost per call (median of the per-round differences)': median(diffs).toFixed(2),
        'rate_budget + tool_filter guards alone, TOOLS_ALLOW + TOOLS_DENY + RATE_LIMIT (2 budgets)': gateAlone.toFixed(3),
        'rate_budget + tool_filter guards alone, no access settings': gateOff.toFixed(3),
        'tools/list page, no filter': median(rounds.listPlain!).toFixed(2),
        'tools/list page, one hidden tool removed (rewritten)': median(rounds.listFiltered!).toFixed(2),
      },
    },
    null,
    1
  )
)
