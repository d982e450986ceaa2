/**
 * An origin slow to connect does not hold what the edge answers for every origin at once past
 * `TOOL_LIST_TIMEOUT_MS` (the whole of one origin's pull, its initialize included), on both
 * runtimes: the origin answers `initialize` at once but never answers `notifications/initialized`,
 * with `ORIGIN_TIMEOUT_MS` far longer than any test. The merged list and a client's `initialize`
 * are answered with the other origin (a real SDK server) alone, the slow one left out as a timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { startModernOrigin, type TestOrigin } from './backends'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

async function post(url: string, body: unknown): Promise<{ sid: string | null; msg: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) })
  return { sid: res.headers.get('mcp-session-id'), msg: (await res.json()) as Record<string, unknown> }
}

describe.each(RUNTIMES)('an origin slow to connect on $name', ({ start }) => {
  let slow: ScriptedOrigin
  let fast: TestOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    slow = await startScriptedOrigin()
    slow.handle((req, res) => {
      const m = req.json as { id?: unknown; method?: string }
      // Held: the handshake's last step never completes.
      if (m.method === 'notifications/initialized') return
      if (m.method === 'initialize')
        return sendJson(
          res,
          { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'slow', version: '1' } } },
          200,
          { 'mcp-session-id': 'held' }
        )
      sendJson(res, { jsonrpc: '2.0', id: m.id ?? null, error: { code: -32601, message: 'Method not found' } })
    })
    fast = await startModernOrigin('fast', ['x'])
    edge = await start({
      ORIGINS: JSON.stringify({ slow: slow.url, fast: fast.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['slow', 'fast'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(32),
      // Far past the test's own timeout: only TOOL_LIST_TIMEOUT_MS can end the wait. Long enough
      // that the real SDK origin is never cut off on a busy machine.
      ORIGIN_TIMEOUT_MS: '600000',
      TOOL_LIST_TIMEOUT_MS: '3000',
    })
  })
  afterAll(async () => {
    await edge?.close()
    await slow?.close()
    await fast?.close()
  })

  it('the merged list is answered with the other origin, the slow one left out as a timeout', async () => {
    const { msg } = await post(`${edge.url}/all`, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect((msg.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['fast__x'])
    const ready = (await (await fetch(edge.url.replace(/\/mcp$/, '/readyz'))).json()) as { virtual: Record<string, { leftOut: Record<string, string> }> }
    expect(ready.virtual.all!.leftOut).toEqual({ slow: 'timeout: no answer in time' })
  })

  it('initialize is answered with a session carrying the other origin only', async () => {
    const { sid, msg } = await post(`${edge.url}/all`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })
    expect(msg).toMatchObject({ id: 1, result: { serverInfo: { name: 'all' } } })
    const payload = JSON.parse(Buffer.from(sid!.split('.')[1]!, 'base64url').toString()) as { b: Record<string, unknown> }
    expect(Object.keys(payload.b)).toEqual(['fast'])
  })
})
