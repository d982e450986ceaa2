/**
 * The one mapping of a local answer to the wire (src/core/local-answer.ts): status, id and
 * response text for every kind, and the headers of the HTTP response.
 */
import { describe, expect, it } from 'vitest'
import { localResponse, toWire, type LocalAnswer } from '../../src/core/local-answer'
import { ErrorCode, NULL_ID, toRawId } from '../../src/core/jsonrpc/jsonrpc'

const id7 = toRawId(7, '7')!
const big = toRawId(12345678901234567890, '12345678901234567890')!

describe('toWire', () => {
  it.each<[string, LocalAnswer, number, string]>([
    [
      'transport 403',
      { kind: 'transport', status: 403, message: 'Forbidden: this Host is not allowed' },
      403,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: this Host is not allowed"}}',
    ],
    ['body -32700', { kind: 'body', code: ErrorCode.ParseError, message: 'Parse error: x' }, 400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: x"}}'],
    [
      'invalid with an id',
      { kind: 'invalid', id: id7, error: { code: -32600, message: 'm' }, responseShaped: false, notification: false },
      200,
      '{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"m"}}',
    ],
    [
      'invalid without an id',
      { kind: 'invalid', id: NULL_ID, error: { code: -32600, message: 'm' }, responseShaped: false, notification: false },
      400,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}',
    ],
    [
      'invalid response-shaped (id not echoed)',
      { kind: 'invalid', id: id7, error: { code: -32600, message: 'm' }, responseShaped: true, notification: false },
      400,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}',
    ],
    [
      'invalid notification',
      { kind: 'invalid', id: id7, error: { code: -32600, message: 'm' }, responseShaped: false, notification: true },
      400,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}',
    ],
    [
      'protocol -32022 keeps data',
      { kind: 'protocol', status: 400, id: big, error: { code: -32022, message: 'u', data: { supported: ['2025-03-26'] } } },
      400,
      '{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32022,"message":"u","data":{"supported":["2025-03-26"]}}}',
    ],
    [
      'call: the text as built',
      { kind: 'call', id: id7, text: '{"jsonrpc":"2.0","id":7,"result":{"isError":true}}', isError: true },
      200,
      '{"jsonrpc":"2.0","id":7,"result":{"isError":true}}',
    ],
    [
      'gateway -31002',
      { kind: 'gateway', code: ErrorCode.OriginTimeout },
      502,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-31002,"message":"Origin timeout: the tool server did not answer in time","data":{"source":"edge"}}}',
    ],
    ['fault', { kind: 'fault' }, 500, '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error in the edge"}}'],
  ])('%s', (_name, answer, status, text) => {
    const w = toWire(answer)
    expect(w.status).toBe(status)
    expect(w.text).toBe(text)
    expect(JSON.parse(w.text).id === null).toBe(w.id === NULL_ID)
  })

  it('gives the code for the grade row, none for an isError result', () => {
    expect(toWire({ kind: 'gateway', code: ErrorCode.OriginUnavailable }).code).toBe(-31001)
    expect(toWire({ kind: 'call', id: id7, text: '{}', isError: true }).code).toBeUndefined()
    expect(toWire({ kind: 'call', id: id7, text: '{}', code: -32602 }).code).toBe(-32602)
  })

  it('refuses a kind it has no row for (and the type-checker refuses it first)', () => {
    // @ts-expect-error the switch in toWire is exhaustive: an unknown kind does not type-check
    expect(() => toWire({ kind: 'other' })).toThrow(/unknown local answer/)
  })
})

describe('localResponse', () => {
  it('is JSON with the answer headers, then the caller headers', () => {
    const r = localResponse({ kind: 'transport', status: 405, message: 'Method Not Allowed', headers: { allow: 'POST' } }, { 'mcp-edge-grade': 'rejected=1' })
    expect(r.status).toBe(405)
    expect(Object.entries(r.headers)).toEqual([
      ['content-type', 'application/json'],
      ['allow', 'POST'],
      ['mcp-edge-grade', 'rejected=1'],
    ])
    expect(r.body).toBe('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Method Not Allowed"}}')
  })
})
