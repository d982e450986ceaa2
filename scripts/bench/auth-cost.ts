/**
 * CPU cost of auth per forwarded call, in process (`node --import tsx scripts/bench/auth-cost.ts`):
 * one `tools/call` through the edge's front door (servePost: admission, token check, parse,
 * validation, forward, grade, answer) to an in-memory origin that answers at once, without auth
 * and with auth on (AUTH_ISSUER, an inline ES256 JWKS, TOOL_SCOPES, ORIGIN_AUTHORIZATION) and the
 * same token on every call (the verified-token cache's hit), the same request headers both times;
 * and with auth, tool filtering and a rate limit (caller and per-tool budgets in memory) all on. Also the token check alone
 * (authorizeRequest). Prints microseconds of process CPU per call (process.cpuUsage, user +
 * system, over N calls after a warm-up), the median of 5 rounds run in alternation.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { mcpEdge } from '../../src/adapters/node/node-edge'
import { servePost } from '../../src/core/front-door'
import type { EdgeDeps } from '../../src/core/exchange'
import type { OriginClient } from '../../src/core/ports'
import { authorizeRequest } from '../../src/core/request-auth'

const AUD = 'https://edge.example/mcp'
const ISS = 'https://as.example'
const N = 20_000

const { privateKey, publicKey } = await generateKeyPair('ES256')
const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256' }] })
const token = await new SignJWT({ sub: 'user-1', client_id: 'c', scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 3600 })
  .setProtectedHeader({ alg: 'ES256', kid: 'k' })
  .setIssuer(ISS)
  .setAudience(AUD)
  .sign(privateKey)

const tools = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] } })
const origin: OriginClient = async (req) => {
  const m = JSON.parse(req.body ?? '{}') as { id?: unknown; method?: string }
  const text =
    m.method === 'tools/list'
      ? tools.replace('"id":1', `"id":${JSON.stringify(m.id)}`)
      : m.method === 'initialize'
        ? JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'o', version: '1' } } })
        : m.id === undefined
          ? ''
          : JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } })
  return { status: text ? 200 : 202, headers: { 'content-type': 'application/json' }, text: async () => text, stream: () => null, discard: () => undefined }
}

function deps(auth: boolean, access = false): EdgeDeps {
  const edge = mcpEdge({
    origin: 'http://origin.internal/mcp',
    originClient: origin,
    logger: false,
    ...(auth ? { auth: { issuer: ISS, audience: AUD, jwks, toolScopes: { '*': 'mcp:tools' }, originAuthorization: 'Bearer edge' } } : {}),
    // Filtering and a rate limit that every call passes (a budget no round can spend), in memory.
    ...(access ? { access: { toolsAllow: 'echo,get_*', toolsDeny: 'admin_*,delete_*', rateLimit: '1000000000/min,echo=1000000000/min' } } : {}),
  })
  return edge.deps!
}

const body = new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }))
// The same request both times, the client's Authorization included (without auth it is forwarded as is).
const headersFor = () =>
  new Headers({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
    host: 'edge.example',
    authorization: `Bearer ${token}`,
  })

async function cpuPerCall(d: EdgeDeps, headers: Headers, n: number): Promise<number> {
  const post = { originName: undefined, headers, readBody: async () => body }
  const t = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const r = await servePost(d, post)
    if (r.status !== 200) throw new Error(`status ${r.status}: ${String(r.body)}`)
  }
  const u = process.cpuUsage(t)
  return (u.user + u.system) / n
}

const off = deps(false)
const on = deps(true)
const all = deps(true, true)
const hOff = headersFor()
const hOn = headersFor()
const hAll = headersFor()
await cpuPerCall(off, hOff, 5000)
await cpuPerCall(on, hOn, 5000)
await cpuPerCall(all, hAll, 5000)
const rounds: { off: number; on: number; all: number }[] = []
for (let i = 0; i < 5; i++) rounds.push({ off: await cpuPerCall(off, hOff, N), on: await cpuPerCall(on, hOn, N), all: await cpuPerCall(all, hAll, N) })
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const target = { id: 'default', url: 'http://origin.internal/mcp' }
const t = process.cpuUsage()
for (let i = 0; i < 200_000; i++) {
  const a = authorizeRequest(on.auth!, on, target, hOn, 'POST')
  if (a instanceof Promise) await a
}
const u = process.cpuUsage(t)
console.log(
  JSON.stringify(
    {
      node: process.version,
      usPerCall: {
        'forwarded tools/call, auth off': median(rounds.map((r) => r.off)).toFixed(2),
        'forwarded tools/call, auth on (cached token, TOOL_SCOPES, ORIGIN_AUTHORIZATION)': median(rounds.map((r) => r.on)).toFixed(2),
        'difference (median of per-round differences)': median(rounds.map((r) => r.on - r.off)).toFixed(2),
        'forwarded tools/call, auth + TOOLS_ALLOW/TOOLS_DENY + RATE_LIMIT (caller and tool budgets)': median(rounds.map((r) => r.all)).toFixed(2),
        'difference, all of them against none (median of per-round differences; target <= 5)': median(rounds.map((r) => r.all - r.off)).toFixed(2),
        'authorizeRequest alone (cached token)': ((u.user + u.system) / 200_000).toFixed(3),
      },
    },
    null,
    1
  )
)
