/**
 * Names and the rules that hold them, on both runtimes (the Node entry and the built Worker in
 * workerd), against a scripted origin that normalises tool names the way some servers do (NFKC,
 * lower case, whitespace dropped) and checks the edge's own credential:
 * - with `UNKNOWN_TOOL=forward`, a variant of a hidden tool (`DELETE_FILE`, ` delete_file`,
 *   fullwidth `ｄelete_file`) gets the hidden tool's answer, a variant of a scoped tool the scope
 *   denial, a variant of a budgeted tool that tool's budget; none reaches the origin;
 * - a variant of an MCP request method is never forwarded;
 * - `Mcp-Name` / `Mcp-Method` reach the origin only when the edge checked them (2026-07-28 requests);
 * - the admin refresh runs the edge's own pull: ORIGIN_AUTHORIZATION sent, hidden tools not stored;
 * - at start the edge logs the governance in force and warns of `TOOL_PINING` (did you mean TOOL_PINNING?);
 * - under `TOOL_PINNING=enforce`, a 2026-07-28 call whose `Mcp-Name` is the base64 form of a
 *   non-ASCII name is gated by the decoded name (forwarded, not "Unknown tool").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, sendJson, type ScriptedOrigin, type ReceivedRequest } from '../helpers/scripted-origin'
import { freePort, ORIGIN_CREDENTIAL } from '../helpers/auth-edge'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'
import { mcpHeaders } from '../helpers/mcp'
import { toolKey } from '../../src/core/validation/tool-store'
import { initializeReply } from '../helpers/initialize-reply'

const ADMIN_TOKEN = 'admin-token-0123456789abcdef'
const TOOLS = ['get_weather', 'search', 'delete_file', 'admin_drop'].map((name) => ({ name, inputSchema: { type: 'object' } }))

/** How the origin reads a tool name: NFKC, lower case, no whitespace (so `ＤELETE_FILE` runs delete_file). */
const originFold = (s: string) => s.normalize('NFKC').toLowerCase().replace(/\s/g, '')

/**
 * An origin that folds names: initialize, tools/list (`tools`, public) and tools/call (`ran <folded name>`);
 * with `credential`, anything without that exact `Authorization` is answered 401.
 */
function foldingOrigin(o: ScriptedOrigin, tools: unknown[], credential?: string): void {
  o.handle((r, res) => {
    if (credential !== undefined && r.headers.authorization !== credential) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end()
    if (r.method === 'DELETE') return void res.writeHead(200).end()
    if (r.method !== 'POST') return void res.writeHead(405).end()
    const answer = (m: { id?: unknown; method?: string; params?: { name?: string; protocolVersion?: string } }) =>
      m.method === 'initialize'
        ? initializeReply(m, { echo: '2025-06-18' })
        : m.method === 'tools/list'
          ? { jsonrpc: '2.0', id: m.id, result: { tools, cacheScope: 'public' } }
          : { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `ran ${originFold(String(m.params?.name))}` }] } }
    const m = r.json as Record<string, unknown> | Record<string, unknown>[] | undefined
    if (Array.isArray(m))
      return sendJson(
        res,
        m.filter((x) => x.id !== undefined).map((x) => answer(x))
      )
    if (m?.id === undefined) return void res.writeHead(202).end()
    sendJson(res, answer(m))
  })
}

/** The tools/call requests the origin received (any method spelling), with their name as sent. */
const callsSeen = (o: ScriptedOrigin) =>
  o.received
    .map((r) => r.json as { method?: string; params?: { name?: string } } | undefined)
    .filter((m) => m !== undefined && typeof m.method === 'string' && originFold(m.method) === 'tools/call')
    .map((m) => m!.params?.name)

const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } })

describe.each(RUNTIMES)('name variants, mirrored headers, admin refresh and start-up lines on $name', ({ name: runtime, start }) => {
  let iss: TokenIssuer
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let url: string
  let bearer: string
  beforeAll(async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    foldingOrigin(origin, TOOLS, ORIGIN_CREDENTIAL)
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    edge = await start(
      {
        ORIGIN_URL: origin.url,
        AUTH_ISSUER: iss.issuer,
        AUTH_AUDIENCE: url,
        AUTH_JWKS_URL: iss.jwksUrl,
        ORIGIN_AUTHORIZATION: ORIGIN_CREDENTIAL,
        TOOL_SCOPES: '{"admin_*":"mcp:admin"}',
        TOOLS_DENY: 'delete_*',
        RATE_LIMIT: 'search=1/min',
        UNKNOWN_TOOL: 'forward',
        ADMIN_TOKEN,
        // A typo of TOOL_PINNING: warned of at start, the edge stays in audit.
        TOOL_PINING: 'enforce',
      },
      { port, ratelimits: { RATE_LIMITER_1_PER_60S: { simple: { limit: 1, period: 60 } } } }
    )
    bearer = `Bearer ${await iss.issue(url, { claims: { scope: 'mcp:tools', sub: `names-${runtime}` } })}`
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await iss?.stop()
  })

  async function post(body: unknown, extra: Record<string, string> = {}, version = '2025-06-18') {
    const res = await fetch(url, { method: 'POST', headers: mcpHeaders(version, { authorization: bearer, ...extra }), body: JSON.stringify(body) })
    return { status: res.status, text: await res.text(), headers: res.headers }
  }

  it('a case, NFKC or whitespace variant of a denied tool gets the hidden tool answer and never reaches the origin', async () => {
    origin.reset()
    const hidden = await post(call(7, 'delete_file'))
    expect(JSON.parse(hidden.text)).toMatchObject({ id: 7, error: { code: -32602 } })
    for (const variant of ['DELETE_FILE', ' delete_file', 'ｄelete_file', 'Delete_File\u200b']) {
      const a = await post(call(7, variant))
      expect(a.status, variant).toBe(200)
      // Byte for byte the answer the denied tool itself gets, but for the name it echoes.
      expect(a.text.replaceAll(JSON.stringify(variant).slice(1, -1), 'X'), variant).toBe(hidden.text.replaceAll('delete_file', 'X'))
    }
    expect(callsSeen(origin)).toEqual([])
    // A visible tool still goes through.
    expect(JSON.parse((await post(call(8, 'get_weather'))).text)).toMatchObject({ id: 8, result: { content: [{ text: 'ran get_weather' }] } })
  })

  it('a variant of a scoped tool gets that scope denial (403 naming mcp:admin), not the origin', async () => {
    origin.reset()
    for (const variant of ['ADMIN_DROP', 'ａｄｍｉｎ_drop']) {
      const a = await post(call(9, variant))
      expect(a.status, variant).toBe(403)
      expect(JSON.parse(a.text)).toMatchObject({ id: 9, error: { code: -31010, data: { reason: 'insufficient_scope', scope: 'mcp:admin' } } })
      expect(a.headers.get('www-authenticate')).toContain('scope="mcp:admin"')
    }
    expect(callsSeen(origin)).toEqual([])
  })

  it("a variant of a budgeted tool is charged to that tool's budget", async () => {
    origin.reset()
    expect((await post(call(10, 'search'))).status).toBe(200)
    const over = await post(call(11, 'SEARCH'))
    expect(over.status).toBe(429)
    expect(JSON.parse(over.text)).toMatchObject({ id: 11, error: { code: -31004, data: { reason: 'rate_limited', budget: 'search=1/min' } } })
    expect(callsSeen(origin)).toEqual(['search'])
  })

  it('a variant of an MCP request method is never forwarded, with or without an id', async () => {
    origin.reset()
    const withId = await post({ jsonrpc: '2.0', id: 12, method: 'TOOLS/CALL', params: { name: 'delete_file', arguments: {} } })
    expect(JSON.parse(withId.text)).toMatchObject({ id: 12, error: { code: -32601 } })
    const noId = await post({ jsonrpc: '2.0', method: 'Tools/Call', params: { name: 'delete_file', arguments: {} } })
    expect(noId.status).toBe(400)
    expect(JSON.parse(noId.text)).toMatchObject({ id: null, error: { code: -32600 } })
    expect(callsSeen(origin)).toEqual([])
  })

  it('2025 eras: Mcp-Name and Mcp-Method are not relayed (nothing checks them); a checked 2026-07-28 pair is', async () => {
    origin.reset()
    const a = await post(call(13, 'get_weather'), { 'mcp-name': 'delete_file', 'mcp-method': 'tools/call' })
    expect(a.status).toBe(200)
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-name': 'delete_file', 'mcp-method': 'tools/call' })
    const relayed = origin.received.filter((r: ReceivedRequest) => r.headers.authorization === ORIGIN_CREDENTIAL && r.method === 'POST')
    expect(relayed.length).toBeGreaterThanOrEqual(2)
    for (const r of relayed) {
      expect(r.headers['mcp-name']).toBeUndefined()
      expect(r.headers['mcp-method']).toBeUndefined()
    }
    origin.reset()
    const modern = {
      ...call(14, 'get_weather'),
      params: { name: 'get_weather', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
    }
    const m = await post(modern, { 'mcp-name': 'get_weather', 'mcp-method': 'tools/call' }, '2026-07-28')
    expect(m.status).toBe(200)
    const got = origin.received.find((r) => (r.json as { id?: unknown } | undefined)?.id === 14)!
    expect(got.headers['mcp-name']).toBe('get_weather')
    expect(got.headers['mcp-method']).toBe('tools/call')
  })

  it("the admin refresh runs the edge's own pull: ORIGIN_AUTHORIZATION sent, hidden tools not stored", async () => {
    origin.reset()
    const res = await fetch(new URL('/admin/tools/default/refresh', url), { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { refreshed: boolean; tools: string[] }
    expect(body.refreshed).toBe(true)
    expect([...body.tools].sort()).toEqual(['admin_drop', 'get_weather', 'search'])
    const pulls = origin.received.filter((r) => (r.json as { method?: string } | undefined)?.method === 'tools/list')
    expect(pulls.length).toBeGreaterThan(0)
    for (const p of pulls) expect(p.headers.authorization).toBe(ORIGIN_CREDENTIAL)
    expect(await edge.kvGet(toolKey('default', 'public', 'delete_file'))).toBeNull()
  })

  it('start-up: a warning for TOOL_PINING naming TOOL_PINNING, and one line with the governance in force', async () => {
    const logs = await edge.logs({ msg: 'edge.governance' })
    const warn = logs.find((r) => r.msg === 'config.unknown_variable')
    expect(warn).toMatchObject({ level: 'warn', variable: 'TOOL_PINING', didYouMean: 'TOOL_PINNING' })
    expect(String(warn!.text)).toBe('TOOL_PINING is not a setting of the edge and is ignored (did you mean TOOL_PINNING?)')
    const g = logs.find((r) => r.msg === 'edge.governance')!
    expect(g).toMatchObject({
      pinning: 'audit',
      auth: { issuer: iss.issuer },
      toolsAllow: [],
      toolsDeny: ['delete_*'],
      toolScopes: { 'admin_*': ['mcp:admin'] },
      rateLimit: ['search=1/min'],
      unknownTool: 'forward',
    })
    expect(g.store).toBe(runtime === 'worker' ? 'Workers KV' : 'given')
    expect(JSON.stringify(logs)).not.toContain(ORIGIN_CREDENTIAL)
    expect(JSON.stringify(logs)).not.toContain(ADMIN_TOKEN)
  })
})

describe.each(RUNTIMES)('TOOL_PINNING=enforce and a base64 Mcp-Name on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    foldingOrigin(origin, [
      { name: 'météo', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'secret_keys', inputSchema: { type: 'object' } },
    ])
    edge = await start({ ORIGIN_URL: origin.url, TOOL_PINNING: 'enforce', TOOLS_DENY: 'secret_*', ADMIN_TOKEN })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('a 2026-07-28 call whose Mcp-Name is =?base64?...?= is gated by the decoded name and forwarded', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'météo', arguments: { city: 'Paris' }, _meta: meta } }
    const res = await fetch(edge.url, {
      method: 'POST',
      headers: mcpHeaders('2026-07-28', { 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('météo').toString('base64')}?=` }),
      body: JSON.stringify(body),
    })
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(JSON.parse(text)).toMatchObject({ id: 1, result: { content: [{ text: 'ran météo' }] } })
    expect(callsSeen(origin)).toEqual(['météo'])
  })

  it('auth off: the admin refresh stores only the tools the filters leave visible', async () => {
    const res = await fetch(new URL('/admin/tools/default/refresh', edge.url), { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { tools: string[] }).tools).toEqual(['météo'])
    expect(await edge.kvGet(toolKey('default', 'public', 'secret_keys'))).toBeNull()
    const listed = await fetch(new URL('/admin/tools/default', edge.url), { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    expect(((await listed.json()) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['météo'])
  })
})
