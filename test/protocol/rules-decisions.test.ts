/**
 * docs/design.md §4 decisions D1-D7 and D13-D18, one `describe` each, plus MAX_BATCH,
 * MAX_BODY_BYTES and the 2026-07-28 header rules the vectors do not cover, on the Node entry and
 * on the built Worker in workerd, against a real scripted HTTP origin that records what it got.
 */
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from '../helpers/scripted-origin'
import { POST_HEADERS } from '../helpers/mcp'
import { initializeReply } from '../helpers/initialize-reply'

const LEGACY = POST_HEADERS
const V = (v: string) => ({ ...LEGACY, 'mcp-protocol-version': v })
const ENV = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
const MODERN = (method: string, extra: Record<string, string | string[]> = {}) => ({ ...V('2026-07-28'), 'mcp-method': method, ...extra })

const TOOLS = [
  { name: 'calc', inputSchema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] } },
  { name: 'free', inputSchema: { type: 'object' } },
  {
    name: 'sql',
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        shard: { type: 'integer', 'x-mcp-header': 'Shard' },
        dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
        q: { type: 'string' },
      },
      required: ['q'],
    },
  },
]

interface Reply {
  status: number
  headers: Record<string, string>
  text: string
  json: any // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function post(url: string, body: string, headers: Record<string, string | string[]>, method = 'POST'): Promise<Reply> {
  const res = await request(url, { method: method as 'POST', headers, body: method === 'GET' || method === 'DELETE' ? undefined : body })
  const text = await res.body.text()
  const h: Record<string, string> = {}
  for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v)
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.statusCode, headers: h, text, json }
}

describe.each(RUNTIMES)('decisions on $name', ({ name, start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let narrow: EdgeUnderTest
  let tools = TOOLS as unknown[]
  let pullGarbage = false
  let answer: (r: ReceivedRequest, res: import('node:http').ServerResponse) => void
  const url = (o = 'main') => edge.url.replace(/\/mcp$/, `/mcp/${o}`)
  const forwarded = () => origin.received.filter((r) => !isPull(r))
  const pulls = () => origin.received.filter(isPull)
  const isPull = (r: ReceivedRequest) => {
    const j = r.json as { method?: string; params?: { clientInfo?: { name?: string }; _meta?: unknown } } | undefined
    if (j?.method === 'initialize' && j.params?.clientInfo?.name === 'mcp-edge-validator') return true
    // the edge's 2026-07-28 pull: tools/list with the edge's own envelope
    if (j?.method === 'tools/list' && JSON.stringify(j.params?._meta ?? {}).includes('mcp-edge-validator')) return true
    return String(r.headers['mcp-session-id'] ?? '').startsWith('pull-')
  }
  const echo = (r: ReceivedRequest, res: import('node:http').ServerResponse) => {
    const j = r.json as { id?: unknown } | unknown[] | undefined
    if (Array.isArray(j)) {
      const out = j
        .filter((m) => typeof m === 'object' && m !== null && 'id' in m)
        .map((m) => ({ jsonrpc: '2.0', id: (m as { id: unknown }).id, result: { content: [{ type: 'text', text: 'ok' }] } }))
      return out.length ? sendJson(res, out) : void res.writeHead(202).end()
    }
    if (!j || !('id' in j)) return void res.writeHead(202).end()
    sendJson(res, { jsonrpc: '2.0', id: j.id, result: { content: [{ type: 'text', text: 'ok' }] } })
  }

  beforeAll(async () => {
    origin = await startScriptedOrigin()
    let n = 0
    origin.handle((r, res) => {
      const j = r.json as { id?: number; method?: string; params?: { protocolVersion?: string } } | undefined
      if (isPull(r)) {
        if (r.method === 'DELETE' || j?.method === 'notifications/initialized') return void res.writeHead(202).end()
        if (pullGarbage) return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json</html>')
        if (j?.method === 'initialize') return sendJson(res, initializeReply(j, { echo: true, serverInfo: { name: 's', version: '1' } }), 200, { 'mcp-session-id': `pull-${++n}` })
        return sendJson(res, { jsonrpc: '2.0', id: j?.id, result: { tools } })
      }
      answer(r, res)
    })
    const origins = JSON.stringify({ main: origin.url, learnA: origin.url, learnB: origin.url, learnC: origin.url, pg: origin.url, learnD: origin.url })
    edge = await start({ ORIGIN_URL: origin.url, ORIGINS: origins, MAX_BATCH: '3', MAX_BODY_BYTES: '2048', REFRESH_MIN_INTERVAL_MS: '0' })
    narrow = await start({ ORIGIN_URL: origin.url, ORIGINS: origins, SUPPORTED_VERSIONS: '2025-11-25,2026-07-28', UNKNOWN_TOOL: 'forward', REFRESH_MIN_INTERVAL_MS: '0' })
  })
  afterAll(async () => {
    await edge?.close()
    await narrow?.close()
    await origin?.close()
  })
  beforeEach(() => {
    origin.reset()
    tools = TOOLS
    pullGarbage = false
    answer = echo
  })

  describe('D1: a local error for a readable id is HTTP 200 with the id exactly as sent', () => {
    for (const id of ['"7"', '0', '""', '123456789012345678901234567890', '-9007199254740993']) {
      it(`id ${id}`, async () => {
        const r = await post(url(), `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"calc","arguments":{"a":"x"}}}`, V('2025-06-18'))
        expect(r.status).toBe(200)
        expect(r.headers['content-type']).toContain('application/json')
        expect(r.text.startsWith(`{"jsonrpc":"2.0","id":${id},"error":`)).toBe(true)
        expect(r.json.error.code).toBe(-32602)
        expect(forwarded()).toHaveLength(0)
      })
    }
  })

  describe('D2: a body refused as a whole is HTTP 400 with one error object and id null', () => {
    const cases: [string, string, Record<string, string>, number][] = [
      ['not JSON', '{"jsonrpc":"2.0","id":1,', V('2025-11-25'), -32700],
      ['empty batch', '[]', LEGACY, -32600],
      ['a number', '5', V('2025-11-25'), -32600],
      ['a batch under 2025-11-25', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', V('2025-11-25'), -32600],
      ['a batch under 2026-07-28', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', V('2026-07-28'), -32600],
      ['an unreadable id', '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', V('2025-11-25'), -32600],
    ]
    for (const [label, body, headers, code] of cases) {
      it(label, async () => {
        const r = await post(url(), body, headers)
        expect(r.status).toBe(400)
        expect(r.headers['content-type']).toContain('application/json')
        expect(Array.isArray(r.json)).toBe(false)
        expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } })
        expect(forwarded()).toHaveLength(0)
      })
    }
  })

  describe('D3: params shape', () => {
    it('params not an object on any request: -32600', async () => {
      const r = await post(url(), '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}', V('2025-11-25'))
      expect(r.json).toMatchObject({ id: 1, error: { code: -32600 } })
    })
    it('tools/call without name or with non-object arguments: -32602', async () => {
      for (const p of ['{"arguments":{}}', '{"name":"calc","arguments":"{\\"a\\":1}"}', '{"name":"calc","arguments":null}']) {
        const r = await post(url(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":${p}}`, V('2025-11-25'))
        expect(r.status).toBe(200)
        expect(r.json).toMatchObject({ id: 2, error: { code: -32602 } })
      }
      expect(forwarded()).toHaveLength(0)
    })
    it('missing arguments are validated as {}', async () => {
      const bad = await post(url(), '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"calc"}}', V('2025-06-18'))
      expect(bad.json).toMatchObject({ id: 3, error: { code: -32602 } })
      const body = '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"free"}}'
      const ok = await post(url(), body, V('2025-06-18'))
      expect(ok.json).toMatchObject({ id: 4, result: {} })
      expect(forwarded().map((f) => f.body)).toEqual([body])
    })
  })

  describe('D4: ids', () => {
    for (const id of ['null', '{}', 'true', '1.5']) {
      it(`id ${id} is -32600 with id null`, async () => {
        const r = await post(url(), `{"jsonrpc":"2.0","id":${id},"method":"ping"}`, V('2025-11-25'))
        expect(r.status).toBe(400)
        expect(r.json).toMatchObject({ id: null, error: { code: -32600 } })
      })
    }
    it('a duplicate id in a batch: the first is processed, the later one refused', async () => {
      const r = await post(url(), '[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"tools/list"}]', LEGACY)
      expect(r.status).toBe(200)
      expect(r.json).toHaveLength(2)
      expect(r.json.filter((m: { error?: unknown }) => m.error)).toMatchObject([{ id: 9, error: { code: -32600 } }])
      expect(forwarded()).toHaveLength(1)
      expect(forwarded()[0]!.json).toEqual([{ jsonrpc: '2.0', id: 9, method: 'ping' }])
    })
  })

  describe('D5: notifications', () => {
    it('a valid one is forwarded and answered 202 with no body', async () => {
      const r = await post(url(), '{"jsonrpc":"2.0","method":"notifications/x","params":{}}', V('2025-11-25'))
      expect(r.status).toBe(202)
      expect(r.text).toBe('')
      expect(forwarded()).toHaveLength(1)
    })
    it('an MCP-invalid one is not forwarded: 400, one -32600, id null', async () => {
      for (const body of ['{"jsonrpc":"2.0","method":"notifications/x","params":[1]}', '{"jsonrpc":"2.0","method":7}']) {
        const r = await post(url(), body, V('2025-11-25'))
        expect(r.status).toBe(400)
        expect(r.json).toMatchObject({ id: null, error: { code: -32600 } })
      }
      expect(forwarded()).toHaveLength(0)
    })
  })

  describe('D6: methods', () => {
    it('an unknown method is forwarded and the origin -32601 relayed', async () => {
      answer = (r, res) => sendJson(res, { jsonrpc: '2.0', id: (r.json as { id: number }).id, error: { code: -32601, message: 'Method not found' } })
      const r = await post(url(), '{"jsonrpc":"2.0","id":5,"method":"x/unknown"}', V('2025-11-25'))
      expect(r.json).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found' } })
      expect(forwarded()).toHaveLength(1)
    })
    it('rpc.* is answered -32601 by the edge', async () => {
      const r = await post(url(), '{"jsonrpc":"2.0","id":6,"method":"rpc.discover"}', V('2025-11-25'))
      expect(r.json).toMatchObject({ id: 6, error: { code: -32601 } })
      expect(forwarded()).toHaveLength(0)
    })
  })

  describe('D7: unknown tools', () => {
    it('one single-flight refresh, then -32602; a tool added at the origin is then accepted', async () => {
      tools = TOOLS.slice(0, 1)
      const calls = await Promise.all(
        [1, 2, 3, 4].map((i) => post(url('learnC'), `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"fresh","arguments":{}}}`, V('2025-11-25')))
      )
      for (const c of calls) expect(c.json.error.code).toBe(-32602)
      expect(pulls().filter((p) => (p.json as { method?: string } | undefined)?.method === 'initialize')).toHaveLength(1)
      expect(forwarded()).toHaveLength(0)
      tools = [...TOOLS, { name: 'fresh', inputSchema: { type: 'object' } }]
      const ok = await post(url('learnC'), '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fresh","arguments":{}}}', V('2025-11-25'))
      expect(ok.json).toMatchObject({ id: 5, result: {} })
      expect(forwarded()).toHaveLength(1)
    })
    it('UNKNOWN_TOOL=forward forwards it', async () => {
      const r = await post(narrow.url, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}', V('2025-11-25'))
      expect(r.json).toMatchObject({ id: 1, result: {} })
      expect(forwarded()).toHaveLength(1)
    })
  })

  describe('D13: transport refusals carry -32600 (or the era code) and id null', () => {
    const big = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(3000)}"}}`
    const cases: [string, string, Record<string, string>, string, number, number][] = [
      ['403 Origin', '{"jsonrpc":"2.0","id":1,"method":"ping"}', { ...V('2025-11-25'), origin: 'https://evil.example' }, 'POST', 403, -32600],
      ['405 method', '{"jsonrpc":"2.0","id":1,"method":"ping"}', V('2025-11-25'), 'PUT', 405, -32600],
      ['406 Accept', '{"jsonrpc":"2.0","id":1,"method":"ping"}', { ...V('2025-11-25'), accept: 'text/html' }, 'POST', 406, -32600],
      ['413 size', big, V('2025-11-25'), 'POST', 413, -32600],
      ['415 Content-Type', '{"jsonrpc":"2.0","id":1,"method":"ping"}', { ...V('2025-11-25'), 'content-type': 'text/plain' }, 'POST', 415, -32600],
      ['400 version', '{"jsonrpc":"2.0","id":1,"method":"ping"}', V('2024-01-01'), 'POST', 400, -32022],
    ]
    for (const [label, body, headers, method, status, code] of cases) {
      it(label, async () => {
        const r = await post(url(), body, headers, method)
        expect(r.status).toBe(status)
        expect(r.headers['content-type']).toContain('application/json')
        expect(r.json.error.code).toBe(code)
        expect(r.json.error.code > -32000 || r.json.error.code < -32019).toBe(true)
        if (status !== 400) expect(r.json.id).toBeNull()
        expect(forwarded()).toHaveLength(0)
      })
    }
  })

  describe('D14: protocol versions', () => {
    it('an unsupported or malformed header: 400 -32022 with supported (newest first) and requested', async () => {
      for (const v of ['2024-10-07', 'not-a-version', '2099-01-01']) {
        const r = await post(url(), '{"jsonrpc":"2.0","id":"v","method":"ping"}', V(v))
        expect(r.status).toBe(400)
        expect(r.json).toEqual({
          jsonrpc: '2.0',
          id: 'v',
          error: {
            code: -32022,
            message: expect.stringContaining('2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05'),
            data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], requested: v },
          },
        })
      }
      expect(forwarded()).toHaveLength(0)
    })
    it('an initialize whose protocolVersion the edge does not know is forwarded', async () => {
      const r = await post(
        url(),
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
        LEGACY
      )
      expect(r.status).toBe(200)
      expect(forwarded()).toHaveLength(1)
    })
    it('SUPPORTED_VERSIONS narrows the list', async () => {
      const r = await post(narrow.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', V('2025-06-18'))
      expect(r.status).toBe(400)
      expect(r.json.error.data).toEqual({ supported: ['2026-07-28', '2025-11-25'], requested: '2025-06-18' })
      const none = await post(narrow.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', LEGACY)
      expect(none.json.error).toMatchObject({ code: -32022, data: { requested: '2025-03-26' } })
      expect(forwarded()).toHaveLength(0)
    })
  })

  describe('D15: MCP-invalid notifications inside a batch', () => {
    it('are dropped: not forwarded, no entry', async () => {
      const r = await post(url(), '[{"jsonrpc":"2.0","method":"notifications/x","params":[1]},{"jsonrpc":"2.0","id":1,"method":"ping"}]', LEGACY)
      expect(r.status).toBe(200)
      expect(r.json).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } }])
      expect(forwarded()[0]!.json).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }])
    })
    it('a batch holding nothing else is refused as one', async () => {
      const r = await post(url(), '[{"jsonrpc":"2.0","method":"notifications/x","params":[1]}]', LEGACY)
      expect(r.status).toBe(400)
      expect(r.json).toMatchObject({ id: null, error: { code: -32600 } })
      expect(forwarded()).toHaveLength(0)
    })
  })

  describe('D16: a failed tool-list refresh fails open', () => {
    it('the call is forwarded and graded unvalidated', async () => {
      pullGarbage = true
      const r = await post(url('pg'), '{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"calc","arguments":{"a":"not checked"}}}', V('2025-11-25'))
      expect(r.json).toMatchObject({ id: 'u', result: {} })
      expect(forwarded()).toHaveLength(1)
      const logs = (await edge.logs({ msg: 'mcp.post', where: (r) => ((r.grades ?? []) as { id: string; grade: string }[]).some((g) => g.id === '"u"') })).filter(
        (l) => l.msg === 'mcp.post'
      )
      expect((logs.at(-1) as { grades: { grade: string }[] }).grades[0]!.grade).toBe('unvalidated')
    })
  })

  describe('D17: the origin era is learned and cached', () => {
    it('an origin -32022 is relayed; later 2026-07-28 requests are answered -32022 locally with what the origin speaks', async () => {
      answer = (r, res) => {
        const j = r.json as { id: unknown; params?: { _meta?: unknown } }
        if (j.params?._meta)
          return sendJson(
            res,
            {
              jsonrpc: '2.0',
              id: j.id,
              error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2025-11-25', '2025-06-18'], requested: '2026-07-28' } },
            },
            400
          )
        echo(r, res)
      }
      const body = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{${ENV}}}`
      const first = await post(url('learnA'), body(1), MODERN('tools/list'))
      expect(first.status).toBe(400)
      expect(first.json.error.data.supported).toEqual(['2025-11-25', '2025-06-18'])
      expect(forwarded()).toHaveLength(1)
      const second = await post(url('learnA'), body(2), MODERN('tools/list'))
      expect(second.status).toBe(400)
      // Only the versions the origin listed (the edge also serves 2025-03-26, but the origin did not
      // claim it): the list a client chooses from is one the origin accepts.
      expect(second.json).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32022, message: expect.any(String), data: { supported: ['2025-11-25', '2025-06-18'], requested: '2026-07-28' } },
      })
      expect(forwarded()).toHaveLength(1)
      // legacy traffic to the same origin still flows
      const legacy = await post(url('learnA'), '{"jsonrpc":"2.0","id":3,"method":"ping"}', V('2025-11-25'))
      expect(legacy.status).toBe(200)
      expect(forwarded()).toHaveLength(2)
      // another origin is not affected
      answer = echo
      const other = await post(url('learnB'), body(4), MODERN('tools/list'))
      expect(other.status).toBe(200)
    })
    it('a server/discover refused as unknown marks the origin legacy-only', async () => {
      answer = (r, res) => {
        const j = r.json as { id: unknown; method: string }
        if (j.method === 'server/discover') return sendJson(res, { jsonrpc: '2.0', id: j.id, error: { code: -32601, message: 'Method not found' } })
        echo(r, res)
      }
      const probe = await post(url('learnD'), `{"jsonrpc":"2.0","id":"p","method":"server/discover","params":{${ENV}}}`, MODERN('server/discover'))
      expect(probe.json.error.code).toBe(-32601)
      const next = await post(url('learnD'), `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{${ENV}}}`, MODERN('tools/list'))
      expect(next.status).toBe(400)
      expect(next.json.error).toMatchObject({ code: -32022, data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] } })
      expect(forwarded()).toHaveLength(1)
    })
  })

  describe('D18: Accept, GET and DELETE per era', () => {
    it('2025 eras need both types in Accept; 2026-07-28 accepts application/json alone', async () => {
      const legacy = await post(url(), '{"jsonrpc":"2.0","id":1,"method":"ping"}', { ...V('2025-11-25'), accept: 'application/json' })
      expect(legacy.status).toBe(406)
      const modern = await post(url(), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{${ENV}}}`, { ...MODERN('tools/list'), accept: 'application/json' })
      expect(modern.status).toBe(200)
    })
    it('GET and DELETE are forwarded in 2025 eras and answered 405 (Allow: POST) in 2026-07-28', async () => {
      answer = (_r, res) => void res.writeHead(405, { allow: 'POST' }).end()
      for (const m of ['GET', 'DELETE']) {
        const legacy = await post(url(), '', { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 's1' }, m)
        expect(legacy.status).toBe(405)
        const modern = await post(url(), '', { accept: 'text/event-stream', 'mcp-protocol-version': '2026-07-28' }, m)
        expect(modern.status).toBe(405)
        expect(modern.headers.allow).toBe('POST')
        expect(modern.json).toMatchObject({ id: null, error: { code: -32600 } })
      }
      expect(forwarded().map((f) => f.method)).toEqual(['GET', 'DELETE'])
    })
  })

  describe('limits', () => {
    it('MAX_BATCH: a longer batch is one -32600', async () => {
      const r = await post(url(), `[${[1, 2, 3, 4].map((i) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}`).join(',')}]`, LEGACY)
      expect(r.status).toBe(400)
      expect(r.json).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('3') } })
      expect(forwarded()).toHaveLength(0)
    })
  })

  describe('2026-07-28 headers', () => {
    const call = (id: number, args: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"sql","arguments":${args},${ENV}}}`
    it('Mcp-Param-* compares integers numerically, booleans and Base64 values exactly', async () => {
      const ok = await post(
        url(),
        call(1, '{"q":"x","shard":42,"dry":true,"region":"eu é"}'),
        MODERN('tools/call', { 'mcp-name': 'sql', 'mcp-param-shard': '42', 'mcp-param-dry': 'true', 'mcp-param-region': `=?base64?${Buffer.from('eu é').toString('base64')}?=` })
      )
      expect(ok.status, ok.text).toBe(200)
      for (const [h, v] of [
        ['mcp-param-shard', '43'],
        ['mcp-param-dry', 'TRUE'],
        ['mcp-param-shard', '=?base64?NDI?='],
      ] as const) {
        const headers = { ...MODERN('tools/call', { 'mcp-name': 'sql', 'mcp-param-shard': '42', 'mcp-param-dry': 'true' }), [h]: v }
        const r = await post(url(), call(2, '{"q":"x","shard":42,"dry":true}'), headers)
        expect(r.status, `${h}: ${v}`).toBe(400)
        expect(r.json).toMatchObject({ id: 2, error: { code: -32020 } })
      }
      expect(forwarded()).toHaveLength(1)
    })
    it('a repeated Mcp-Method header is a mismatch', async () => {
      const r = await post(url(), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{${ENV}}}`, MODERN('tools/list', { 'mcp-method': ['tools/list', 'tools/list'] }))
      expect(r.status).toBe(400)
      expect(r.json).toMatchObject({ id: 3, error: { code: -32020 } })
    })
    it('a notification with an envelope naming an unsupported version is refused without an id', async () => {
      const r = await post(
        url(),
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}',
        V('2099-01-01')
      )
      expect(r.status).toBe(400)
      expect(r.json).toMatchObject({ id: null, error: { code: -32022 } })
      expect(forwarded()).toHaveLength(0)
    })
    it('no Mcp-Session-Id on a 2026-07-28 answer, even when the origin sets one', async () => {
      answer = (r, res) => sendJson(res, { jsonrpc: '2.0', id: (r.json as { id: number }).id, result: { tools: [], resultType: 'complete' } }, 200, { 'mcp-session-id': 'minted' })
      const r = await post(url(), `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{${ENV}}}`, MODERN('tools/list'))
      expect(r.status).toBe(200)
      expect(r.headers['mcp-session-id']).toBeUndefined()
      const legacy = await post(url(), '{"jsonrpc":"2.0","id":5,"method":"tools/list"}', V('2025-11-25'))
      expect(legacy.headers['mcp-session-id']).toBe('minted')
    })
  })
})
