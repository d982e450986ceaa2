/**
 * Prompts and resources through a virtual server, on both runtimes, with real SDK servers behind
 * it: a stateful 2025 origin (SDK v1 `McpServer`: prompts, a resource, a resource template) and a
 * stateless 2026-07-28 origin (SDK v2 `McpServer`: a prompt of the same name, a resource). Prompts
 * are merged and named by the prefix rule as tools are; resources keep their URIs and are routed
 * to the origin that listed them (a template's URIs to the origin of the template); the
 * capabilities announce only what some origin offers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResourceTemplate, type McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { streamMessages } from '../helpers/mcp'
import { waitFor } from '../helpers/wait'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

describe.each(RUNTIMES)('virtual server prompts and resources on $name', ({ start }) => {
  let files: TestOrigin
  let weather: TestOrigin
  let plain: TestOrigin
  let edge: EdgeUnderTest
  let client: Client
  const updated: string[] = []
  const filesServers: McpServerV1[] = []
  const at = (name: string) => edge.url.replace(/\/mcp$/, `/mcp/${name}`)

  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'], {
      extra: (s) => {
        filesServers.push(s)
        s.registerPrompt('greet', { description: 'files greet', argsSchema: { who: z.string() } }, ({ who }) => ({
          messages: [{ role: 'user', content: { type: 'text', text: `files greets ${who}` } }],
        }))
        s.registerPrompt('files_only', { description: 'only on files' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'files only' } }] }))
        s.registerResource('readme', 'files://readme', { mimeType: 'text/plain' }, (uri) => ({ contents: [{ uri: uri.href, text: 'files readme' }] }))
        s.registerResource('doc', new ResourceTemplate('files://doc/{id}', { list: undefined }), { mimeType: 'text/plain' }, (uri, { id }) => ({
          contents: [{ uri: uri.href, text: `files doc ${String(id)}` }],
        }))
      },
    })
    weather = await startModernOrigin('weather', ['get_forecast'], (s) => {
      s.registerPrompt('greet', { description: 'weather greet' }, () => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'weather greets' } }] }))
      s.registerResource('today', 'weather://today', { mimeType: 'text/plain' }, (uri: URL) => ({ contents: [{ uri: uri.href, text: 'sunny' }] }))
    })
    plain = await startStatefulOrigin('plain', ['echo'])
    edge = await start({
      ORIGINS: JSON.stringify({ files: files.url, weather: weather.url, plain: plain.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'weather'] }, toolsonly: { origins: ['plain'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(40),
    })
    client = new Client({ name: 'sdk-client', version: '1.0.0' })
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri))
    await client.connect(new StreamableHTTPClientTransport(new URL(at('all'))))
  })
  afterAll(async () => {
    await client?.close()
    await edge?.close()
    await Promise.all([files?.close(), weather?.close(), plain?.close()])
  })

  it('announces prompts and resources only when an origin offers them', async () => {
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: {} })
    const res = await fetch(at('toolsonly'), {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    })
    const caps = ((await res.json()) as { result: { capabilities: Record<string, unknown> } }).result.capabilities
    expect(Object.keys(caps)).toEqual(['tools'])
  })

  it('merges the prompts by the prefix rule and routes prompts/get to its origin under its own name', async () => {
    const { prompts } = await client.listPrompts()
    expect(prompts.map((p) => p.name)).toEqual(['files__greet', 'files__files_only', 'weather__greet'])
    const f = await client.getPrompt({ name: 'files__greet', arguments: { who: 'ann' } })
    expect(f.messages[0]!.content).toMatchObject({ text: 'files greets ann' })
    const w = await client.getPrompt({ name: 'weather__greet' })
    expect(w.messages[0]!.content).toMatchObject({ text: 'weather greets' })
    await expect(client.getPrompt({ name: 'greet' })).rejects.toThrow(/no origin of this virtual server lists this prompt/)
  })

  it('merges the resources and templates and routes each URI to the origin that listed it', async () => {
    const { resources } = await client.listResources()
    expect(resources.map((r) => r.uri)).toEqual(['files://readme', 'weather://today'])
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['files://doc/{id}'])
    expect((await client.readResource({ uri: 'weather://today' })).contents[0]).toMatchObject({ text: 'sunny' })
    expect((await client.readResource({ uri: 'files://readme' })).contents[0]).toMatchObject({ text: 'files readme' })
    expect((await client.readResource({ uri: 'files://doc/7' })).contents[0]).toMatchObject({ text: 'files doc 7' })
    await expect(client.readResource({ uri: 'nowhere://x' })).rejects.toThrow(/no origin of this virtual server lists this resource/)
  })

  it("an origin's notifications/resources/updated reaches the client on the virtual server's GET stream", async () => {
    // The SDK client opened the virtual server's stream after initialize; the edge holds the origin's.
    await edge.logs({ msg: 'virtual.stream_open' })
    for (const s of filesServers) await s.server.sendResourceUpdated({ uri: 'files://readme' }).catch(() => undefined)
    await waitFor(() => (updated.includes('files://readme') ? true : null), { what: 'notifications/resources/updated at the SDK client' })
  })

  it("a 2026-07-28 client's subscriptions/listen is acknowledged and gets a 2025 origin's tools/list_changed with its subscription id", async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const abort = new AbortController()
    const streams = (await edge.logs()).filter((r) => r.msg === 'virtual.stream_open').length
    const res = await fetch(at('all'), {
      method: 'POST',
      signal: abort.signal,
      headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: meta } }),
    })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    /** The next JSON-RPC message of the stream. */
    const next = streamMessages(res)
    try {
      expect(await next()).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } },
      })
      // The edge holds the GET stream of its own session with the stateful origin before it changes.
      await edge.logs({ msg: 'virtual.stream_open', atLeast: streams + 1 })
      files.addTool!('listened_tool')
      expect(await next()).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } } })
    } finally {
      abort.abort()
    }
  })

  it('a 2026-07-28 client without a session lists and reads resources of both origins', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const rpc = async (method: string, params: Record<string, unknown>, name?: string) => {
      const res = await fetch(at('all'), {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 5, method, params: { ...params, _meta: meta } }),
      })
      // A routed answer may be the origin's SSE stream: its data line.
      const text = await res.text()
      const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1]
      return JSON.parse(json ?? 'null') as { result: Record<string, unknown> }
    }
    const l = await rpc('resources/list', {})
    expect((l.result.resources as { uri: string }[]).map((r) => r.uri)).toEqual(['files://readme', 'weather://today'])
    expect(l.result.resultType).toBe('complete')
    const r = await rpc('resources/read', { uri: 'files://readme' }, 'files://readme')
    expect(r.result).toMatchObject({ contents: [{ text: 'files readme' }], resultType: 'complete' })
    // Removed in 2026-07-28: not routed to the 2025 origin that has it.
    expect(await rpc('resources/subscribe', { uri: 'files://readme' })).toMatchObject({
      error: { code: -32601, message: expect.stringContaining('does not exist in MCP 2026-07-28') },
    })
  })
})
