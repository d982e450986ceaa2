/**
 * Browser clients (src/core/request/cors-rule.ts, src/http/cors.ts) on both runtimes.
 *
 * 1. A real headless Chromium (Debian's `chromium`, driven by playwright-core) loads a page
 *    served from another loopback origin (`http://localhost:<page port>`, the edge is on
 *    `http://127.0.0.1:<edge port>`) that talks MCP to the edge with `fetch`: initialize (reads the
 *    `Mcp-Session-Id` response header), notifications/initialized, tools/list, a valid tools/call
 *    the official-SDK demo origin answers, and an invalid one the edge answers (reads
 *    `MCP-Edge-Grade`). Every request carries custom headers, so every one is preflighted.
 * 2. The same page served as `http://evil.test:<page port>` (mapped to 127.0.0.1 in Chromium) is
 *    refused: its `fetch` rejects and the origin sees no request from it.
 * 3. Preflights over plain HTTP: the methods, the MCP request headers, the requested
 *    `Mcp-Param-*` names echoed (others not), `ALLOWED_ORIGINS` honoured, 403 for other origins,
 *    and a non-preflight OPTIONS still 405.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser } from 'playwright-core'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { missingMessage, programPath } from '../helpers/system-programs'

const CHROMIUM = programPath('chromium')

/** The page's script: an MCP session over fetch; returns what it saw, or the error's name. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>mcp page</title><script>
async function session(edge) {
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const post = async (body, extra = {}) => {
    const res = await fetch(edge, { method: 'POST', headers: { ...base, ...extra }, body: JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, sessionId: res.headers.get('mcp-session-id'), grade: res.headers.get('mcp-edge-grade'), body: text ? JSON.parse(text) : null }
  }
  try {
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } })
    const sid = init.sessionId
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }
    const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, h)
    const good = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: 'Paris', days: 3 } } }, h)
    const bad = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: 'Paris', days: 30 } } }, h)
    return { ok: true, init, initialized: initialized.status, list, good, bad }
  } catch (e) {
    return { ok: false, error: e.name, message: String(e.message) }
  }
}
</script>`

describe.each(RUNTIMES)('browser clients on $name', ({ start }) => {
  let origin: RunningOrigin
  let edge: EdgeUnderTest
  let page: Server
  let pagePort: number
  let browser: Browser
  beforeAll(async () => {
    if (CHROMIUM === undefined || !existsSync(CHROMIUM)) throw new Error(missingMessage('chromium'))
    origin = await startDemoOrigin({ jsonResponse: true })
    edge = await start({ ORIGIN_URL: origin.url, ALLOWED_ORIGINS: 'https://app.example' })
    page = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE))
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r))
    pagePort = (page.address() as AddressInfo).port
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless=new', '--no-sandbox', '--host-resolver-rules=MAP evil.test 127.0.0.1'] })
  })
  afterAll(async () => {
    await browser?.close()
    await new Promise((r) => (page ? page.close(r) : r(undefined)))
    await edge?.close()
    await origin?.close()
  })

  it('a page on another loopback origin completes initialize, tools/list and tools/call, and reads Mcp-Session-Id', async () => {
    const tab = await browser.newPage()
    await tab.goto(`http://localhost:${pagePort}/`)
    const r = (await tab.evaluate(`session(${JSON.stringify(edge.url)})`)) as any
    await tab.close()
    expect(r.ok, JSON.stringify(r)).toBe(true)
    expect(r.init.status).toBe(200)
    expect(r.init.sessionId).toMatch(/^[0-9a-f-]{8,}$/)
    expect(r.init.body.result.serverInfo.name).toBe('demo-origin')
    expect(r.initialized).toBe(202)
    expect(r.list.body.result.tools.map((t: { name: string }) => t.name)).toContain('get_forecast')
    expect(r.good.status).toBe(200)
    expect(r.good.body.result.isError).toBeFalsy()
    expect(r.good.grade).toMatch(/ok/)
    // The invalid call is answered by the edge (-32602 in 2025-06-18), and the page can read the grade header.
    expect(r.bad.body.error.code).toBe(-32602)
    expect(r.bad.grade).toMatch(/rejected/)
    expect(origin.stats.calls.get_forecast).toBe(1)
  })

  it('the same page from a disallowed origin is refused: fetch rejects, the origin sees nothing', async () => {
    const posts = origin.stats.posts
    const tab = await browser.newPage()
    await tab.goto(`http://evil.test:${pagePort}/`)
    const r = (await tab.evaluate(`session(${JSON.stringify(edge.url)})`)) as any
    await tab.close()
    expect(r.ok).toBe(false)
    expect(r.error).toBe('TypeError')
    expect(origin.stats.posts).toBe(posts)
  })

  it('preflights: methods, MCP headers, requested Mcp-Param-* names, ALLOWED_ORIGINS, 403 otherwise', async () => {
    const preflight = (from: string, requestHeaders: string) =>
      fetch(edge.url, { method: 'OPTIONS', headers: { origin: from, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders } })
    const ok = await preflight('https://app.example', 'content-type, mcp-protocol-version, mcp-method, mcp-name, Mcp-Param-Region, mcp-param-user_id, x-unrelated')
    expect(ok.status).toBe(204)
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(ok.headers.get('access-control-allow-methods')!.split(',')).toEqual(['GET', 'POST', 'DELETE', 'OPTIONS'])
    const allowed = ok.headers.get('access-control-allow-headers')!.toLowerCase().split(',')
    for (const h of [
      'content-type',
      'accept',
      'authorization',
      'mcp-session-id',
      'mcp-protocol-version',
      'last-event-id',
      'mcp-method',
      'mcp-name',
      'mcp-param-region',
      'mcp-param-user_id',
    ])
      expect(allowed).toContain(h)
    expect(allowed).not.toContain('x-unrelated')
    expect(ok.headers.get('access-control-max-age')).toBe('600')
    expect(ok.headers.get('vary')).toMatch(/Origin/)

    const refused = await preflight('https://other.example', 'content-type')
    expect(refused.status).toBe(403)
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(-32600)

    // An actual POST from an allowed origin exposes the session and grade headers.
    const post = await fetch(edge.url, {
      method: 'POST',
      headers: { origin: 'https://app.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_forecast', arguments: { days: 99 } } }),
    })
    expect(post.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(post.headers.get('access-control-expose-headers')!.toLowerCase()).toMatch(/mcp-session-id.*mcp-edge-grade.*retry-after/)
    const postRefused = await fetch(edge.url, {
      method: 'POST',
      headers: { origin: 'https://other.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    })
    expect(postRefused.status).toBe(403)
    expect(postRefused.headers.get('access-control-allow-origin')).toBeNull()

    // OPTIONS without a preflight's headers is not CORS: 405 as before.
    const plain = await fetch(edge.url, { method: 'OPTIONS' })
    expect(plain.status).toBe(405)
  })
})
