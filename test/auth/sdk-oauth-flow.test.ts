/**
 * The official SDK's OAuth client (`auth()` of @modelcontextprotocol/sdk 1.x, the code its
 * Streamable HTTP transport runs on a 401 or 403) against the resource-server building blocks
 * and a real authorization server on loopback (oauth2-mock-server): the 401 challenge names the
 * metadata, the SDK reads it (RFC 9728), discovers the authorization server, runs the
 * authorization-code flow with PKCE and `resource` (RFC 8707), and the token it gets verifies;
 * a 403 insufficient_scope challenge makes it ask again with the scope named, and the new token
 * carries it. The resource server here is a few lines over the building blocks (the edge's
 * own route is planned wiring); the SDK and the authorization server are the real ones.
 */
import { auth, extractWWWAuthenticateParams, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJwtVerifier } from '../../src/auth/jwt-verifier'
import {
  bearerToken,
  insufficientScopeChallenge,
  protectedResourceMetadata,
  protectedResourceMetadataPaths,
  protectedResourceMetadataUrl,
  tokenChallenge,
  type TokenVerifier,
} from '../../src/core/access/bearer'
import { parseToolScopes } from '../../src/core/access/tool-scopes'
import { cachedVerifier } from '../../src/core/access/verified-token-cache'
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server'
import { createAsyncServer } from '../helpers/async-listener'

let as: OAuthServer
let rs: Server
let resource: string
let verifier: TokenVerifier
const scopes = parseToolScopes('{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}')

beforeAll(async () => {
  as = await startOAuthServer({ alg: 'ES256' })
  rs = createAsyncServer(async (req, res) => {
    const path = new URL(req.url ?? '/', resource).pathname
    if (req.method === 'GET' && protectedResourceMetadataPaths(resource).includes(path)) {
      const doc = protectedResourceMetadata({ resource, issuer: as.issuer, scopes: scopes.allScopes })
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc))
    }
    const metadataUrl = protectedResourceMetadataUrl(resource)
    const b = bearerToken(req.headers.authorization)
    const v = b.ok ? await verifier.verify(b.token) : b
    if (!v.ok) {
      const c = tokenChallenge(v.failure, metadataUrl)
      return void res.writeHead(c.status, c.wwwAuthenticate ? { 'www-authenticate': c.wwwAuthenticate } : {}).end(v.failure.message)
    }
    const tool = String(req.headers['x-tool'] ?? 'echo')
    if (scopes.missingScope(v.identity.scopes, tool)) {
      const need = scopes.requiredScopes(tool)
      return void res.writeHead(403, { 'www-authenticate': insufficientScopeChallenge(need, metadataUrl, `The tool ${tool} needs the scopes ${need.join(' ')}.`) }).end()
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sub: v.identity.sub, scopes: [...v.identity.scopes].sort() }))
  })
  await new Promise<void>((r) => rs.listen(0, '127.0.0.1', r))
  resource = `http://127.0.0.1:${(rs.address() as AddressInfo).port}/mcp`
  verifier = cachedVerifier(createJwtVerifier({ issuer: as.issuer, audience: resource, jwksUrl: as.jwksUrl }))
})
afterAll(async () => {
  rs?.closeAllConnections()
  await new Promise((r) => rs?.close(r))
  await as?.stop()
})

/** An SDK client provider with a pre-registered client (the mock server has no dynamic registration); the "browser" follows the authorize redirect itself. */
function provider() {
  let tokens: OAuthTokens | undefined
  let verifier = ''
  let code: string | null = null
  const redirectUrl = 'http://127.0.0.1:1/callback'
  const p: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl
    },
    get clientMetadata() {
      return { redirect_uris: [redirectUrl], client_name: 'sdk-test', token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] }
    },
    clientInformation: (): OAuthClientInformationMixed => ({ client_id: 'mcp-client' }),
    tokens: () => tokens,
    saveTokens: (t) => void (tokens = t),
    async redirectToAuthorization(url) {
      const res = await fetch(url, { redirect: 'manual' })
      code = new URL(res.headers.get('location')!).searchParams.get('code')
    },
    saveCodeVerifier: (v) => void (verifier = v),
    codeVerifier: () => verifier,
  }
  return { p, token: () => tokens?.access_token, code: () => code }
}

async function call(token: string | undefined, tool = 'echo'): Promise<Response> {
  return fetch(resource, { method: 'POST', headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'x-tool': tool }, body: '{}' })
}

describe('the SDK OAuth client against the building blocks and oauth2-mock-server', () => {
  it('401 -> metadata -> authorization server -> code with PKCE -> token for this resource; 403 -> step up with the scope named', async () => {
    const first = await call(undefined)
    expect(first.status).toBe(401)
    const challenge = extractWWWAuthenticateParams(first)
    expect(challenge.resourceMetadataUrl?.href).toBe(protectedResourceMetadataUrl(resource))

    const c = provider()
    expect(await auth(c.p, { serverUrl: resource, resourceMetadataUrl: challenge.resourceMetadataUrl })).toBe('REDIRECT')
    expect(c.code()).toBeTruthy()
    expect(await auth(c.p, { serverUrl: resource, resourceMetadataUrl: challenge.resourceMetadataUrl, authorizationCode: c.code()! })).toBe('AUTHORIZED')

    const ok = await call(c.token())
    expect(ok.status).toBe(200)
    // The SDK asked for scopes_supported of the metadata (no scope in the 401 challenge).
    expect(await ok.json()).toEqual({ sub: 'johndoe', scopes: ['mcp:admin', 'mcp:tools'] })

    // A client holding only mcp:tools calls an admin tool: 403 names every scope it needs.
    const narrow = await as.token({ audience: resource, scope: 'mcp:tools' })
    const denied = await call(narrow, 'admin_drop')
    expect(denied.status).toBe(403)
    const step = extractWWWAuthenticateParams(denied)
    expect([step.error, step.scope, step.resourceMetadataUrl?.href]).toEqual(['insufficient_scope', 'mcp:admin mcp:tools', protectedResourceMetadataUrl(resource)])

    const s = provider()
    expect(await auth(s.p, { serverUrl: resource, resourceMetadataUrl: step.resourceMetadataUrl, scope: step.scope })).toBe('REDIRECT')
    expect(await auth(s.p, { serverUrl: resource, resourceMetadataUrl: step.resourceMetadataUrl, authorizationCode: s.code()! })).toBe('AUTHORIZED')
    const after = await call(s.token(), 'admin_drop')
    expect(after.status).toBe(200)
    expect(await after.json()).toEqual({ sub: 'johndoe', scopes: ['mcp:admin', 'mcp:tools'] })
  })

  it('a token for another resource gets 401 invalid_token naming the resource to ask for', async () => {
    const res = await call(await as.token({ audience: 'http://127.0.0.1:1/other', scope: 'mcp:tools' }))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${protectedResourceMetadataUrl(resource)}", error="invalid_token", error_description="The access token was not issued for this resource (its aud does not contain ${resource}); request it with resource=${resource} (RFC 8707)."`
    )
  })
})
