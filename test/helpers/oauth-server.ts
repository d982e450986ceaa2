/**
 * A real OAuth 2 authorization server on loopback for the end-to-end auth tests:
 * oauth2-mock-server (axa-group, a maintained mock AS on jose: OpenID discovery at
 * `/.well-known/openid-configuration`, JWKS at `/jwks`, `/authorize` that approves at once and
 * redirects with a code, `/token` for client_credentials, authorization_code with PKCE S256 and
 * refresh_token). It has no dynamic client registration and accepts any `client_id`, so a
 * client brings its own client information.
 *
 * What this helper adds: it listens on 127.0.0.1 with the issuer `http://127.0.0.1:<port>`
 * (the package's default says `localhost`), and the access tokens of `/token` carry
 * `aud` = the request's RFC 8707 `resource` parameter (the package leaves it unset for
 * authorization_code) and `client_id`, and an authorization-code token carries the scope asked
 * for at `/authorize` (the package writes `dummy` unless the token request repeats it), as a
 * resource-indicator-aware server issues them.
 * Package version 9.3.0 declares Node ^22.12 but runs on Node 20 (this suite checks it).
 */
import { OAuth2Server } from 'oauth2-mock-server'

/** A running authorization server. */
export interface OAuthServer {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens and its discovery base. */
  issuer: string
  /** Its JWKS (`<issuer>/jwks`). */
  jwksUrl: string
  /** A signed access token made directly (no HTTP): `aud` audience, `scope` the scopes, `sub` (default `user-1`), `client_id`, lifetime `expiresInS` (default 300). */
  token(opts: { audience: string; scope: string; sub?: string; clientId?: string; expiresInS?: number }): Promise<string>
  /** The tokens `/token` signed so far (for assertions on what a client obtained). */
  issuedCount(): number
  stop(): Promise<void>
}

/** Starts oauth2-mock-server on 127.0.0.1 (a free port) with one key of `alg` (default RS256). */
export async function startOAuthServer(opts: { alg?: string } = {}): Promise<OAuthServer> {
  const server = new OAuth2Server()
  await server.issuer.keys.generate(opts.alg ?? 'RS256')
  await server.start(0, '127.0.0.1')
  const issuer = `http://127.0.0.1:${server.address().port}`
  server.issuer.url = issuer
  let issued = 0
  /** The scope asked for at /authorize, per code. */
  const codeScopes = new Map<string, string>()
  server.service.on('beforeAuthorizeRedirect', (redirect: { url: URL }, req: { url?: string }) => {
    const scope = new URL(req.url ?? '/', issuer).searchParams.get('scope')
    const code = redirect.url.searchParams.get('code')
    if (code && scope) codeScopes.set(code, scope)
  })
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: { body?: Record<string, unknown> }) => {
    issued++
    const body = req.body ?? {}
    if (typeof body.code === 'string' && codeScopes.has(body.code) && typeof body.scope !== 'string') token.payload.scope = codeScopes.get(body.code)
    if (typeof body.resource === 'string') token.payload.aud = body.resource
    if (typeof body.client_id === 'string' && token.payload.client_id === undefined) token.payload.client_id = body.client_id
  })
  server.service.on('beforeResponse', (response: { body: Record<string, unknown> | '' }, req: { body?: Record<string, unknown> }) => {
    const code = req.body?.code
    if (typeof code === 'string' && codeScopes.has(code) && typeof response.body === 'object') {
      if (typeof req.body?.scope !== 'string') response.body.scope = codeScopes.get(code)
      codeScopes.delete(code)
    }
  })
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    token: ({ audience, scope, sub = 'user-1', clientId = 'client-1', expiresInS = 300 }) =>
      server.issuer.buildToken({
        expiresIn: expiresInS,
        scopesOrTransform: (_header, payload) => {
          Object.assign(payload, { aud: audience, scope, sub, client_id: clientId })
        },
      }),
    issuedCount: () => issued,
    stop: () => server.stop(),
  }
}
