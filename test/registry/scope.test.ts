/**
 * Private tool lists (docs/design.md §7; docs/protocol-rules.md M39-M41, B7; docs/scope.md), on
 * the Node entry and on the built Worker in workerd, against real HTTP origins:
 * - two callers (different `Authorization`) of an origin that publishes a different private list
 *   to each, the same tool name with contradicting schemas: each is validated with its own list
 *   only, whether the list was learned from a relayed `tools/list` or pulled by the edge;
 * - the pull carries the caller's own authorization, and a caller the origin gives no such tool
 *   gets "Unknown tool" even though another caller's list has it;
 * - public lists (`cacheScope: "public"`, or a 2025 list with no hints) are shared: one pull
 *   serves every caller;
 * - KV keys hold a SHA-256 of the authorization context, never the token (keys and values read);
 * - vector rows 137-139 (`kv_effect`), and row 138's note: token-B is not validated against
 *   token-A's private list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from '../helpers/scripted-origin'
import { eventually, MCP_HEADERS, serveMcp, countMethod } from '../helpers/mcp-script'
import { assertKvEffect, expectedPrivateScope } from '../helpers/kv-effect'
import { assertCase, deploy, expandRows, readVectors, send, type Deployment } from '../vectors/rules-harness'
import { toolKey, toolListKey } from '../../src/core/validation/tool-store'

const TOKEN_A = 'Bearer tok-A-7f3e9c'
const TOKEN_B = 'Bearer tok-B-51d2aa'

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'scope-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

/** POSTs one 2026-07-28 request (envelope and standard headers) to `/mcp/<origin>`. */
async function modern(
  edge: EdgeUnderTest,
  origin: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  auth?: string
): Promise<{ status: number; json: any; text: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  }
  if (typeof params.name === 'string') headers['mcp-name'] = params.name
  if (auth) headers.authorization = auth
  const res = await fetch(`${edge.url}/${origin}`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } }) })
  const text = await res.text()
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined }
}

/** POSTs one 2025-11-25 request to `/mcp/<origin>`. */
async function legacy(edge: EdgeUnderTest, origin: string, id: number, method: string, params: Record<string, unknown>, auth?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { ...MCP_HEADERS, ...(auth ? { authorization: auth } : {}) }
  const res = await fetch(`${edge.url}/${origin}`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) })
  return { status: res.status, json: await res.json() }
}

type Rpc = { id?: unknown; method?: string; params?: { name?: string; arguments?: Record<string, unknown>; _meta?: Record<string, { name?: string }> } }

/** The tool lists a 2026-07-28 origin publishes per authorization context. */
const LISTS: Record<string, unknown[]> = {
  [TOKEN_A]: [{ name: 'alpha', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }],
  [TOKEN_B]: [
    { name: 'alpha', inputSchema: { type: 'object', properties: { n: { type: 'string' } }, required: ['n'] } },
    { name: 'beta', inputSchema: { type: 'object', properties: {} } },
  ],
  '': [],
}

/** A 2026-07-28 origin: `tools/list` per Authorization with the given cacheScope; every call answered "ok". */
function serveModern(origin: ScriptedOrigin, cacheScope: 'private' | 'public' | undefined, lists: Record<string, unknown[]> = LISTS): void {
  origin.handle((req: ReceivedRequest, res) => {
    const m = req.json as Rpc | undefined
    if (m?.method === 'tools/list') {
      const tools = lists[String(req.headers.authorization ?? '')] ?? []
      return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', tools, ttlMs: 60_000, ...(cacheScope ? { cacheScope } : {}) } })
    }
    if (m?.method === 'tools/call') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] } })
    res.writeHead(202).end()
  })
}

/**
 * The edge's own tool-list pulls (its clientInfo) the origin received: the distinct Authorization
 * values they carried, in order. (With REFRESH_MIN_INTERVAL_MS=0 an unknown 2026-07-28 tool is
 * pulled twice, once for the Mcp-Param header check and once for validation; see docs/scope.md.)
 */
function edgePulls(origin: ScriptedOrigin): (string | undefined)[] {
  return origin.received
    .filter((r) => {
      const m = r.json as Rpc | undefined
      return m?.method === 'tools/list' && m.params?._meta?.['io.modelcontextprotocol/clientInfo']?.name === 'mcp-edge-validator'
    })
    .map((r) => r.headers.authorization as string | undefined)
    .filter((a, i, all) => all.indexOf(a) === i)
}

/** `tools/call` requests that reached the origin, by argument value. */
function callsReceived(origin: ScriptedOrigin): unknown[] {
  return origin.received.filter((r) => (r.json as Rpc | undefined)?.method === 'tools/call').map((r) => (r.json as Rpc).params?.arguments)
}

describe.each(RUNTIMES)('private tool lists on $name', ({ name, start }) => {
  let priv: ScriptedOrigin
  let pulled: ScriptedOrigin
  let pub: ScriptedOrigin
  let old: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    ;[priv, pulled, pub, old] = await Promise.all([startScriptedOrigin(), startScriptedOrigin(), startScriptedOrigin(), startScriptedOrigin()])
    serveModern(priv, 'private')
    // No cacheScope at all in 2026-07-28: read as private (docs/protocol-rules.md B7).
    serveModern(pulled, undefined)
    serveModern(pub, 'public', { [TOKEN_A]: LISTS[TOKEN_A]!, [TOKEN_B]: LISTS[TOKEN_A]!, '': LISTS[TOKEN_A]! })
    serveMcp(old, { pages: [[{ name: 'gamma', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }]] })
    edge = await start({
      ORIGIN_URL: priv.url,
      ORIGINS: JSON.stringify({ priv: priv.url, pulled: pulled.url, pub: pub.url, old: old.url }),
      REFRESH_MIN_INTERVAL_MS: '0',
    })
  })
  afterAll(async () => {
    await edge?.close()
    await Promise.all([priv, pulled, pub, old].map((o) => o?.close()))
  })

  it('learned from relayed tools/list replies: each caller is validated with its own private list only', async () => {
    // Each caller lists its tools through the edge; the edge learns each list under that caller's scope.
    const listA = await modern(edge, 'priv', 1, 'tools/list', {}, TOKEN_A)
    const listB = await modern(edge, 'priv', 2, 'tools/list', {}, TOKEN_B)
    expect(listA.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['alpha'])
    expect(listB.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['alpha', 'beta'])
    const scopeA = expectedPrivateScope(TOKEN_A)
    const scopeB = expectedPrivateScope(TOKEN_B)
    await eventually(() => edge.kvGet(toolKey('priv', scopeA, 'alpha')))
    await eventually(() => edge.kvGet(toolKey('priv', scopeB, 'beta')))
    expect(JSON.parse((await edge.kvGet(toolKey('priv', scopeA, 'alpha')))!).inputSchema.properties.n.type).toBe('integer')
    expect(JSON.parse((await edge.kvGet(toolKey('priv', scopeB, 'alpha')))!).inputSchema.properties.n.type).toBe('string')
    expect(await edge.kvGet(toolKey('priv', 'public', 'alpha'))).toBeNull()
    priv.reset()

    // A's schema wants an integer: A's string is refused locally, B's string goes through.
    const a1 = await modern(edge, 'priv', 3, 'tools/call', { name: 'alpha', arguments: { n: 'seven' } }, TOKEN_A)
    expect(a1.json.result.isError, a1.text).toBe(true)
    expect(a1.json.result.content[0].text).toContain('n: must be an integer')
    const b1 = await modern(edge, 'priv', 4, 'tools/call', { name: 'alpha', arguments: { n: 'seven' } }, TOKEN_B)
    expect(b1.json.result.isError, b1.text).toBeUndefined()
    expect(b1.json.result.content[0].text).toBe('ok')
    // ... and the other way round.
    const b2 = await modern(edge, 'priv', 5, 'tools/call', { name: 'alpha', arguments: { n: 7 } }, TOKEN_B)
    expect(b2.json.result.isError, b2.text).toBe(true)
    expect(b2.json.result.content[0].text).toContain('n: must be a string')
    const a2 = await modern(edge, 'priv', 6, 'tools/call', { name: 'alpha', arguments: { n: 7 } }, TOKEN_A)
    expect(a2.json.result.content[0].text).toBe('ok')
    expect(callsReceived(priv)).toEqual([{ n: 'seven' }, { n: 7 }])
    // All four were validated from what the edge learned: no pull.
    expect(edgePulls(priv)).toEqual([])
  })

  it("a tool only another caller's list has is unknown: the edge pulls with the caller's own authorization", async () => {
    priv.reset()
    const a = await modern(edge, 'priv', 7, 'tools/call', { name: 'beta', arguments: {} }, TOKEN_A)
    expect(a.json.error?.code, a.text).toBe(-32602)
    expect(a.json.error.message).toContain('Unknown tool')
    // No credentials at all: one more authorization context (the anonymous one), with its own pull.
    const anon = await modern(edge, 'priv', 8, 'tools/call', { name: 'alpha', arguments: { n: 1 } })
    expect(anon.json.error?.code, anon.text).toBe(-32602)
    expect(edgePulls(priv)).toEqual([TOKEN_A, undefined])
    expect(callsReceived(priv)).toEqual([])
    // B still has beta, from its own list.
    const b = await modern(edge, 'priv', 9, 'tools/call', { name: 'beta', arguments: {} }, TOKEN_B)
    expect(b.json.result?.content[0].text, b.text).toBe('ok')
  })

  it('pulled on first use (no cacheScope in 2026-07-28 = private): each pull is stored under its caller only', async () => {
    const a = await modern(edge, 'pulled', 10, 'tools/call', { name: 'alpha', arguments: { n: 'x' } }, TOKEN_A)
    expect(a.json.result?.isError, a.text).toBe(true)
    const b = await modern(edge, 'pulled', 11, 'tools/call', { name: 'alpha', arguments: { n: 'x' } }, TOKEN_B)
    expect(b.json.result?.content[0].text, b.text).toBe('ok')
    expect(edgePulls(pulled)).toEqual([TOKEN_A, TOKEN_B])
    expect(callsReceived(pulled)).toEqual([{ n: 'x' }])
    expect(await edge.kvGet(toolKey('pulled', expectedPrivateScope(TOKEN_A), 'alpha'))).not.toBeNull()
    expect(await edge.kvGet(toolKey('pulled', expectedPrivateScope(TOKEN_B), 'beta'))).not.toBeNull()
    expect(await edge.kvGet(toolKey('pulled', 'public', 'alpha'))).toBeNull()
    expect(JSON.parse((await edge.kvGet(toolListKey('pulled', expectedPrivateScope(TOKEN_B))))!).names).toEqual(['alpha', 'beta'])
  })

  it('a public list (cacheScope "public", or a 2025 list without hints) is pulled once and serves every caller', async () => {
    const a = await modern(edge, 'pub', 12, 'tools/call', { name: 'alpha', arguments: { n: 'x' } }, TOKEN_A)
    expect(a.json.result?.isError, a.text).toBe(true)
    const b = await modern(edge, 'pub', 13, 'tools/call', { name: 'alpha', arguments: { n: 'x' } }, TOKEN_B)
    expect(b.json.result?.isError, b.text).toBe(true)
    const anon = await modern(edge, 'pub', 14, 'tools/call', { name: 'alpha', arguments: { n: 2 } })
    expect(anon.json.result?.content[0].text).toBe('ok')
    expect(edgePulls(pub)).toEqual([TOKEN_A])
    expect(await edge.kvGet(toolKey('pub', 'public', 'alpha'))).not.toBeNull()
    expect(await edge.kvGet(toolKey('pub', expectedPrivateScope(TOKEN_A), 'alpha'))).toBeNull()

    const la = await legacy(edge, 'old', 15, 'tools/call', { name: 'gamma', arguments: { n: 'x' } }, TOKEN_A)
    expect(la.json.result?.isError).toBe(true)
    const lb = await legacy(edge, 'old', 16, 'tools/call', { name: 'gamma', arguments: { n: 'x' } }, TOKEN_B)
    expect(lb.json.result?.isError).toBe(true)
    expect(countMethod(old, 'tools/list')).toBe(1)
    expect(await edge.kvGet(toolKey('old', 'public', 'gamma'))).not.toBeNull()
  })

  it('stores a digest of the authorization context, never the token', async () => {
    const keys = edge.kvKeys ? await edge.kvKeys('') : []
    expect(keys.length).toBeGreaterThan(5)
    for (const k of keys) {
      for (const secret of ['tok-A-7f3e9c', 'tok-B-51d2aa', 'Bearer']) expect(k).not.toContain(secret)
      const v = (await edge.kvGet(k)) ?? ''
      for (const secret of ['tok-A-7f3e9c', 'tok-B-51d2aa', 'Bearer']) expect(v).not.toContain(secret)
    }
    // A's alpha, B's alpha and beta (the anonymous list is empty).
    expect(keys.filter((k) => /^tools:priv:u-[0-9a-f]{64}:/.test(k)).length).toBe(3)
    // And none in the log lines.
    // (Once the line of the last call above, id 16, has arrived.)
    const logs = JSON.stringify(await edge.logs({ msg: 'mcp.post', where: (r) => ((r.grades ?? []) as { id: string; grade: string }[]).some((g) => g.id === '16') }))
    expect(logs).not.toContain('tok-A-7f3e9c')
    expect(logs).not.toContain('tok-B-51d2aa')
  })
})

describe.each(RUNTIMES)('vector rows 137-139 (kv_effect) on $name', ({ start }) => {
  const cases = expandRows(
    readVectors('spec-vectors-2026.jsonl').filter((r) => r.n >= 137 && r.n <= 139),
    'k'
  )
  let d: Deployment
  beforeAll(async () => {
    d = await deploy(start, cases, { ALLOWED_ORIGINS: 'https://app.example' })
  })
  afterAll(async () => {
    await d?.close()
  })
  it('holds the three rows', () => {
    expect(cases.map((c) => c.row.n)).toEqual([137, 138, 139])
  })
  for (const c of cases) {
    it(c.label, async () => {
      d.setCase(c)
      assertCase(c, await send(d, c), d.forwarded(), d.pulls())
      await assertKvEffect(c, d.edge)
    })
  }
  it("138's note: a later tools/call with token-B is not validated against token-A's private list", async () => {
    const c = cases.find((x) => x.row.n === 138)!
    d.setCase(c)
    const url = d.edge.url.replace(/\/mcp$/, `/mcp/${c.origin}`)
    const callWith = async (auth: string, id: number) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'get_weather',
          authorization: auth,
        },
        // `location` is required by token-A's schema.
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_weather', arguments: {}, _meta: ENVELOPE } }),
      })
      return (await res.json()) as { result?: { isError?: boolean }; error?: { code: number; message: string } }
    }
    // token-A: validated with its learned list, refused locally without a pull.
    const a = await callWith('Bearer token-A', 1)
    expect(a.result?.isError).toBe(true)
    expect(d.pulls()).toEqual([])
    // token-B: the edge pulls token-B's own list (this origin gives it no get_weather): Unknown tool.
    const b = await callWith('Bearer token-B', 2)
    expect(b.error?.code).toBe(-32602)
    expect(b.error?.message).toContain('Unknown tool')
    const pulls = d.pulls().map((p) => p.headers.authorization)
    expect(pulls.length).toBeGreaterThan(0)
    expect(new Set(pulls)).toEqual(new Set(['Bearer token-B']))
    expect(d.forwarded()).toEqual([])
  })
})
