/**
 * The per-id bookkeeping of one origin reply (src/core/grading/reply-grader.ts; docs/design.md §6,
 * D9): what each message returns (the text to relay, or null when dropped) and what the ids still
 * open get when the reply stops, by the reason it stopped. One row per case, on fake-deps.ts.
 */
import { describe, expect, it, vi } from 'vitest'
import { ReplyGrader } from '../../../src/core/grading/reply-grader'
import { exchangeWith, gradesOf, gradingDeps, type Forwarded } from './fake-deps'

const call = (id: number | string): Forwarded => ({ id, method: 'tools/call', tool: 't' })
const ok = (id: number | string) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[]}}`
const gateway = (id: number, code: number, message: string, extra = '') =>
  `{"jsonrpc":"2.0","id":${id},"error":{"code":${code},"message":"${message}","data":{"source":"edge"${extra}}}}`

describe('each message of a reply', () => {
  it.each([
    ['a response to an open id: its text', [call(1)], [ok(1)], [ok(1)], ['1 ok']],
    ['string id 1 and number id 1 are different ids', [call('1')], [ok(1), ok('1')], [null, ok('1')], ['"1" ok']],
    ['a repeat of an answered id: null', [call(1)], [ok(1), ok(1)], [ok(1), null], ['1 ok']],
    ['an id never forwarded: null', [call(1)], [ok(2)], [null], []],
    ['not JSON-RPC (no jsonrpc member): null', [call(1)], ['{"id":1,"result":{}}'], [null], []],
    ['an error without a numeric code is not a response: null', [call(1)], ['{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}'], [null], []],
    [
      'an id past 2^53 keeps its digits',
      [{ id: Number('12345678901234567890'), rawId: '12345678901234567890', method: 'ping' }],
      ['{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}'],
      ['{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}'],
      ['12345678901234567890 ok'],
    ],
  ] as const)('%s', (_, forwarded, messages, out, grades) => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, forwarded)
    const g = new ReplyGrader(ex)
    expect(messages.map((m) => g.message(JSON.parse(m), m))).toEqual(out)
    expect(gradesOf(ex.rows)).toEqual(grades)
  })

  it('done once every forwarded id has its answer', () => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1), call(2)])
    const g = new ReplyGrader(ex)
    void g.message(JSON.parse(ok(1)), ok(1))
    expect(g.done).toBe(false)
    void g.message(JSON.parse(ok(2)), ok(2))
    expect(g.done).toBe(true)
  })
})

describe('tools/list answers', () => {
  it('are learned on the way through, once per distinct list in a reply', async () => {
    const { deps, deferred } = gradingDeps()
    const ex = exchangeWith(deps, [
      { id: 1, method: 'tools/list' },
      { id: 2, method: 'tools/list' },
      { id: 3, method: 'tools/list' },
    ])
    const learn = vi.spyOn(deps.registry, 'learn')
    const g = new ReplyGrader(ex)
    const list = (id: number, name: string) => `{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"${name}","inputSchema":{"type":"object"}}]}}`
    for (const m of [list(1, 'a'), list(2, 'a'), list(3, 'b')]) expect(await g.message(JSON.parse(m), m)).toBe(m)
    expect(learn.mock.calls.map((c) => (c[2] as { name: string }[]).map((t) => t.name))).toEqual([['a'], ['b']])
    await Promise.all(deferred)
    expect(deps.registry.peek('default', 'public', 'a')).not.toBeNull()
    expect(deps.registry.peek('default', 'public', 'b')).not.toBeNull()
    expect(gradesOf(ex.rows)).toEqual(['1 ok', '2 ok', '3 ok'])
  })
})

describe('closing the reply: what the open ids get', () => {
  const unavailable = gateway(1, -31001, 'Origin unavailable or sent an invalid response')
  it.each([
    ['the reply ended: -31003 missing', 'end', false, [gateway(1, -31003, 'Origin never answered this request')], ['1 missing -31003']],
    ['the reply ended after a message that was not JSON-RPC: -31001', 'end', true, [unavailable], ['1 origin_error -31001']],
    ['the reply was invalid: -31001', 'invalid', false, [unavailable], ['1 origin_error -31001']],
    ['the stream failed: -31001', 'error', false, [unavailable], ['1 origin_error -31001']],
    ['ORIGIN_TIMEOUT_MS passed: -31002', 'timeout', false, [gateway(1, -31002, 'Origin timeout: the tool server did not answer in time')], ['1 origin_error -31002']],
    ['the client cancelled: rows written, no text', 'cancel', false, [], ['1 missing -31003']],
  ] as const)('%s', (_, reason, sawInvalid, texts, grades) => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1)])
    const g = new ReplyGrader(ex)
    if (sawInvalid) g.invalid()
    expect(g.close(reason)).toEqual(texts)
    expect(gradesOf(ex.rows)).toEqual(grades)
    expect(ex.rows[0]!.answeredBy).toBe('edge')
    expect(g.close('end')).toEqual([])
  })

  it('the origin status is carried in a -31001 after a refusing reply', () => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1)])
    expect(new ReplyGrader(ex).close('invalid', 502)).toEqual([gateway(1, -31001, 'Origin unavailable or sent an invalid response', ',"originStatus":502')])
  })

  it('an id-less error is given to each open id at the close, under its id', () => {
    const { deps } = gradingDeps()
    const ex = exchangeWith(deps, [call(1), call(2)])
    const g = new ReplyGrader(ex)
    const orphan = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}'
    expect(g.message(JSON.parse(orphan), orphan)).toBeNull()
    expect(g.close('end')).toEqual(['{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad"}}', '{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"bad"}}'])
    expect(ex.rows.map((r) => r.answeredBy)).toEqual(['origin', 'origin'])
  })
})

describe('the reply chain on the grader path', () => {
  const TOKEN = 'ghp_' + 'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5'

  it('a result beside "error": null is a success (D10), so the result checks judge it too', () => {
    const { deps } = gradingDeps({ RESULT_SECRETS: 'redact' })
    const ex = exchangeWith(deps, [call(1)])
    const text = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"key ${TOKEN}"}]},"error":null}`
    expect(new ReplyGrader(ex).message(JSON.parse(text), text)).toBe('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"key [REDACTED:github_token]"}]}}')
    expect(gradesOf(ex.rows)).toEqual(['1 ok'])
  })

  it('grading judges the changed bytes: a redacted hidden failure is still marked isError, the redaction kept', () => {
    const { deps } = gradingDeps({ RESULT_SECRETS: 'redact' })
    const ex = exchangeWith(deps, [call(1)])
    const text = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"success\\":false,\\"token\\":\\"${TOKEN}\\"}"}]}}`
    const out = new ReplyGrader(ex).message(JSON.parse(text), text) as string
    expect(out).not.toContain(TOKEN)
    expect(JSON.parse(out).result.isError).toBe(true)
    expect(gradesOf(ex.rows)).toEqual(['1 tool_error'])
  })
})
