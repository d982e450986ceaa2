/**
 * @modelcontextprotocol/server-everything (the reference "everything" server, SDK v1, every POST
 * answered with SSE, schemas declaring draft-07) as a second, independent origin, on Node and on
 * the Worker (built bundle in workerd):
 * - initialize and tools/list through the edge equal the direct run;
 * - every tool it lists is called with valid arguments (result equal to the direct run, byte for
 *   byte as parsed JSON) and with one invalid argument, which the edge answers itself as the era
 *   requires: an `isError` result at 2025-11-25, JSON-RPC -32602 at 2025-06-18 and 2025-03-26
 *   (docs/design.md §3), graded `rejected` in the edge's log, so the origin never saw it;
 * - an SDK v2 client in `auto` negotiation mode falls back to 2025-11-25 (the origin is legacy-only)
 *   the same way through the edge as directly.
 * Invalid argument chosen per tool from its own inputSchema (see `invalidArgs`); a tool whose schema
 * constrains nothing gets `arguments` that is not an object (D3, -32602 in every era).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startServerEverything, type Proc } from '../helpers/peers-procs'
import { offerVersion } from '../helpers/clients'
import { waitFor } from '../helpers/wait'

/** Valid arguments for every server-everything 2026.8.31 tool; nothing here reaches the network. */
const VALID: Record<string, Record<string, unknown>> = {
  echo: { message: 'hello through the edge' },
  'get-annotated-message': { messageType: 'success', includeImage: true },
  'get-env': {},
  'get-resource-links': { count: 2 },
  'get-resource-reference': { resourceType: 'Text', resourceId: 2 },
  'get-structured-content': { location: 'Chicago' },
  'get-sum': { a: 2, b: 40 },
  'get-tiny-image': {},
  // a data: URI, so the tool never fetches anything
  'gzip-file-as-resource': { name: 'hello.txt.gz', data: 'data:text/plain;base64,aGVsbG8gd29ybGQ=', outputType: 'resource' },
  'toggle-simulated-logging': {},
  'toggle-subscriber-updates': {},
  'trigger-long-running-operation': { duration: 0.2, steps: 2 },
  'simulate-research-query': { topic: 'edge validation' },
}

type Schema = { properties?: Record<string, { type?: string; enum?: unknown[] }>; required?: string[] }

/**
 * One invalid argument from the tool's own schema: an enum property gets a value outside the enum,
 * a typed property a value of another type (the rest of the valid arguments kept). A schema that
 * constrains nothing yields `null` (the caller then sends non-object `arguments`).
 */
function invalidArgs(tool: Tool): { args: Record<string, unknown>; property: string } | null {
  const props = Object.entries((tool.inputSchema as Schema).properties ?? {})
  const [name, prop] = props.find(([, p]) => p.enum) ?? props.find(([, p]) => p.type) ?? []
  if (!name || !prop) return null
  const wrong = prop.enum ? 'not-one-of-them' : prop.type === 'string' ? 12345 : 'not-a-' + String(prop.type)
  return { args: { ...(VALID[tool.name] ?? {}), [name]: wrong }, property: name }
}

async function connect(url: string, version?: string): Promise<Client> {
  const client = new Client({ name: 'peers-everything', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  offerVersion(transport, version)
  await client.connect(transport)
  return client
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

/**
 * A result with what differs between any two calls replaced: session and task ids, and the wall-clock
 * time server-everything writes into its dynamic text resources (`get-resource-reference`: "...
 * plaintext resource created at 7:15:07 PM", from `toLocaleTimeString()`, so the direct call and
 * the call through the edge differ whenever a second boundary falls between them). The time ends
 * the text, so everything up to the closing quote is the clock, in whatever locale format.
 */
const TASK_ID = /"taskId":"[^"]*"/g
const CLOCK_TIME = /(resource created at )[^"]*/g
const stable = (r: unknown) => JSON.parse(JSON.stringify(r).replace(UUID, '<uuid>').replace(TASK_ID, '"taskId":"<task>"').replace(CLOCK_TIME, '$1<clock time>')) as unknown

/**
 * Calls a tool the way its declaration asks: a tool with `execution.taskSupport: "required"`
 * (SDK v1 refuses a plain call to it) goes through the task API and its final result is returned.
 */
async function call(client: Client, tool: Tool, args: unknown, onprogress?: (p: { progress: number }) => void): Promise<unknown> {
  const params = { name: tool.name, arguments: args as Record<string, unknown> }
  if ((tool as { execution?: { taskSupport?: string } }).execution?.taskSupport !== 'required') {
    return client.callTool(params, CallToolResultSchema, onprogress ? { onprogress } : undefined)
  }
  for await (const m of client.experimental.tasks.callToolStream(params, CallToolResultSchema, { task: { ttl: 60_000 } })) {
    if (m.type === 'result') return m.result
    if (m.type === 'error') throw m.error
  }
  throw new Error(`no result for ${tool.name}`)
}

let se: { proc: Proc; url: string }
beforeAll(async () => {
  se = await startServerEverything()
}, 60_000)
afterAll(async () => {
  await se?.proc.stop()
})

describe.each(RUNTIMES)('server-everything behind the edge on $name', ({ name: runtime, start }) => {
  let edge: EdgeUnderTest
  beforeAll(async () => {
    edge = await start({ ORIGIN_URL: se.url })
  })
  afterAll(async () => {
    await edge?.close()
  })

  it('initializes and lists the same tools as the direct run', async () => {
    const direct = await connect(se.url)
    const viaEdge = await connect(edge.url)
    expect(viaEdge.getServerVersion()).toEqual(direct.getServerVersion())
    expect(viaEdge.getServerCapabilities()).toEqual(direct.getServerCapabilities())
    const [d, e] = [await direct.listTools(), await viaEdge.listTools()]
    expect(e).toEqual(d)
    expect(e.tools.length).toBeGreaterThanOrEqual(13)
    // every tool this test knows valid arguments for is listed, and nothing else is
    expect(e.tools.map((t) => t.name).sort()).toEqual(Object.keys(VALID).sort())
    await direct.close()
    await viaEdge.close()
  })

  it('calls every tool with valid arguments: results equal the direct run, progress included', async () => {
    const direct = await connect(se.url)
    const viaEdge = await connect(edge.url)
    const { tools } = await direct.listTools()
    let same = 0
    for (const t of tools) {
      const progressD: number[] = []
      const progressE: number[] = []
      const d = await call(direct, t, VALID[t.name], (p) => progressD.push(p.progress))
      const e = await call(viaEdge, t, VALID[t.name], (p) => progressE.push(p.progress))
      expect(stable(e), t.name).toEqual(stable(d))
      expect(progressE, t.name).toEqual(progressD)
      same++
    }
    console.log(`server-everything (${runtime}): ${same}/${tools.length} valid calls equal to the direct run`)
    expect(same).toBe(tools.length)
    await direct.close()
    await viaEdge.close()
  }, 60_000)

  it('a v2 client negotiating automatically falls back to the version this origin speaks, through the edge as directly', async () => {
    const open = async (url: string) => {
      const c = new ClientV2({ name: 'peers-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
      await c.connect(new TransportV2(new URL(url)))
      return c
    }
    const [direct, viaEdge] = [await open(se.url), await open(edge.url)]
    expect(viaEdge.getNegotiatedProtocolVersion()).toBe(direct.getNegotiatedProtocolVersion())
    expect(viaEdge.getNegotiatedProtocolVersion()).toBe('2025-11-25')
    expect((await viaEdge.listTools()).tools.map((t) => t.name)).toEqual((await direct.listTools()).tools.map((t) => t.name))
    const args = { name: 'get-sum', arguments: { a: 1, b: 2 } }
    expect(await viaEdge.callTool(args)).toEqual(await direct.callTool(args))
    await direct.close()
    await viaEdge.close()
  })

  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26'] as const) {
    it(`answers one invalid argument per tool itself (${version}), never forwarding it`, async () => {
      const client = await connect(edge.url, version)
      const direct = await connect(se.url, version)
      const { tools } = await client.listTools()
      const logsBefore = (await edge.logs()).length
      let answeredByEdge = 0
      for (const t of tools) {
        const bad = invalidArgs(t)
        // No constraint to break: send arguments that are not an object (D3: -32602 in every era).
        const args = bad ? bad.args : ('not-an-object' as unknown as Record<string, unknown>)
        const outcome = await call(client, t, args).then(
          (r) => ({ result: r }),
          (e: unknown) => ({ error: e as { code?: number; message?: string } })
        )
        const isTask = (t as { execution?: { taskSupport?: string } }).execution?.taskSupport === 'required'
        if (bad && version === '2025-11-25' && !isTask) {
          expect('result' in outcome, t.name).toBe(true)
          const r = (outcome as { result: { isError?: boolean; content: { text: string }[] } }).result
          expect(r.isError, t.name).toBe(true)
          expect(r.content[0]!.text, t.name).toContain(`Invalid arguments for tool "${t.name}"`)
          expect(r.content[0]!.text, t.name).toContain(bad.property)
          expect(r.content[0]!.text).not.toContain('not-one-of-them')
          expect(r.content[0]!.text).not.toContain('12345')
        } else {
          // Older eras, calls without a constraint to break, and task-augmented calls (which expect a
          // CreateTaskResult, so the edge answers -32602 there in every era: docs/decisions.md).
          expect('error' in outcome, t.name).toBe(true)
          expect((outcome as { error: { code: number } }).error.code, t.name).toBe(-32602)
        }
        answeredByEdge++
      }
      // The edge's log grades each of these calls `rejected`: answered locally, not forwarded. The
      // Worker's lines come through workerd's stdout after the answers: wait for one per call.
      const toolCallGrades = async () =>
        (await edge.logs())
          .slice(logsBefore)
          .flatMap((l) => (l.grades as { method?: string; grade: string; tool?: string }[] | undefined) ?? [])
          .filter((g) => g.method === 'tools/call')
      const graded = await waitFor(async () => ((await toolCallGrades()).length >= tools.length ? toolCallGrades() : null), {
        what: `log lines grading ${tools.length} tools/call requests`,
      })
      expect(graded.map((g) => g.grade)).toEqual(tools.map(() => 'rejected'))
      // Direct, the origin answers the same bad calls its own way (not with the edge's text).
      const t0 = tools.find((t) => t.name === 'get-sum')!
      const directBad = await call(direct, t0, invalidArgs(t0)!.args).then(
        (r) => JSON.stringify(r),
        (e: unknown) => String(e)
      )
      expect(directBad).not.toContain(`Invalid arguments for tool "${t0.name}"`)
      console.log(`server-everything (${runtime}, ${version}): ${answeredByEdge}/${tools.length} invalid calls answered by the edge`)
      await client.close()
      await direct.close()
    }, 60_000)
  }
})
