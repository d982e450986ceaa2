/**
 * CPU cost of the access building blocks per call, on this machine (`node --import tsx
 * scripts/bench/access-cost.ts`): a JWT verification with a cached key set (RS256, ES256, EdDSA),
 * the same through the verified-token cache (a hit), the tool filter, the scope lookup and the in-memory limiter. Prints microseconds of process CPU
 * per operation (process.cpuUsage, user + system, over N operations after a warm-up).
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { createJwtVerifier } from '../../src/auth/jwt-verifier'
import { cachedVerifier } from '../../src/core/access/verified-token-cache'
import { parseToolFilter } from '../../src/core/access/tool-filter'
import { parseToolScopes } from '../../src/core/access/tool-scopes'
import { chargeRequest, MemoryRateLimiter, parseRateLimits } from '../../src/core/access/rate-limit'

const AUD = 'https://edge.example/mcp'
const ISS = 'https://as.example'

async function cpuPerOp(n: number, f: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(n, 2000); i++) await f()
  const t = process.cpuUsage()
  for (let i = 0; i < n; i++) await f()
  const d = process.cpuUsage(t)
  return (d.user + d.system) / n
}

const out: Record<string, string> = {}
for (const alg of ['RS256', 'ES256', 'EdDSA']) {
  const { privateKey, publicKey } = await generateKeyPair(alg)
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k', alg }
  const v = createJwtVerifier({ issuer: ISS, audience: AUD, jwks: { keys: [jwk] } })
  const token = await new SignJWT({ sub: 'u', scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 3600 })
    .setProtectedHeader({ alg, kid: 'k' })
    .setIssuer(ISS)
    .setAudience(AUD)
    .sign(privateKey)
  out[`verify ${alg} (cached keys)`] = (await cpuPerOp(5000, () => v.verify(token))).toFixed(2)
  const c = cachedVerifier(v)
  out[`verify ${alg} (verified-token cache hit)`] = (await cpuPerOp(200_000, () => c.verify(token))).toFixed(3)
}
const filter = parseToolFilter({ TOOLS_ALLOW: 'get_*,search_*,echo', TOOLS_DENY: '*_admin,drop_table' })
out['isToolVisible (5 patterns)'] = (await cpuPerOp(200_000, () => filter.isToolVisible('search_documents'))).toFixed(3)
const scopes = parseToolScopes('{"*":"mcp:tools","admin_*":["mcp:admin"],"search_*":"mcp:search"}')
const granted = new Set(['mcp:tools', 'mcp:search'])
out['missingScope (3 entries)'] = (await cpuPerOp(200_000, () => scopes.missingScope(granted, 'search_documents'))).toFixed(3)
const limiter = new MemoryRateLimiter()
const limits = parseRateLimits('1000000000/min,search_*=1000000000/min')
out['chargeRequest memory (2 budgets)'] = (await cpuPerOp(200_000, () => chargeRequest(limiter, limits, 'user-1', 'search_documents'))).toFixed(3)
console.log(JSON.stringify({ node: process.version, usPerOp: out }, null, 1))
