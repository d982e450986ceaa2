/**
 * Nothing lost on stop: the Node edge's `close()` and `stop()` wait for the background work a reply
 * started (the tools/list learned into the store, the pins decided and written) before they close
 * the store, so a store write in flight when the edge stops is not cut off. The store here holds
 * every write for 150 ms; the edge is closed at once after the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge } from '../../src/adapters/node/index'
import { MemoryKv } from '../../src/stores/memory-kv'
import type { KvStore } from '../../src/core/ports'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { initializeReply } from '../helpers/initialize-reply'
import { pinKey } from '../../src/core/pinning/pin-store'

const TOOLS = [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }]

describe('the Node edge on stop', () => {
  let origin: ScriptedOrigin
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((req, res) => {
      const m = req.json as { id?: unknown; method?: string }
      if (m.method === 'initialize') return sendJson(res, initializeReply(m))
      if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } })
      res.writeHead(202).end()
    })
  })
  afterAll(async () => {
    await origin?.close()
  })

  for (const how of ['close', 'stop'] as const)
    it(`${how}() returns only after the background writes of the last answer reached the store`, async () => {
      const mem = new MemoryKv()
      const events: string[] = []
      const kv: KvStore = {
        get: (k) => mem.get(k),
        put: async (k, v, o) => {
          await new Promise((r) => setTimeout(r, 150))
          await mem.put(k, v, o)
          events.push(`put ${k.split(':')[0]}`)
        },
        delete: (k) => mem.delete(k),
      }
      const edge = await startEdge({ env: { STORE_FILE: 'memory', ORIGIN_URL: origin.url, TOOL_PINNING: 'audit' }, port: 0, kv, log: () => undefined })
      const res = await fetch(edge.url, { method: 'POST', headers: mcpHeaders(), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
      expect(res.status).toBe(200)
      await res.text()
      await (how === 'close' ? edge.close() : edge.stop(5_000))
      events.push(how)
      // The pins of the first list (its baseline) were written before the edge said it had stopped.
      expect(events.indexOf(how)).toBe(events.length - 1)
      expect(events).toContain('put pins')
      expect(await mem.get(pinKey('default', 'public'))).not.toBeNull()
    })
})
