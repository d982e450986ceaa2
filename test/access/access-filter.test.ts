/**
 * Tool filtering end to end on both runtimes (the Node entry and the built Worker in workerd),
 * with real SDK MCP servers as origins (test/helpers/access-origin.ts, paginated tools/list):
 * TOOLS_DENY globally and `toolsAllow` / `toolsDeny` per origin inside ORIGINS. A hidden tool is
 * absent from every tools/list answer (JSON, SSE, every page, batch elements), an unchanged page
 * keeps the origin's bytes, and a call to a hidden tool (body name, the 2026-07-28 Mcp-Name
 * header, each batch element) gets the unknown-tool answer byte for byte without reaching the
 * origin, with one `mcp.denied` log line and +1 on mcp_edge_denials_total{reason="tool_filtered"}.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { mcpHeaders } from '../helpers/mcp'
import { startAccessOrigin, type AccessOrigin } from '../helpers/access-origin'
import { waitFor } from '../helpers/wait'
import { toolPrefix } from '../../src/core/validation/tool-store'

const TOOLS = ['get_weather', 'get_secret', 'search', 'delete_all', 'get_time']

interface Answer {
  status: number
  headers: Headers
  text: string
}

async function post(url: string, body: unknown, headers: Record<string, string> = mcpHeaders()): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

/** The JSON-RPC messages of an SSE body (`data:` lines of each event). */
function sseMessages(text: string): unknown[] {
  return text
    .split(/\n\n/)
    .map((ev) =>
      ev
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
    )
    .filter((d) => d.startsWith('{') || d.startsWith('['))
    .map((d) => JSON.parse(d) as unknown)
}

const list = (id: number, cursor?: string) => ({ jsonrpc: '2.0', id, method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) })
const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { q: 'x' } } })
/** A 2026-07-28 tools/call: the request envelope in params._meta. */
const modernCall = (id: number, name: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: { q: 'x' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
})
const names = (msg: unknown) => ((msg as { result: { tools: { name: string }[] } }).result.tools ?? []).map((t) => t.name)

/** Every page of a JSON tools/list through `url`, following nextCursor. */
async function allPages(url: string): Promise<{ names: string[][]; cursors: (string | undefined)[] }> {
  const out: string[][] = []
  const cursors: (string | undefined)[] = []
  let cursor: string | undefined
  for (let i = 0; i < 10; i++) {
    const a = await post(url, list(i + 1, cursor))
    const m = JSON.parse(a.text) as { result: { tools: { name: string }[]; nextCursor?: string } }
    out.push(names(m))
    cursor = m.result.nextCursor
    cursors.push(cursor)
    if (!cursor) break
  }
  return { names: out, cursors }
}

describe.each(RUNTIMES)('tool filtering on $name', ({ start }) => {
  let json: AccessOrigin
  let sse: AccessOrigin
  let without: AccessOrigin
  let edge: EdgeUnderTest
  const at = (name: string) => edge.url.replace(/\/mcp$/, `/mcp/${name}`)
  beforeAll(async () => {
    json = await startAccessOrigin({ tools: TOOLS, json: true })
    sse = await startAccessOrigin({ tools: TOOLS, json: false })
    without = await startAccessOrigin({ tools: TOOLS.filter((t) => t !== 'get_secret'), json: true })
    edge = await start({
      TOOLS_DENY: 'get_secret',
      ORIGINS: JSON.stringify({
        json: { url: json.url, toolsDeny: ['delete_*'] },
        sse: { url: sse.url, toolsAllow: 'get_*,search' },
        without: without.url,
        open: json.url,
        pulled: { url: json.url, toolsDeny: 'delete_*' },
      }),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await Promise.all([json?.close(), sse?.close(), without?.close()])
  })

  it('JSON: hidden tools are absent from every page, nextCursor leads on; a page without one keeps the origin bytes', async () => {
    const pages = await allPages(at('json'))
    // Origin pages: [get_weather, get_secret], [search, delete_all], [get_time].
    expect(pages.names).toEqual([['get_weather'], ['search'], ['get_time']])
    expect(pages.cursors).toEqual(['2', '4', undefined])
    // The global list alone on an origin without lists of its own.
    expect((await allPages(at('open'))).names).toEqual([['get_weather'], ['search', 'delete_all'], ['get_time']])
    // The last page has no hidden tool: relayed as the origin wrote it.
    const body = list(9, '4')
    const direct = await post(json.url, body)
    const relayed = await post(at('json'), body)
    expect(relayed.text).toBe(direct.text)
    expect(relayed.text).toContain('get_time')
  })

  it('SSE: the hidden tools are removed from the streamed answer', async () => {
    const a = await post(at('sse'), list(1))
    expect(a.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const msgs = sseMessages(a.text)
    expect(msgs).toHaveLength(1)
    expect(names(msgs[0])).toEqual(['get_weather'])
    expect((msgs[0] as { result: { nextCursor: string } }).result.nextCursor).toBe('2')
    // The origin's allow list hides delete_all (not get_*, not search) on page 2.
    expect(names(sseMessages((await post(at('sse'), list(2, '2'))).text)[0])).toEqual(['search'])
  })

  it('a batch: each tools/list element is filtered on its own', async () => {
    const a = await post(at('json'), [list(1), list(2, '2'), list(3, '4')], mcpHeaders('2025-03-26'))
    expect(a.status).toBe(200)
    const byId = new Map((JSON.parse(a.text) as { id: number }[]).map((m) => [m.id, names(m)]))
    expect(Object.fromEntries(byId)).toEqual({ 1: ['get_weather'], 2: ['search'], 3: ['get_time'] })
  })

  it('the edge never learns a hidden tool: calls to visible tools go through, hidden ones never reach the origin', async () => {
    const before = json.calls.length
    const ok = await post(at('json'), call(5, 'get_weather'))
    expect(JSON.parse(ok.text)).toMatchObject({ id: 5, result: { content: [{ type: 'text', text: 'get_weather ok' }] } })
    const hidden = await post(at('json'), call(6, 'get_secret'))
    expect(JSON.parse(hidden.text)).toMatchObject({ id: 6, error: { code: -32602 } })
    expect(json.calls.slice(before)).toEqual(['get_weather'])
    // Learned from the relayed pages and the edge's own pull: the visible tools, never a hidden one.
    const keys = await waitFor(
      async () => {
        const k = await edge.kvKeys!(toolPrefix('json'))
        return k.some((x) => x.endsWith(':get_weather')) && k.some((x) => x.endsWith(':get_time')) ? k : null
      },
      { what: 'the learned tools of origin json in the store' }
    )
    expect(keys.filter((k) => /:(get_secret|delete_all)$/.test(k))).toEqual([])
  })

  it("the edge's own tool-list pull (a call before any list) learns the visible tools only", async () => {
    const a = await post(at('pulled'), call(12, 'get_time'))
    expect(JSON.parse(a.text)).toMatchObject({ id: 12, result: { content: [{ text: 'get_time ok' }] } })
    const keys = await waitFor(
      async () => {
        const k = await edge.kvKeys!(toolPrefix('pulled'))
        return k.some((x) => x.endsWith(':get_time')) ? k : null
      },
      { what: 'the pulled tools of origin pulled in the store' }
    )
    expect(keys.map((k) => k.split(':').pop()).sort()).toEqual(['get_time', 'get_weather', 'search'])
  })

  it('a call to a hidden tool is answered byte for byte as a call to a tool the origin does not have', async () => {
    const hidden = await post(at('json'), call(7, 'get_secret'), mcpHeaders('2025-06-18', { 'x-request-id': 'filtered-call-1' }))
    const missing = await post(at('without'), call(7, 'get_secret'))
    expect(hidden.status).toBe(200)
    expect(hidden.status).toBe(missing.status)
    expect(hidden.text).toBe(missing.text)
    expect(hidden.text).toBe(
      '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool: \\"get_secret\\". Call tools/list to see the tools this server offers.","data":{"tool":"get_secret"}}}'
    )
    expect(hidden.headers.get('mcp-edge-grade')).toBe(missing.headers.get('mcp-edge-grade'))
    expect(json.calls).not.toContain('get_secret')
    expect(without.calls).not.toContain('get_secret')
    const logs = await edge.logs({ msg: 'mcp.denied', where: (r) => r.rid === 'filtered-call-1' })
    const line = logs.find((r) => r.msg === 'mcp.denied' && r.rid === 'filtered-call-1')!
    expect(line).toMatchObject({ level: 'warn', reason: 'tool_filtered', origin: 'json', id: '7', method: 'tools/call', tool: 'get_secret' })
    expect(line.fix).toBe('TOOLS_ALLOW / TOOLS_DENY (or this origin\'s toolsAllow / toolsDeny in ORIGINS) hide this tool; the client was answered "Unknown tool"')
    expect(JSON.stringify(line)).not.toContain('"q"')
  })

  it('2026-07-28: the call named by body and Mcp-Name is answered as an unknown tool, without reaching the origin', async () => {
    const headers = mcpHeaders('2026-07-28', { 'mcp-method': 'tools/call', 'mcp-name': 'get_secret' })
    const a = await post(at('json'), modernCall(8, 'get_secret'), headers)
    expect(a.status).toBe(200)
    expect(a.text).toBe(
      '{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Unknown tool: \\"get_secret\\". Call tools/list to see the tools this server offers.","data":{"tool":"get_secret"}}}'
    )
    // The same name in the Base64 sentinel form of the header.
    const b64 = await post(at('json'), modernCall(9, 'get_secret'), { ...headers, 'mcp-name': `=?base64?${btoa('get_secret')}?=` })
    expect(JSON.parse(b64.text)).toMatchObject({ id: 9, error: { code: -32602, data: { tool: 'get_secret' } } })
    expect(json.calls).not.toContain('get_secret')
  })

  it('a batch of calls: each hidden element gets its own unknown-tool answer, the visible one goes through alone', async () => {
    const before = json.calls.length
    const a = await post(at('json'), [call(1, 'get_secret'), call(2, 'get_time'), call(3, 'delete_all')], mcpHeaders('2025-03-26'))
    expect(a.status).toBe(200)
    const byId = new Map((JSON.parse(a.text) as { id: number }[]).map((m) => [m.id, m]))
    expect(byId.get(2)).toMatchObject({ result: { content: [{ text: 'get_time ok' }] } })
    expect(byId.get(1)).toMatchObject({ error: { code: -32602, message: 'Unknown tool: "get_secret". Call tools/list to see the tools this server offers.' } })
    expect(byId.get(3)).toMatchObject({ error: { code: -32602, message: 'Unknown tool: "delete_all". Call tools/list to see the tools this server offers.' } })
    expect(json.calls.slice(before)).toEqual(['get_time'])
  })

  it('counts each hidden call on mcp_edge_denials_total{reason="tool_filtered"}', async () => {
    const scrape = async () => {
      const text = await (await fetch(new URL('/metrics', edge.url))).text()
      const m = /^mcp_edge_denials_total\{reason="tool_filtered"\} (\d+)/m.exec(text)
      return m ? Number(m[1]) : 0
    }
    const before = await scrape()
    await post(at('json'), call(10, 'get_secret'))
    await post(at('sse'), call(11, 'delete_all'))
    expect(await scrape()).toBe(before + 2)
  })
})
