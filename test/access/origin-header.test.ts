/**
 * The browser's `Origin` header (and `Referer`, `Sec-Fetch-*`) stays at the edge: the edge applies the Origin rule itself
 * (`ALLOWED_ORIGINS`) and calls the origin as its own client, so an origin with its own
 * loopback-only Origin check (the demo origin's, like the MCP SDK's DNS-rebinding protection)
 * serves the pages the edge allows. `FORWARD_ORIGIN_HEADER=on` passes it on for an origin that
 * wants it. Both runtimes; the page side (a real Chromium) is test/access/browser-cors.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { POST_HEADERS } from '../helpers/mcp'

const PAGE = 'https://app.example'
const JSON_HEADERS = POST_HEADERS

/** POSTs one JSON-RPC message with extra headers; the parsed JSON body, or the SSE data of its first message. */
async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; sid: string | null; msg: Record<string, unknown> | null }> {
  const res = await fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) })
  const text = await res.text()
  const data = (res.headers.get('content-type') ?? '').includes('event-stream') ? /^data: (.*)$/m.exec(text)?.[1] : text
  return { status: res.status, sid: res.headers.get('mcp-session-id'), msg: data ? (JSON.parse(data) as Record<string, unknown>) : null }
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } }

describe.each(RUNTIMES)('the Origin header on $name', ({ start }) => {
  let demo: RunningOrigin
  let scripted: ScriptedOrigin
  let edge: EdgeUnderTest
  let toScripted: EdgeUnderTest
  let keeping: EdgeUnderTest
  beforeAll(async () => {
    demo = await startDemoOrigin({ jsonResponse: true })
    scripted = await startScriptedOrigin()
    scripted.handle((r, res) => {
      const m = r.json as { id?: number; method?: string } | undefined
      if (r.method !== 'POST' || m?.id === undefined) return void res.writeHead(r.method === 'DELETE' ? 200 : 202).end()
      sendJson(res, { jsonrpc: '2.0', id: m.id, result: m.method === 'tools/list' ? { tools: [] } : {} })
    })
    ;[edge, toScripted, keeping] = await Promise.all([
      start({ ORIGIN_URL: demo.url, ALLOWED_ORIGINS: PAGE }),
      start({ ORIGIN_URL: scripted.url, ALLOWED_ORIGINS: PAGE }),
      start({ ORIGIN_URL: scripted.url, ALLOWED_ORIGINS: PAGE, FORWARD_ORIGIN_HEADER: 'on' }),
    ])
  })
  afterAll(async () => {
    await Promise.all([edge?.close(), toScripted?.close(), keeping?.close()])
    await Promise.all([demo?.close(), scripted?.close()])
  })

  it('a page ALLOWED_ORIGINS allows gets a session from an origin that refuses non-loopback Origins', async () => {
    const init = await post(edge.url, initialize, { origin: PAGE })
    expect(init.status, JSON.stringify(init.msg)).toBe(200)
    expect(init.msg?.result).toMatchObject({ protocolVersion: '2025-06-18' })
    expect(init.sid).toBeTruthy()
    const list = await post(edge.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { origin: PAGE, 'mcp-session-id': init.sid!, 'mcp-protocol-version': '2025-06-18' })
    expect(list.status).toBe(200)
    expect((list.msg?.result as { tools: unknown[] }).tools.length).toBeGreaterThan(0)
    // The edge's own Origin rule still holds: a page it does not allow never reaches the origin.
    const evil = await post(edge.url, initialize, { origin: 'https://evil.example' })
    expect(evil.status).toBe(403)
  })

  it('the origin sees no Origin header on POST or DELETE by default; FORWARD_ORIGIN_HEADER=on passes it on', async () => {
    scripted.reset()
    await post(toScripted.url, { jsonrpc: '2.0', id: 7, method: 'ping' }, { origin: PAGE })
    await fetch(toScripted.url, { method: 'DELETE', headers: { origin: PAGE, 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-06-18' } }).then((r) => r.body?.cancel())
    const seen = scripted.received.filter((r) => r.method === 'DELETE' || (r.json as { id?: number } | undefined)?.id === 7)
    expect(seen.map((r) => r.method).sort()).toEqual(['DELETE', 'POST'])
    for (const r of seen) expect(r.headers.origin, r.method).toBeUndefined()

    scripted.reset()
    await post(keeping.url, { jsonrpc: '2.0', id: 8, method: 'ping' }, { origin: PAGE })
    const kept = scripted.received.find((r) => (r.json as { id?: number } | undefined)?.id === 8)
    expect(kept?.headers.origin).toBe(PAGE)
  })

  it('Referer and Sec-Fetch-* stay at the edge like Origin (an origin checking Sec-Fetch-Site serves the page); Cookie is forwarded; FORWARD_ORIGIN_HEADER=on passes them on', async () => {
    const page = {
      origin: PAGE,
      referer: `${PAGE}/chat?room=1`,
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'cors',
      'sec-fetch-dest': 'empty',
      cookie: 'session=abc',
    }
    scripted.reset()
    await post(toScripted.url, { jsonrpc: '2.0', id: 9, method: 'ping' }, page)
    await fetch(toScripted.url, { method: 'DELETE', headers: { ...page, 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-06-18' } }).then((r) => r.body?.cancel())
    const seen = scripted.received.filter((r) => r.method === 'DELETE' || (r.json as { id?: number } | undefined)?.id === 9)
    expect(seen.map((r) => r.method).sort()).toEqual(['DELETE', 'POST'])
    for (const r of seen) {
      for (const h of ['origin', 'referer', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest']) expect(r.headers[h], `${r.method} ${h}`).toBeUndefined()
      expect(r.headers.cookie, r.method).toBe('session=abc')
    }

    scripted.reset()
    await post(keeping.url, { jsonrpc: '2.0', id: 10, method: 'ping' }, page)
    const kept = scripted.received.find((r) => (r.json as { id?: number } | undefined)?.id === 10)
    expect(kept?.headers).toMatchObject(page)
  })
})
