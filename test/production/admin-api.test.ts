/**
 * The admin API's read and delete routes on both runtimes (Node entry, built Worker bundle under
 * Miniflare with its KV namespace): `GET /admin/tools/<origin>` lists the stored records,
 * `GET .../<tool>` reads one, `DELETE .../<tool>` removes it from the store (and the edge then
 * no longer validates with it); every route needs the bearer token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, sendJson, type ScriptedOrigin } from '../helpers/scripted-origin'
import { toolKey } from '../../src/core/validation/tool-store'
import { initializeReply } from '../helpers/initialize-reply'

const TOKEN = 'admin-api-token'
const TOOL = { name: 'ship', inputSchema: { type: 'object', properties: { weight: { type: 'number', maximum: 30 } }, required: ['weight'] } }

describe.each(RUNTIMES)('admin API read/delete on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let admin: string
  const auth = { authorization: `Bearer ${TOKEN}` }

  beforeAll(async () => {
    origin = await startScriptedOrigin()
    // The origin lists no tools: a call to a tool the store does not hold is refused as unknown.
    origin.handle((req, res) => {
      const m = req.json as { id?: number; method?: string } | undefined
      if (m?.method === 'initialize') return sendJson(res, initializeReply(m, { serverInfo: { name: 's', version: '1' } }))
      if (m?.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } })
      res.writeHead(202).end()
    })
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN: TOKEN, UNKNOWN_TOOL: 'reject', REFRESH_MIN_INTERVAL_MS: '0' })
    admin = edge.url.replace(/\/mcp$/, '/admin/tools/default')
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  const call = async (args: unknown) => {
    const r = await fetch(edge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ship', arguments: args } }),
    })
    return ((await r.json()) as { error: { message: string } }).error.message
  }

  it('push, list, get, delete; each needs the token', async () => {
    expect((await fetch(admin, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ tools: [TOOL] }) })).status).toBe(200)
    expect(await call({ weight: 40 })).toContain('weight: must be <= 30')

    const list = await fetch(admin, { headers: auth })
    expect(list.status).toBe(200)
    const listed = (await list.json()) as { tools: { name: string; inputSchema: unknown; hash: string; fetchedAt: number }[] }
    expect(listed.tools).toHaveLength(1)
    expect(listed.tools[0]).toMatchObject({ name: 'ship', inputSchema: TOOL.inputSchema })
    expect(listed.tools[0]!.hash).toMatch(/^[0-9a-f]+$/)

    const one = await fetch(`${admin}/ship`, { headers: auth })
    expect(one.status).toBe(200)
    expect(await one.json()).toMatchObject({ name: 'ship', inputSchema: TOOL.inputSchema })
    expect((await fetch(`${admin}/nope`, { headers: auth })).status).toBe(404)

    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/ship'],
      ['DELETE', '/ship'],
    ] as const) {
      expect((await fetch(admin + path, { method })).status).toBe(401)
      expect((await fetch(admin + path, { method, headers: { authorization: 'Bearer wrong' } })).status).toBe(401)
    }

    const del = await fetch(`${admin}/ship`, { method: 'DELETE', headers: auth })
    expect(del.status).toBe(200)
    expect(await del.json()).toEqual({ deleted: 'ship' })
    expect(await edge.kvGet(toolKey('default', 'public', 'ship'))).toBeNull()
    expect((await fetch(`${admin}/ship`, { method: 'DELETE', headers: auth })).status).toBe(404)
    // Gone from the edge too: the origin lists no such tool.
    expect(await call({ weight: 40 })).toContain('Unknown tool: "ship"')
  })
})
