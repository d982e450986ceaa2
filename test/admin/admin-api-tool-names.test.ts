/**
 * The admin API's bound on tool names on both runtimes (Node entry with its store, the built
 * Worker with its KV namespace): one bound for the whole edge (256 characters, as a tools/call),
 * and the store key's 512 UTF-8 bytes. A GET or DELETE of a name past either is a 400 naming the
 * bound (it was a 503 "store unavailable" on a healthy store); a PUT with such a name is a 400 for
 * that entry with nothing stored (it was a 503 after a part was written); a name of 256 ASCII
 * characters goes through its whole life.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, sendJson, type ScriptedOrigin } from '../helpers/scripted-origin'
import { initializeReply } from '../helpers/initialize-reply'

const TOKEN = 'admin-names-token-0123456789'

describe.each(RUNTIMES)('admin API tool names on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let tools: string
  const auth = { authorization: `Bearer ${TOKEN}` }

  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((req, res) => {
      const m = req.json as { id?: number; method?: string } | undefined
      if (m?.method === 'initialize') return sendJson(res, initializeReply(m, { serverInfo: { name: 's', version: '1' } }))
      if (m?.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } })
      res.writeHead(202).end()
    })
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN: TOKEN })
    tools = edge.url.replace(/\/mcp$/, '/admin/tools/default')
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('GET and DELETE of a name past 256 characters, or past the 512-byte key: 400 naming the bound, not 503', async () => {
    for (const [name, bound] of [
      ['x'.repeat(257), /a tool name must be 1 to 256 characters long \(this one has 257\)/],
      ['x'.repeat(5000), /1 to 256 characters long \(this one has 5000\)/],
      ['é'.repeat(250), /store key must be at most 512 UTF-8 bytes \(this one would be 5\d\d\)/],
    ] as const) {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${tools}/${encodeURIComponent(name)}`, { method, headers: auth })
        const body = (await res.json()) as { error: string }
        expect(res.status, `${method} ${name.length}: ${body.error}`).toBe(400)
        expect(body.error).toMatch(bound)
        expect(body.error).not.toContain(name.slice(0, 100))
      }
    }
    // The store is fine: a push and a read work.
    expect((await fetch(`${tools}/nothing_here`, { headers: auth })).status).toBe(404)
  })

  it('a PUT with a name past a bound is a 400 for that entry and stores nothing; 256 ASCII characters work end to end', async () => {
    const schema = { type: 'object' }
    const refused = await fetch(tools, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        tools: [
          { name: 'fine_one', inputSchema: schema },
          { name: 'é'.repeat(250), inputSchema: schema },
        ],
      }),
    })
    const why = (await refused.json()) as { error: string; entries: { index: number; problem: string }[] }
    expect(refused.status, JSON.stringify(why)).toBe(400)
    expect(why.entries).toEqual([{ index: 1, name: expect.any(String), problem: expect.stringMatching(/at most 512 UTF-8 bytes/) }])
    expect((await fetch(`${tools}/fine_one`, { headers: auth })).status).toBe(404)

    const long = 'n'.repeat(256)
    const put = await fetch(tools, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ tools: [{ name: long, inputSchema: schema }] }),
    })
    expect(put.status).toBe(200)
    expect((await fetch(`${tools}/${long}`, { headers: auth })).status).toBe(200)
    expect((await fetch(`${tools}/${long}`, { method: 'DELETE', headers: auth })).status).toBe(200)
    expect((await fetch(`${tools}/${long}`, { headers: auth })).status).toBe(404)
  })
})
