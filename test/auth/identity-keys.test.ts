/**
 * The edge's identity and key handling end to end, on both runtimes (the Node entry and the built
 * Worker under Miniflare), with a real token issuer on loopback (test/helpers/token-issuer.ts):
 * JWKS reads are rate-limited whether they succeed or fail, and an unknown `kid` on held keys is
 * 401 `unknown_key`; a wrong `AUTH_JWKS_URL` shows in `/readyz`, in a start-up warning and in the
 * denial line (URL and status); a JWKS larger than `AUTH_JWKS_MAX_BYTES` is not read; the
 * metadata lists only scopes of tools a filter leaves visible; a GET stream ends when its token
 * does, with a last event saying why.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { freePort, toolOrigin } from '../helpers/auth-edge'
import { startServe } from '../helpers/cli-process'
import { mcpHeaders } from '../helpers/mcp'
import { eventually } from '../helpers/mcp-script'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'

const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'

describe.each(RUNTIMES)('JWKS reads and key failures on $name', ({ name, start }) => {
  const open: { close(): Promise<void> }[] = []
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close()
  })
  async function setUp(vars: Record<string, string> = {}, iss?: TokenIssuer) {
    const issuer = iss ?? (await startTokenIssuer({ alg: 'ES256' }))
    const origin = await startScriptedOrigin()
    toolOrigin(origin)
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    open.push({ close: () => issuer.stop() }, origin)
    const edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: issuer.issuer, AUTH_AUDIENCE: url, AUTH_JWKS_URL: issuer.jwksUrl, ...vars }, { port })
    open.push(edge)
    const post = async (token: string, rid = `rid-${Math.random().toString(36).slice(2)}`) => {
      const res = await fetch(url, { method: 'POST', headers: mcpHeaders('2025-06-18', { authorization: `Bearer ${token}`, 'x-request-id': rid }), body: ping })
      const text = await res.text()
      return { status: res.status, retryAfter: res.headers.get('retry-after'), json: JSON.parse(text) as { error?: { data?: Record<string, unknown> } }, rid }
    }
    const denied = async (rid: string) => (await edge.logs({ msg: 'mcp.denied', where: (r) => r.rid === rid })).find((r) => r.msg === 'mcp.denied' && r.rid === rid)!
    return { iss: issuer, origin, edge, url, post, denied }
  }

  it('60 requests with random kids while the issuer answers 500: one JWKS read, each 503 with Retry-After', async () => {
    // A cooldown no loaded machine outlasts: the count is then exact (with the default 30 s it is 1 per 30 s).
    const { iss, post, denied } = await setUp({ AUTH_JWKS_COOLDOWN_MS: '600000' })
    iss.failWith(500)
    const tokens = await Promise.all(Array.from({ length: 60 }, (_, i) => iss.issue('x', { kid: `random-${i}-${name}` })))
    let last = { status: 0, retryAfter: null as string | null, rid: '' }
    for (const t of tokens) {
      last = await post(t)
      expect(last.status).toBe(503)
      expect(Number(last.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(last.retryAfter)).toBeLessThanOrEqual(600)
    }
    expect(iss.jwksRequests()).toBe(1)
    // The denial line names the key set and what it answered.
    expect(await denied(last.rid)).toMatchObject({ reason: 'jwks_unavailable', status: 503, jwksUrl: iss.jwksUrl, jwksAnswered: 'answered HTTP 500' })
  })

  it('good keys held, then the issuer answers 500: an unknown kid is 401 unknown_key, not 503; the reads stay rate-limited', async () => {
    const cooldownMs = 1500
    const { iss, url, post, denied } = await setUp({ AUTH_JWKS_COOLDOWN_MS: String(cooldownMs) })
    expect((await post(await iss.issue(url))).status).toBe(200)
    iss.failWith(500)
    await new Promise((r) => setTimeout(r, cooldownMs + 100)) // past the cooldown of the good read
    const forged = await Promise.all(Array.from({ length: 20 }, (_, i) => iss.issue(url, { kid: `random-${i}` })))
    const started = Date.now()
    let rid = ''
    for (const t of forged) {
      const r = await post(t)
      expect([r.status, r.json.error?.data?.tokenError]).toEqual([401, 'unknown_key'])
      rid = r.rid
    }
    // One read after the good one, then at most one per cooldown however long the loop took.
    expect(iss.jwksRequests()).toBeGreaterThanOrEqual(2)
    expect(iss.jwksRequests()).toBeLessThanOrEqual(2 + Math.floor((Date.now() - started) / cooldownMs))
    expect(await denied(rid)).toMatchObject({ reason: 'invalid_token', tokenError: 'unknown_key', status: 401, jwksAnswered: 'answered HTTP 500' })
  })

  it('a wrong AUTH_JWKS_URL: /readyz not ready with what it answered, a log line naming the URL; requests 503 naming URL and status in their line', async () => {
    const iss = await startTokenIssuer({ alg: 'ES256' })
    const wrong = `${iss.issuer}/.well-known/jwks.json`
    const { edge, url, post, denied } = await setUp({ AUTH_JWKS_URL: wrong }, iss)
    const res = await fetch(new URL('/readyz', url))
    const body = (await res.json()) as { ready: boolean; checks: Record<string, string> }
    expect([res.status, body.ready, body.checks.jwks]).toEqual([503, false, 'answered HTTP 404'])
    expect(JSON.stringify(body)).not.toContain(wrong)
    const line = await eventually(async () => (await edge.logs()).find((l) => l.msg === 'edge.jwks_unready'))
    expect(line).toMatchObject({ level: 'warn', variable: 'AUTH_JWKS_URL', url: wrong, answered: 'answered HTTP 404' })
    const r = await post(await iss.issue(url))
    expect(r.status).toBe(503)
    expect(await denied(r.rid)).toMatchObject({ reason: 'jwks_unavailable', jwksUrl: wrong, jwksAnswered: 'answered HTTP 404' })
  })

  it('the right AUTH_JWKS_URL is ready', async () => {
    const { url } = await setUp()
    const res = await fetch(new URL('/readyz', url))
    expect(await res.json()).toEqual({ ready: true, checks: { 'origin:default': 'ok', store: 'ok', jwks: 'ok' } })
  })

  it('a JWKS above AUTH_JWKS_MAX_BYTES (default 1 MiB) is not read: 503, the line says so; a larger bound reads it', async () => {
    const iss = await startTokenIssuer({ alg: 'ES256' })
    iss.padWith(2 * 1024 * 1024)
    const { url, post, denied } = await setUp({}, iss)
    const r = await post(await iss.issue(url))
    expect(r.status).toBe(503)
    expect(await denied(r.rid)).toMatchObject({ reason: 'jwks_unavailable', jwksAnswered: 'sent more than 1048576 bytes (AUTH_JWKS_MAX_BYTES)' })
    const roomy = await setUp({ AUTH_JWKS_MAX_BYTES: String(4 * 1024 * 1024) }, await startTokenIssuer({ alg: 'ES256' }))
    roomy.iss.padWith(2 * 1024 * 1024)
    expect((await roomy.post(await roomy.iss.issue(roomy.url))).status).toBe(200)
  })

  it('the metadata lists only scopes of tools a filter leaves visible; the 401 names the base scope', async () => {
    const { url } = await setUp({ TOOL_SCOPES: '{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}', TOOLS_DENY: 'admin_*' })
    const meta = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url))).json()) as { scopes_supported?: string[] }
    expect(meta.scopes_supported).toEqual(['mcp:tools'])
    const res = await fetch(url, { method: 'POST', headers: mcpHeaders('2025-06-18'), body: ping })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', url).href}", scope="mcp:tools"`)
    await res.text()
  })

  it('the 401 for a malformed Authorization reads the same in the challenge as in the body (no "RFC 6750 ?2.1")', async () => {
    const { url } = await setUp()
    const res = await fetch(url, { method: 'POST', headers: mcpHeaders('2025-06-18', { authorization: 'Bearer two tokens' }), body: ping })
    const body = (await res.json()) as { error: { message: string } }
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain(`error_description="${body.error.message}"`)
    expect(body.error.message).toContain('(RFC 6750 section 2.1: Bearer, one space, the token)')
  })
})

describe.each(RUNTIMES)('a GET stream and the expiry of its token on $name', ({ start }) => {
  let iss: TokenIssuer
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  afterEach(async () => {
    await edge?.close()
    await origin?.close()
    await iss?.stop()
  })

  it("ends at the token's exp plus the leeway (30 s), with a last event saying why; the origin's stream is cancelled", async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    let originClosed = false
    origin.handle((r, res) => {
      if (r.method !== 'GET') return void res.writeHead(202).end()
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let n = 0
      const timer = setInterval(() => res.write(`id: ${++n}\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${n}}}\n\n`), 150)
      res.on('close', () => {
        clearInterval(timer)
        originClosed = true
      })
    })
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: url, AUTH_JWKS_URL: iss.jwksUrl }, { port })
    // exp 25 s ago: accepted within the 30 s leeway, which ends about 5 s from now.
    const exp = Math.floor(Date.now() / 1000) - 25
    const token = await iss.issue(url, { claims: { exp } })
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    // Bounded: the stream must end by itself well before STREAM_MAX_MS (1 h); 20 s is the hang guard.
    const guard = Date.now() + 20_000
    for (;;) {
      const r = await Promise.race([reader.read(), new Promise<'late'>((ok) => setTimeout(() => ok('late'), Math.max(1, guard - Date.now())))])
      if (r === 'late') {
        await reader.cancel()
        throw new Error(`the stream was still open 20 s after it started (${text.split('\n\n').length} events)`)
      }
      if (r.done) break
      text += decoder.decode(r.value, { stream: true })
    }
    const endedAt = Date.now()
    expect(endedAt).toBeGreaterThanOrEqual((exp + 30) * 1000)
    const events = text.split('\n\n').filter((e) => e.trim() !== '')
    expect(events.length).toBeGreaterThan(2) // the origin's events were relayed until then
    expect(events[events.length - 1]).toBe(
      'event: mcp-edge-stream-end\ndata: {"reason":"token_expired","message":"The access token this stream was opened with has expired (its exp plus the edge clock leeway); open the stream again with a new access token."}'
    )
    await eventually(() => originClosed)
  })

  it("a 2026-07-28 subscriptions/listen stream (the POST that replaced the GET stream) ends at the token's exp plus the leeway too", async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    let originClosed = false
    origin.handle((r, res) => {
      const m = r.json as { method?: string } | undefined
      if (r.method !== 'POST' || m?.method !== 'subscriptions/listen') return void res.writeHead(202).end()
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let n = 0
      const timer = setInterval(() => res.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${++n}}}\n\n`), 150)
      res.on('close', () => {
        clearInterval(timer)
        originClosed = true
      })
    })
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: url, AUTH_JWKS_URL: iss.jwksUrl }, { port })
    const exp = Math.floor(Date.now() / 1000) - 25
    const token = await iss.issue(url, { claims: { exp } })
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'listen-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...mcpHeaders('2026-07-28', { 'mcp-method': 'subscriptions/listen' }), authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: meta } }),
    })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const guard = Date.now() + 20_000
    for (;;) {
      const r = await Promise.race([reader.read(), new Promise<'late'>((ok) => setTimeout(() => ok('late'), Math.max(1, guard - Date.now())))])
      if (r === 'late') {
        await reader.cancel()
        throw new Error(`the listen stream was still open 20 s after it started (${text.split('\n\n').length} events)`)
      }
      if (r.done) break
      text += decoder.decode(r.value, { stream: true })
    }
    expect(Date.now()).toBeGreaterThanOrEqual((exp + 30) * 1000)
    const events = text.split('\n\n').filter((e) => e.trim() !== '')
    expect(events.length).toBeGreaterThan(2)
    expect(events[events.length - 1]).toMatch(/^event: mcp-edge-stream-end\ndata: \{"reason":"token_expired"/)
    await eventually(() => originClosed)
  })
})

describe('mcp-edge serve with a wrong AUTH_JWKS_URL', () => {
  it('warns at start, naming AUTH_JWKS_URL and what it answered', async () => {
    const iss = await startTokenIssuer({ alg: 'ES256' })
    const origin = await startScriptedOrigin()
    toolOrigin(origin)
    const port = await freePort()
    const wrong = `${iss.issuer}/jwks`
    const edge = await startServe(['--port', String(port)], {
      ORIGIN_URL: origin.url,
      STORE_FILE: 'memory',
      AUTH_ISSUER: iss.issuer,
      AUTH_AUDIENCE: `http://127.0.0.1:${port}/mcp`,
      AUTH_JWKS_URL: wrong,
    })
    try {
      const warning = await eventually(
        () =>
          edge
            .stderr()
            .split('\n')
            .find((l) => l.startsWith('mcp-edge serve: warning: AUTH_JWKS_URL')),
        10_000
      )
      expect(warning).toBe(`mcp-edge serve: warning: AUTH_JWKS_URL=${wrong}: answered HTTP 404`)
    } finally {
      edge.kill()
      await edge.exited
      await origin.close()
      await iss.stop()
    }
  })
})
