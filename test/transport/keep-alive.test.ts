/**
 * A request the edge answers without reading its body (a refused Origin, a path with no origin, a PUT)
 * leaves the client's keep-alive connection usable: the next request on the same connection is
 * served, on Node, in workerd and through the Hono middleware. (workerd closed such connections
 * without saying so, and the next request failed with "other side closed", every time.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, request } from 'undici'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'

const HEADERS = mcpHeaders()
const ping = (id: number, pad = 0) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }) + ' '.repeat(pad)

describe.each(RUNTIMES_AND_MIDDLEWARE)('keep-alive after an answer that did not read the body, $name', ({ start }) => {
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

  it.each([
    ['a refused Origin (403)', (url: string) => url, { origin: 'https://evil.example' }, 403, 'POST'],
    ['a path with no origin (404)', (url: string) => `${url}/nowhere`, {}, 404, 'POST'],
    ['a PUT (405)', (url: string) => url, {}, 405, 'PUT'],
  ] as const)('%s, then a normal POST on the same connection, 30 times', async (_label, path, extra, status, method = 'POST') => {
    // One connection only, so every request reuses the one the refusal was written on.
    const agent = new Agent({ connections: 1 })
    try {
      const seen: string[] = []
      for (let i = 0; i < 30; i++) {
        const refused = await request(path(edge.url), { method, dispatcher: agent, headers: { ...HEADERS, ...extra }, body: ping(1, 2_000) })
        await refused.body.text()
        const next = await request(edge.url, { method: 'POST', dispatcher: agent, headers: HEADERS, body: ping(2) }).then(
          async (r) => `${r.statusCode} ${(await r.body.text()).includes('"id":2') ? 'answered' : 'unanswered'}`,
          (e: Error) => `failed: ${e.message}`
        )
        seen.push(`${refused.statusCode} then ${next}`)
      }
      expect(new Set(seen)).toEqual(new Set([`${status} then 200 answered`]))
    } finally {
      await agent.close()
    }
  })
})
