/**
 * 2024-11-05 origins behind the edge (docs/protocol-rules.md §7), on Node and on the built Worker
 * in workerd. The origins are real:
 *
 * - @modelcontextprotocol/server-slack 2025.4.25, an archived reference server on stdio (SDK 1.0.1,
 *   whose latest version is 2024-11-05), put on Streamable HTTP by a plain message relay
 *   (./helpers/stdio-session-relay.ts). It answers any `initialize` with 2024-11-05, the official SDK
 *   client accepts that and sends `MCP-Protocol-Version: 2024-11-05` from then on. Offline, every
 *   call of it fails and it reports that as `{"error":"fetch failed"}` in a text result without
 *   `isError` (docs/grading.md, the error member).
 * - the current SDK's server (1.32) when its client offers 2024-11-05: a call that succeeds.
 *
 * Each shows `connect()`, the tool list, a valid call forwarded, an invalid call answered locally
 * (-32602, the era's shape; the origin never sees it), and the log line naming era and method.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startStdioRelay, type StdioRelay } from '../helpers/stdio-session-relay'
import { startChangingOrigin, type ChangingOrigin } from '../helpers/changing-origin'
import { offerVersion } from '../helpers/clients'
import { mcpHeaders } from '../helpers/mcp'

const SLACK = { pkg: '@modelcontextprotocol/server-slack', bin: 'dist/index.js', env: { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_TEAM_ID: 'T0TEST' } }

/** An official SDK v1 client session; `offer` rewrites the version its initialize offers. */
async function connect(url: string, offer?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'era-2024', version: '1.0.0' }, { capabilities: {} })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  offerVersion(transport, offer)
  await client.connect(transport)
  return { client, transport }
}

const negotiated = (t: StreamableHTTPClientTransport) => (t as unknown as { protocolVersion?: string }).protocolVersion

describe.each(RUNTIMES)('a 2024-11-05 origin behind the edge on $name', ({ start }) => {
  let slack: StdioRelay
  let sdk: ChangingOrigin
  let edgeSlack: EdgeUnderTest
  let edgeSdk: EdgeUnderTest
  beforeAll(async () => {
    ;[slack, sdk] = await Promise.all([
      startStdioRelay(SLACK),
      startChangingOrigin([
        {
          name: 'search_docs',
          description: 'Search the docs',
          inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1 } }, required: ['query'] },
        },
      ]),
    ])
    ;[edgeSlack, edgeSdk] = await Promise.all([start({ ORIGIN_URL: slack.url }), start({ ORIGIN_URL: sdk.url })])
  })
  afterAll(async () => {
    await Promise.all([edgeSlack?.close(), edgeSdk?.close()])
    await Promise.all([slack?.close(), sdk?.close()])
  })

  it('server-slack (SDK 1.0.1 on stdio): connect, list, a valid call forwarded, an invalid one answered locally', async () => {
    // Direct first: what the server itself answers to the official client.
    const direct = await connect(slack.url)
    const directTools = (await direct.client.listTools()).tools
    const directCall = await direct.client.callTool({ name: 'slack_post_message', arguments: { channel_id: 'C0TEST', text: 'hello' } })
    await direct.client.close()
    expect(negotiated(direct.transport)).toBe('2024-11-05')
    expect(directCall).toEqual({ content: [{ type: 'text', text: '{"error":"fetch failed"}' }] })

    const seenBefore = slack.toServer.length
    const { client, transport } = await connect(edgeSlack.url)
    try {
      expect(negotiated(transport)).toBe('2024-11-05')
      const tools = (await client.listTools()).tools
      expect(tools).toEqual(directTools)
      expect(tools.map((t) => t.name)).toContain('slack_post_message')

      // A valid call is forwarded; the server's failure hidden in a success is marked (D11, the error member).
      const viaEdge = await client.callTool({ name: 'slack_post_message', arguments: { channel_id: 'C0TEST', text: 'hello' } })
      expect(viaEdge).toEqual({
        ...directCall,
        isError: true,
        _meta: {
          'io.mcp-edge/failure': {
            class: 'capability',
            code: 'hidden_failure',
            correlationId: expect.any(String),
            agentGuidance: 'The tool reported a failure in its result; read it before calling again.',
          },
        },
      })

      // An invalid call is answered by the edge in the era's shape (-32602), never forwarded.
      const err = await client.callTool({ name: 'slack_post_message', arguments: { channel_id: 'C0TEST' } }).then(
        () => null,
        (e: unknown) => e as { code?: number; message?: string }
      )
      expect(err?.code).toBe(-32602)
      expect(err?.message).toContain('Invalid arguments for tool "slack_post_message"')
      expect(err?.message).toContain('text')
    } finally {
      await client.close()
    }
    const forwardedCalls = slack.toServer.slice(seenBefore).filter((m) => 'method' in m && m.method === 'tools/call')
    expect(forwardedCalls).toHaveLength(1)

    // One log line per POST, each naming the era and the method (notifications/initialized included).
    const logs = await edgeSlack.logs({ msg: 'mcp.post', where: (r) => (r.grades as { grade: string }[])?.[0]?.grade === 'rejected' })
    const posts = logs.filter((r) => r.msg === 'mcp.post')
    expect(posts.map((p) => [p.era, p.notification ?? (p.grades as { method: string }[])[0]?.method])).toEqual([
      ['2024-11-05', 'initialize'],
      ['2024-11-05', 'notifications/initialized'],
      ['2024-11-05', 'tools/list'],
      ['2024-11-05', 'tools/call'],
      ['2024-11-05', 'tools/call'],
    ])
    const rejected = posts.find((r) => (r.grades as { grade: string }[])[0]?.grade === 'rejected')
    expect(rejected?.grades).toEqual([expect.objectContaining({ method: 'tools/call', tool: 'slack_post_message', grade: 'rejected', code: -32602 })])
  })

  it('the current SDK server asked for 2024-11-05: a valid call succeeds through the edge as it does directly', async () => {
    const direct = await connect(sdk.url, '2024-11-05')
    const directCall = await direct.client.callTool({ name: 'search_docs', arguments: { query: 'edge', limit: 2 } })
    await direct.client.close()
    expect(negotiated(direct.transport)).toBe('2024-11-05')

    const { client, transport } = await connect(edgeSdk.url, '2024-11-05')
    try {
      expect(negotiated(transport)).toBe('2024-11-05')
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_docs'])
      expect(await client.callTool({ name: 'search_docs', arguments: { query: 'edge', limit: 2 } })).toEqual(directCall)
      const calls = sdk.state.calls.length
      await expect(client.callTool({ name: 'search_docs', arguments: { query: 'edge', limit: 0 } })).rejects.toMatchObject({ code: -32602 })
      expect(sdk.state.calls.length).toBe(calls)
    } finally {
      await client.close()
    }
  })

  it('2024-11-05 has no batches: an array under its header is refused whole (400 -32600)', async () => {
    const res = await fetch(edgeSdk.url, {
      method: 'POST',
      headers: mcpHeaders('2024-11-05'),
      body: '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not part of MCP 2024-11-05; send one message per POST' },
    })
  })

  it('a version the edge does not serve is logged as refused, with the method, not as an era it never named', async () => {
    const res = await fetch(edgeSdk.url, { method: 'POST', headers: mcpHeaders('2024-10-07'), body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32022)
    const logs = await edgeSdk.logs({ msg: 'mcp.post', where: (r) => r.requestedVersion === '2024-10-07' })
    const line = logs.find((r) => r.requestedVersion === '2024-10-07')!
    expect(line.era).toBeNull()
    expect(line.grades).toEqual([expect.objectContaining({ method: 'notifications/initialized', grade: 'rejected', code: -32022 })])
  })
})
