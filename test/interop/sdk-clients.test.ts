/**
 * Official SDK clients through the edge, against servers of both SDK generations, on Node and on
 * the Worker (built bundle in workerd). Each client runs the same script directly against the
 * origin and through the edge: list the tools and call every one with valid arguments, read a
 * resource, get a prompt, receive progress notifications. The edge run must equal the direct run
 * (the one deliberate difference: the demo's `run_query` hides a failure, which the edge marks
 * with `isError: true`, docs/design.md D11).
 *
 * Clients: SDK v1 (@modelcontextprotocol/sdk 1.32) at 2025-11-25 and at an older negotiated
 * version (2025-06-18); SDK v2 (@modelcontextprotocol/client 2.4) with
 * `versionNegotiation: { mode: 'auto' }`, which speaks 2026-07-28 where the server does.
 * Servers: packages/cli/demo/origin.ts (SDK v1 low-level Server, with the conformance fixtures, so sampling and
 * elicitation travel server -> client inside the POST's SSE stream) and packages/cli/demo/origin-v2.ts
 * (SDK v2 McpServer, 2026-07-28 plus the stateless 2025 leg).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startV2Origin, type RunningV2Origin } from '../../packages/cli/demo/origin-v2'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { offerVersion } from '../helpers/clients'

/** What one client saw in one run; compared between direct and edge. */
interface Transcript {
  protocolVersion: string | undefined
  tools: string[]
  calls: Record<string, unknown>
  progress: number[]
  resource: unknown
  prompt: unknown
}

/** The operations a script needs, over both SDK generations. */
interface PeerClient {
  protocolVersion(): string | undefined
  listTools(): Promise<{ name: string }[]>
  callTool(name: string, args: Record<string, unknown>, onprogress?: (p: { progress: number }) => void): Promise<unknown>
  readResource(uri: string): Promise<unknown>
  getPrompt(name: string, args: Record<string, string>): Promise<unknown>
  close(): Promise<void>
}

const SAMPLING_ANSWER = { role: 'assistant', content: { type: 'text', text: 'a canned completion' }, model: 'test-model', stopReason: 'endTurn' } as const
const ELICIT_ANSWER = { action: 'accept', content: { response: 'yes' } } as const

type ClientKind = 'v1@2025-11-25' | 'v1@2025-06-18' | 'v2@auto'

async function connectV1(url: string, version?: string): Promise<PeerClient> {
  const client = new ClientV1({ name: 'peers-v1', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } })
  client.setRequestHandler(CreateMessageRequestSchema, async () => SAMPLING_ANSWER)
  client.setRequestHandler(ElicitRequestSchema, async () => ELICIT_ANSWER)
  const transport = new TransportV1(new URL(url))
  offerVersion(transport, version)
  await client.connect(transport)
  return {
    protocolVersion: () => (transport as unknown as { protocolVersion?: string }).protocolVersion,
    listTools: async () => (await client.listTools()).tools,
    callTool: (name, args, onprogress) => client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : undefined),
    readResource: (uri) => client.readResource({ uri }),
    getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
    close: () => client.close(),
  }
}

async function connectV2(url: string): Promise<PeerClient> {
  const client = new ClientV2({ name: 'peers-v2', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } })
  client.setRequestHandler('sampling/createMessage', async () => SAMPLING_ANSWER)
  client.setRequestHandler('elicitation/create', async () => ELICIT_ANSWER)
  await client.connect(new TransportV2(new URL(url)))
  return {
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools,
    callTool: (name, args, onprogress) => client.callTool({ name, arguments: args }, onprogress ? { onprogress } : undefined),
    readResource: (uri) => client.readResource({ uri }),
    getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
    close: () => client.close(),
  }
}

function connect(kind: ClientKind, url: string): Promise<PeerClient> {
  if (kind === 'v2@auto') return connectV2(url)
  return connectV1(url, kind === 'v1@2025-06-18' ? '2025-06-18' : undefined)
}

/** Valid arguments for every tool either origin lists. */
const VALID_ARGS: Record<string, Record<string, unknown>> = {
  get_forecast: { city: 'Paris', units: 'c', days: 2 },
  create_order: { customer: { name: 'Ada', email: 'ada@example.com' }, items: [{ sku: 'ABC-123', qty: 2 }], priority: 'high' },
  run_query: { query: 'select 1' },
  echo: { message: 'hello' },
  test_sampling: { prompt: 'Say hi' },
  test_sampling_standalone: { prompt: 'Say hi' },
  test_elicitation: { message: 'Confirm?' },
  json_schema_2020_12_tool: { name: 'Ada', address: { street: 'Main St', city: 'Paris' } },
  add: { a: 2, b: 3 },
  count_with_progress: { steps: 3 },
}

interface ServerPlan {
  progressTool: string
  progressArgs: Record<string, unknown>
  resource: string
  prompt: [string, Record<string, string>]
}

const PLANS: Record<'v1-server' | 'v2-server', ServerPlan> = {
  'v1-server': { progressTool: 'test_tool_with_progress', progressArgs: {}, resource: 'test://static-text', prompt: ['test_prompt_with_arguments', { arg1: 'one', arg2: 'two' }] },
  'v2-server': { progressTool: 'count_with_progress', progressArgs: { steps: 3 }, resource: 'demo://greeting', prompt: ['greet', { name: 'Ada' }] },
}

async function runScript(kind: ClientKind, url: string, plan: ServerPlan): Promise<Transcript> {
  const c = await connect(kind, url)
  try {
    const tools = (await c.listTools()).map((t) => t.name).sort()
    const calls: Record<string, unknown> = {}
    for (const name of tools) calls[name] = await c.callTool(name, VALID_ARGS[name] ?? {})
    const progress: number[] = []
    calls[`${plan.progressTool}+progress`] = await c.callTool(plan.progressTool, plan.progressArgs, (p) => progress.push(p.progress))
    const resource = await c.readResource(plan.resource)
    const prompt = await c.getPrompt(...plan.prompt)
    return { protocolVersion: c.protocolVersion(), tools, calls, progress, resource, prompt }
  } finally {
    await c.close()
  }
}

const CLIENTS: ClientKind[] = ['v1@2025-11-25', 'v1@2025-06-18', 'v2@auto']
const counts = { combos: 0, toolCalls: 0 }

describe.each(RUNTIMES)('official SDK clients through the edge on $name', ({ name: runtime, start }) => {
  let v1: RunningOrigin
  let v2: RunningV2Origin
  let edgeV1: EdgeUnderTest
  let edgeV2: EdgeUnderTest
  beforeAll(async () => {
    ;[v1, v2] = await Promise.all([startDemoOrigin({ fixtures: true }), startV2Origin()])
    ;[edgeV1, edgeV2] = await Promise.all([start({ ORIGIN_URL: v1.url }), start({ ORIGIN_URL: v2.url })])
  })
  afterAll(async () => {
    await Promise.all([edgeV1?.close(), edgeV2?.close()])
    await Promise.all([v1?.close(), v2?.close()])
    console.log(`sdk-clients (${runtime}): ${counts.combos} client/server pairs compared so far, ${counts.toolCalls} tool calls through the edge`)
  })

  for (const server of ['v1-server', 'v2-server'] as const) {
    for (const kind of CLIENTS) {
      it(`${kind} client -> ${server}: same results through the edge as direct`, async () => {
        const [originUrl, edgeUrl] = server === 'v1-server' ? [v1.url, edgeV1.url] : [v2.url, edgeV2.url]
        const plan = PLANS[server]
        const direct = await runScript(kind, originUrl, plan)
        const viaEdge = await runScript(kind, edgeUrl, plan)
        console.log(
          `${runtime} ${kind} -> ${server}: protocol ${viaEdge.protocolVersion} (direct ${direct.protocolVersion}), ${viaEdge.tools.length} tools, progress ${viaEdge.progress.join(',')}`
        )

        expect(viaEdge.protocolVersion).toBe(direct.protocolVersion)
        if (kind === 'v1@2025-06-18') expect(viaEdge.protocolVersion).toBe('2025-06-18')
        if (kind === 'v1@2025-11-25') expect(viaEdge.protocolVersion).toBe('2025-11-25')
        expect(viaEdge.tools).toEqual(direct.tools)
        expect(viaEdge.tools.length).toBeGreaterThanOrEqual(server === 'v1-server' ? 19 : 3)
        expect(viaEdge.progress.length).toBeGreaterThanOrEqual(3)
        expect(viaEdge.progress).toEqual(direct.progress)
        expect(viaEdge.resource).toEqual(direct.resource)
        expect(viaEdge.prompt).toEqual(direct.prompt)
        for (const [tool, result] of Object.entries(direct.calls)) {
          if (tool === 'run_query') {
            // D11: the demo's run_query hides a failure in a success; the edge marks it.
            expect((result as { isError?: boolean }).isError).toBeUndefined()
            // Its classification joins the result's _meta (docs/security.md), the origin's own members kept.
            const own = (result as { _meta?: Record<string, unknown> })._meta ?? {}
            expect(viaEdge.calls[tool]).toEqual({
              ...(result as object),
              isError: true,
              _meta: {
                'io.mcp-edge/failure': {
                  class: 'capability',
                  code: 'hidden_failure',
                  correlationId: expect.any(String),
                  agentGuidance: 'The tool reported a failure in its result; read it before calling again.',
                },
                ...own,
              },
            })
          } else {
            expect(viaEdge.calls[tool], tool).toEqual(result)
          }
        }
        // Sampling and elicitation made the full round trip through the edge (server -> client -> server).
        if (server === 'v1-server') {
          expect(JSON.stringify(viaEdge.calls.test_sampling)).toContain('a canned completion')
          // ... and on the standalone GET stream, relayed by the edge's GET pass-through.
          expect(JSON.stringify(viaEdge.calls.test_sampling_standalone)).toContain('a canned completion')
          expect(JSON.stringify(viaEdge.calls.test_elicitation)).toContain('action=accept')
        }
        counts.combos++
        counts.toolCalls += Object.keys(viaEdge.calls).length
      })
    }
  }
})
