/**
 * Notifications through a virtual server, on both runtimes, with real SDK servers behind it: a
 * stateful 2025 origin (SDK v1 `McpServer`: prompts, a resource, tools that ask the client for
 * sampling and report progress), a second stateful one, and a stateless 2026-07-28 origin (SDK v2
 * `createMcpHandler`: a prompt, a resource, `steps` and `wait` tools, `handler.notify` for its
 * subscriptions).
 * - the origins' `notifications/prompts/list_changed` and `notifications/resources/list_changed`
 *   reach a 2025 client's GET stream and a 2026-07-28 subscription (as it asked), and the edge
 *   lists the prompts again after one;
 * - two 2026-07-28 subscriptions at once each hear the stateful origin;
 * - progress both ways: the client's progress on an origin's sampling request (and its answer)
 *   reaches that origin alone (a second stateful origin hears nothing of it), each origin's progress
 *   on a client's call reaches the client on the call's stream (this worked before: coverage);
 * - cancellation at the 2026-07-28 origin: a 2026-07-28 client closing its request (this worked
 *   before: coverage), and a 2025 client's `notifications/cancelled` in its session, both close the
 *   origin's request (the origin's handler sees its signal abort: 2026-07-28 Streamable HTTP
 *   §Cancellation).
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { fromJsonSchema } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { openSession, streamMessages } from '../helpers/mcp'
import { waitFor } from '../helpers/wait'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

const V = '2025-06-18'
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V }
const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const Q = { type: 'object' as const, properties: { q: { type: 'string' as const } }, required: ['q'] }

describe.each(RUNTIMES)('virtual server notifications on $name', ({ name, start }) => {
  let files: TestOrigin
  let weather: TestOrigin
  let notes: TestOrigin
  /** What the second stateful origin's SDK server reported as errors (an answer or progress it did not ask for). */
  const notesErrors: string[] = []
  let edge: EdgeUnderTest
  const filesServers: McpServerV1[] = []
  /** Progress the stateful origin received on its sampling requests. */
  const samplingProgress: number[] = []
  /** The 2026-07-28 origin's `wait` calls: started, and seen aborted. */
  const waits = { started: 0, aborted: 0 }
  const at = () => edge.url.replace(/\/mcp$/, '/mcp/all')

  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'], {
      waitTool: true,
      extra: (s) => {
        filesServers.push(s)
        s.registerPrompt('greet', { description: 'files greet' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'files greets' } }] }))
        s.registerResource('readme', 'files://readme', { mimeType: 'text/plain' }, (uri) => ({ contents: [{ uri: uri.href, text: 'files readme' }] }))
        // Asks the client for sampling with a progressToken; answers with the progress it was sent.
        s.registerTool('ask', { inputSchema: { q: z.string() } }, async (_args, extra) => {
          const r = await extra.sendRequest(
            { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } },
            CreateMessageResultSchema,
            { onprogress: (p) => void samplingProgress.push(p.progress) }
          )
          return { content: [{ type: 'text', text: `sampled ${r.content.type === 'text' ? r.content.text : ''}; progress ${samplingProgress.join(',')}` }] }
        })
        // Reports progress on the client's progressToken, then answers.
        s.registerTool('slow', { inputSchema: { q: z.string() } }, async (_args, extra) => {
          const token = extra._meta?.progressToken
          if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } })
          return { content: [{ type: 'text', text: 'slow done' }] }
        })
      },
    })
    weather = await startModernOrigin('weather', ['get_forecast'], (s) => {
      s.registerPrompt('today', { description: 'weather today' }, () => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'sunny' } }] }))
      s.registerResource('today', 'weather://today', { mimeType: 'text/plain' }, (uri: URL) => ({ contents: [{ uri: uri.href, text: 'sunny' }] }))
      // Reports progress on the client's progressToken, then answers.
      s.registerTool('steps', { inputSchema: fromJsonSchema<{ q: string }>(Q) }, async (_args: { q: string }, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } })
        return { content: [{ type: 'text' as const, text: 'steps done' }] }
      })
      // Answers only when its request is cancelled (the handler's signal aborts).
      s.registerTool('wait', { inputSchema: fromJsonSchema<{ q: string }>(Q) }, async (_args: { q: string }, ctx) => {
        waits.started++
        await new Promise<void>((r) => (ctx.mcpReq.signal.aborted ? r() : ctx.mcpReq.signal.addEventListener('abort', () => r())))
        waits.aborted++
        return { content: [{ type: 'text' as const, text: 'cancelled' }] }
      })
    })
    notes = await startStatefulOrigin('notes', ['jot'], { extra: (s) => void (s.server.onerror = (e) => void notesErrors.push(e.message)) })
    edge = await start({
      ORIGINS: JSON.stringify({ files: files.url, weather: weather.url, notes: notes.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'weather', 'notes'] } }),
      VIRTUAL_SESSION_KEY: 'n'.repeat(40),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await Promise.all([files?.close(), weather?.close(), notes?.close()])
  })

  /** Opens a 2026-07-28 subscription with `filter`; returns its messages and how to close it. */
  const subscribe = async (id: number, filter: Record<string, boolean>) => {
    const abort = new AbortController()
    const res = await fetch(at(), {
      method: 'POST',
      signal: abort.signal,
      headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: filter, _meta: MODERN_META } }),
    })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    return { next: streamMessages(res), close: () => abort.abort() }
  }
  const streamsOpen = async () => (await edge.logs()).filter((r) => r.msg === 'virtual.stream_open').length
  const changed = (list: string, id: number) => ({
    jsonrpc: '2.0',
    method: `notifications/${list}/list_changed`,
    params: { _meta: { 'io.modelcontextprotocol/subscriptionId': id } },
  })

  it("a 2025 client's GET stream gets the origins' prompts and resources list_changed, and the next prompts/get sees the new prompt", async () => {
    const seen: string[] = []
    const client = new Client({ name: 'sdk-client', version: '1.0.0' })
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void seen.push('prompts'))
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void seen.push('resources'))
    const before = await streamsOpen()
    await client.connect(new StreamableHTTPClientTransport(new URL(at())))
    try {
      // Announced, since the stateful origin announces them (SDK v1 McpServer).
      expect(client.getServerCapabilities()).toMatchObject({ prompts: { listChanged: true }, resources: { listChanged: true } })
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['files__greet', 'weather__today'])
      // The SDK client opened the virtual server's GET stream; the edge holds the origin's.
      await edge.logs({ msg: 'virtual.stream_open', atLeast: before + 1 })
      // Registering a prompt on a connected SDK server sends notifications/prompts/list_changed.
      for (const s of filesServers) s.registerPrompt('late', { description: 'added later' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'late' } }] }))
      for (const s of filesServers) await s.server.sendResourceListChanged().catch(() => undefined)
      await waitFor(() => (seen.includes('prompts') && seen.includes('resources') ? true : null), { what: 'prompts and resources list_changed at the SDK client' })
      // The edge forgot where this caller's prompts go: the new prompt is found (listed again).
      const late = await client.getPrompt({ name: 'files__late' })
      expect(late.messages[0]!.content).toMatchObject({ text: 'late' })
    } finally {
      await client.close()
    }
  })

  it('a 2026-07-28 subscription gets prompts and resources list_changed of both origins, with its subscription id, as it asked', async () => {
    const before = await streamsOpen()
    const sub = await subscribe(31, { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true })
    try {
      expect(await sub.next()).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 31 } },
      })
      await edge.logs({ msg: 'virtual.stream_open', atLeast: before + 1 })
      // From the 2026-07-28 origin's own subscription.
      weather.notify!.promptsChanged()
      expect(await sub.next()).toEqual(changed('prompts', 31))
      weather.notify!.toolsChanged()
      expect(await sub.next()).toEqual(changed('tools', 31))
      // From the GET stream of the subscription's session with the stateful origin.
      for (const s of filesServers) await s.server.sendResourceListChanged().catch(() => undefined)
      expect(await sub.next()).toEqual(changed('resources', 31))
    } finally {
      sub.close()
    }
  })

  it('a subscription that asked for prompts only gets no tools list_changed', async () => {
    const before = await streamsOpen()
    const sub = await subscribe(32, { promptsListChanged: true })
    try {
      expect(await sub.next()).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { promptsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 32 } },
      })
      await edge.logs({ msg: 'virtual.stream_open', atLeast: before + 1 })
      // One origin stream, in order: a tools change (not asked for), then a prompts change.
      files.addTool!('unasked_tool')
      for (const s of filesServers) await s.server.sendPromptListChanged().catch(() => undefined)
      expect(await sub.next()).toEqual(changed('prompts', 32))
    } finally {
      sub.close()
    }
  })

  it('two subscriptions at once on one edge each hear the stateful origin', async () => {
    const before = await streamsOpen()
    const a = await subscribe(41, { toolsListChanged: true })
    const b = await subscribe(42, { toolsListChanged: true })
    try {
      expect((await a.next()).method).toBe('notifications/subscriptions/acknowledged')
      expect((await b.next()).method).toBe('notifications/subscriptions/acknowledged')
      await edge.logs({ msg: 'virtual.stream_open', atLeast: before + 2 })
      // Each holds a GET stream at the stateful origin (an SDK session has one; a second GET is refused 409).
      const opened = (await edge.logs()).filter((r) => r.msg === 'virtual.stream_open').slice(before)
      expect(opened.map((r) => r.origins)).toEqual([
        ['weather', 'files', 'notes'],
        ['weather', 'files', 'notes'],
      ])
      files.addTool!('heard_twice')
      expect(await a.next()).toEqual(changed('tools', 41))
      expect(await b.next()).toEqual(changed('tools', 42))
    } finally {
      a.close()
      b.close()
    }
  })

  it("the client's progress and answer on an origin's sampling request reach that origin alone", async () => {
    const client = new Client({ name: 'sdk-client', version: '1.0.0' }, { capabilities: { sampling: {} } })
    client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
      const token = req.params._meta?.progressToken
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } })
      return { role: 'assistant', model: 'test', content: { type: 'text', text: 'ok' } }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(at())))
    try {
      const r = await client.callTool({ name: 'files__ask', arguments: { q: 'x' } })
      expect(r.content).toEqual([{ type: 'text', text: 'sampled ok; progress 1' }])
      // The other stateful origin of the session got neither (its SDK server reports an unknown token or id).
      expect(notesErrors).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("an origin's progress on the client's call reaches the client on the call's stream", async () => {
    const client = new Client({ name: 'sdk-client', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(at())))
    try {
      const progress: number[] = []
      const r = await client.callTool({ name: 'files__slow', arguments: { q: 'x' } }, undefined, { onprogress: (p) => void progress.push(p.progress) })
      expect(r.content).toEqual([{ type: 'text', text: 'slow done' }])
      expect(progress).toEqual([1])
    } finally {
      await client.close()
    }
  })

  it("a 2026-07-28 origin's progress on a 2026-07-28 client's call reaches the client on the call's stream", async () => {
    const res = await fetch(at(), {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'weather__steps' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 61,
        method: 'tools/call',
        params: { name: 'weather__steps', arguments: { q: 'x' }, _meta: { ...MODERN_META, progressToken: 'p-61' } },
      }),
    })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const next = streamMessages(res)
    expect(await next()).toEqual({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p-61', progress: 1, total: 2 } })
    expect(await next()).toMatchObject({ id: 61, result: { content: [{ type: 'text', text: 'steps done' }], resultType: 'complete' } })
  })

  // Skipped on the Worker: under plain Miniflare a client that aborts its request is not passed on
  // to the Worker (request.signal does not fire; see test/transport/limits.test.ts), so there only
  // ORIGIN_TIMEOUT_MS ends the origin request. On Cloudflare a client disconnect cancels the
  // invocation and its subrequests.
  it.skipIf(name === 'worker')('a 2026-07-28 client closing its call closes the request at the 2026-07-28 origin', async () => {
    const started = waits.started
    const aborted = waits.aborted
    const abort = new AbortController()
    const call = fetch(at(), {
      method: 'POST',
      signal: abort.signal,
      headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'weather__wait' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 51, method: 'tools/call', params: { name: 'weather__wait', arguments: { q: 'x' }, _meta: MODERN_META } }),
    }).catch(() => null)
    await waitFor(() => (waits.started > started ? true : null), { what: 'the wait call at the 2026-07-28 origin' })
    abort.abort()
    await call
    await waitFor(() => (waits.aborted > aborted ? true : null), { what: 'the cancellation at the 2026-07-28 origin' })
  })

  it("a 2025 client's notifications/cancelled closes its call's request at the 2026-07-28 origin", async () => {
    const h = await openSession(at(), V)
    const started = waits.started
    const aborted = waits.aborted
    // Sent with node:http: its answer is read to its end below.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'job-9', method: 'tools/call', params: { name: 'weather__wait', arguments: { q: 'x' } } })
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(at(), { method: 'POST', headers: { ...h, 'content-length': String(Buffer.byteLength(body)) } })
      req.on('error', reject)
      req.on('response', (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
        res.on('error', reject)
      })
      req.end(body)
    })
    await waitFor(() => (waits.started > started ? true : null), { what: 'the wait call at the 2026-07-28 origin' })
    const n = await fetch(at(), {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'job-9', reason: 'user' } }),
    })
    expect(n.status).toBe(202)
    await waitFor(() => (waits.aborted > aborted ? true : null), { what: 'the cancellation at the 2026-07-28 origin' })
    // The cancelled request gets no answer: its stream ends empty.
    const a = await answered
    expect(a.status).toBe(200)
    expect(a.text).toBe('')
  })
})
