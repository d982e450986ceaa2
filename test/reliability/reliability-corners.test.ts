/**
 * Corners a hostile probe found (docs/reliability.md), on the Node entry and the built
 * Worker in workerd, against a real scripted HTTP origin:
 * - an origin's 5xx carrying a JSON-RPC error with `id: null` answers each forwarded id under its
 *   own id (as the same body under 200 does), single and batch;
 * - an SSE event cut off by the end of the stream never reaches the client as half a message, and
 *   the id gets -31001 in SSE as it does after a truncated JSON reply;
 * - streams are bounded: an SSE reply trickling a byte a second (data or comments) ends at
 *   STREAM_IDLE_MS with -31002; a stream of keep-alive comments ends at STREAM_MAX_MS; a GET to an
 *   origin that never sends headers gets 502 -31002 at ORIGIN_TIMEOUT_MS, while a GET stream that
 *   is merely quiet for longer than that is not cut;
 * - no false reds: after the origin loosens a schema (a limit raised from 16 to 30), a call valid
 *   under the new schema is forwarded, not rejected with the old one; one still invalid is
 *   rejected after the recheck.
 */
import type { ServerResponse } from 'node:http'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { countMethod, serveMcp } from '../helpers/mcp-script'
import { ADMIN_TOKEN, mcpHeaders, post, pushTools } from '../helpers/grading'
import { ToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../src/validators/cfworker'

const call = (id: number, name: string, args: unknown = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
const SSE = { 'content-type': 'text/event-stream' }

/** The JSON-RPC messages of an SSE body (data of each event), parse failures kept as raw text. */
function sseMessages(text: string): unknown[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
    )
    .filter((d) => d !== '')
    .map((d) => {
      try {
        return JSON.parse(d)
      } catch {
        return d
      }
    })
}

describe('ToolRegistry.needsRecheck', () => {
  it('is true for a record learned before the registry started or longer ago than the bound; never for a record without fetchedAt', () => {
    let t = 10_000
    const reg = new ToolRegistry({ kv: new MemoryKv(), engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 10, refreshMinIntervalMs: 0, now: () => t })
    const tool = (fetchedAt?: number) => ({
      record: { name: 'x', inputSchema: {}, dialect: '2020-12' as const, hash: '0', ...(fetchedAt !== undefined ? { fetchedAt } : {}) },
      validate: null,
    })
    expect(reg.needsRecheck(tool(9_000), 30_000)).toBe(true)
    expect(reg.needsRecheck(tool(10_000), 30_000)).toBe(false)
    t = 50_000
    expect(reg.needsRecheck(tool(10_000), 30_000)).toBe(true)
    expect(reg.needsRecheck(tool(40_000), 30_000)).toBe(false)
    expect(reg.needsRecheck(tool(), 0)).toBe(false)
  })
})

describe.each(RUNTIMES)('reliability corners on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  const open: ServerResponse[] = []
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN, ORIGIN_TIMEOUT_MS: '1000', STREAM_IDLE_MS: '1500', STREAM_MAX_MS: '2500' })
    await pushTools(edge, [{ name: 'free', inputSchema: { type: 'object' } }])
  })
  afterAll(async () => {
    for (const r of open) r.destroy()
    await edge?.close()
    await origin?.close()
  })
  beforeEach(() => origin.reset())

  it('a 5xx with a JSON-RPC error and id null answers each forwarded id under its own id', async () => {
    origin.handle((_req, res) => sendJson(res, { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }, 500))
    const single = await post(edge, JSON.stringify(call(5, 'free')))
    expect(single.status).toBe(200)
    expect(JSON.parse(single.text)).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32603, message: 'Internal error' } })
    const batch = await post(edge, JSON.stringify([call(1, 'free'), call(2, 'free')]), mcpHeaders('2025-03-26'))
    expect(batch.status).toBe(200)
    const answers = JSON.parse(batch.text) as { id: number; error: { code: number } }[]
    expect(answers.map((a) => [a.id, a.error.code]).sort()).toEqual([
      [1, -32603],
      [2, -32603],
    ])
  })

  it('a 4xx session refusal with id null is still relayed with its status (MCP session management)', async () => {
    origin.handle((_req, res) => sendJson(res, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, 404))
    const r = await post(edge, JSON.stringify(call(6, 'free')))
    expect(r.status).toBe(404)
    expect(JSON.parse(r.text)).toMatchObject({ id: null, error: { code: -32001 } })
  })

  it('an SSE event cut off by the end of the stream is not relayed; the id gets -31001, as after a truncated JSON reply', async () => {
    origin.handle((_req, res) => {
      res.writeHead(200, SSE)
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n')
      res.end('data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"cut her')
    })
    const r = await post(edge, JSON.stringify(call(7, 'free')))
    const msgs = sseMessages(r.text)
    expect(msgs.every((m) => typeof m === 'object')).toBe(true)
    expect(msgs).toContainEqual(expect.objectContaining({ id: 7, error: expect.objectContaining({ code: -31001 }) }))
    origin.handle((_req, res) => sendJson(res, '{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"te'))
    const j = await post(edge, JSON.stringify(call(8, 'free')))
    expect(JSON.parse(j.text)).toMatchObject({ id: 8, error: { code: -31001 } })
  })

  it('an SSE reply trickling a byte a second into an event ends at STREAM_IDLE_MS with -31002', async () => {
    // An edge of its own whose STREAM_MAX_MS (20 s) is far from STREAM_IDLE_MS (1.5 s): the end
    // is the idle bound's (not before 1.5 s, and long before the 20 s the stream bound would
    // take, were every byte to restart the idle clock), however busy the machine is.
    const idle = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN, STREAM_IDLE_MS: '1500', STREAM_MAX_MS: '20000' })
    try {
      await pushTools(idle, [{ name: 'free', inputSchema: { type: 'object' } }])
      for (const piece of ['d', ':']) {
        origin.handle((_req, res) => {
          res.writeHead(200, SSE)
          open.push(res)
          const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(piece)), 300)
          res.on('close', () => clearInterval(timer))
        })
        const t0 = Date.now()
        const r = await post(idle, JSON.stringify(call(9, 'free')))
        const took = Date.now() - t0
        expect(took).toBeGreaterThanOrEqual(1_450)
        expect(took).toBeLessThan(15_000)
        expect(sseMessages(r.text)).toContainEqual(expect.objectContaining({ id: 9, error: expect.objectContaining({ code: -31002 }) }))
      }
    } finally {
      await idle.close()
    }
  })

  it('a stream of keep-alive comments ends at STREAM_MAX_MS with -31002', async () => {
    origin.handle((_req, res) => {
      res.writeHead(200, SSE)
      open.push(res)
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(': keep-alive\n\n')), 200)
      res.on('close', () => clearInterval(timer))
    })
    const t0 = Date.now()
    const r = await post(edge, JSON.stringify(call(10, 'free')))
    const took = Date.now() - t0
    // Not before STREAM_MAX_MS (2.5 s; the comments every 200 ms keep STREAM_IDLE_MS from firing),
    // and the upper bound only catches a stream the bound never ends (10x).
    expect(took).toBeGreaterThanOrEqual(2_300)
    expect(took).toBeLessThan(25_000)
    expect(sseMessages(r.text)).toContainEqual(expect.objectContaining({ id: 10, error: expect.objectContaining({ code: -31002 }) }))
  })

  it('a GET to an origin that never sends headers gets 502 -31002; a quiet GET stream is not cut', async () => {
    origin.handle((req, res) => {
      if (req.method === 'GET') open.push(res) // never answers
    })
    const t0 = Date.now()
    const hung = await fetch(edge.url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 's' } })
    expect(hung.status).toBe(502)
    expect(await hung.json()).toMatchObject({ id: null, error: { code: -31002 } })
    // At ORIGIN_TIMEOUT_MS (1 s): not before it, and the upper bound only catches a hang (10x).
    const took = Date.now() - t0
    expect(took).toBeGreaterThanOrEqual(950)
    expect(took).toBeLessThan(10_000)
    origin.handle((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(202).end()
      res.writeHead(200, SSE)
      res.write(': open\n\n')
      setTimeout(() => res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}\n\n'), 1_600)
    })
    const quiet = await fetch(edge.url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 's' } })
    expect(quiet.status).toBe(200)
    expect(await quiet.text()).toContain('"late"')
  })
})

describe.each(RUNTIMES)('no false reds on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, REFRESH_MIN_INTERVAL_MS: '0', SCHEMA_RECHECK_MS: '0' })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('after the origin raises a limit from 16 to 30, a call within the new limit is forwarded; one past it is still rejected', async () => {
    const forecast = (max: number) => ({ name: 'forecast', inputSchema: { type: 'object', properties: { days: { type: 'integer', minimum: 1, maximum: max } } } })
    const script = serveMcp(origin, { pages: [[forecast(16)]] })
    expect(JSON.parse((await post(edge, JSON.stringify(call(1, 'forecast', { days: 3 })))).text)).toMatchObject({ id: 1, result: {} })
    expect(countMethod(origin, 'tools/list')).toBe(1)
    script.pages = [[forecast(30)]]
    await new Promise((r) => setTimeout(r, 20))
    const loosened = await post(edge, JSON.stringify(call(2, 'forecast', { days: 20 })))
    expect(JSON.parse(loosened.text)).toMatchObject({ id: 2, result: { content: [{ text: 'ok' }] } })
    expect(countMethod(origin, 'tools/list')).toBe(2)
    await new Promise((r) => setTimeout(r, 20))
    const still = await post(edge, JSON.stringify(call(3, 'forecast', { days: 40 })))
    expect(JSON.parse(still.text)).toMatchObject({ id: 3, error: { code: -32602 } })
    expect(JSON.parse(still.text).error.message).toContain('<= 30')
    expect(countMethod(origin, 'tools/list')).toBe(3)
  })
})
