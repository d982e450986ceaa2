/**
 * Grading one origin response (src/core/grading/grade-reply.ts; docs/design.md §6, D9-D11): what
 * counts as a JSON-RPC response, error over result, `"error": null`, hidden failures, the exact
 * bytes kept, and the `MCP-Edge-Grade` header.
 */
import { describe, expect, it } from 'vitest'
import { gradeResponse, hidesFailure, isResponse, markIsError } from '../../../src/core/grading/grade-reply'
import type { ForwardedRequest } from '../../../src/core/grade-table'
import { toRawId } from '../../../src/core/jsonrpc/jsonrpc'

const call: ForwardedRequest = { id: toRawId(12345678901234567890, '12345678901234567890')!, method: 'tools/call', tool: 't', unvalidated: false }
const grade = (text: string, req: ForwardedRequest = call, hiddenFailures = true) => gradeResponse(JSON.parse(text), text, req, { hiddenFailures })

describe('isResponse (D9: anything else is not JSON-RPC)', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, result: {} }, true],
    [{ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'm' } }, true],
    [{ jsonrpc: '2.0', id: 1, result: 1, error: null }, true],
    [{ jsonrpc: '2.0', id: 1 }, false],
    [{ jsonrpc: '1.0', id: 1, result: {} }, false],
    [{ jsonrpc: '2.0', result: {} }, false],
    [{ jsonrpc: '2.0', id: 1, error: { message: 'no code' } }, false],
    [[{ jsonrpc: '2.0', id: 1, result: {} }], false],
  ])('%j -> %s', (msg, expected) => {
    expect(isResponse(msg)).toBe(expected)
  })
})

describe('gradeResponse', () => {
  it('a plain result is ok and its bytes are relayed as they came (no text)', () => {
    expect(grade('{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[]}}')).toEqual({ grade: 'ok' })
    expect(grade('{"jsonrpc":"2.0","id":1,"result":{}}', { ...call, unvalidated: true })).toEqual({ grade: 'unvalidated' })
  })

  it('D10: error and result together: the error wins, written as the origin wrote it, the id token kept', () => {
    const g = grade('{"jsonrpc":"2.0","id":12345678901234567890,"result":{"x":1},"error":{"code":-32000,"message":"boom","data":1.0}}')
    expect(g).toEqual({ grade: 'rpc_error', code: -32000, text: '{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32000,"message":"boom","data":1.0}}' })
  })

  it('D10: "error": null beside a result is a success, and the null member is dropped', () => {
    const g = grade('{"jsonrpc":"2.0","id":12345678901234567890,"result":{"v":1e400},"error":null}', { ...call, method: 'ping' })
    expect(g).toEqual({ grade: 'ok', text: '{"jsonrpc":"2.0","id":12345678901234567890,"result":{"v":1e400}}' })
  })

  it('SEP-1303: an isError result is a tool error, kept as it is', () => {
    expect(grade('{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}')).toEqual({ grade: 'tool_error', isError: true })
  })

  it('D11: a result hiding a failure gets isError: true, the content untouched; off with HIDDEN_FAILURES off', () => {
    const text = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"success\\": false}"}]}}'
    expect(grade(text)).toEqual({
      grade: 'tool_error',
      isError: true,
      text: '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"success\\": false}"}],"isError":true}}',
    })
    expect(grade(text, call, false)).toEqual({ grade: 'ok' })
    expect(grade('{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"status":"failed"},"content":[],"isError":false}}').text).toContain('"isError":true')
  })

  it('2026-07-28: an input_required result is never a failure', () => {
    expect(grade('{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","structuredContent":{"ok":false}}}')).toEqual({ grade: 'ok' })
  })
})

/** A tools/call result whose single text content is `text`. */
const textResult = (text: string) => ({ content: [{ type: 'text', text }] })

/**
 * The `error` member (D11, docs/grading.md): real shapes, copied from the packages' code
 * (n8n-mcp 2.87.0 dist/mcp/server.js, @modelcontextprotocol/server-slack 2025.4.25 dist/index.js),
 * written as each server writes them (n8n pretty-prints with 2 spaces, slack compactly).
 */
const ERROR_REPORTS: [string, unknown][] = [
  [
    'n8n-mcp get_template: error and tip',
    textResult(JSON.stringify({ error: 'Template 12 not found', tip: 'Use list_templates, list_node_templates or search_templates to find available templates' }, null, 2)),
  ],
  ['n8n-mcp get_workflow_patterns: error alone', textResult(JSON.stringify({ error: 'Workflow patterns not generated yet. Run: npm run mine:patterns' }, null, 2))],
  [
    'n8n-mcp validate_workflow that could not run: valid false, error, tip',
    textResult(
      JSON.stringify({ valid: false, error: 'Cannot read properties of undefined', tip: 'Ensure the workflow JSON includes nodes array and connections object' }, null, 2)
    ),
  ],
  ['server-slack catch: error alone', textResult(JSON.stringify({ error: 'Missing required argument: channel_id' }))],
  ['server-slack catch: a network failure', textResult(JSON.stringify({ error: 'fetch failed' }))],
  ['an error object with a message', textResult('{"error":{"code":404,"message":"Not Found"}}')],
  ['an error with an HTTP status', textResult('{"status":502,"error":"Bad Gateway","message":"upstream closed"}')],
  ['in structuredContent', { content: [], structuredContent: { error: 'quota exceeded', hint: 'retry tomorrow' } }],
]

/** Look-alikes that report a success (or list errors as data) and must stay ok. */
const NOT_ERROR_REPORTS: [string, unknown][] = [
  ['error: null beside data', textResult('{"error":null,"data":{"rows":[]}}')],
  ['an empty errors list', textResult('{"errors":[]}')],
  [
    'a validation that found errors (n8n validate_node: valid false, errors listed)',
    textResult(JSON.stringify({ valid: false, errors: [{ field: 'action', message: 'action is required' }] }, null, 2)),
  ],
  ['a log listing errors', textResult('{"entries":[{"level":"error","error":"disk full"},{"level":"info","message":"ok"}]}')],
  ['a record that has an error field beside its data', textResult('{"jobId":"42","state":"done","error":"retried once"}')],
  ['error: ""', textResult('{"error":"","rows":[1]}')],
  ['error: "" alone', textResult('{"error":""}')],
  ['error: "   " (blank)', textResult('{"error":"   "}')],
  ['error: false', textResult('{"error":false}')],
  ['error: {} (no message)', textResult('{"error":{}}')],
  ['error object with an empty message', textResult('{"error":{"message":""}}')],
  ['error as a number', textResult('{"error":0}')],
  ['ok: true beside an error text (the explicit success wins)', textResult('{"ok":true,"error":"warning only"}')],
  ['status 200 beside an error text', textResult('{"status":200,"error":"none"}')],
  ['an error report one level down (only the top level counts)', textResult('{"data":{"error":"x"}}')],
  ['an array of error reports', textResult('[{"error":"x"}]')],
  ['prose that starts like JSON', textResult('{error: not json}')],
  [
    'two text blocks',
    {
      content: [
        { type: 'text', text: '{"error":"x"}' },
        { type: 'text', text: 'more' },
      ],
    },
  ],
]

describe('D11, the error member: an error report with no result beside it is a hidden failure', () => {
  it.each(ERROR_REPORTS)('flagged: %s', (_label, result) => {
    expect(hidesFailure(result as Record<string, unknown>)).toBe(true)
  })
  it.each(NOT_ERROR_REPORTS)('not flagged: %s', (_label, result) => {
    expect(hidesFailure(result as Record<string, unknown>)).toBe(false)
  })
  it('the flag is added to the response text, every content byte kept', () => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: 7, result: ERROR_REPORTS[0]![1] })
    const g = grade(text)
    expect(g.grade).toBe('tool_error')
    expect(g.text).toBe(text.slice(0, -2) + ',"isError":true}}')
  })
})

describe('markIsError', () => {
  it('sets an existing isError member or adds one, changing nothing else', () => {
    expect(markIsError('{"jsonrpc":"2.0","id":1,"result":{"isError":false,"a":1}}')).toBe('{"jsonrpc":"2.0","id":1,"result":{"isError":true,"a":1}}')
    expect(markIsError('{"jsonrpc":"2.0","id":1,"result":{}}')).toBe('{"jsonrpc":"2.0","id":1,"result":{"isError":true}}')
  })
})
