/**
 * test/helpers/oauth-server.ts: oauth2-mock-server 9.3.0 runs here (Node 20) on 127.0.0.1, and
 * the edge's verifier accepts what it issues for the edge's resource: a token made directly with
 * a chosen audience and scope, a client_credentials token from `/token` with `resource`, and the
 * whole authorization-code flow with PKCE S256 (what an MCP client does) done over HTTP.
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJwtVerifier } from '../../src/auth/jwt-verifier'
import type { TokenVerifier } from '../../src/core/access/bearer'
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server'

const AUD = 'http://127.0.0.1:8787/mcp'
let as: OAuthServer
let verifier: TokenVerifier

beforeAll(async () => {
  as = await startOAuthServer()
  verifier = createJwtVerifier({ issuer: as.issuer, audience: AUD, jwksUrl: as.jwksUrl })
})
afterAll(() => as?.stop())

describe('oauth2-mock-server on loopback', () => {
  it('discovery names the loopback issuer and its JWKS', async () => {
    const doc = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    expect(doc.issuer).toBe(as.issuer)
    expect(doc.jwks_uri).toBe(as.jwksUrl)
    expect(doc.code_challenge_methods_supported).toContain('S256')
  })

  it('a token with a chosen audience and scope verifies; another audience does not', async () => {
    const r = await verifier.verify(await as.token({ audience: AUD, scope: 'mcp:tools mcp:admin' }))
    expect(r).toEqual({ ok: true, identity: { sub: 'user-1', clientId: 'client-1', scopes: new Set(['mcp:tools', 'mcp:admin']), validUntilMs: expect.any(Number) as number } })
    const other = await verifier.verify(await as.token({ audience: 'https://elsewhere/mcp', scope: 'mcp:tools' }))
    expect(!other.ok && other.failure.code).toBe('wrong_audience')
  })

  it('client_credentials at /token with resource=<the edge>: aud is the resource', async () => {
    const res = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'svc', scope: 'mcp:tools', resource: AUD }),
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { access_token: string; token_type: string }
    expect(body.token_type).toBe('Bearer')
    const r = await verifier.verify(body.access_token)
    expect(r.ok && [r.identity.clientId, [...r.identity.scopes]]).toEqual(['svc', ['mcp:tools']])
  })

  it('authorization code with PKCE S256 and resource, over HTTP', async () => {
    const codeVerifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(codeVerifier).digest('base64url')
    const authorize = new URL(`${as.issuer}/authorize`)
    const redirect = 'http://127.0.0.1:1/callback'
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: 'mcp-client',
      redirect_uri: redirect,
      scope: 'mcp:tools',
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: AUD,
    }))
      authorize.searchParams.set(k, v)
    const res = await fetch(authorize, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const back = new URL(res.headers.get('location')!)
    expect(back.origin + back.pathname).toBe(redirect)
    expect(back.searchParams.get('state')).toBe('s1')
    const code = back.searchParams.get('code')!
    const tok = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: codeVerifier,
        client_id: 'mcp-client',
        redirect_uri: redirect,
        resource: AUD,
        scope: 'mcp:tools',
      }),
    })
    expect(tok.status).toBe(200)
    const r = await verifier.verify(((await tok.json()) as { access_token: string }).access_token)
    expect(r).toEqual({ ok: true, identity: { sub: 'johndoe', clientId: 'mcp-client', scopes: new Set(['mcp:tools']), validUntilMs: expect.any(Number) as number } })
  })
})
