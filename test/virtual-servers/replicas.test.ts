/**
 * A virtual server's session across two edge processes (`mcp-edge serve`, each with its own
 * in-memory store: nothing shared) behind a tiny round-robin proxy with no sticky sessions: the
 * official SDK client opens its session on one replica and lists and calls on both, the stateful
 * origin seeing every call in the one session the edge opened for that client. With a key of its
 * own on each replica, the other replica refuses the session (404), which is why the start says
 * replicas need a shared `VIRTUAL_SESSION_KEY`.
 */
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { killAll, spawnEdge } from '../helpers/edge-process'
import { waitFor } from '../helpers/wait'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

interface RoundRobin {
  url: string
  /** Requests sent to each upstream, by index. */
  sent: number[]
  close(): Promise<void>
}

/** A reverse proxy sending each request to the next of `upstreams` in turn (no stickiness), body and answer streamed through. */
async function roundRobin(upstreams: string[]): Promise<RoundRobin> {
  const sent = upstreams.map(() => 0)
  let next = 0
  const server: Server = createServer((req, res) => {
    const i = next++ % upstreams.length
    sent[i]!++
    const target = new URL(req.url ?? '/', upstreams[i])
    const up = request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    up.on('error', () => res.writeHead(502).end())
    req.pipe(up)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

describe('a virtual-server session across two edge processes behind a round-robin proxy', () => {
  let files: TestOrigin
  let weather: TestOrigin
  let proxy: RoundRobin | undefined
  const env = () => ({
    STORE_FILE: 'memory',
    ORIGIN_URL: weather.url,
    ORIGINS: JSON.stringify({ files: files.url, weather: weather.url }),
    VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'weather'] } }),
  })
  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'])
    weather = await startModernOrigin('weather', ['get_forecast'])
  })
  afterEach(async () => {
    await proxy?.close()
    proxy = undefined
    await killAll()
  })
  afterAll(async () => {
    await files?.close()
    await weather?.close()
  })

  it('with a shared VIRTUAL_SESSION_KEY, list and call work on both replicas in one session', async () => {
    const key = 'replica-key-'.padEnd(48, 'x')
    const [a, b] = await Promise.all([spawnEdge({ ...env(), VIRTUAL_SESSION_KEY: key }), spawnEdge({ ...env(), VIRTUAL_SESSION_KEY: key })])
    // The start-up records are written together, the governance line just before this one would be.
    await waitFor(() => (a.output().includes('edge.governance') ? true : null), { what: 'the governance line', detail: () => a.output() })
    expect(a.output()).not.toContain('virtual.session_key_generated')
    proxy = await roundRobin([a.base, b.base])
    const client = new Client({ name: 'sdk-client', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp/all`))
    await client.connect(transport)
    try {
      const before = files.calls.length
      for (let i = 0; i < 4; i++) {
        const tools = await client.listTools()
        expect(tools.tools.map((t) => t.name)).toEqual(['files__read_file', 'weather__get_forecast'])
        const r = await client.callTool({ name: 'files__read_file', arguments: { q: `r${i}` } })
        expect((r.content as { text: string }[])[0]!.text).toBe(`files:read_file:{"q":"r${i}"}`)
        const w = await client.callTool({ name: 'weather__get_forecast', arguments: { q: `w${i}` } })
        expect((w.content as { text: string }[])[0]!.text).toBe(`weather:get_forecast:{"q":"w${i}"}`)
      }
      expect(proxy.sent[0]).toBeGreaterThan(2)
      expect(proxy.sent[1]).toBeGreaterThan(2)
      // Every call of this client reached the stateful origin in the one session the edge opened at initialize.
      const sessionsUsed = new Set(files.calls.slice(before).map((c) => c.split(':')[0]))
      expect(sessionsUsed.size).toBe(1)
      expect(files.sessions).toContain([...sessionsUsed][0])
    } finally {
      await client.close()
    }
  })

  it('with a key made at start on each replica, the other replica refuses the session (404) and the start said why', async () => {
    const [a, b] = await Promise.all([spawnEdge(env()), spawnEdge(env())])
    // The start-up lines follow the line spawnEdge waits for.
    await waitFor(() => (a.output().includes('VIRTUAL_SESSION_KEY is unset') ? true : null), { what: 'the start-up line about VIRTUAL_SESSION_KEY', detail: () => a.output() })
    const init = await fetch(`${a.url}/all`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    })
    const sid = init.headers.get('mcp-session-id')!
    await init.text()
    const list = (url: string) =>
      fetch(`${url}/all`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      })
    expect((await list(a.url)).status).toBe(200)
    expect((await list(b.url)).status).toBe(404)
  })
})
