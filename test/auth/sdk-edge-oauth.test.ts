/**
 * The official SDK client's whole OAuth flow against the edge itself (both runtimes), through its
 * Streamable HTTP transport with an auth provider, and a real authorization server on loopback
 * (oauth2-mock-server, test/helpers/oauth-server.ts): the first POST gets 401, the SDK reads the
 * challenge and the edge's protected resource metadata (RFC 9728), discovers the authorization
 * server, runs the authorization-code flow with PKCE and `resource` (RFC 8707) for the scope the
 * 401 challenge names (the base scope of TOOL_SCOPES, not every scope of `scopes_supported`), gets
 * a token and connects; a client whose token lacks the admin scope gets 403 insufficient_scope on
 * the admin tool, steps up with the scope the challenge names, and the call then goes through. A
 * client-credentials client that asks for the scope the challenge names connects and calls. The
 * origin sees the edge's credential only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { extractWWWAuthenticateParams, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, ORIGIN_CREDENTIAL, toolOrigin } from '../helpers/auth-edge'
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'

/**
 * An SDK auth provider with a pre-registered public client (the mock server has no dynamic
 * registration). The "browser" follows the authorize redirect itself and keeps the code. It keeps
 * no refresh token, so a step-up runs the authorization flow again with the scope asked for.
 */
function provider(initial?: OAuthTokens) {
  let tokens: OAuthTokens | undefined = initial
  let verifier = ''
  let code: string | null = null
  const redirectUrl = 'http://127.0.0.1:1/callback'
  const authorizeUrls: URL[] = []
  const p: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl
    },
    get clientMetadata() {
      return { redirect_uris: [redirectUrl], client_name: 'sdk-edge-test', token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] }
    },
    clientInformation: (): OAuthClientInformationMixed => ({ client_id: 'mcp-client' }),
    tokens: () => tokens,
    saveTokens: (t) => {
      const { refresh_token: _dropped, ...rest } = t
      tokens = rest
    },
    async redirectToAuthorization(url) {
      authorizeUrls.push(url)
      const res = await fetch(url, { redirect: 'manual' })
      code = new URL(res.headers.get('location')!).searchParams.get('code')
    },
    saveCodeVerifier: (v) => void (verifier = v),
    codeVerifier: () => verifier,
  }
  return { p, code: () => code!, token: () => tokens?.access_token, authorizeUrls }
}

describe.each(RUNTIMES)('the SDK OAuth client against the edge on $name', ({ start }) => {
  let as: OAuthServer
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let url: string
  beforeAll(async () => {
    as = await startOAuthServer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    toolOrigin(origin)
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    edge = await start(
      {
        ORIGIN_URL: origin.url,
        AUTH_ISSUER: as.issuer,
        AUTH_AUDIENCE: url,
        AUTH_JWKS_URL: as.jwksUrl,
        ORIGIN_AUTHORIZATION: ORIGIN_CREDENTIAL,
        TOOL_SCOPES: '{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}',
      },
      { port }
    )
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await as?.stop()
  })

  it('401 -> metadata -> authorization server -> code with PKCE and resource, for the scope the challenge names -> token -> connected; the tools are called', async () => {
    const c = provider()
    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: c.p })
    await expect(new Client({ name: 'sdk-edge-test', version: '1' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
    // The SDK went to the authorization server the edge's metadata names, for this resource, with
    // the scope the 401 challenge names: the base scope, not mcp:admin too (every scope of scopes_supported).
    const authorize = c.authorizeUrls[0]!
    expect(authorize.origin).toBe(as.issuer)
    expect(authorize.searchParams.get('resource')).toBe(url)
    expect(authorize.searchParams.get('scope')).toBe('mcp:tools')
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
    await first.finishAuth(c.code())

    const client = new Client({ name: 'sdk-edge-test', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: c.p }))
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'admin_drop'])
      expect(await client.callTool({ name: 'echo', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'ran echo' }] })
    } finally {
      await client.close()
    }
    const token = c.token()!
    for (const q of origin.received) {
      expect(q.headers.authorization).toBe(ORIGIN_CREDENTIAL)
      expect(JSON.stringify(q.headers)).not.toContain(token.split('.')[2]!)
    }
  })

  it('403 insufficient_scope on the admin tool -> step up with the scope the challenge names -> the call goes through', async () => {
    const narrow = await as.token({ audience: url, scope: 'mcp:tools' })
    const c = provider({ access_token: narrow, token_type: 'Bearer' })
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: c.p })
    const client = new Client({ name: 'sdk-edge-test', version: '1' })
    await client.connect(transport)
    try {
      expect(await client.callTool({ name: 'echo', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'ran echo' }] })
      await expect(client.callTool({ name: 'admin_drop', arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError)
      // The step-up asked for every scope the tool needs, as the 403 challenge named them.
      expect(c.authorizeUrls.map((u) => u.searchParams.get('scope'))).toEqual(['mcp:admin mcp:tools'])
      await transport.finishAuth(c.code())
      expect(c.token()).not.toBe(narrow)
      expect(await client.callTool({ name: 'admin_drop', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'ran admin_drop' }] })
    } finally {
      await client.close()
    }
    const denied = (await edge.logs({ msg: 'mcp.denied', where: (r) => r.reason === 'insufficient_scope' })).filter(
      (r) => r.msg === 'mcp.denied' && r.reason === 'insufficient_scope'
    )
    expect(denied.map((r) => [r.tool, r.scope, r.status])).toEqual([['admin_drop', 'mcp:admin mcp:tools', 403]])
  })

  it('client credentials for the scope the 401 challenge names: connected, the tool called (no "403 after trying upscoping")', async () => {
    // The SDK's client-credentials token request carries the provider's own scope only (its
    // fetchToken reads clientMetadata.scope, not the challenge), so a service client takes the
    // scope from the challenge, as the SDK's own parser reads it.
    const challenge = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
    expect(challenge.status).toBe(401)
    const { scope } = extractWWWAuthenticateParams(challenge)
    await challenge.text()
    expect(scope).toBe('mcp:tools')
    const tokenRequests: string[] = []
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      authProvider: new ClientCredentialsProvider({ clientId: 'service-1', clientSecret: 'service-secret', scope, expectedIssuer: as.issuer }),
      fetch: (input, init) => {
        if (String(input).endsWith('/token')) tokenRequests.push(String(init?.body))
        return fetch(input, init)
      },
    })
    const client = new Client({ name: 'sdk-edge-cc', version: '1' })
    await client.connect(transport)
    try {
      expect(await client.callTool({ name: 'echo', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'ran echo' }] })
    } finally {
      await client.close()
    }
    expect(tokenRequests.map((b) => new URLSearchParams(b).get('scope'))).toEqual(['mcp:tools'])
  })
})
