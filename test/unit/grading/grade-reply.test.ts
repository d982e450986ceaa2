/**
 * Grading one origin response (src/core/grading/grade-reply.ts; docs/design.md §6, D9-D11): what
 * counts as a JSON-RPC response, error over result, `"error": null`, hidden failures, the exact
 * bytes kept, and the `MCP-Edge-Grade` header.
 */
import { describe, expect, it } from 'vitest'
import { gradeHeader, gradeResponse, isResponse, markIsError, type ForwardedRequest, type GradeRow } from '../../../src/core/grading/grade-reply'
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

describe('markIsError', () => {
  it('sets an existing isError member or adds one, changing nothing else', () => {
    expect(markIsError('{"jsonrpc":"2.0","id":1,"result":{"isError":false,"a":1}}')).toBe('{"jsonrpc":"2.0","id":1,"result":{"isError":true,"a":1}}')
    expect(markIsError('{"jsonrpc":"2.0","id":1,"result":{}}')).toBe('{"jsonrpc":"2.0","id":1,"result":{"isError":true}}')
  })
})

describe('gradeHeader', () => {
  const row = (grade: GradeRow['grade']): GradeRow => ({ id: '1', method: 'm', grade, answeredBy: 'edge' })
  it('one row: its grade; several: counts in a fixed order', () => {
    expect(gradeHeader([row('missing')])).toBe('missing=1')
    expect(gradeHeader([row('unvalidated'), row('ok'), row('rejected'), row('ok')])).toBe('ok=2 rejected=1 unvalidated=1')
  })
})
