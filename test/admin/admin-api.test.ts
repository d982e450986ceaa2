/**
 * The admin API (src/http/admin-api.ts, docs/admin-api.md) on both runtimes: every route with no
 * token, a wrong token of the same length, a token of another length, a malformed Authorization
 * header and an unknown origin (a table); then what each route does against the real store and a
 * scripted origin: put -> get -> list -> the edge validates with it -> delete; malformed entries
 * answered 400 by index and name with nothing written; a 20,000-deep schema and a body past
 * MAX_BODY_BYTES refused (400, 413) instead of a 500 or a stored record; refresh pulls the origin;
 * the registry's figures move. Off (404) without ADMIN_TOKEN.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, countMethod, rpc, serveMcp, type McpScript } from '../helpers/mcp-script'
import { toolKey } from '../../src/core/validation/tool-store'

const TOKEN = 'admin-token-0123456789abcdef'
/** Room for the 20,000-deep schema (160 kB); small enough that an early 413 is not cut by a connection reset. */
const MAX_BODY = 256 * 1024
const WEATHER = { name: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }

/** Every admin route: method, path (under the edge's base), body. */
const ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: 'GET', path: '/admin/registry' },
  { method: 'GET', path: '/admin/tools/default' },
  { method: 'GET', path: '/admin/tools/default/weather' },
  { method: 'PUT', path: '/admin/tools/default', body: { tools: [WEATHER] } },
  { method: 'DELETE', path: '/admin/tools/default/weather' },
  { method: 'POST', path: '/admin/tools/default/refresh' },
]

describe.each(RUNTIMES)('admin API on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let script: McpScript
  let edge: EdgeUnderTest
  let base: string
  const admin = (method: string, path: string, body?: unknown, auth: string | null = `Bearer ${TOKEN}`, raw?: string) =>
    fetch(base + path, {
      method,
      headers: { ...(auth !== null ? { authorization: auth } : {}), ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    })

  beforeAll(async () => {
    origin = await startScriptedOrigin()
    script = serveMcp(origin, {
      pages: [
        [
          { name: 'pulled_a', inputSchema: { type: 'object' } },
          { name: 'pulled_b', inputSchema: { type: 'object' } },
        ],
      ],
    })
    edge = await start({ ORIGIN_URL: origin.url, ORIGINS: JSON.stringify({ second: origin.url }), ADMIN_TOKEN: TOKEN, MAX_BODY_BYTES: String(MAX_BODY) })
    base = new URL(edge.url).origin
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  describe.each(ROUTES)('$method $path', (route) => {
    const cases: [string, string | null, number][] = [
      ['no token', null, 401],
      ['a wrong token of the same length', `Bearer ${TOKEN.replace(/.$/, 'X')}`, 401],
      ['a token of another length', `Bearer ${TOKEN}-longer`, 401],
      ['a shorter token', 'Bearer short', 401],
      ['a Basic header', `Basic ${btoa('a:b')}`, 400],
    ]
    it.each(cases)('with %s: %i and nothing done', async (_label, auth, status) => {
      const before = await edge.kvGet(toolKey('default', 'public', 'weather'))
      const res = await admin(route.method, route.path, route.body, auth)
      expect(res.status).toBe(status)
      const body = (await res.json()) as { error: string }
      expect(body.error).toMatch(status === 401 ? /unauthorized/ : /bad request/)
      if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
      expect(await edge.kvGet(toolKey('default', 'public', 'weather'))).toBe(before)
    })
    it('with an unknown origin: 404 naming the problem', async () => {
      if (!route.path.startsWith('/admin/tools/')) return
      const res = await admin(route.method, route.path.replace('/default', '/nowhere'), route.body)
      expect(res.status).toBe(404)
      expect(((await res.json()) as { error: string }).error).toMatch(/unknown origin/)
    })
  })

  it('put, get, list, validate with, delete: one tool through its whole life', async () => {
    const put = await admin('PUT', '/admin/tools/default', { tools: [WEATHER] })
    expect(put.status).toBe(200)
    expect(await put.json()).toEqual({ origin: 'default', scope: 'public', stored: ['weather'] })
    const stored = JSON.parse((await edge.kvGet(toolKey('default', 'public', 'weather')))!) as { inputSchema: unknown; dialect: string }
    expect(stored.inputSchema).toEqual(WEATHER.inputSchema)
    expect(stored.dialect).toBe('2020-12')

    const got = await admin('GET', '/admin/tools/default/weather')
    expect(got.status).toBe(200)
    expect(((await got.json()) as { inputSchema: unknown }).inputSchema).toEqual(WEATHER.inputSchema)

    const list = (await (await admin('GET', '/admin/tools/default')).json()) as { tools: { name: string; hash: string }[]; listedBy: string }
    expect(list.tools.map((t) => t.name)).toContain('weather')
    expect(list.tools[0]!.hash).toMatch(/^[0-9a-f]{8}$/)
    // Miniflare's KV binding and the Node entry's memory store both list keys by prefix.
    expect(list.listedBy).toBe('store')

    // The edge validates with the pushed schema: a bad call is answered locally.
    const bad = await rpc(edge.url, call(1, 'weather', { town: 'Paris' }))
    expect(bad.json.result?.isError ?? bad.json.error).toBeTruthy()
    expect(origin.forwarded().length).toBe(0)

    const del = await admin('DELETE', '/admin/tools/default/weather')
    expect(del.status).toBe(200)
    expect(await edge.kvGet(toolKey('default', 'public', 'weather'))).toBeNull()
    expect((await admin('GET', '/admin/tools/default/weather')).status).toBe(404)
    expect((await admin('DELETE', '/admin/tools/default/weather')).status).toBe(404)
    const after = (await (await admin('GET', '/admin/tools/default')).json()) as { tools: { name: string }[] }
    expect(after.tools.map((t) => t.name)).not.toContain('weather')
  })

  it('a named origin and a private scope are kept apart', async () => {
    const scope = 'u-' + 'a'.repeat(64)
    expect((await admin('PUT', `/admin/tools/second?scope=${scope}`, { tools: [WEATHER] })).status).toBe(200)
    expect(await edge.kvGet(toolKey('second', scope, 'weather'))).not.toBeNull()
    expect((await admin('GET', '/admin/tools/second/weather')).status).toBe(404)
    expect((await admin('GET', `/admin/tools/second/weather?scope=${scope}`)).status).toBe(200)
    const badScope = await admin('GET', '/admin/tools/second?scope=../etc')
    expect(badScope.status).toBe(400)
    expect(((await badScope.json()) as { error: string }).error).toMatch(/scope must be/)
  })

  it('malformed entries: 400 naming each by index and name with its problem; nothing is written', async () => {
    const tools = [
      { name: 'good_one', inputSchema: { type: 'object' } },
      'not an object',
      { inputSchema: { type: 'object' } },
      { name: '', inputSchema: {} },
      { name: 'no_schema' },
      { name: 'schema_not_object', inputSchema: 'SECRET-VALUE-1' },
      { name: 'bad_dialect', inputSchema: { $schema: 'http://example.com/my-dialect', type: 'object' } },
      { name: 'good_one', inputSchema: { type: 'object' } },
      { name: 'x'.repeat(300), inputSchema: {} },
      { name: 'bad_output', inputSchema: { type: 'object' }, outputSchema: 7 },
    ]
    const res = await admin('PUT', '/admin/tools/default', { tools })
    expect(res.status).toBe(400)
    const text = await res.text()
    expect(text).not.toContain('SECRET-VALUE')
    const body = JSON.parse(text) as { error: string; entries: { index: number; name?: string; problem: string }[] }
    expect(body.error).toMatch(/8 of 10 tool entries are malformed; nothing was stored/)
    const byIndex = Object.fromEntries(body.entries.map((e) => [e.index, e]))
    expect(Object.keys(byIndex).map(Number)).toEqual([1, 2, 3, 4, 5, 7, 8, 9])
    expect(byIndex[1]!.problem).toMatch(/must be an object/)
    expect(byIndex[2]!.problem).toMatch(/name must be a string/)
    expect(byIndex[3]).toMatchObject({ name: '', problem: expect.stringMatching(/1 to 256 characters/) })
    expect(byIndex[4]).toMatchObject({ name: 'no_schema', problem: 'inputSchema is missing' })
    expect(byIndex[5]).toMatchObject({ name: 'schema_not_object', problem: expect.stringMatching(/JSON object/) })
    expect(byIndex[7]).toMatchObject({ name: 'good_one', problem: expect.stringMatching(/twice/) })
    expect(byIndex[8]!.name!.length).toBeLessThanOrEqual(64)
    expect(byIndex[9]).toMatchObject({ name: 'bad_output', problem: expect.stringMatching(/outputSchema/) })
    expect(await edge.kvGet(toolKey('default', 'public', 'good_one'))).toBeNull()
    expect(await edge.kvGet(toolKey('default', 'public', 'bad_dialect'))).toBeNull()
  })

  it('well-formed schemas the edge cannot use are stored and named (calls to them follow ON_SCHEMA_ERROR)', async () => {
    const res = await admin('PUT', '/admin/tools/default', {
      tools: [
        { name: 'bad_dialect', inputSchema: { $schema: 'http://example.com/my-dialect', type: 'object' } },
        { name: 'remote_ref', inputSchema: { $ref: 'https://example.com/schema.json' } },
        { name: 'fine', inputSchema: { type: 'object' } },
      ],
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { stored: string[]; unusable: { index: number; name: string; problem: string }[] }
    expect(body.stored).toEqual(['bad_dialect', 'remote_ref', 'fine'])
    expect(body.unusable.map((u) => [u.index, u.name])).toEqual([
      [0, 'bad_dialect'],
      [1, 'remote_ref'],
    ])
    expect(body.unusable[0]!.problem).toMatch(/dialect/)
    expect(body.unusable[1]!.problem).toMatch(/\$ref|remote/i)
    expect(await edge.kvGet(toolKey('default', 'public', 'remote_ref'))).not.toBeNull()
  })

  it('bodies: not JSON, wrong shape, a 20,000-deep schema, past MAX_BODY_BYTES: refused, nothing stored', async () => {
    const notJson = await admin('PUT', '/admin/tools/default', undefined, `Bearer ${TOKEN}`, '{"tools": [')
    expect(notJson.status).toBe(400)
    expect((await admin('PUT', '/admin/tools/default', { tool: [] })).status).toBe(400)
    expect((await admin('PUT', '/admin/tools/default', { tools: [], protocolVersion: '1999-01-01' })).status).toBe(400)
    const deep = `{"tools":[{"name":"deep","inputSchema":${'{"not":'.repeat(20_000)}{}${'}'.repeat(20_000)}}]}`
    const d = await admin('PUT', '/admin/tools/default', undefined, `Bearer ${TOKEN}`, deep)
    expect(d.status).toBe(400)
    expect(((await d.json()) as { error: string }).error).toMatch(/MAX_JSON_DEPTH/)
    expect(await edge.kvGet(toolKey('default', 'public', 'deep'))).toBeNull()
    const big = JSON.stringify({ tools: [{ name: 'big', inputSchema: { type: 'object', description: 'x'.repeat(MAX_BODY) } }] })
    const b = await admin('PUT', '/admin/tools/default', undefined, `Bearer ${TOKEN}`, big)
    expect(b.status).toBe(413)
    expect(((await b.json()) as { error: string }).error).toMatch(/MAX_BODY_BYTES/)
    expect(await edge.kvGet(toolKey('default', 'public', 'big'))).toBeNull()
  })

  it('refresh pulls the tool list now; the registry figures count it; a failing origin is 502', async () => {
    const before = (await (await admin('GET', '/admin/registry')).json()) as { refreshes: number; engine: string }
    expect(typeof before.refreshes).toBe('number')
    // A pushed tool the origin does not list survives the pull (pushed names are kept apart from the pull's list).
    expect((await admin('PUT', '/admin/tools/default', { tools: [{ name: 'kept_tool', inputSchema: { type: 'object' } }] })).status).toBe(200)
    const inits = countMethod(origin, 'initialize')
    const res = await admin('POST', '/admin/tools/default/refresh')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ refreshed: true, tools: ['pulled_a', 'pulled_b'] })
    expect(countMethod(origin, 'initialize')).toBe(inits + 1)
    expect(await edge.kvGet(toolKey('default', 'public', 'pulled_a'))).not.toBeNull()
    // "Now": a second refresh right away pulls again (the D7 interval is for calls, not operators).
    expect((await admin('POST', '/admin/tools/default/refresh')).status).toBe(200)
    expect(countMethod(origin, 'initialize')).toBe(inits + 2)
    expect((await admin('GET', '/admin/tools/default/kept_tool')).status).toBe(200)
    const listed = (await (await admin('GET', '/admin/tools/default')).json()) as { tools: { name: string }[] }
    expect(listed.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['kept_tool', 'pulled_a', 'pulled_b']))
    const after = (await (await admin('GET', '/admin/registry')).json()) as { refreshes: number }
    expect(after.refreshes).toBe(before.refreshes + 2)
    script.failPull = true
    const failed = await admin('POST', '/admin/tools/default/refresh')
    expect(failed.status).toBe(502)
    script.failPull = false
  })

  it('a pushed schema sticks: a refresh of the origin list never replaces it', async () => {
    const mine = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }
    expect((await admin('PUT', '/admin/tools/default', { tools: [{ name: 'pulled_b', inputSchema: mine }] })).status).toBe(200)
    expect((await admin('POST', '/admin/tools/default/refresh')).status).toBe(200)
    const got = (await (await admin('GET', '/admin/tools/default/pulled_b')).json()) as { inputSchema: unknown }
    expect(got.inputSchema).toEqual(mine)
    // The edge validates with it: a call without q is answered locally.
    const bad = await rpc(edge.url, call(78, 'pulled_b', {}))
    expect(bad.json.result?.isError ?? bad.json.error).toBeTruthy()
    expect(JSON.parse((await edge.kvGet(toolKey('default', 'public', 'pulled_b')))!).inputSchema).toEqual(mine)
    expect((await admin('DELETE', '/admin/tools/default/pulled_b')).status).toBe(200)
  })

  it('an unknown admin route is 404 JSON', async () => {
    const res = await admin('GET', '/admin/nothing-here')
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: string }).error).toMatch(/no such admin route/)
  })
})

describe.each(RUNTIMES)('admin API off without ADMIN_TOKEN on $name', ({ start }) => {
  let edge: EdgeUnderTest
  beforeAll(async () => {
    edge = await start({ ORIGIN_URL: 'http://127.0.0.1:9/mcp' })
  })
  afterAll(async () => {
    await edge?.close()
  })
  it.each(ROUTES)('$method $path: 404, even with a token', async (route) => {
    const res = await fetch(new URL(route.path, edge.url), {
      method: route.method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(route.body ? { body: JSON.stringify(route.body) } : {}),
    })
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: string }).error).toMatch(/admin API is off/)
  })
})
