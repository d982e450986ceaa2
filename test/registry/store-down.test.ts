/**
 * D8 when the KV namespace itself is down (binding missing, outage): no 500 and no crash; the call
 * fails open (`unvalidated`) or, with ON_SCHEMA_ERROR=reject, is refused with -32603 and never
 * reaches the origin. On both runtimes (the Worker runs with no TOOL_SCHEMAS binding at all).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { initializeReply } from '../helpers/initialize-reply'

const CALL = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'Paris' } } }
const HEADERS = mcpHeaders()

describe.each(RUNTIMES)('tool store unavailable on $name', ({ start }) => {
  let origin: ScriptedOrigin
  const edges: EdgeUnderTest[] = []
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((req, res) => {
      const m = req.json as { id?: unknown; method?: string }
      if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } })
      if (m.method === 'initialize') return sendJson(res, initializeReply(m, { capabilities: {}, serverInfo: { name: 's', version: '1' } }))
      if (m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
      sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'sunny' }] } })
    })
  })
  afterAll(async () => {
    for (const e of edges) await e.close()
    await origin.close()
  })

  it('fails open: the call is forwarded and graded unvalidated', async () => {
    const edge = await start({ ORIGIN_URL: origin.url }, { kvDown: true })
    edges.push(edge)
    origin.reset()
    const res = await fetch(edge.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(CALL) })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'sunny' }] } })
    expect(origin.forwarded().length).toBe(1)
    const grades = (await edge.logs({ msg: 'mcp.post' })).filter((l) => l.msg === 'mcp.post').flatMap((l) => l.grades as { grade: string }[])
    expect(grades.map((g) => g.grade)).toContain('unvalidated')
  })

  it('ON_SCHEMA_ERROR=reject answers -32603 and does not contact the origin', async () => {
    const edge = await start({ ORIGIN_URL: origin.url, ON_SCHEMA_ERROR: 'reject' }, { kvDown: true })
    edges.push(edge)
    origin.reset()
    const res = await fetch(edge.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(CALL) })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { id: number; error: { code: number; message: string } }
    expect(body.id).toBe(7)
    expect(body.error.code).toBe(-32603)
    expect(body.error.message).toContain('store is unavailable')
    expect(origin.forwarded().length).toBe(0)
  })
})
