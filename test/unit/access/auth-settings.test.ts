/**
 * The authorization settings as the edge reads them (core/settings.ts rows, checkAuthSettings):
 * env strings and typed options, the partner rules (AUTH_ISSUER needs AUTH_AUDIENCE and exactly
 * one key source; the others need AUTH_ISSUER), and secrets never shown in a message.
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/core/config'
import { resolveConfig } from '../../../src/edge-options'

const base = { ORIGIN_URL: 'http://127.0.0.1:9/mcp' }
const on = { ...base, AUTH_ISSUER: 'https://auth.example.com', AUTH_AUDIENCE: 'https://mcp.example.com/mcp', AUTH_JWKS_URL: 'https://auth.example.com/jwks' }
const message = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    return (e as Error).message
  }
  return 'no error'
}

describe('authorization settings', () => {
  it('auth is off by default and on with AUTH_ISSUER, AUTH_AUDIENCE and a key source', () => {
    const off = loadConfig(base)
    expect([off.authIssuer, off.authAudience, off.originAuthorization, off.toolScopes.empty, off.authAlgorithms]).toEqual([null, null, null, true, []])
    const c = loadConfig({ ...on, TOOL_SCOPES: '{"admin_*":"mcp:admin"}', AUTH_ALGORITHMS: 'ES256,RS256', ORIGIN_AUTHORIZATION: 'Bearer edge-secret' })
    expect([c.authIssuer, c.authAudience, c.authJwksUrl, c.authAlgorithms, c.originAuthorization]).toEqual([
      'https://auth.example.com',
      'https://mcp.example.com/mcp',
      'https://auth.example.com/jwks',
      ['ES256', 'RS256'],
      'Bearer edge-secret',
    ])
    expect(c.toolScopes.requiredScopes('admin_drop')).toEqual(['mcp:admin'])
  })

  it('missing partners stop the start, naming the variable and the issuer', () => {
    expect(message(() => loadConfig({ ...base, AUTH_ISSUER: 'https://auth.example.com', AUTH_JWKS_URL: 'https://auth.example.com/jwks' }))).toBe(
      'AUTH_AUDIENCE is unset: with AUTH_ISSUER=https://auth.example.com set (auth on), the edge needs its own resource URL, the MCP endpoint as clients call it, such as https://mcp.example.com/mcp (RFC 8707)'
    )
    expect(message(() => loadConfig({ ...on, AUTH_JWKS_URL: '' }))).toBe(
      "AUTH_JWKS_URL and AUTH_JWKS are both unset: with AUTH_ISSUER=https://auth.example.com set (auth on), set one: the issuer's JWKS URL, or the key set as JSON text"
    )
    expect(message(() => loadConfig({ ...on, AUTH_JWKS: '{"keys":[]}' }))).toBe(
      'AUTH_JWKS_URL=https://auth.example.com/jwks and AUTH_JWKS (value not shown) are both set: set exactly one'
    )
  })

  it('settings that mean something only with auth on are refused without AUTH_ISSUER; secrets are not shown', () => {
    expect(message(() => loadConfig({ ...base, ORIGIN_AUTHORIZATION: 'Bearer s3cr3t' }))).toBe(
      "ORIGIN_AUTHORIZATION (value not shown) is set but AUTH_ISSUER is not: without auth every client would reach the origin with the edge's own credential; set AUTH_ISSUER (the authorization server's issuer) to turn auth on, or unset ORIGIN_AUTHORIZATION"
    )
    expect(message(() => loadConfig({ ...base, TOOL_SCOPES: '{"*":"mcp:tools"}' }))).toBe(
      "TOOL_SCOPES is set but AUTH_ISSUER is not: without auth no token is read, so no tool would be protected; set AUTH_ISSUER (the authorization server's issuer) to turn auth on, or unset TOOL_SCOPES"
    )
    expect(message(() => loadConfig({ ...base, AUTH_AUDIENCE: 'https://mcp.example.com/mcp' }))).toContain(
      'AUTH_AUDIENCE=https://mcp.example.com/mcp is set but AUTH_ISSUER is not'
    )
    const bad = message(() => loadConfig({ ...on, ORIGIN_AUTHORIZATION: 'Bearer s3cr3t\n' }))
    expect(bad).toBe('ORIGIN_AUTHORIZATION (value not shown): expected an Authorization header value of visible ASCII characters and inner spaces, such as Bearer <token>')
    expect(message(() => loadConfig({ ...on, AUTH_JWKS_URL: '', AUTH_JWKS: 'k=s3cr3t' }))).not.toContain('s3cr3t')
  })

  it('each value is checked by its rule: an http issuer off loopback, an unknown algorithm, a bad TOOL_SCOPES entry', () => {
    expect(message(() => loadConfig({ ...on, AUTH_ISSUER: 'http://auth.example.com' }))).toBe(
      'AUTH_ISSUER=http://auth.example.com: expected the issuer identifier of the authorization server: an https:// URL (http:// only for 127.0.0.1, [::1] or localhost) without a fragment'
    )
    expect(message(() => loadConfig({ ...on, AUTH_ALGORITHMS: 'HS256' }))).toMatch(/^AUTH_ALGORITHMS=HS256: expected a comma-separated list of RS256, /)
    expect(message(() => loadConfig({ ...on, TOOL_SCOPES: '{"*":"two words"}' }))).toContain('TOOL_SCOPES: entry "*" maps to "two words", which is not a scope name')
  })

  it('typed options of mcpEdge(): the same rules, the object form of toolScopes', () => {
    const c = resolveConfig({
      origin: base.ORIGIN_URL,
      auth: { issuer: on.AUTH_ISSUER, audience: on.AUTH_AUDIENCE, jwks: '{"keys":[{"kty":"EC"}]}', toolScopes: { 'admin_*': ['mcp:admin', 'mcp:tools'] } },
    })
    expect([c.authIssuer, c.authJwks !== null, c.toolScopes.allScopes]).toEqual([on.AUTH_ISSUER, true, ['mcp:admin', 'mcp:tools']])
    // The options a caller set are named as options (the variable after), not as variables it never set.
    expect(message(() => resolveConfig({ origin: base.ORIGIN_URL, auth: { issuer: on.AUTH_ISSUER, jwksUrl: on.AUTH_JWKS_URL } }))).toBe(
      'auth.audience (AUTH_AUDIENCE) is unset: with auth.issuer=https://auth.example.com (AUTH_ISSUER) set (auth on), the edge needs its own resource URL, the MCP endpoint as clients call it, such as https://mcp.example.com/mcp (RFC 8707)'
    )
    expect(message(() => resolveConfig({ origin: base.ORIGIN_URL, auth: { toolScopes: { '*': 'mcp:tools' } } }))).toBe(
      "auth.toolScopes (TOOL_SCOPES) is set but auth.issuer (AUTH_ISSUER) is not: without auth no token is read, so no tool would be protected; set auth.issuer (AUTH_ISSUER) (the authorization server's issuer) to turn auth on, or unset auth.toolScopes (TOOL_SCOPES)"
    )
    expect(message(() => resolveConfig({ origin: base.ORIGIN_URL, auth: { issuer: on.AUTH_ISSUER, audience: on.AUTH_AUDIENCE } }))).toMatch(
      /^auth\.jwksUrl \(AUTH_JWKS_URL\) and auth\.jwks \(AUTH_JWKS\) are both unset: with auth\.issuer=/
    )
    // Settings the env option holds keep their variable names.
    expect(message(() => resolveConfig({ origin: base.ORIGIN_URL, env: { AUTH_ISSUER: on.AUTH_ISSUER, AUTH_JWKS_URL: on.AUTH_JWKS_URL } }))).toMatch(
      /^auth\.audience \(AUTH_AUDIENCE\) is unset: with AUTH_ISSUER=https:\/\/auth\.example\.com set/
    )
    expect(message(() => resolveConfig({ origin: base.ORIGIN_URL, auth: { isuer: 'x' } as never }))).toBe('unknown option auth.isuer of mcpEdge() (did you mean auth.issuer?)')
  })
})
