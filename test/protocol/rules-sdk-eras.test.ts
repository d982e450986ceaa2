/**
 * Era detection end to end with the official SDKs, on the Node entry and on the built Worker in
 * workerd:
 * - a dual-era SDK v2 client (`versionNegotiation: auto`) through the edge to an SDK v2
 *   `createMcpHandler` origin speaks 2026-07-28: discover, list, valid calls forwarded, invalid
 *   arguments answered by the edge as an `isError` result with `resultType: "complete"`;
 * - the same client through the edge to a legacy-only SDK v1 origin (the demo origin) falls back
 *   to 2025-11-25; the edge learns the origin's era from the probe answer (D17), so the next
 *   client's 2026-07-28 probe is answered 400 -32022 by the edge and never reaches the origin.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { createAsyncServer } from '../helpers/async-listener'

const WEATHER = { type: 'object' as const, properties: { location: { type: 'string' as const } }, required: ['location'] }

async function startModernOrigin(): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0
  const handler = createMcpHandler(() => {
    const s = new McpServer({ name: 'modern-origin', version: '1.0.0' })
    s.registerTool('get_weather', { inputSchema: fromJsonSchema<{ location: string }>(WEATHER) }, async (args: { location: string }) => {
      calls++
      return { content: [{ type: 'text' as const, text: `weather in ${args.location}` }] }
    })
    return s
  })
  const srv: Server = createAsyncServer(toNodeHandler(handler))
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`,
    calls: () => calls,
    close: async () => {
      await handler.close()
      srv.closeAllConnections()
      await new Promise<void>((r) => srv.close(() => r()))
    },
  }
}

async function autoClient(url: string): Promise<Client> {
  const client = new Client({ name: 'dual-era-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

describe.each(RUNTIMES)('SDK clients and origins of both eras through the edge on $name', ({ start }) => {
  let modern: Awaited<ReturnType<typeof startModernOrigin>>
  let legacy: RunningOrigin
  let edge: EdgeUnderTest
  const at = (name: string) => edge.url.replace(/\/mcp$/, `/mcp/${name}`)
  beforeAll(async () => {
    modern = await startModernOrigin()
    legacy = await startDemoOrigin({ jsonResponse: true })
    edge = await start({ ORIGIN_URL: modern.url, ORIGINS: JSON.stringify({ modern: modern.url, legacy: legacy.url }) })
  })
  afterAll(async () => {
    await edge?.close()
    await modern?.close()
    await legacy?.close()
  })

  it('speaks 2026-07-28 end to end with a modern origin', async () => {
    const client = await autoClient(at('modern'))
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['get_weather'])
    const ok = await client.callTool({ name: 'get_weather', arguments: { location: 'Paris' } })
    expect(ok.content).toEqual([{ type: 'text', text: 'weather in Paris' }])
    expect(modern.calls()).toBe(1)
    const bad = await client.callTool({ name: 'get_weather', arguments: {} })
    expect(bad.isError).toBe(true)
    expect(modern.calls()).toBe(1)
    await client.close()
    // Wait for the rejected call's line (the last POST before the close).
    const logs = (await edge.logs({ msg: 'mcp.post', where: (r) => ((r.grades ?? []) as { grade: string }[]).some((g) => g.grade === 'rejected') })).filter(
      (l) => l.msg === 'mcp.post' && l.origin === 'modern'
    ) as { era: string; grades: { method: string; grade: string }[] }[]
    expect(logs.every((l) => l.era === '2026-07-28')).toBe(true)
    expect(logs.at(-1)!.grades).toMatchObject([{ method: 'tools/call', grade: 'rejected' }])
  })

  it('builds local results with resultType "complete" on 2026-07-28 (raw wire)', async () => {
    const env = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
    const res = await request(at('modern'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'get_weather',
      },
      body: `{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"get_weather","arguments":{"location":7},${env}}}`,
    })
    const body = (await res.body.json()) as { id: string; result: { isError: boolean; resultType: string } }
    expect(res.statusCode).toBe(200)
    expect(body).toMatchObject({ id: 'r1', result: { isError: true, resultType: 'complete' } })
  })

  it('falls back to 2025-11-25 with a legacy-only origin, and learns its era', async () => {
    const first = await autoClient(at('legacy'))
    expect(first.getNegotiatedProtocolVersion()).toBe('2025-11-25')
    expect((await first.listTools()).tools.length).toBeGreaterThan(0)
    await first.close()
    const postsAfterFirst = legacy.stats.posts

    // The edge now knows: the next 2026-07-28 probe is answered locally, listing what the origin speaks.
    const env = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
    const probe = await request(at('legacy'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
      body: `{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{${env}}}`,
    })
    expect(probe.statusCode).toBe(400)
    expect(await probe.body.json()).toMatchObject({
      id: 'probe',
      error: { code: -32022, data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], requested: '2026-07-28' } },
    })
    expect(legacy.stats.posts).toBe(postsAfterFirst)

    // A second dual-era client falls back cleanly on the edge's own -32022.
    const second = await autoClient(at('legacy'))
    expect(second.getNegotiatedProtocolVersion()).toBe('2025-11-25')
    const result = await second.callTool({ name: 'get_forecast', arguments: { city: 'Paris', units: 'kelvin' } })
    expect(result.isError).toBe(true)
    expect(legacy.stats.calls.get_forecast ?? 0).toBe(0)
    await second.close()
  })
})
