/**
 * Every reply graded per JSON-RPC id (docs/grading.md). A table of origin answers (scripted fake origin,
 * real HTTP) run through the edge on Node and on the built Worker in workerd; each row asserts
 * the exact bytes the client receives, the HTTP status, the `MCP-Edge-Grade` header and the
 * per-id grade table of the POST's log line. Also the metrics route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { ADMIN_TOKEN, gradesOf, mcpHeaders, nextLog, post, postLogs, pushTools } from '../helpers/grading'

const TOOLS = [{ name: 'search_docs', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }]

const call = (id: number | string, query = 'q') =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"${query}"}}}`
const toolResult = (id: number | string, result: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
const gw = (id: string, code: number, message: string, originStatus?: number) =>
  `{"jsonrpc":"2.0","id":${id},"error":{"code":${code},"message":"${message}","data":{"source":"edge"${originStatus !== undefined ? `,"originStatus":${originStatus}` : ''}}}}`
const UNAVAILABLE = 'Origin unavailable or sent an invalid response'
const NO_ANSWER = 'Origin never answered this request'

interface Row {
  name: string
  version?: string
  request: string
  origin: { status?: number; contentType?: string; body: string }
  status: number
  body: string
  header?: string
  grades: { id: string; grade: string; code?: number }[]
  dropped?: { id: string; reason: string }[]
}

/** A text content block whose text is `t`, as a tools/call result. */
const textResult = (t: string, extra = '') => `{"content":[{"type":"text","text":${JSON.stringify(t)}}]${extra}}`
/** The request id the rows send (`X-Request-Id`): the correlation id of the edge's classification of the results it marks isError. */
const RID = 'grading-row'
/** The `_meta` member the edge adds to a result it marks isError (docs/security.md). */
const EDGE_META = `"_meta":{"io.mcp-edge/failure":{"class":"capability","code":"hidden_failure","correlationId":"${RID}","agentGuidance":"The tool reported a failure in its result; read it before calling again."}}`
const withIsError = (result: string) => result.slice(0, -1) + `,"isError":true,${EDGE_META}}`

/** Hidden failures (D11) that must be flagged: the result gets isError, every other byte stays. */
const FLAGGED: [string, string][] = [
  ['success:false in the text', textResult('{"success":false,"error_code":"SQL_ERROR","error":"table not found"}')],
  ['ok:false in the text', textResult('{"ok":false,"reason":"quota"}')],
  ['status:"error" in the text', textResult('{"status":"error","message":"boom"}')],
  ['status:"failed" in structuredContent', `{"content":[{"type":"text","text":"done"}],"structuredContent":{"status":"failed"}}`],
  ['success:false one level down in data', textResult('{"data":{"success":false}}')],
  ['ok:false one level down in result (structuredContent)', `{"content":[],"structuredContent":{"result":{"ok":false}}}`],
  ['text with surrounding whitespace', textResult('  {"success":false}\n')],
  ['escapes and non-ASCII kept byte for byte', `{"content":[{"type":"text","text":"{\\"success\\":false,\\"msg\\":\\"caf\\u00e9 \\/ na\\u00efve\\"}"}]}`],
  // The error member (docs/grading.md): n8n-mcp 2.87.0 get_template, pretty-printed as it writes it; server-slack 2025.4.25's catch.
  [
    'an error report: n8n-mcp get_template',
    textResult(JSON.stringify({ error: 'Template 12 not found', tip: 'Use list_templates, list_node_templates or search_templates to find available templates' }, null, 2)),
  ],
  ['an error report: server-slack', textResult('{"error":"Missing required argument: channel_id"}')],
  ['an error object with a message', textResult('{"error":{"code":404,"message":"Not Found"}}')],
]

/** Cases that must NOT be flagged (D11): passed through unchanged and graded ok. */
const NOT_FLAGGED: [string, string][] = [
  ['plain text mentioning failure', textResult('success: false (the word, not JSON)')],
  ['invalid JSON text', textResult('{"success":false')],
  ['a JSON array', textResult('[{"success":false}]')],
  ['error: null', textResult('{"error":null,"rows":[]}')],
  ['success: true', textResult('{"success":true,"rows":[]}')],
  ['success as the string "false"', textResult('{"success":"false"}')],
  ['two levels down', textResult('{"data":{"data":{"success":false}}}')],
  ['status "ok"', `{"content":[],"structuredContent":{"status":"ok"}}`],
  ['two text blocks (not a single text content)', `{"content":[{"type":"text","text":"{\\"success\\":false}"},{"type":"text","text":"more"}]}`],
  ['isError:false with a healthy payload', textResult('{"rows":[1,2]}', ',"isError":false')],
  ['error: null beside data', textResult('{"error":null,"data":{"rows":[]}}')],
  ['an empty errors list', textResult('{"errors":[]}')],
  ['a log listing errors', textResult('{"entries":[{"level":"error","error":"disk full"}]}')],
  ['error: "" beside rows', textResult('{"error":"","rows":[1]}')],
  ['error: false', textResult('{"error":false}')],
  ['an error text beside a result member', textResult('{"jobId":"42","state":"done","error":"retried once"}')],
]

const ROWS: Row[] = [
  // The three red fixtures every client harness should have.
  {
    name: 'red 1: -32601 under HTTP 200 grades rpc_error',
    request: `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`,
    origin: { body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}` },
    status: 200,
    body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`,
    header: 'rpc_error=1',
    grades: [{ id: '1', grade: 'rpc_error', code: -32601 }],
  },
  {
    name: 'red 2: isError:true whose text looks like success grades tool_error, kept as is',
    request: call(2),
    origin: { body: toolResult(2, textResult('{"success":true,"rows":[{"id":1}]}', ',"isError":true')) },
    status: 200,
    body: toolResult(2, textResult('{"success":true,"rows":[{"id":1}]}', ',"isError":true')),
    header: 'tool_error=1',
    grades: [{ id: '2', grade: 'tool_error' }],
  },
  {
    name: 'red 3: a batch of three with one error grades per id',
    version: '2025-03-26',
    request: `[${call(1)},${call(2)},${call(3)}]`,
    origin: { body: `[${toolResult(1, textResult('a'))},{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}},${toolResult(3, textResult('c'))}]` },
    status: 200,
    body: `[${toolResult(1, textResult('a'))},{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}},${toolResult(3, textResult('c'))}]`,
    header: 'ok=2 rpc_error=1',
    grades: [
      { id: '1', grade: 'ok' },
      { id: '2', grade: 'rpc_error', code: -32603 },
      { id: '3', grade: 'ok' },
    ],
  },
  {
    name: 'batch with mixed outcomes: ok, tool_error, hidden failure, rpc_error, and a local rejection',
    version: '2025-03-26',
    request: `[${call(1)},${call(2)},${call(3)},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":7}}}]`,
    origin: {
      body: `[${toolResult(1, textResult('fine'))},${toolResult(2, textResult('nope', ',"isError":true'))},${toolResult(3, textResult('{"ok":false}'))},{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no ping"}}]`,
    },
    status: 200,
    body: `[{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid arguments for tool \\"search_docs\\":\\n  - query: must be a string\\nExpected:\\n  - query (string, optional)\\nFix these arguments and call the tool again.","data":{"tool":"search_docs","issues":[{"path":"query","keyword":"type","expected":"must be a string"}]}}},${toolResult(1, textResult('fine'))},${toolResult(2, textResult('nope', ',"isError":true'))},${toolResult(3, withIsError(textResult('{"ok":false}')))},{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no ping"}}]`,
    header: 'ok=1 tool_error=2 rpc_error=1 rejected=1',
    grades: [
      { id: '5', grade: 'rejected', code: -32602 },
      { id: '1', grade: 'ok' },
      { id: '2', grade: 'tool_error' },
      { id: '3', grade: 'tool_error' },
      { id: '4', grade: 'rpc_error', code: -32601 },
    ],
  },
  {
    name: 'parse error under 200 with id null is given to the open request',
    request: call(5),
    origin: { body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` },
    status: 200,
    body: `{"jsonrpc":"2.0","id":5,"error":{"code":-32700,"message":"Parse error"}}`,
    header: 'rpc_error=1',
    grades: [{ id: '5', grade: 'rpc_error', code: -32700 }],
    dropped: [{ id: 'null', reason: 'no_id' }],
  },
  {
    name: 'invalid-request error under 400 is relayed with its status and body',
    request: `{"jsonrpc":"2.0","id":6,"method":"resources/list"}`,
    origin: { status: 400, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}` },
    status: 400,
    body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`,
    header: 'rpc_error=1',
    grades: [{ id: '6', grade: 'rpc_error', code: -32600 }],
  },
  {
    name: '404 session-not-found JSON-RPC error is relayed (vector 83)',
    request: `{"jsonrpc":"2.0","id":50,"method":"resources/list"}`,
    origin: { status: 404, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}` },
    status: 404,
    body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`,
    header: 'rpc_error=1',
    grades: [{ id: '50', grade: 'rpc_error', code: -32001 }],
  },
  {
    name: 'a 4xx JSON-RPC error for a batch holding a local answer goes to each forwarded id',
    version: '2025-03-26',
    request: `[{"jsonrpc":"2.0","id":1,"method":"resources/list"},5,{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`,
    origin: { status: 400, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}` },
    status: 200,
    body: `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a JSON-RPC message must be an object"}},{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request"}},{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request"}}]`,
    header: 'rpc_error=2 rejected=1',
    grades: [
      { id: 'null', grade: 'rejected', code: -32600 },
      { id: '1', grade: 'rpc_error', code: -32600 },
      { id: '2', grade: 'rpc_error', code: -32600 },
    ],
    dropped: [{ id: 'null', reason: 'no_id' }],
  },
  {
    name: 'an error tied to no id inside a batch reply answers the ids left open',
    version: '2025-03-26',
    request: `[{"jsonrpc":"2.0","id":1,"method":"resources/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`,
    origin: { body: `[{"jsonrpc":"2.0","id":1,"result":{"resources":[]}},{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}]` },
    status: 200,
    body: `[{"jsonrpc":"2.0","id":1,"result":{"resources":[]}},{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}]`,
    header: 'ok=1 rpc_error=1',
    grades: [
      { id: '1', grade: 'ok' },
      { id: '2', grade: 'rpc_error', code: -32603 },
    ],
    dropped: [{ id: 'null', reason: 'no_id' }],
  },
  {
    name: 'D10: result and error together, the error wins and result is dropped',
    request: call(8),
    origin: { body: `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"ok"}]},"error":{"code":-32000,"message":"tool crashed"}}` },
    status: 200,
    body: `{"jsonrpc":"2.0","id":8,"error":{"code":-32000,"message":"tool crashed"}}`,
    header: 'rpc_error=1',
    grades: [{ id: '8', grade: 'rpc_error', code: -32000 }],
  },
  {
    name: 'D10: "error": null beside a result is a success (the null member is dropped)',
    request: call(9),
    origin: { body: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"ok"}]},"error":null}` },
    status: 200,
    body: `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"ok"}]}}`,
    header: 'ok=1',
    grades: [{ id: '9', grade: 'ok' }],
  },
  {
    name: 'origin error hidden behind a 2xx: JSON that is not JSON-RPC',
    request: call(10),
    origin: { body: `{"error":"internal server error","trace":"CANARY_TRACE at db.js:12"}` },
    status: 200,
    body: gw('10', -31001, UNAVAILABLE),
    header: 'origin_error=1',
    grades: [{ id: '10', grade: 'origin_error', code: -31001 }],
    dropped: [{ id: '-', reason: 'invalid' }],
  },
  {
    name: 'origin error hidden behind a 2xx: an HTML page',
    request: call(11),
    origin: { contentType: 'text/html', body: '<html><body>CANARY_HTML Internal Server Error</body></html>' },
    status: 200,
    body: gw('11', -31001, UNAVAILABLE),
    header: 'origin_error=1',
    grades: [{ id: '11', grade: 'origin_error', code: -31001 }],
  },
  {
    name: 'a 2xx response with an error that is not an error object',
    request: call(12),
    origin: { body: `{"jsonrpc":"2.0","id":12,"error":"CANARY_STRING_ERROR"}` },
    status: 200,
    body: gw('12', -31001, UNAVAILABLE),
    header: 'origin_error=1',
    grades: [{ id: '12', grade: 'origin_error', code: -31001 }],
    dropped: [{ id: '-', reason: 'invalid' }],
  },
  {
    name: 'a 2xx JSON reply whose id matches nothing: the request is graded missing',
    request: call(13),
    origin: { body: toolResult(999, textResult('for someone else')) },
    status: 200,
    body: gw('13', -31003, NO_ANSWER),
    header: 'missing=1',
    grades: [{ id: '13', grade: 'missing', code: -31003 }],
    dropped: [{ id: '999', reason: 'unknown_id' }],
  },
  {
    name: 'a 2xx empty body for a request: missing',
    request: call(14),
    origin: { body: '' },
    status: 200,
    body: gw('14', -31003, NO_ANSWER),
    header: 'missing=1',
    grades: [{ id: '14', grade: 'missing', code: -31003 }],
  },
  {
    name: 'batch reply with a repeated id (first wins) and an invented id (dropped), both logged',
    version: '2025-03-26',
    request: `[${call(1)},${call(2)}]`,
    origin: {
      body: `[${toolResult(1, textResult('first'))},{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"second"}},${toolResult(77, textResult('invented'))},${toolResult(2, textResult('two'))}]`,
    },
    status: 200,
    body: `[${toolResult(1, textResult('first'))},${toolResult(2, textResult('two'))}]`,
    header: 'ok=2',
    grades: [
      { id: '1', grade: 'ok' },
      { id: '2', grade: 'ok' },
    ],
    dropped: [
      { id: '1', reason: 'repeated' },
      { id: '77', reason: 'unknown_id' },
    ],
  },
  {
    name: 'batch reply missing one id: a gateway error for it, the rest relayed',
    version: '2025-03-26',
    request: `[${call(1)},${call('two')}]`,
    origin: { body: `[${toolResult(1, textResult('one'))}]` },
    status: 200,
    body: `[${toolResult(1, textResult('one'))},${gw('"two"', -31003, NO_ANSWER)}]`,
    header: 'ok=1 missing=1',
    grades: [
      { id: '1', grade: 'ok' },
      { id: '"two"', grade: 'missing', code: -31003 },
    ],
  },
  {
    name: 'a hidden failure with an id past 2^53 keeps the id token and every content byte',
    request: `{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"search_docs","arguments":{}}}`,
    origin: { body: `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[{"type":"text","text":"{\\"success\\":false,\\"n\\":123456789012345678901234}"}]}}` },
    status: 200,
    body: `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[{"type":"text","text":"{\\"success\\":false,\\"n\\":123456789012345678901234}"}],"isError":true,${EDGE_META}}}`,
    header: 'tool_error=1',
    grades: [{ id: '12345678901234567890', grade: 'tool_error' }],
  },
  {
    name: 'a string id "1" stays a string',
    request: call('1'),
    origin: { body: toolResult('1', textResult('{"success":false}')) },
    status: 200,
    body: toolResult('1', withIsError(textResult('{"success":false}'))),
    header: 'tool_error=1',
    grades: [{ id: '"1"', grade: 'tool_error' }],
  },
  {
    name: 'isError:false with success:false inside: the flag is set to true in place',
    request: call(15),
    origin: { body: toolResult(15, `{"isError":false,"content":[{"type":"text","text":"{\\"success\\":false}"}]}`) },
    status: 200,
    body: toolResult(15, `{"isError":true,"content":[{"type":"text","text":"{\\"success\\":false}"}],${EDGE_META}}`),
    header: 'tool_error=1',
    grades: [{ id: '15', grade: 'tool_error' }],
  },
  {
    name: 'a 2026-07-28 style input_required result is never flagged',
    request: call(16),
    origin: { body: toolResult(16, `{"resultType":"input_required","content":[{"type":"text","text":"{\\"status\\":\\"error\\"}"}]}`) },
    status: 200,
    body: toolResult(16, `{"resultType":"input_required","content":[{"type":"text","text":"{\\"status\\":\\"error\\"}"}]}`),
    header: 'ok=1',
    grades: [{ id: '16', grade: 'ok' }],
  },
  ...FLAGGED.map(([label, result], i): Row => ({
    name: `D11 flagged: ${label}`,
    request: call(100 + i),
    origin: { body: toolResult(100 + i, result) },
    status: 200,
    body: toolResult(100 + i, withIsError(result)),
    header: 'tool_error=1',
    grades: [{ id: String(100 + i), grade: 'tool_error' }],
  })),
  ...NOT_FLAGGED.map(([label, result], i): Row => ({
    name: `D11 not flagged: ${label}`,
    request: call(200 + i),
    origin: { body: toolResult(200 + i, result) },
    status: 200,
    body: toolResult(200 + i, result),
    header: 'ok=1',
    grades: [{ id: String(200 + i), grade: 'ok' }],
  })),
]

describe.each(RUNTIMES_AND_MIDDLEWARE)('grading per id on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN })
    await pushTools(edge, TOOLS)
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it.each(ROWS)('$name', async (row) => {
    origin.handle((_req, res) => {
      res.writeHead(row.origin.status ?? 200, { 'content-type': row.origin.contentType ?? 'application/json' }).end(row.origin.body)
    })
    origin.reset()
    const before = (await postLogs(edge)).length
    const got = await post(edge, row.request, mcpHeaders(row.version, { 'x-request-id': RID }))
    expect(got.text).toBe(row.body)
    expect(got.status).toBe(row.status)
    expect(got.headers.get('content-type')).toBe('application/json')
    if (row.header !== undefined) expect(got.headers.get('mcp-edge-grade')).toBe(row.header)
    expect(got.text).not.toContain('CANARY')
    const log = await nextLog(edge, before)
    expect(gradesOf(log)).toEqual(row.grades)
    expect(log.status).toBe(row.status)
    expect(log.dropped).toEqual(row.dropped)
    // Exactly one forward of the valid messages; the locally answered ones never reach the origin.
    expect(origin.forwarded().length).toBe(1)
  })

  it('counts grades per origin and tool on GET /metrics (Prometheus text)', async () => {
    const res = await fetch(new URL('/metrics', edge.url))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    const text = await res.text()
    expect(text).toContain('# TYPE mcp_edge_grades_total counter')
    const value = (tool: string, grade: string) => {
      const m = text.match(new RegExp(`^mcp_edge_grades_total\\{origin="default",tool="${tool}",grade="${grade}"\\} (\\d+)$`, 'm'))
      return m ? Number(m[1]) : 0
    }
    // Computed from the table above (every row ran on this edge before this test).
    const expected = new Map<string, number>()
    for (const row of ROWS) {
      const calls = new Set<string>()
      for (const m of row.request.matchAll(/"id":("[^"]*"|\d+),"method":"tools\/call"/g)) calls.add(m[1]!)
      for (const g of row.grades) {
        const key = `${calls.has(g.id) ? 'search_docs' : '-'} ${g.grade}`
        expected.set(key, (expected.get(key) ?? 0) + 1)
      }
    }
    expect(expected.get('search_docs tool_error')).toBeGreaterThan(5)
    for (const [key, n] of expected) {
      const [tool, grade] = key.split(' ') as [string, string]
      expect(value(tool, grade), key).toBe(n)
    }
  })
})

describe.each(RUNTIMES_AND_MIDDLEWARE)('grading options on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN, HIDDEN_FAILURES: 'off' })
    await pushTools(edge, [
      ...TOOLS,
      // A network $ref is never fetched: the schema is unusable and the call goes out unvalidated (D8).
      { name: 'remote_ref', inputSchema: { type: 'object', properties: { loc: { $ref: 'https://schemas.example/location.json' } } } },
    ])
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('HIDDEN_FAILURES=off relays a success:false result unchanged and grades it ok', async () => {
    const body = toolResult(1, textResult('{"success":false}'))
    origin.handle((_req, res) => sendJson(res, body))
    const before = (await postLogs(edge)).length
    const got = await post(edge, call(1))
    expect(got.text).toBe(body)
    expect(got.headers.get('mcp-edge-grade')).toBe('ok=1')
    expect(gradesOf(await nextLog(edge, before))).toEqual([{ id: '1', grade: 'ok' }])
  })

  it('a call forwarded without a usable schema is graded unvalidated; an isError answer still grades tool_error', async () => {
    const plain = toolResult(2, textResult('sunny'))
    origin.handle((_req, res) => sendJson(res, plain))
    let before = (await postLogs(edge)).length
    const req = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"remote_ref","arguments":{"loc":"Paris"}}}`
    let got = await post(edge, req(2))
    expect(got.text).toBe(plain)
    expect(got.headers.get('mcp-edge-grade')).toBe('unvalidated=1')
    expect(gradesOf(await nextLog(edge, before))).toEqual([{ id: '2', grade: 'unvalidated' }])

    const failed = toolResult(3, textResult('no such city', ',"isError":true'))
    origin.handle((_req, res) => sendJson(res, failed))
    before = (await postLogs(edge)).length
    got = await post(edge, req(3))
    expect(got.text).toBe(failed)
    expect(gradesOf(await nextLog(edge, before))).toEqual([{ id: '3', grade: 'tool_error' }])
    const metrics = await (await fetch(new URL('/metrics', edge.url))).text()
    expect(metrics).toContain('mcp_edge_grades_total{origin="default",tool="remote_ref",grade="unvalidated"} 1\n')
    expect(metrics).toContain('mcp_edge_grades_total{origin="default",tool="remote_ref",grade="tool_error"} 1\n')
  })
})
