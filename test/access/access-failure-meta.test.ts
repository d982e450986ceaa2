/**
 * The edge's classification of the isError results it makes, on both runtimes with a real SDK
 * origin: invalid arguments (2025-11-25 answers them as an isError result) and a hidden failure
 * the edge marks isError carry `_meta["io.mcp-edge/failure"] = { class, code, correlationId }`,
 * the correlation id equal to the POST's log line `rid`; an origin's own `_meta`
 * (`io.modelcontextprotocol/toolFailure` included) is relayed unchanged, byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { mcpHeaders } from '../helpers/mcp'
import { ORIGIN_FAILURE_META, startAccessOrigin, type AccessOrigin } from '../helpers/access-origin'

const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

async function post(url: string, body: unknown, rid: string): Promise<{ status: number; text: string; json: { result: Record<string, unknown> } }> {
  const res = await fetch(url, { method: 'POST', headers: mcpHeaders('2025-11-25', { 'x-request-id': rid }), body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, text, json: JSON.parse(text) as { result: Record<string, unknown> } }
}

describe.each(RUNTIMES)('isError classification on $name', ({ start }) => {
  let origin: AccessOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startAccessOrigin({ tools: ['search', 'hidden_fail', 'fail_quota'], json: true, pageSize: 10 })
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('invalid arguments: class capability, code invalid_input, correlationId = the log line rid', async () => {
    const a = await post(edge.url, call(1, 'search', { q: 5 }), 'meta-invalid-1')
    expect(a.status).toBe(200)
    expect(a.json.result.isError).toBe(true)
    expect(a.json.result._meta).toEqual({
      'io.mcp-edge/failure': {
        class: 'capability',
        code: 'invalid_input',
        correlationId: 'meta-invalid-1',
        agentGuidance: "Fix the arguments to match the tool's inputSchema, then call again.",
      },
    })
    const line = (await edge.logs({ msg: 'mcp.post', where: (r) => r.rid === 'meta-invalid-1' })).find((r) => r.rid === 'meta-invalid-1')!
    expect(line.rid).toBe((a.json.result._meta as Record<string, { correlationId: string }>)['io.mcp-edge/failure']!.correlationId)
    expect(origin.calls).not.toContain('search')
  })

  it('a hidden failure the edge marks isError: class capability, code hidden_failure, the origin _meta members kept', async () => {
    const a = await post(edge.url, call(2, 'hidden_fail', {}), 'meta-hidden-1')
    expect(a.json.result.isError).toBe(true)
    expect(a.json.result._meta).toEqual({
      'io.mcp-edge/failure': {
        class: 'capability',
        code: 'hidden_failure',
        correlationId: 'meta-hidden-1',
        agentGuidance: 'The tool reported a failure in its result; read it before calling again.',
      },
      'com.example/trace': 'abc',
    })
    expect(a.json.result.content).toEqual([{ type: 'text', text: '{"ok":false,"reason":"quota"}' }])
  })

  it("an origin's own isError result and its _meta (io.modelcontextprotocol/toolFailure) are relayed unchanged", async () => {
    const body = call(3, 'fail_quota', {})
    const direct = await fetch(origin.url, { method: 'POST', headers: mcpHeaders('2025-11-25'), body: JSON.stringify(body) })
    const directText = await direct.text()
    const a = await post(edge.url, body, 'meta-origin-1')
    expect(a.text).toBe(directText)
    expect(a.json.result._meta).toEqual(ORIGIN_FAILURE_META)
    expect(a.text).not.toContain('io.mcp-edge/failure')
  })
})
