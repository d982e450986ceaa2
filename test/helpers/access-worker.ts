/**
 * A small Worker for the access building blocks under workerd (bundled by test/access/workers-access.test.ts
 * with the same esbuild settings as the edge's Worker): the Rate Limiting binding adapter behind
 * the limiter port, RATE_LIMIT budgets charged through it, and the jose verifier against a JWKS
 * on loopback. Routes (POST, JSON in and out):
 * - `/take` `{key, cost, limit, windowMs}` -> the limiter's decision, or `{error}`
 * - `/charge` `{caller, tool}` -> chargeRequest with env.RATE_LIMIT
 * - `/memory` `{key, cost, limit, windowMs}` -> the in-memory limiter's decision (one per isolate)
 * - `/verify` `{token}` -> the verifier's answer (scopes as a sorted list)
 */
import { createJwtVerifier } from '../../src/auth/jwt-verifier'
import type { TokenVerifier } from '../../src/core/access/bearer'
import { chargeRequest, MemoryRateLimiter, parseRateLimits } from '../../src/core/access/rate-limit'
import { WorkersRateLimiter, type RateLimitBinding } from '../../src/adapters/workers/rate-limit-binding'

interface Env {
  RL_MIN: RateLimitBinding
  RL_10S: RateLimitBinding
  RATE_LIMIT: string
  AUTH_ISSUER: string
  AUTH_AUDIENCE: string
  AUTH_JWKS_URL: string
}

let verifier: TokenVerifier | undefined
/** The in-memory limiter of this isolate (it counts per isolate). */
const memory = new MemoryRateLimiter({ maxKeys: 100 })

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const body = (await request.json()) as Record<string, unknown>
    const path = new URL(request.url).pathname
    const limiter = new WorkersRateLimiter([
      { name: 'RL_MIN', binding: env.RL_MIN, limit: 3, periodS: 60 },
      { name: 'RL_10S', binding: env.RL_10S, limit: 20, periodS: 10 },
    ])
    try {
      if (path === '/take') return Response.json(await limiter.take(body.key as string, body.cost as number, body.limit as number, body.windowMs as number))
      if (path === '/memory') return Response.json(await memory.take(body.key as string, body.cost as number, body.limit as number, body.windowMs as number))
      if (path === '/charge') return Response.json(await chargeRequest(limiter, parseRateLimits(env.RATE_LIMIT), body.caller as string, (body.tool as string | null) ?? null))
      if (path === '/verify') {
        verifier ??= createJwtVerifier({ issuer: env.AUTH_ISSUER, audience: env.AUTH_AUDIENCE, jwksUrl: env.AUTH_JWKS_URL })
        const r = await verifier.verify(body.token as string)
        return Response.json(r.ok ? { ok: true, sub: r.identity.sub, clientId: r.identity.clientId, scopes: [...r.identity.scopes].sort() } : r)
      }
    } catch (e) {
      return Response.json({ error: (e as Error).message })
    }
    return new Response('not found', { status: 404 })
  },
}
