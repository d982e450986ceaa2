/**
 * Robustness of the request rules, with fast-check, on the Node entry and the built Worker in
 * workerd: random JSON bodies, near-MCP messages (random ids, params, `_meta` envelopes) and
 * random version / `Mcp-*` headers never crash the edge. Each answer is a JSON-RPC error object or
 * array, a forwarded reply, or 202 with no body; a status the rules name; never a stack trace.
 */
import fc from 'fast-check'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { initializeResult } from '../helpers/initialize-reply'

const version = fc.constantFrom(undefined, '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28', '2099-01-01', 'banana', ' 2026-07-28 ', '')
const id = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constantFrom(null, 1.5, true, {}, [], '9007199254740993'))
const meta = fc.oneof(
  fc.constant(undefined),
  fc.record(
    {
      'io.modelcontextprotocol/protocolVersion': fc.oneof(version, fc.integer()),
      'io.modelcontextprotocol/clientCapabilities': fc.oneof(fc.constant({}), fc.constant(null), fc.constant('x')),
    },
    { requiredKeys: [] }
  )
)
const message = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '2.0', '1.0', 2),
    id,
    method: fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping', 'server/discover', 'notifications/x', 'rpc.x', 'resources/read'), fc.integer()),
    params: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.record(
        {
          name: fc.oneof(fc.constantFrom('calc', 'nope'), fc.integer()),
          arguments: fc.oneof(fc.constant({ a: 1 }), fc.constant({ a: 'x' }), fc.constant('s'), fc.constant(null)),
          uri: fc.constant('file:///x'),
          _meta: meta,
        },
        { requiredKeys: [] }
      )
    ),
  },
  { requiredKeys: [] }
)
const body = fc.oneof(
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { maxLength: 4 }).map((ms) => JSON.stringify(ms)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 })
)
const headers = fc.record({
  version,
  method: fc.constantFrom(undefined, 'tools/call', 'tools/list', 'TOOLS/CALL'),
  name: fc.constantFrom(undefined, 'calc', '=?base64?Y2FsYw==?=', '=?base64?!!?='),
})

const STATUSES = [200, 202, 400, 404, 405, 406, 413, 415]

describe.each(RUNTIMES)('random requests on $name (fast-check)', ({ name, start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let runs = 0
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((r, res) => {
      const j = r.json as { id?: unknown; method?: string } | unknown[] | undefined
      if (Array.isArray(j)) {
        const out = j.filter((m) => typeof m === 'object' && m !== null && 'id' in m && 'method' in m).map((m) => ({ jsonrpc: '2.0', id: (m as { id: unknown }).id, result: {} }))
        return out.length ? sendJson(res, out) : void res.writeHead(202).end()
      }
      if (!j || !('id' in j) || r.method !== 'POST') return void res.writeHead(202).end()
      const result =
        j.method === 'initialize'
          ? initializeResult(j, { version: '2025-03-26', capabilities: {}, serverInfo: { name: 'f', version: '1' } })
          : j.method === 'tools/list'
            ? { tools: [{ name: 'calc', inputSchema: { type: 'object', properties: { a: { type: 'integer' } } } }] }
            : {}
      sendJson(res, { jsonrpc: '2.0', id: j.id, result }, 200, j.method === 'initialize' ? { 'mcp-session-id': 's' } : {})
    })
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    console.log(`[rules-fuzz] ${name}: ${runs} random requests answered within the rules`)
    await edge?.close()
    await origin?.close()
  })

  it('answers every random request with a JSON-RPC body or 202, never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(body, headers, async (text, h) => {
        const hs: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
        if (h.version !== undefined) hs['mcp-protocol-version'] = h.version
        if (h.method !== undefined) hs['mcp-method'] = h.method
        if (h.name !== undefined) hs['mcp-name'] = h.name
        const res = await request(edge.url, { method: 'POST', headers: hs, body: text })
        const out = await res.body.text()
        expect(STATUSES, `${res.statusCode} for ${text} ${JSON.stringify(h)}: ${out}`).toContain(res.statusCode)
        expect(out).not.toMatch(/\bat [\w.<>]+ \(|SyntaxError|TypeError|node_modules/)
        if (res.statusCode === 202) expect(out).toBe('')
        else {
          const ct = String(res.headers['content-type'] ?? '')
          if (ct.includes('event-stream')) expect(out).toContain('"jsonrpc":"2.0"')
          else {
            const v = JSON.parse(out) as unknown
            for (const m of Array.isArray(v) ? v : [v]) expect(m).toMatchObject({ jsonrpc: '2.0' })
          }
        }
        runs++
      }),
      { numRuns: 150 }
    )
  })
})
