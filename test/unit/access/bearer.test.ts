/** src/core/access/bearer.ts: reading the bearer token, the 401/403/503 challenges (RFC 6750 §3), the resource URL rules and the RFC 9728 metadata document and its URLs. */
import { describe, expect, it } from 'vitest'
import {
  bearerToken,
  challengeValue,
  checkResourceUrl,
  insufficientScopeChallenge,
  MAX_TOKEN_LENGTH,
  protectedResourceMetadata,
  protectedResourceMetadataPaths,
  protectedResourceMetadataUrl,
  tokenChallenge,
} from '../../../src/core/access/bearer'

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln'

describe('bearerToken', () => {
  it('reads Bearer <token>, the scheme case-insensitive', () => {
    expect(bearerToken(`Bearer ${TOKEN}`)).toEqual({ ok: true, token: TOKEN })
    expect(bearerToken(`bearer ${TOKEN}`)).toEqual({ ok: true, token: TOKEN })
  })
  it.each([
    [null, 'missing'],
    ['', 'missing'],
    ['Basic dXNlcjpwdw==', 'missing'],
    ['Bearer', 'malformed'],
    ['Bearer ', 'malformed'],
    [`Bearer ${TOKEN} second`, 'malformed'],
    ['Bearer ab"cd', 'malformed'],
    [`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`, 'malformed'],
  ])('%j -> %s, and the message never holds the value', (value, code) => {
    const r = bearerToken(value)
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.failure.code).toBe(code)
    if (value)
      for (const part of value
        .split(' ')
        .slice(1)
        .filter((p) => p !== ''))
        expect(r.failure.message).not.toContain(part)
  })
})

describe('challenges', () => {
  const url = 'https://edge.example/.well-known/oauth-protected-resource/mcp'
  it('missing: 401 with resource_metadata and no error code (RFC 6750 §3.1)', () => {
    expect(tokenChallenge({ code: 'missing', message: 'x' }, url)).toEqual({ status: 401, wwwAuthenticate: `Bearer resource_metadata="${url}"` })
  })
  it('an invalid token: 401 invalid_token with the description', () => {
    expect(tokenChallenge({ code: 'expired', message: 'The access token has expired; get a new one.' }, url)).toEqual({
      status: 401,
      wwwAuthenticate: `Bearer resource_metadata="${url}", error="invalid_token", error_description="The access token has expired; get a new one."`,
    })
  })
  it('keys unavailable: 503 with Retry-After, no claim that the token is invalid', () => {
    expect(tokenChallenge({ code: 'jwks_unavailable', message: 'x' }, url)).toEqual({ status: 503, wwwAuthenticate: null, retryAfterS: 5 })
  })
  it('insufficient scope: 403 challenge naming every needed scope', () => {
    expect(insufficientScopeChallenge(['mcp:admin', 'mcp:tools'], url, 'The tool "drop" needs scope mcp:admin.')).toBe(
      `Bearer error="insufficient_scope", scope="mcp:admin mcp:tools", resource_metadata="${url}", error_description="The tool 'drop' needs scope mcp:admin."`
    )
  })
  it('the scope every call needs is named in each 401 (RFC 6750 §3, MCP 2025-11-25 Scope Selection Strategy), never in the 503', () => {
    expect(tokenChallenge({ code: 'missing', message: 'x' }, url, ['mcp:tools'])).toEqual({ status: 401, wwwAuthenticate: `Bearer resource_metadata="${url}", scope="mcp:tools"` })
    expect(tokenChallenge({ code: 'expired', message: 'Expired.' }, url, ['a', 'b']).wwwAuthenticate).toBe(
      `Bearer resource_metadata="${url}", scope="a b", error="invalid_token", error_description="Expired."`
    )
    expect(tokenChallenge({ code: 'jwks_unavailable', message: 'x', retryAfterS: 17 }, url, ['a'])).toEqual({ status: 503, wwwAuthenticate: null, retryAfterS: 17 })
  })
  it('every refusal of bearerToken reads the same in the challenge as in the body: printable ASCII, nothing turned into ?', () => {
    for (const header of [null, 'Basic abc', 'Bearer', 'Bearer a b', 'Bearer a\u00e9', `Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`]) {
      const r = bearerToken(header)
      if (r.ok) throw new Error(`accepted ${header}`)
      expect(r.failure.message, String(header)).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/)
      const c = tokenChallenge(r.failure, url, ['mcp:tools']).wwwAuthenticate!
      if (r.failure.code !== 'missing') expect(c, String(header)).toContain(`error_description="${r.failure.message}"`)
    }
    expect(bearerToken('Bearer a b')).toMatchObject({ failure: { message: expect.stringContaining('(RFC 6750 section 2.1: Bearer, one space, the token)') as unknown } })
  })
  it('challenge values: a quote becomes an apostrophe, backslashes and non-ASCII are written as U+XXXX (never a bare ?), bounded', () => {
    expect(challengeValue('a"b\\c\u00e9\n')).toBe('"a\'bU+005CcU+00E9U+000A"')
    expect(challengeValue('\u{1F600}')).toBe('"U+1F600"')
    expect(challengeValue('x'.repeat(400))).toHaveLength(302)
    // The 403 of a tool named in fullwidth letters says which tool, not "The tool ????".
    const c = insufficientScopeChallenge(
      ['mcp:echo'],
      'https://edge.example/.well-known/oauth-protected-resource/mcp',
      'The tool \uff25\uff23\uff28\uff2f needs the scope mcp:echo'
    )
    expect(c).toContain('error_description="The tool U+FF25U+FF23U+FF28U+FF2F needs the scope mcp:echo"')
    expect(c).toMatch(/^[\x20-\x7e]+$/)
  })
})

describe('resource URL and metadata', () => {
  it.each([
    ['https://edge.example/mcp', 'https://edge.example/.well-known/oauth-protected-resource/mcp'],
    ['https://edge.example/mcp/', 'https://edge.example/.well-known/oauth-protected-resource/mcp'],
    ['https://edge.example/', 'https://edge.example/.well-known/oauth-protected-resource'],
    ['https://edge.example', 'https://edge.example/.well-known/oauth-protected-resource'],
    ['https://edge.example:8443/tenants/a/mcp?x=1', 'https://edge.example:8443/.well-known/oauth-protected-resource/tenants/a/mcp?x=1'],
  ])('%s -> %s (RFC 9728 §3.1)', (resource, metadata) => {
    expect(protectedResourceMetadataUrl(resource)).toBe(metadata)
  })
  it('the edge answers on the path-suffixed form and the root form', () => {
    expect(protectedResourceMetadataPaths('https://edge.example/mcp')).toEqual(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'])
    expect(protectedResourceMetadataPaths('https://edge.example/')).toEqual(['/.well-known/oauth-protected-resource'])
  })
  it.each([
    ['not a url', false],
    ['http://edge.example/mcp', false],
    ['http://127.0.0.1:8787/mcp', true],
    ['https://edge.example/mcp#x', false],
    ['https://edge.example/mcp#', false],
    ['https://u:p@edge.example/mcp', false],
    ['https://edge.example/mcp', true],
  ])('checkResourceUrl(%s): %s', (value, ok) => {
    expect(checkResourceUrl(value).ok).toBe(ok)
  })
  it('the document (RFC 9728 §2)', () => {
    expect(protectedResourceMetadata({ resource: 'https://edge.example/mcp', issuer: 'https://as.example', scopes: ['mcp:tools'] })).toEqual({
      resource: 'https://edge.example/mcp',
      authorization_servers: ['https://as.example'],
      scopes_supported: ['mcp:tools'],
      bearer_methods_supported: ['header'],
    })
    expect(protectedResourceMetadata({ resource: 'https://e/mcp', issuer: 'https://as' })).not.toHaveProperty('scopes_supported')
  })
})
