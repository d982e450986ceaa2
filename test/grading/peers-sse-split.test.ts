/**
 * Regression: an origin SSE reply whose one event arrives in several TCP writes (a large
 * tools/list, or any event split by the network) must reach the client whole, on Node and on the
 * Worker. Before the fix the edge's SSE relay read one chunk per pull and enqueued nothing when
 * the chunk ended mid-event, and the stream was never pulled again: the client hung (seen first
 * as SDK clients timing out on tools/list through the Worker).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { mcpHeaders } from '../helpers/mcp'

const HEADERS = mcpHeaders('2025-11-25')

describe.each(RUNTIMES)('edge on $name relays an SSE event split over several writes', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('answers the id once the last piece arrives, with the data unchanged', async () => {
    const tools = Array.from({ length: 40 }, (_, i) => ({ name: `tool_${i}`, description: 'x'.repeat(200), inputSchema: { type: 'object' } }))
    const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { tools } })}\n\n`
    origin.handle(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      // Three writes with pauses: the event is incomplete after the first two.
      const cut = [0, 1000, event.length - 3, event.length]
      for (let i = 0; i < 3; i++) {
        res.write(event.slice(cut[i], cut[i + 1]))
        await new Promise((r) => setTimeout(r, 40))
      }
      res.end()
    })
    const ctl = new AbortController()
    const timer = setTimeout(() => ctl.abort(), 10_000)
    const res = await fetch(edge.url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }), signal: ctl.signal })
    const text = await res.text()
    clearTimeout(timer)
    expect(res.status).toBe(200)
    const data = /^data: (.*)$/m.exec(text)?.[1]
    expect(JSON.parse(data!)).toEqual({ jsonrpc: '2.0', id: 7, result: { tools } })
  })
})
