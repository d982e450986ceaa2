/**
 * The pure parts of check: the valid-argument generator (every object it returns passes the
 * edge's own engines), the wrong-type variant, the stack-trace and echo detectors, and the
 * terminal-safe text of server answers.
 */
import { describe, expect, it } from 'vitest'
import { DEMO_TOOLS } from '../../packages/cli/demo/origin'
import { FIXTURE_TOOLS } from '../../packages/cli/demo/fixtures'
import { requiredNames, stringForPattern, validArguments, wrongTypeArguments } from '../../packages/cli/src/check/arguments'
import { echoes, hasStackTrace, printable, type HttpAnswer } from '../../packages/cli/src/check/reply'
import { reportSchema } from '../../packages/cli/src/check/schemas'
import { createAjvEngine, createCfworkerEngine } from '../../packages/cli/src/check/edge-rules'

const answer = (messages: unknown[], text = JSON.stringify(messages[0] ?? '')): HttpAnswer => ({
  status: 200,
  contentType: 'application/json',
  body: 'json',
  messages,
  text,
  headers: {},
  ms: 1,
})

describe('valid arguments', () => {
  it.each([...DEMO_TOOLS, ...FIXTURE_TOOLS].map((t) => [t.name, t] as const))('%s: generated arguments pass both engines', (_name, tool) => {
    const schema = reportSchema({ name: tool.name, inputSchema: tool.inputSchema }, '2025-11-25')
    const g = validArguments(tool.inputSchema, schema.validate)
    expect(g.ok).toBe(true)
    if (!g.ok) return
    for (const engine of [createAjvEngine(), createCfworkerEngine()]) expect(engine.compile(tool.inputSchema, schema.dialect!)(g.value)).toBeNull()
    for (const name of requiredNames(tool.inputSchema)) expect(g.value).toHaveProperty(name)
  })

  it('follows $ref and patterns (create_order: a customer and one line item with a valid sku)', () => {
    const order = DEMO_TOOLS.find((t) => t.name === 'create_order')!
    const g = validArguments(order.inputSchema, null)
    expect(g).toEqual({ ok: true, value: { customer: { name: 'example' }, items: [{ sku: 'AAA-000', qty: 1 }] } })
  })

  it('says why when it cannot build one, and never guesses', () => {
    const s = { type: 'object', properties: { when: { type: 'string', format: 'x-custom' } }, required: ['when'] }
    expect(validArguments(s, null)).toEqual({ ok: false, reason: 'when: format "x-custom" is not one check can produce' })
    const look = { type: 'object', properties: { p: { type: 'string', pattern: '^(?=a)b$' } }, required: ['p'] }
    expect(validArguments(look, null)).toMatchObject({ ok: false, reason: expect.stringContaining('pattern is beyond the generator') })
    const bounds = { type: 'object', properties: { n: { type: 'integer', minimum: 5, maximum: 3 } }, required: ['n'] }
    expect(validArguments(bounds, null)).toMatchObject({ ok: false })
    // an object the generator believes valid but the engine rejects is refused
    const tricky = { type: 'object', properties: { a: { type: 'string', not: { const: 'example' } } }, required: ['a'] }
    const compiled = createCfworkerEngine().compile(tricky, '2020-12')
    expect(validArguments(tricky, compiled)).toMatchObject({ ok: false, reason: expect.stringContaining('fail the schema at /a (not)') })
  })

  it.each([
    ['^[A-Z]{3}-[0-9]{3}$', 'AAA-000'],
    ['^\\d{5}(-\\d{4})?$', '00000'],
    ['^(foo|bar)+baz$', 'foobaz'],
    ['^[a-z]+@[a-z]+\\.com$', 'a@a.com'],
    ['^(?:v)?\\d+\\.\\d+$', '0.0'],
  ])('pattern %s gives %s', (pattern, expected) => {
    expect(stringForPattern(pattern)).toBe(expected)
  })

  it.each(['^(?!x).+$', '^(a)\\1$', '[^a]'])('pattern %s is beyond the generator', (pattern) => {
    expect(stringForPattern(pattern)).toBeNull()
  })
})

describe('wrong-type arguments', () => {
  it('puts the canary where the type is wrong: [canary] for a string, the canary for others; required first', () => {
    const forecast = DEMO_TOOLS.find((t) => t.name === 'get_forecast')!
    expect(wrongTypeArguments(forecast.inputSchema, { city: 'x' }, 'CANARY')).toEqual({ args: { city: ['CANARY'] }, property: 'city' })
    const n = { type: 'object', properties: { note: { type: 'string' }, n: { type: 'integer' } }, required: ['n'] }
    expect(wrongTypeArguments(n, { n: 1 }, 'CANARY')).toEqual({ args: { n: 'CANARY' }, property: 'n' })
    expect(wrongTypeArguments({ type: 'object', properties: { any: {} } }, {}, 'C')).toBeNull()
  })
})

describe('answers', () => {
  it.each([
    ['TypeError: x is undefined\n    at lookup (/srv/app/tools.js:12:19)'],
    ['Error\n    at file:///srv/app/main.mjs:3:9'],
    ['at Object.<anonymous> (C:\\app\\index.js:1:1)'],
    ['Traceback (most recent call last):\n  File "server.py", line 3, in <module>'],
    ['java.lang.NullPointerException\n\tat com.acme.Tool.run(Tool.java:42)'],
    ['panic: boom\n\ngoroutine 1 [running]:'],
  ])('finds the stack trace in %j', (message) => {
    expect(hasStackTrace(answer([{ jsonrpc: '2.0', id: 1, error: { code: -32603, message } }]))).toBe(true)
  })

  it('does not call plain error text a stack trace', () => {
    for (const message of ['Invalid arguments: days must be at most 16', 'error at line 3: unexpected token', 'look at (this)']) {
      expect(hasStackTrace(answer([{ jsonrpc: '2.0', id: 1, error: { code: -32602, message } }]))).toBe(false)
    }
  })

  it('finds an echoed canary in decoded strings and in a raw body', () => {
    expect(echoes(answer([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'got ["CAN-1"]' }] } }]), 'CAN-1')).toBe(true)
    expect(echoes({ ...answer([]), body: 'other', text: '<p>CAN-1</p>' }, 'CAN-1')).toBe(true)
    expect(echoes(answer([{ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'bad q' } }]), 'CAN-1')).toBe(false)
  })

  it('shows terminal control sequences and bidi controls in server text escaped, never raw', () => {
    expect(printable('ok\x1b[31m red\x1b[0m\u202e evil\r\nline', 80)).toBe('ok\\u001b[31m red\\u001b[0m\\u202e evil\\u000d\\u000aline')
    expect(printable('\u009b2J\u2066x\u200f\x7f', 80)).toBe('\\u009b2J\\u2066x\\u200f\\u007f')
    // A cut never splits an escape.
    expect(printable('ab\x1b[2J', 5)).toBe('ab…')
    expect(printable('x'.repeat(100), 10)).toBe('xxxxxxxxx…')
  })
})
