/**
 * Virtual servers end to end on both runtimes (the Node entry and the built Worker in workerd),
 * with real SDK servers behind one virtual server: a stateful 2025 origin (SDK v1, sessions, SSE
 * answers) and a stateless 2026-07-28 origin (SDK v2 `createMcpHandler`), both with a tool named
 * `search` (a collision). What is shown: the edge answers initialize and server/discover itself,
 * merges and paginates the lists in each prefix mode, routes each call by the body's name to its
 * origin under the origin's own name (the origin's session kept in the client's session id), a
 * batch across both origins is answered per id, a tool denied on one origin is absent and unknown,
 * an origin killed and restarted is left out (gateway error naming it) and comes back, and the
 * official SDK client lists and calls through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { waitFor } from '../helpers/wait'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

const V = '2025-06-18'
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

interface Answer {
  status: number
  headers: Headers
  body: unknown
}

/** The JSON-RPC message(s) of a JSON or SSE answer. */
function messagesOf(text: string, type: string | null): unknown {
  if (!type?.includes('text/event-stream')) return text ? JSON.parse(text) : null
  const msgs = text
    .split(/\n\n/)
    .map((ev) =>
      ev
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
    )
    .filter((d) => d.startsWith('{'))
    .map((d) => JSON.parse(d) as Record<string, unknown>)
  return msgs.find((m) => 'result' in m || 'error' in m)
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { ...HEADERS, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: messagesOf(text, res.headers.get('content-type')) }
}

const init = (id = 1) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: V, capabilities: {}, clientInfo: { name: 't', version: '1' } } })
const list = (id: number, cursor?: string) => ({ jsonrpc: '2.0', id, method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) })
const call = (id: number | string, name: string, q = 'x') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { q } } })

/** Opens a 2025 session with a virtual server: its session id. */
async function session(url: string): Promise<string> {
  const a = await post(url, init(), { 'mcp-protocol-version': V })
  expect(a.status).toBe(200)
  const sid = a.headers.get('mcp-session-id')
  expect(sid).toMatch(/^v1\./)
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': V, 'mcp-session-id': sid! })
  return sid!
}

/** Every tool name of a virtual server's list, following its cursors. */
async function allNames(url: string, headers: Record<string, string>): Promise<string[]> {
  const out: string[] = []
  let cursor: string | undefined
  for (let i = 0; i < 20; i++) {
    const a = await post(url, list(i + 1, cursor), headers)
    const r = (a.body as { result: { tools: { name: string }[]; nextCursor?: string } }).result
    out.push(...r.tools.map((t) => t.name))
    if (!r.nextCursor) return out
    cursor = r.nextCursor
  }
  throw new Error('the cursors never ended')
}

const textOf = (body: unknown) => (body as { result: { content: { text: string }[] } }).result.content[0]!.text

describe.each(RUNTIMES)('virtual servers on $name', ({ start }) => {
  let files: TestOrigin
  let weather: TestOrigin
  let edge: EdgeUnderTest
  const at = (name: string) => edge.url.replace(/\/mcp$/, `/mcp/${name}`)

  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file', 'search', 'delete_file'])
    weather = await startModernOrigin('weather', ['get_forecast', 'search'])
    edge = await start({
      ORIGINS: JSON.stringify({ files: { url: files.url, toolsDeny: 'delete_*' }, weather: weather.url }),
      VIRTUAL_SERVERS: JSON.stringify({
        all: { origins: ['files', 'weather'], pageSize: 2 },
        cond: { origins: ['files', 'weather'], prefix: 'conditional' },
        never: { origins: ['files', 'weather'], prefix: 'never' },
      }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(40),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await files?.close()
    await weather?.close()
  })

  it('answers initialize itself: its own serverInfo, tools, and a signed session id', async () => {
    const a = await post(at('all'), init(), { 'mcp-protocol-version': V })
    expect(a.status).toBe(200)
    expect(a.body).toMatchObject({ id: 1, result: { protocolVersion: V, serverInfo: { name: 'all' }, capabilities: { tools: {} } } })
    expect(a.headers.get('mcp-session-id')).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    // The stateful origin gave the edge a session for this client.
    expect(files.sessions.length).toBeGreaterThan(0)
    // One log line per POST, as on every MCP path.
    const logs = await edge.logs({ msg: 'virtual.post', where: (r) => (r.methods as string[]).includes('initialize') })
    expect(logs.find((r) => r.msg === 'virtual.post')).toMatchObject({ server: 'all', status: 200 })
  })

  it('answers server/discover (2026-07-28) itself', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const a = await post(
      at('all'),
      { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: meta } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }
    )
    expect(a.status).toBe(200)
    expect(a.body).toMatchObject({
      id: 'd',
      result: { supportedVersions: expect.arrayContaining(['2026-07-28', '2025-06-18']), resultType: 'complete', _meta: { serverInfo: { name: 'all' } } },
    })
  })

  it('prefix always: every tool as <origin>__<tool>, paginated by the edge; the denied tool absent', async () => {
    const sid = await session(at('all'))
    const names = await allNames(at('all'), { 'mcp-protocol-version': V, 'mcp-session-id': sid })
    expect(names).toEqual(['files__read_file', 'files__search', 'weather__get_forecast', 'weather__search'])
  })

  it('prefix conditional: only the shared name is prefixed', async () => {
    const names = await allNames(at('cond'), { 'mcp-protocol-version': V })
    expect(names).toEqual(['read_file', 'files__search', 'get_forecast', 'weather__search'])
  })

  it('prefix never: the shared name is left out, logged and shown in /readyz', async () => {
    const names = await allNames(at('never'), { 'mcp-protocol-version': V })
    expect(names).toEqual(['read_file', 'get_forecast'])
    const logs = await edge.logs({ msg: 'virtual.names_left_out' })
    expect(logs.find((l) => l.msg === 'virtual.names_left_out')).toMatchObject({ server: 'never', tools: ['search'] })
    const ready = (await (await fetch(edge.url.replace(/\/mcp$/, '/readyz'))).json()) as { virtual: Record<string, { collisions: string[] }> }
    expect(ready.virtual.never!.collisions).toEqual(['search'])
    const a = await post(at('never'), call(5, 'search'), { 'mcp-protocol-version': V })
    expect(a.body).toMatchObject({ id: 5, error: { code: -32602 } })
  })

  it('routes a call by the body name to its origin under its own name, in the origin session the client session carries', async () => {
    const sid = await session(at('all'))
    const before = files.calls.length
    const a = await post(at('all'), call(7, 'files__search', 'cats'), { 'mcp-protocol-version': V, 'mcp-session-id': sid })
    expect(a.status).toBe(200)
    expect(a.body).toMatchObject({ id: 7 })
    expect(textOf(a.body)).toBe('files:search:{"q":"cats"}')
    // The origin's session id never reaches the client.
    expect(a.headers.get('mcp-session-id')).toBeNull()
    const served = files.calls.slice(before)
    expect(served).toHaveLength(1)
    expect(files.sessions).toContain(served[0]!.split(':')[0])
    const b = await post(at('all'), call(8, 'weather__search', 'rain'), { 'mcp-protocol-version': V, 'mcp-session-id': sid })
    expect(textOf(b.body)).toBe('weather:search:{"q":"rain"}')
  })

  it('validates against the origin schema per origin: invalid arguments answered by the edge, never reaching the origin', async () => {
    const before = weather.calls.length
    const a = await post(at('all'), { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'weather__get_forecast', arguments: { q: 5 } } }, { 'mcp-protocol-version': V })
    expect(a.body).toMatchObject({ id: 9, error: { code: -32602 } })
    expect(weather.calls.length).toBe(before)
  })

  it('a tool denied on its origin is an unknown tool through the virtual server, and never reaches the origin', async () => {
    const before = files.calls.length
    const a = await post(at('all'), call(10, 'files__delete_file'), { 'mcp-protocol-version': V })
    expect(a.body).toMatchObject({ id: 10, error: { code: -32602, message: expect.stringContaining('Unknown tool') } })
    const b = await post(at('cond'), call(11, 'delete_file'), { 'mcp-protocol-version': V })
    expect(b.body).toMatchObject({ id: 11, error: { code: -32602 } })
    expect(files.calls.length).toBe(before)
  })

  it('a 2026-07-28 client lists and calls both origins (the stateful 2025 one through the edge session); routing is by the body name, a differing Mcp-Name refused', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const modern = (method: string, name?: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) })
    const l = await post(at('cond'), { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }, modern('tools/list'))
    expect(l.body).toMatchObject({ result: { resultType: 'complete', tools: expect.any(Array) } })
    const c1 = await post(
      at('cond'),
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { q: 'm' }, _meta: meta } },
      modern('tools/call', 'read_file')
    )
    expect(textOf(c1.body)).toBe('files:read_file:{"q":"m"}')
    // The 2025 origin's result, to a 2026-07-28 client, carries the resultType that revision requires.
    expect(c1.body).toMatchObject({ id: 2, result: { resultType: 'complete' } })
    const c2 = await post(
      at('cond'),
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_forecast', arguments: { q: 'm' }, _meta: meta } },
      modern('tools/call', 'get_forecast')
    )
    expect(textOf(c2.body)).toBe('weather:get_forecast:{"q":"m"}')
    const before = weather.calls.length + files.calls.length
    const lie = await post(
      at('cond'),
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_forecast', arguments: { q: 'm' }, _meta: meta } },
      modern('tools/call', 'read_file')
    )
    expect(lie.status).toBe(400)
    expect(lie.body).toMatchObject({ id: 4, error: { code: -32020 } })
    expect(weather.calls.length + files.calls.length).toBe(before)
  })

  it('a 2025-03-26 batch across both origins is answered per id', async () => {
    const a = await post(at('all'), [call(1, 'files__read_file', 'a'), call(2, 'weather__get_forecast', 'b'), call(3, 'nope'), { jsonrpc: '2.0', method: 'notifications/x' }], {
      'mcp-protocol-version': '2025-03-26',
    })
    expect(a.status).toBe(200)
    const byId = new Map((a.body as { id: number }[]).map((m) => [m.id, m]))
    expect(byId.size).toBe(3)
    expect(textOf(byId.get(1))).toBe('files:read_file:{"q":"a"}')
    expect(textOf(byId.get(2))).toBe('weather:get_forecast:{"q":"b"}')
    expect(byId.get(3)).toMatchObject({ error: { code: -32602 } })
  })

  it('a session id of another virtual server, or altered, is refused with 404', async () => {
    const sid = await session(at('all'))
    const other = await post(at('cond'), list(1), { 'mcp-protocol-version': V, 'mcp-session-id': sid })
    expect(other.status).toBe(404)
    const [v, payload, mac] = sid.split('.')
    const forged = `${v}.${payload}x.${mac}`
    const altered = await post(at('all'), list(1), { 'mcp-protocol-version': V, 'mcp-session-id': forged })
    expect(altered.status).toBe(404)
  })

  it('an origin killed is left out with a gateway error naming it; restarted, it is back in the same client session', async () => {
    const sid = await session(at('all'))
    const h = { 'mcp-protocol-version': V, 'mcp-session-id': sid }
    await files.stop()
    try {
      // The call finds the origin down: the merged list held since the last page is forgotten, and
      // the next list leaves the origin out.
      const a = await post(at('all'), call(12, 'files__read_file'), h)
      expect(a.body).toMatchObject({ id: 12, error: { code: -31001, data: { origin: 'files' } } })
      expect(await allNames(at('all'), h)).toEqual(['weather__get_forecast', 'weather__search'])
      const b = await post(at('all'), call(13, 'weather__search'), h)
      expect(textOf(b.body)).toBe('weather:search:{"q":"x"}')
      const ready = (await (await fetch(edge.url.replace(/\/mcp$/, '/readyz'))).json()) as { virtual: Record<string, { leftOut: Record<string, string> }> }
      expect(Object.keys(ready.virtual.all!.leftOut)).toEqual(['files'])
      expect(await edge.logs({ msg: 'virtual.origin_left_out', where: (r) => r.origin === 'files' })).not.toHaveLength(0)
      const metrics = await (await fetch(edge.url.replace(/\/mcp$/, '/metrics'))).text()
      expect(metrics).toMatch(/mcp_edge_virtual_origin_left_out_total\{server="all",origin="files"\} [1-9]/)
    } finally {
      await files.restart()
    }
    // Back: listed again, and the client's session still works (the edge replaced the origin session the restart lost).
    expect(await allNames(at('all'), h)).toEqual(['files__read_file', 'files__search', 'weather__get_forecast', 'weather__search'])
    const c = await post(at('all'), call(14, 'files__read_file', 'back'), h)
    expect(textOf(c.body)).toBe('files:read_file:{"q":"back"}')
  })

  it('the official SDK client lists and calls through the virtual server', async () => {
    const client = new Client({ name: 'sdk-client', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(at('cond'))))
    try {
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name)).toEqual(['read_file', 'files__search', 'get_forecast', 'weather__search'])
      const r = await client.callTool({ name: 'get_forecast', arguments: { q: 'sdk' } })
      expect((r.content as { text: string }[])[0]!.text).toBe('weather:get_forecast:{"q":"sdk"}')
      const s = await client.callTool({ name: 'files__search', arguments: { q: 'sdk' } })
      expect((s.content as { text: string }[])[0]!.text).toBe('files:search:{"q":"sdk"}')
    } finally {
      await client.close()
    }
  })

  it("an origin's tools/list_changed reaches the SDK client on the virtual server's GET stream, and the next list holds the new tool", async () => {
    const client = new Client({ name: 'sdk-client', version: '1.0.0' })
    let changed = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++)
    const streams = (await edge.logs()).filter((r) => r.msg === 'virtual.stream_open').length
    await client.connect(new StreamableHTTPClientTransport(new URL(at('cond'))))
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('added_tool')
      // The edge holds the origin's GET stream of this client's session before the origin changes.
      await edge.logs({ msg: 'virtual.stream_open', atLeast: streams + 1 })
      files.addTool!('added_tool')
      await waitFor(() => (changed > 0 ? true : null), { what: 'notifications/tools/list_changed at the SDK client' })
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('added_tool')
      const r = await client.callTool({ name: 'added_tool', arguments: { q: 'new' } })
      expect((r.content as { text: string }[])[0]!.text).toBe('files:added_tool:{"q":"new"}')
    } finally {
      await client.close()
    }
  })
})
