/**
 * The edge as an OAuth resource server, end to end on both runtimes (the Node entry and the built
 * Worker in workerd): a real token issuer on loopback (keys made here, JWKS over HTTP,
 * test/helpers/token-issuer.ts), an origin that records every request it receives, and the edge
 * started with AUTH_ISSUER, AUTH_AUDIENCE (its own URL), AUTH_JWKS_URL, ORIGIN_AUTHORIZATION and
 * TOOL_SCOPES. Each refusal is checked on its status, its challenge, its message text, its log
 * line and its metric; the origin must never see the client's token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { freePort, ORIGIN_CREDENTIAL, toolOrigin } from '../helpers/auth-edge'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'
import { mcpHeaders } from '../helpers/mcp'
import { toolKey } from '../../src/core/validation/tool-store'

describe.each(RUNTIMES)('the edge as a resource server on $name', ({ name, start }) => {
  let iss: TokenIssuer
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let url: string
  let metadataUrl: string
  beforeAll(async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    toolOrigin(origin)
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    metadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`
    edge = await start(
      {
        ORIGIN_URL: origin.url,
        AUTH_ISSUER: iss.issuer,
        AUTH_AUDIENCE: url,
        AUTH_JWKS_URL: iss.jwksUrl,
        AUTH_JWKS_COOLDOWN_MS: '0',
        ORIGIN_AUTHORIZATION: ORIGIN_CREDENTIAL,
        TOOL_SCOPES: '{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}',
        ALLOWED_ORIGINS: 'https://app.example',
      },
      { port }
    )
    expect(edge.url).toBe(url)
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await iss?.stop()
  })

  const call = (id: number, tool: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: {} } })
  async function post(body: unknown, authorization?: string, extra: Record<string, string> = {}) {
    const res = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders('2025-06-18', { ...(authorization ? { authorization } : {}), 'x-request-id': `rid-${Math.random().toString(36).slice(2)}`, ...extra }),
      body: JSON.stringify(body),
    })
    const text = await res.text()
    return { res, status: res.status, text, json: text ? (JSON.parse(text) as Record<string, any>) : null, rid: '' }
  }
  /** The mcp.denied line of a request id. */
  const deniedLine = async (rid: string) => (await edge.logs({ msg: 'mcp.denied', where: (r) => r.rid === rid })).find((r) => r.msg === 'mcp.denied' && r.rid === rid)!
  const token = (claims: Record<string, unknown> = {}) => iss.issue(url, { claims: { scope: 'mcp:tools', ...claims } })

  it('no token: 401 with the metadata challenge (no error code), a JSON-RPC body saying what to send; one log line; the origin is not asked', async () => {
    const before = origin.received.length
    const rid = `rid-none-${name}`
    const r = await post(call(1, 'echo'), undefined, { 'x-request-id': rid })
    expect(r.status).toBe(401)
    // The scope every call needs (TOOL_SCOPES "*"), so that a client asks for it and not for mcp:admin too.
    expect(r.res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp:tools"`)
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'This edge needs an OAuth access token: send Authorization: Bearer <token> (the 401 answer names the resource metadata that says where to get one).',
        data: { source: 'edge', reason: 'no_token', resource_metadata: metadataUrl },
      },
    })
    expect(await deniedLine(rid)).toMatchObject({ level: 'warn', rid, origin: 'default', reason: 'no_token', status: 401, method: 'POST' })
    expect(origin.received.length).toBe(before)
  })

  it('a browser page may read the challenge (WWW-Authenticate exposed)', async () => {
    const r = await post(call(1, 'echo'), undefined, { origin: 'https://app.example' })
    expect(r.status).toBe(401)
    expect(r.res.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(r.res.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate')
  })

  it('bad tokens: 401 invalid_token, each with its own message; never the token in the answer or the log', async () => {
    const now = Math.floor(Date.now() / 1000)
    const stray = await iss.strayKey('ES256', iss.current().kid)
    const fresh = `get a new access token from ${iss.issuer} for ${url}`
    const cases: [string, string, string, string][] = [
      ['expired', await token({ exp: now - 120 }), 'expired', `The access token has expired (exp is more than 30 s in the past); ${fresh}.`],
      [
        'wrong audience',
        await iss.issue('https://other.example/mcp', { claims: { scope: 'mcp:tools' } }),
        'wrong_audience',
        `The access token was not issued for this resource (its aud does not contain ${url}); request it with resource=${url} (RFC 8707).`,
      ],
      ['wrong issuer', await token({ iss: 'https://evil.example' }), 'wrong_issuer', `The access token was not issued by ${iss.issuer} (its iss differs); ${fresh}.`],
      ['wrong key', await iss.issue(url, { key: stray }), 'bad_signature', `The access token signature does not verify with the issuer's key; ${fresh}.`],
      [
        'alg none',
        iss.unsecured(url),
        'alg_not_allowed',
        `The access token is signed with an algorithm this edge does not accept (allowed: RS256, ES256, PS256, EdDSA); ${fresh}.`,
      ],
      ['not a JWT', 'abc.def.ghi', 'malformed', `The bearer token is not a well-formed signed JWT access token; ${fresh}.`],
    ]
    for (const [what, t, code, message] of cases) {
      const rid = `rid-bad-${code}-${name}`
      const r = await post(call(1, 'echo'), `Bearer ${t}`, { 'x-request-id': rid })
      expect(r.status, what).toBe(401)
      expect(r.res.headers.get('www-authenticate'), what).toBe(
        `Bearer resource_metadata="${metadataUrl}", scope="mcp:tools", error="invalid_token", error_description="${message}"`
      )
      expect(r.json?.error, what).toEqual({ code: -32600, message, data: { source: 'edge', reason: 'invalid_token', tokenError: code, resource_metadata: metadataUrl } })
      const line = await deniedLine(rid)
      expect(line, what).toMatchObject({ reason: 'invalid_token', tokenError: code, status: 401 })
      for (const part of t.split('.')) if (part.length > 8) expect(JSON.stringify(line) + r.text, what).not.toContain(part)
    }
  })

  it('a valid token: the call goes through; the origin gets ORIGIN_AUTHORIZATION, never the client token, on the call and on the tool-list pull', async () => {
    origin.reset()
    const t = await token()
    const r = await post(call(7, 'echo'), `Bearer ${t}`)
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'ran echo' }] } })
    expect(origin.received.length).toBeGreaterThan(0)
    for (const q of origin.received) {
      expect(q.headers.authorization).toBe(ORIGIN_CREDENTIAL)
      expect(JSON.stringify(q.headers)).not.toContain(t.split('.')[2]!)
    }
    const line = (await edge.logs({ msg: 'mcp.post', where: (l) => l.sub === 'user-1' })).find((l) => l.sub === 'user-1')
    expect(line).toBeDefined()
  })

  it('GET and DELETE need a token too, and forward the edge credential', async () => {
    const get = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } })
    expect(get.status).toBe(401)
    expect(get.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp:tools"`)
    await get.text()
    origin.reset()
    const t = await token()
    const del = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${t}`, 'mcp-session-id': 's1', 'mcp-protocol-version': '2025-06-18' } })
    expect(del.status).toBe(200)
    await del.text()
    expect(origin.received.map((q) => [q.method, q.headers.authorization])).toEqual([['DELETE', ORIGIN_CREDENTIAL]])
  })

  it('the protected resource metadata at the path-suffixed URL and at the root (RFC 9728)', async () => {
    for (const u of [metadataUrl, new URL('/.well-known/oauth-protected-resource', url).href]) {
      const res = await fetch(u)
      expect(res.status, u).toBe(200)
      expect(res.headers.get('content-type')).toContain('application/json')
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(await res.json()).toEqual({ resource: url, authorization_servers: [iss.issuer], scopes_supported: ['mcp:admin', 'mcp:tools'], bearer_methods_supported: ['header'] })
    }
    expect((await fetch(new URL('/.well-known/oauth-protected-resource/other', url))).status).toBe(404)
  })

  it('a page may read the metadata: the preflight for the MCP-Protocol-Version header the SDK sends is answered', async () => {
    const res = await fetch(metadataUrl, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect((res.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('mcp-protocol-version')
  })

  it('health stays open; metrics count each denial by reason', async () => {
    expect((await fetch(new URL('/healthz', url))).status).toBe(200)
    const text = await (await fetch(new URL('/metrics', url))).text()
    expect(text).toMatch(/mcp_edge_denials_total\{reason="no_token"\} [1-9]/)
    expect(text).toMatch(/mcp_edge_denials_total\{reason="invalid_token"\} [1-9]/)
  })

  it('an unknown kid is refused, then accepted once the issuer publishes the key (rotation)', async () => {
    const next = await iss.strayKey('ES256')
    const rotated = await iss.issue(url, { key: next, claims: { scope: 'mcp:tools' } })
    const r = await post(call(1, 'echo'), `Bearer ${rotated}`)
    expect(r.status).toBe(401)
    expect(r.json?.error.data.tokenError).toBe('unknown_key')
    const reads = iss.jwksRequests()
    iss.publish(next)
    const ok = await post(call(2, 'echo'), `Bearer ${rotated}`)
    expect(ok.status).toBe(200)
    expect(iss.jwksRequests()).toBe(reads + 1)
    // Cached now: the same token again reads nothing.
    expect((await post(call(3, 'echo'), `Bearer ${rotated}`)).status).toBe(200)
    expect(iss.jwksRequests()).toBe(reads + 1)
  })
  const needAdmin = `The tool admin_drop needs the scopes mcp:admin mcp:tools; this access token lacks mcp:admin. Ask the authorization server for a token with these scopes (the 403 challenge names them in scope) and call again.`

  it('scope lacking, single call: 403 insufficient_scope naming every scope the tool needs, a per-id error; nothing reaches the origin', async () => {
    origin.reset()
    const rid = `rid-scope-${name}`
    const r = await post(call(5, 'admin_drop'), `Bearer ${await token()}`, { 'x-request-id': rid })
    expect(r.status).toBe(403)
    expect(r.res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="mcp:admin mcp:tools", resource_metadata="${metadataUrl}", error_description="${needAdmin}"`
    )
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: {
        code: -31010,
        message: needAdmin,
        data: { source: 'edge', reason: 'insufficient_scope', scope: 'mcp:admin mcp:tools', missing: ['mcp:admin'], resource_metadata: metadataUrl },
      },
    })
    expect(await deniedLine(rid)).toMatchObject({ reason: 'insufficient_scope', status: 403, id: '5', tool: 'admin_drop', scope: 'mcp:admin mcp:tools', sub: 'user-1' })
    expect(origin.forwarded().length).toBe(0)
    // With the scope: the same call goes through.
    const ok = await post(call(6, 'admin_drop'), `Bearer ${await token({ scope: 'mcp:tools mcp:admin' })}`)
    expect([ok.status, ok.json?.result]).toEqual([200, { content: [{ type: 'text', text: 'ran admin_drop' }] }])
  })

  it('scope lacking inside a batch: that element gets the per-id error, the others go on (200)', async () => {
    origin.reset()
    const rid = `rid-batch-${name}`
    const res = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders('2025-03-26', { authorization: `Bearer ${await token()}`, 'x-request-id': rid }),
      body: JSON.stringify([call(1, 'echo'), call(2, 'admin_drop'), call(3, 'echo')]),
    })
    expect(res.status).toBe(200)
    const out = ((await res.json()) as { id: number }[]).sort((a, b) => a.id - b.id)
    expect(out).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ran echo' }] } },
      {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -31010,
          message: needAdmin,
          data: { source: 'edge', reason: 'insufficient_scope', scope: 'mcp:admin mcp:tools', missing: ['mcp:admin'], resource_metadata: metadataUrl },
        },
      },
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'ran echo' }] } },
    ])
    expect(await deniedLine(rid)).toMatchObject({ reason: 'insufficient_scope', status: 200, id: '2', tool: 'admin_drop' })
    const sent = origin.forwarded().flatMap((q) => (Array.isArray(q.json) ? q.json : [q.json])) as { id: number }[]
    expect(sent.map((m) => m.id).sort()).toEqual([1, 3])
  })

  it('a token without even the catch-all scope: every tool refused; tools/list still shows every tool (the list does not depend on the caller)', async () => {
    const t = await token({ scope: 'other' })
    const r = await post(call(1, 'echo'), `Bearer ${t}`)
    expect([r.status, r.json?.error.data.scope]).toEqual([403, 'mcp:tools'])
    const list = await post({ jsonrpc: '2.0', id: 9, method: 'tools/list' }, `Bearer ${t}`)
    expect(list.json?.result.tools.map((x: { name: string }) => x.name)).toEqual(['echo', 'admin_drop'])
  })
})

describe.each(RUNTIMES)('keys that cannot be read on $name', ({ name, start }) => {
  it('503 with Retry-After and no challenge (the token may be fine), one log line, never 500', async () => {
    const iss = await startTokenIssuer({ alg: 'ES256' })
    const t = await iss.issue('http://127.0.0.1:1/mcp')
    await iss.stop() // the JWKS is down
    const origin = await startScriptedOrigin()
    const edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: 'http://127.0.0.1:1/mcp', AUTH_JWKS_URL: iss.jwksUrl })
    try {
      const rid = `rid-jwks-${name}`
      const res = await fetch(edge.url, {
        method: 'POST',
        headers: mcpHeaders('2025-06-18', { authorization: `Bearer ${t}`, 'x-request-id': rid }),
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      })
      expect(res.status).toBe(503)
      // Retry-After: when the edge reads the keys again (AUTH_JWKS_COOLDOWN_MS after the failed read).
      expect([res.headers.get('retry-after'), res.headers.get('www-authenticate')]).toEqual(['30', null])
      expect(((await res.json()) as { error: unknown }).error).toEqual({
        code: -32603,
        message: `The edge could not read the signing keys of ${iss.issuer} to check the token; try again in 30 s (the token itself may be fine).`,
        data: { source: 'edge', reason: 'jwks_unavailable', resource_metadata: 'http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp' },
      })
      const line = (await edge.logs({ msg: 'mcp.denied', where: (r) => r.rid === rid })).find((r) => r.rid === rid && r.msg === 'mcp.denied')
      expect(line).toMatchObject({ reason: 'jwks_unavailable', status: 503, jwksUrl: iss.jwksUrl, jwksAnswered: expect.stringMatching(/^unreachable/) as unknown })
      expect(origin.received.length).toBe(0)
    } finally {
      await edge.close()
      await origin.close()
    }
  })
})

describe('a mounted edge (mcpEdge in a host app at /tools/mcp)', () => {
  it('serves the metadata at the path-suffixed URL through edge.wellKnown, and checks tokens on its routes', async () => {
    const iss = await startTokenIssuer({ alg: 'ES256' })
    const { Hono } = await import('hono')
    const { mcpEdge } = await import('../../src/adapters/node/node-edge')
    const audience = 'https://host.example/tools/mcp'
    const edge = mcpEdge({ origin: 'http://127.0.0.1:1/mcp', logger: false, auth: { issuer: iss.issuer, audience, jwks: iss.jwksText(), toolScopes: { '*': 'mcp:tools' } } })
    const host = new Hono()
    host.route('/tools/mcp', edge)
    host.route('/', edge.wellKnown)
    try {
      const meta = await host.request('https://host.example/.well-known/oauth-protected-resource/tools/mcp')
      expect(meta.status).toBe(200)
      expect(await meta.json()).toEqual({ resource: audience, authorization_servers: [iss.issuer], scopes_supported: ['mcp:tools'], bearer_methods_supported: ['header'] })
      const denied = await host.request(audience, { method: 'POST', headers: mcpHeaders('2025-06-18'), body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' })
      expect([denied.status, denied.headers.get('www-authenticate')]).toEqual([
        401,
        'Bearer resource_metadata="https://host.example/.well-known/oauth-protected-resource/tools/mcp", scope="mcp:tools"',
      ])
    } finally {
      await edge.close()
      await iss.stop()
    }
  })
})

describe.each(RUNTIMES)('private tool lists keyed by the verified identity on $name', ({ start }) => {
  it('two tokens of one caller share its private list; another caller gets its own; the key holds no token', async () => {
    const { createHash } = await import('node:crypto')
    const scopeOf = (sub: string, clientId: string) =>
      'u-' + createHash('sha256').update(`mcp-edge-validator tool-list scope v1\n\nsub ${sub.length}:${sub}\n+${clientId}`).digest('hex')
    const iss = await startTokenIssuer({ alg: 'ES256' })
    const origin = await startScriptedOrigin()
    origin.handle((r, res) => {
      const m = r.json as { id?: unknown; method?: string } | undefined
      if (m?.id === undefined) return void res.writeHead(202).end()
      sendJson(res, { jsonrpc: '2.0', id: m.id, result: m.method === 'tools/list' ? { tools: [{ name: 'mine', inputSchema: { type: 'object' } }], cacheScope: 'private' } : {} })
    })
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    const edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: url, AUTH_JWKS_URL: iss.jwksUrl }, { port })
    try {
      const list = async (t: string) => {
        const res = await fetch(url, {
          method: 'POST',
          headers: mcpHeaders('2025-06-18', { authorization: `Bearer ${t}` }),
          body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        })
        expect(res.status).toBe(200)
        await res.text()
      }
      const t1 = await iss.issue(url)
      const t2 = await iss.issue(url, { claims: { jti: 'second' } })
      const other = await iss.issue(url, { claims: { sub: 'user-2' } })
      for (const t of [t1, t2, other]) await list(t)
      const key = (scope: string) => toolKey('default', scope, 'mine')
      await expect.poll(() => edge.kvGet(key(scopeOf('user-1', 'client-1'))), { timeout: 5000 }).not.toBeNull()
      await expect.poll(() => edge.kvGet(key(scopeOf('user-2', 'client-1'))), { timeout: 5000 }).not.toBeNull()
      const keys = edge.kvKeys ? await edge.kvKeys('tools:') : []
      expect(keys.filter((k) => k.endsWith(':mine')).sort()).toEqual([key(scopeOf('user-1', 'client-1')), key(scopeOf('user-2', 'client-1'))].sort())
      for (const k of keys) for (const t of [t1, t2, other]) expect(k).not.toContain(t.split('.')[2]!)
    } finally {
      await edge.close()
      await origin.close()
      await iss.stop()
    }
  })
})

describe.each(RUNTIMES)('an origin that refuses the edge credential on $name', ({ start }) => {
  it('its 401 challenge never reaches the client: a gateway error per id (-31001), the cause in the log line', async () => {
    const iss = await startTokenIssuer({ alg: 'ES256' })
    const origin = await startScriptedOrigin()
    origin.handle((r, res) => {
      const m = r.json as { id?: unknown } | undefined
      res
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource", error="invalid_token"',
        })
        .end(JSON.stringify({ jsonrpc: '2.0', id: m?.id ?? null, error: { code: -32001, message: 'origin: bad credential' } }))
    })
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    const edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: url, AUTH_JWKS_URL: iss.jwksUrl, ORIGIN_AUTHORIZATION: 'Bearer stale' }, { port })
    try {
      const t = await iss.issue(url)
      const rid = 'rid-origin-auth'
      const res = await fetch(url, {
        method: 'POST',
        headers: mcpHeaders('2025-06-18', { authorization: `Bearer ${t}`, 'x-request-id': rid }),
        body: '{"jsonrpc":"2.0","id":3,"method":"ping"}',
      })
      expect([res.status, res.headers.get('www-authenticate')]).toEqual([200, null])
      expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -31001, message: 'Origin unavailable or sent an invalid response', data: { source: 'edge' } } })
      const line = (await edge.logs({ msg: 'mcp.post', where: (r) => r.rid === rid })).find((r) => r.rid === rid)
      expect(line).toMatchObject({ originError: 'ORIGIN_AUTH', originErrorText: "the origin refused the edge's own credential (ORIGIN_AUTHORIZATION) with HTTP 401" })
      const get = await fetch(url, { headers: { authorization: `Bearer ${t}`, accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } })
      expect([get.status, get.headers.get('www-authenticate')]).toEqual([502, null])
      await get.text()
    } finally {
      await edge.close()
      await origin.close()
      await iss.stop()
    }
  })
})
