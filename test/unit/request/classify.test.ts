/**
 * Classification of one message (src/core/request/classify.ts; JSON-RPC 2.0 §4-§5, MCP basic
 * "Messages"; docs/design.md D1, D3-D6, D15), and the local answer each invalid one maps to.
 */
import { describe, expect, it } from 'vitest'
import { classify } from '../../../src/core/request/classify'
import { parseBody } from '../../../src/core/request/parse-body'
import { toWire } from '../../../src/core/local-answer'

/** Classifies a single-message body given as text (so id tokens stay exact). */
function one(text: string) {
  const p = parseBody(text)
  if (p.kind !== 'single') throw new Error(p.kind)
  return classify(p.item, p.text)
}

/** The wire answer of an invalid message: status, code and the id token. */
function answer(text: string) {
  const c = one(text)
  if (c.kind !== 'invalid') throw new Error(`not invalid: ${c.kind}`)
  const w = toWire(c)
  return { status: w.status, code: c.error.code, id: w.id.raw, notification: c.notification }
}

describe('valid messages', () => {
  it('a request keeps its exact id token and source text', () => {
    const text = '{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"x"}}'
    const c = one(text)
    expect(c.kind).toBe('request')
    if (c.kind !== 'request') return
    expect(c.id.raw).toBe('12345678901234567890')
    expect(c.text).toBe(text)
  })
  it('string 1 and number 1 are different ids', () => {
    const a = one('{"jsonrpc":"2.0","id":"1","method":"ping"}')
    const b = one('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    expect(a.kind === 'request' && b.kind === 'request' && a.id.key !== b.id.key).toBe(true)
  })
  it('an unknown method without an id is a notification (forwarded)', () => {
    expect(one('{"jsonrpc":"2.0","method":"x/custom"}').kind).toBe('notification')
  })
  it('a client response: result or error without method', () => {
    expect(one('{"jsonrpc":"2.0","id":3,"result":{}}').kind).toBe('response')
    expect(one('{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}').kind).toBe('response')
  })
})

describe('invalid messages and their answers', () => {
  it.each([
    ['not an object', '7', { status: 400, code: -32600, id: 'null' }],
    ['method missing, id echoed (D1)', '{"jsonrpc":"2.0","id":4}', { status: 200, code: -32600, id: '4' }],
    ['jsonrpc not "2.0"', '{"jsonrpc":"1.0","id":"a","method":"ping"}', { status: 200, code: -32600, id: '"a"' }],
    ['a duplicate member name (vector 61)', '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}', { status: 200, code: -32600, id: '1' }],
    ['an id that is not a string or integer', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', { status: 400, code: -32600, id: 'null' }],
    ['params not an object', '{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}', { status: 200, code: -32600, id: '2' }],
    ['reserved rpc.* with an id: -32601 (D6)', '{"jsonrpc":"2.0","id":9,"method":"rpc.discover"}', { status: 200, code: -32601, id: '9' }],
    ['both result and error', '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', { status: 400, code: -32600, id: 'null' }],
  ])('%s', (_name, text, expected) => {
    expect(answer(text)).toMatchObject(expected)
  })

  it('D5: a request method without an id is refused, never forwarded, answered with id null', () => {
    expect(answer('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}')).toEqual({ status: 400, code: -32600, id: 'null', notification: true })
  })
  it('D15: a notification with params that are not an object is MCP-invalid', () => {
    expect(answer('{"jsonrpc":"2.0","method":"notifications/progress","params":"x"}')).toMatchObject({ status: 400, notification: true })
  })
})

describe('variants of MCP request methods', () => {
  it('a case/NFKC/whitespace variant of a request method is never forwarded: -32601 with an id, -32600 (D5) without', () => {
    expect(answer('{"jsonrpc":"2.0","id":1,"method":"TOOLS/CALL","params":{"name":"x"}}')).toEqual({ status: 200, code: -32601, id: '1', notification: false })
    expect(answer('{"jsonrpc":"2.0","id":2,"method":" tools/call"}')).toMatchObject({ code: -32601, id: '2' })
    expect(answer('{"jsonrpc":"2.0","method":"Tools/Call","params":{"name":"x"}}')).toEqual({ status: 400, code: -32600, id: 'null', notification: true })
    expect(answer('{"jsonrpc":"2.0","method":"ｔools/list"}')).toMatchObject({ code: -32600, notification: true })
  })

  it('a method too long to fold (past 1024 characters, not plain ASCII) is not forwarded either', () => {
    expect(answer(`{"jsonrpc":"2.0","id":4,"method":"${' '.repeat(1100)}tools/call"}`)).toMatchObject({ code: -32601, id: '4' })
    expect(one(`{"jsonrpc":"2.0","method":"${'x'.repeat(2000)}"}`).kind).toBe('notification')
  })

  it('unknown methods, and notifications, stay what they were (vectors 6, 21)', () => {
    expect(one('{"jsonrpc":"2.0","method":"foobar"}').kind).toBe('notification')
    expect(one('{"jsonrpc":"2.0","method":"Notifications/Initialized"}').kind).toBe('notification')
    expect(one('{"jsonrpc":"2.0","id":3,"method":"Foo/Bar"}').kind).toBe('request')
  })
})
