/**
 * A real `mcp-edge serve` process on a real redis-server: after Redis restarts empty, or when it
 * holds a corrupt record, a call to a tool the origin lists is validated after one refresh, not
 * answered "Unknown tool" for up to REFRESH_MIN_INTERVAL_MS (the last pull was recent, so the
 * interval held the refresh back). The both-runtime cases on a KV namespace are in
 * test/registry/lost-records.test.ts.
 */
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killAll, spawnEdge, type EdgeProcess } from '../helpers/edge-process'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { toolKey } from '../../src/core/validation/tool-store'
import { initializeReply } from '../helpers/initialize-reply'

const HEADERS = mcpHeaders()
const PREFIX = `lost-${process.pid}:`
const WEATHER = { name: 'get_weather', inputSchema: { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] } }

let origin: ScriptedOrigin
let redis: RedisServer
let edge: EdgeProcess

beforeAll(async () => {
  redis = await startRedisServer()
  origin = await startScriptedOrigin()
  origin.handle((req, res) => {
    const m = req.json as { id?: unknown; method?: string }
    if (m.method === 'initialize') return sendJson(res, initializeReply(m))
    if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [WEATHER] } })
    if (m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
    sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'forwarded' }] } })
  })
  edge = await spawnEdge({ ORIGIN_URL: origin.url, STORE_URL: redis.url, STORE_PREFIX: PREFIX, REFRESH_MIN_INTERVAL_MS: '600000' })
})
afterAll(async () => {
  await killAll()
  await origin?.close()
  await redis?.stop()
})

const pulls = () => origin.received.filter((r) => (r.json as { method?: string } | undefined)?.method === 'tools/list').length

async function call(units: string): Promise<{ error?: { code: number; message: string }; result?: unknown }> {
  const res = await fetch(edge.url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { units } } }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { error?: { code: number; message: string }; result?: unknown }
}

/** The clients connected to `redis` other than the one asking: [normal, pub/sub]. */
async function edgeClients(client: Redis): Promise<[number, number]> {
  const lines = ((await client.client('LIST')) as string).trim().split('\n')
  const others = lines.filter((l) => !/ name=probe /.test(l))
  return [others.filter((l) => / sub=0 /.test(l) && / psub=0 /.test(l)).length, others.filter((l) => !/ sub=0 /.test(l)).length]
}

describe('records Redis lost', () => {
  it('Redis restarted empty: a call to a listed tool is validated after one refresh, not answered Unknown tool', async () => {
    expect((await call('k')).error?.message).toContain('units') // pulled and validated
    expect(pulls()).toBe(1)
    const port = redis.port
    await redis.stop()
    redis = await startRedisServer(port)
    // Wait until the edge is back on the new, empty Redis: its client and its subscriber (the
    // subscriber's reconnect drops the edge's memory: changes may have been missed).
    const probe = new Redis(redis.url, { connectionName: 'probe', lazyConnect: true })
    await probe.connect()
    try {
      const end = Date.now() + 15_000
      for (;;) {
        const [normal, sub] = await edgeClients(probe)
        if ((normal >= 1 && sub >= 1) || Date.now() > end) break
        await new Promise((r) => setTimeout(r, 50))
      }
      expect(await edgeClients(probe)).toEqual([1, 1])
      expect(await probe.dbsize()).toBe(0)
    } finally {
      probe.disconnect()
    }
    const bad = await call('k')
    expect(bad.error?.message, JSON.stringify(bad)).toContain('units')
    expect(bad.error?.message).not.toMatch(/Unknown tool/)
    expect(pulls()).toBe(2)
    expect((await call('c')).result).toEqual({ content: [{ type: 'text', text: 'forwarded' }] })
    expect(pulls()).toBe(2)
  })

  it('a corrupt record another edge wrote: the call is validated after one refresh, and the record is written again', async () => {
    const before = pulls()
    const other = new Redis(redis.url, { connectionName: 'probe' })
    try {
      const key = toolKey('default', 'public', 'get_weather')
      await other.set(`${PREFIX}v:${key}`, '{"name":"get_weather","inputSchema":')
      // As another edge's write does: the change notice drops this edge's memory copy.
      await other.publish(`${PREFIX}changes`, JSON.stringify({ from: 'another-edge', key }))
      const end = Date.now() + 5_000
      let bad = await call('k')
      // The notice arrives asynchronously: until then the memory copy validates (same answer).
      while (pulls() === before && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20))
        bad = await call('k')
      }
      expect(bad.error?.message, JSON.stringify(bad)).toContain('units')
      expect(bad.error?.message).not.toMatch(/Unknown tool/)
      expect(pulls()).toBe(before + 1)
      expect(JSON.parse((await other.get(`${PREFIX}v:${key}`))!)).toMatchObject(WEATHER)
    } finally {
      other.disconnect()
    }
  })
})
