/**
 * Grading a JSON reply (src/core/grading/json-reply.ts over reply-grader.ts; docs/design.md §6,
 * D9-D12), one row per case: the ids the edge forwarded, the bytes the origin answered with, the
 * grade each id got and the exact bytes the client got. Driven through the real modules on
 * in-memory deps (fake-deps.ts).
 */
import { describe, expect, it } from 'vitest'
import { answerRefusedReply, gradeJsonReply } from '../../../src/core/grading/json-reply'
import { ReplyGrader } from '../../../src/core/grading/reply-grader'
import type { DroppedReply } from '../../../src/core/exchange'
import { answerText, exchangeWith, gradesOf, gradingDeps, jsonReply, type Forwarded } from './fake-deps'

const call = (id: number, tool = 't'): Forwarded => ({ id, method: 'tools/call', tool })
const ok = (id: number | string, result = '{"content":[]}') => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
const err = (id: number | string | null, code: number, message: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":${code},"message":"${message}"}}`
/** The edge's own gateway errors (D9). */
const unavailable = (id: number) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-31001,"message":"Origin unavailable or sent an invalid response","data":{"source":"edge"}}}`
const noAnswer = (id: number) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-31003,"message":"Origin never answered this request","data":{"source":"edge"}}}`
/** A tools/call result whose one text content is `json`. */
const textResult = (json: string) => `{"content":[{"type":"text","text":${JSON.stringify(json)}}]}`
const flagged = (json: string) => `{"content":[{"type":"text","text":${JSON.stringify(json)}}],"isError":true}`

/** A tool declaring an outputSchema: `structuredContent.n` must be a number. */
const COUNTER = { name: 'counter', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }
const STRICT_TEXT = JSON.stringify(
  [
    'The result of tool "counter" does not match its outputSchema:',
    '  - structuredContent.n: must be a number',
    "The edge withheld the result. Report this to the tool server's maintainer.",
  ].join('\n')
)

interface Row {
  name: string
  forwarded: Forwarded[]
  /** The origin's 2xx body. */
  origin: string
  /** The client sent a batch (the answer is an array). */
  batch?: boolean
  env?: Record<string, string>
  /** Tools the registry has learned before the reply (D12). */
  tools?: unknown[]
  grades: string[]
  answer: string
  /** The answer is the origin's own bytes, not re-encoded text. */
  originBytes?: boolean
  dropped?: DroppedReply[]
  /** Extra fields of the one grade row (D12 marks `outputSchema`). */
  row?: Record<string, unknown>
}

const ROWS: Row[] = [
  { name: 'a single result: ok, relayed as the origin sent it', forwarded: [call(1)], origin: ok(1), grades: ['1 ok'], answer: ok(1), originBytes: true },
  {
    name: 'a call sent without a usable schema: unvalidated',
    forwarded: [{ ...call(1), unvalidated: true }],
    origin: ok(1),
    grades: ['1 unvalidated'],
    answer: ok(1),
    originBytes: true,
  },
  {
    name: 'D10: error and result together: the error wins, the result is dropped',
    forwarded: [call(1)],
    origin: '{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":-32000,"message":"boom"}}',
    grades: ['1 rpc_error -32000'],
    answer: err(1, -32000, 'boom'),
  },
  {
    name: 'D10: "error": null beside a result is a success, the member dropped',
    forwarded: [call(1)],
    origin: '{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":null}',
    grades: ['1 ok'],
    answer: ok(1),
  },
  {
    name: 'D11: success:false hidden in the text: isError set, content untouched',
    forwarded: [call(1)],
    origin: ok(1, textResult('{"success":false}')),
    grades: ['1 tool_error'],
    answer: ok(1, flagged('{"success":false}')),
  },
  {
    name: 'D11: an {"error": ...} report hidden in the text: isError set',
    forwarded: [call(1)],
    origin: ok(1, textResult('{"error":"not found"}')),
    grades: ['1 tool_error'],
    answer: ok(1, flagged('{"error":"not found"}')),
  },
  {
    name: 'D11 off (HIDDEN_FAILURES=off): the same reply is ok and unchanged',
    forwarded: [call(1)],
    env: { HIDDEN_FAILURES: 'off' },
    origin: ok(1, textResult('{"success":false}')),
    grades: ['1 ok'],
    answer: ok(1, textResult('{"success":false}')),
    originBytes: true,
  },
  {
    name: 'the origin says isError itself: tool_error, unchanged',
    forwarded: [call(1)],
    origin: ok(1, '{"content":[],"isError":true}'),
    grades: ['1 tool_error'],
    answer: ok(1, '{"content":[],"isError":true}'),
    originBytes: true,
  },
  {
    name: 'D9: an id the reply never answers gets -31003 (missing)',
    forwarded: [call(1), call(2)],
    batch: true,
    origin: `[${ok(1)}]`,
    grades: ['1 ok', '2 missing -31003'],
    answer: `[${ok(1)},${noAnswer(2)}]`,
  },
  {
    name: 'a repeated id: the first answer wins, the repeat is dropped',
    forwarded: [call(1)],
    origin: `[${ok(1)},${ok(1, '{"content":[],"x":1}')}]`,
    grades: ['1 ok'],
    answer: ok(1),
    dropped: [{ id: '1', reason: 'repeated' }],
  },
  {
    name: 'an id never forwarded is dropped',
    forwarded: [call(1)],
    batch: true,
    origin: `[${ok(9)},${ok(1)}]`,
    grades: ['1 ok'],
    answer: `[${ok(1)}]`,
    dropped: [{ id: '9', reason: 'unknown_id' }],
  },
  {
    name: 'a batch with mixed answers, in the origin order, the missing one last',
    forwarded: [call(1), call(2), call(3), call(4), { id: 'L', method: 'tools/list' }],
    batch: true,
    origin: `[${err(2, -32602, 'bad')},${ok(1)},${ok('L', '{"tools":[]}')},${ok(3, textResult('{"ok":false}'))}]`,
    grades: ['2 rpc_error -32602', '1 ok', '"L" ok', '3 tool_error', '4 missing -31003'],
    answer: `[${err(2, -32602, 'bad')},${ok(1)},${ok('L', '{"tools":[]}')},${ok(3, flagged('{"ok":false}'))},${noAnswer(4)}]`,
  },
  {
    name: 'a whole batch answered as sent: the origin bytes, white space kept',
    forwarded: [call(1), call(2)],
    batch: true,
    origin: `[ ${ok(2)} ,\n ${ok(1)} ]`,
    grades: ['2 ok', '1 ok'],
    answer: `[ ${ok(2)} ,\n ${ok(1)} ]`,
    originBytes: true,
  },
  {
    name: 'D9: a reply that is not JSON: -31001 for every open id',
    forwarded: [call(1), call(2)],
    batch: true,
    origin: '<html>502 Bad Gateway</html>',
    grades: ['1 origin_error -31001', '2 origin_error -31001'],
    answer: `[${unavailable(1)},${unavailable(2)}]`,
  },
  {
    name: 'D9: JSON that is not JSON-RPC: dropped, and the open id gets -31001',
    forwarded: [call(1)],
    origin: '{"hello":"world"}',
    grades: ['1 origin_error -31001'],
    answer: unavailable(1),
    dropped: [{ id: '-', reason: 'invalid' }],
  },
  { name: 'an empty body: -31003 (the reply ended without the id)', forwarded: [call(1)], origin: '', grades: ['1 missing -31003'], answer: noAnswer(1) },
  {
    name: 'an id-less error goes to every open id, under its own id',
    forwarded: [call(1), call(2)],
    batch: true,
    origin: err(null, -32600, 'bad request'),
    grades: ['1 rpc_error -32600', '2 rpc_error -32600'],
    answer: `[${err(1, -32600, 'bad request')},${err(2, -32600, 'bad request')}]`,
    dropped: [{ id: 'null', reason: 'no_id' }],
  },
  {
    name: 'MAX_JSON_DEPTH: a reply nested past the bound is not parsed: -31001',
    forwarded: [call(1)],
    env: { MAX_JSON_DEPTH: '4' },
    origin: ok(1, '{"a":{"b":{"c":{"d":1}}}}'),
    grades: ['1 origin_error -31001'],
    answer: unavailable(1),
    dropped: [{ id: '-', reason: 'too_deep' }],
  },
  {
    name: 'D12 (OUTPUT_SCHEMA=warn): a result breaking the outputSchema is relayed, the row marked',
    forwarded: [call(1, 'counter')],
    tools: [COUNTER],
    origin: ok(1, '{"content":[],"structuredContent":{"n":"seven"}}'),
    grades: ['1 ok'],
    answer: ok(1, '{"content":[],"structuredContent":{"n":"seven"}}'),
    originBytes: true,
    row: { outputSchema: 'invalid' },
  },
  {
    name: 'D12 (OUTPUT_SCHEMA=strict): the result is withheld for an isError result naming the path',
    forwarded: [call(1, 'counter')],
    env: { OUTPUT_SCHEMA: 'strict' },
    tools: [COUNTER],
    origin: ok(1, '{"content":[],"structuredContent":{"n":"seven"}}'),
    grades: ['1 tool_error'],
    answer: ok(1, `{"content":[{"type":"text","text":${STRICT_TEXT}}],"isError":true}`),
    row: { outputSchema: 'invalid' },
  },
  {
    name: 'D12: a result matching the outputSchema is ok and unmarked',
    forwarded: [call(1, 'counter')],
    env: { OUTPUT_SCHEMA: 'strict' },
    tools: [COUNTER],
    origin: ok(1, '{"content":[],"structuredContent":{"n":7}}'),
    grades: ['1 ok'],
    answer: ok(1, '{"content":[],"structuredContent":{"n":7}}'),
    originBytes: true,
  },
]

describe('grading a JSON reply, one row per case', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_, row) => {
    const { deps, logs } = gradingDeps(row.env)
    if (row.tools) await deps.registry.learn('default', 'public', row.tools, '2025-06-18')
    const ex = exchangeWith(deps, row.forwarded)
    const res = await gradeJsonReply(jsonReply(row.origin), [], ex, new ReplyGrader(ex), row.batch ?? false)
    expect(res.status).toBe(200)
    expect(await answerText(res)).toBe(row.answer)
    expect(gradesOf(ex.rows)).toEqual(row.grades)
    expect(res.body instanceof Uint8Array).toBe(row.originBytes ?? false)
    expect(res.headers['mcp-edge-grade']).toBeDefined()
    expect(logs.filter((l) => l.msg === 'mcp.post')).toHaveLength(1)
    expect(logs[0]!.dropped).toEqual(row.dropped)
    if (row.row) expect(ex.rows[0]).toMatchObject(row.row)
    else expect(ex.rows[0]).not.toHaveProperty('outputSchema')
  })

  it.each([
    ['unchanged: the origin bytes', (pad: string) => `[${ok(2, textResult(pad))},${ok(1)}]`, (pad: string) => `[${ok(2, textResult(pad))},${ok(1)}]`, ['2 ok', '1 ok'], true],
    [
      'with a hidden failure and a missing id: rewritten',
      (pad: string) => `[${ok(2, textResult(`{"success":false,"pad":"${pad}"}`))}]`,
      (pad: string) => `[${ok(2, flagged(`{"success":false,"pad":"${pad}"}`))},${noAnswer(1)}]`,
      ['2 tool_error', '1 missing -31003'],
      false,
    ],
  ] as const)('a batch answer past 64 Ki characters (read in slices), %s', async (_, origin, answer, grades, originBytes) => {
    const pad = 'x'.repeat(70_000)
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1), call(2)])
    const res = await gradeJsonReply(jsonReply(origin(pad)), [], ex, new ReplyGrader(ex), true)
    expect(await answerText(res)).toBe(answer(pad))
    expect(gradesOf(ex.rows)).toEqual(grades)
    expect(res.body instanceof Uint8Array).toBe(originBytes)
  })

  it('merges local answers in front of the graded ones', async () => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(2)])
    const local = err(1, -32602, 'invalid arguments')
    const res = await gradeJsonReply(jsonReply(`[${ok(2)}]`), [local], ex, new ReplyGrader(ex), true)
    expect(await answerText(res)).toBe(`[${local},${ok(2)}]`)
    expect(res.body).toBeTypeOf('string')
  })

  it('MCP-Edge-Grade counts the grades of the table in a fixed order', async () => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1), call(2), call(3)])
    const res = await gradeJsonReply(jsonReply(`[${ok(3, textResult('{"success":false}'))},${ok(1)}]`), [], ex, new ReplyGrader(ex), true)
    expect(res.headers['mcp-edge-grade']).toBe('ok=1 tool_error=1 missing=1')
  })
})

describe('a refusing origin (non-2xx)', () => {
  it.each([
    ['a 4xx JSON-RPC error is relayed with its status', 404, err(null, -32001, 'Session not found'), 404, err(null, -32001, 'Session not found'), ['1 rpc_error -32001']],
    ['a 5xx JSON-RPC error goes to each open id', 503, err(null, -32603, 'down'), 200, err(1, -32603, 'down'), ['1 rpc_error -32603']],
    [
      'a body that is not JSON-RPC: -31001 with the origin status',
      502,
      '<html>bad gateway</html>',
      200,
      '{"jsonrpc":"2.0","id":1,"error":{"code":-31001,"message":"Origin unavailable or sent an invalid response","data":{"source":"edge","originStatus":502}}}',
      ['1 origin_error -31001'],
    ],
  ])('%s', async (_, status, body, answerStatus, answer, grades) => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1)])
    const res = await answerRefusedReply(jsonReply(body, status), [], ex, new ReplyGrader(ex), false)
    expect(res.status).toBe(answerStatus)
    expect(await answerText(res)).toBe(answer)
    expect(gradesOf(ex.rows)).toEqual(grades)
  })
})
