/**
 * The rejection message of docs/design.md §5 on both runtimes: exact text, era gating (-32602
 * with `error.data.issues` up to 2025-06-18, an `isError` result from 2025-11-25), the
 * `INVALID_ARGS` override both ways, missing and forbidden members named, enums listed, bounds
 * stated, bounded length; and the D12 output-schema check in its three modes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOOLS } from '../../packages/cli/demo/origin'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, eventually, rpc, serveMcp, toolCalls } from '../helpers/mcp-script'

const FORECAST = DEMO_TOOLS[0]
const MANY = {
  name: 'many',
  inputSchema: {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field_${i}`, { type: 'integer', description: 'A field with a long description '.repeat(8) }])),
    required: Array.from({ length: 40 }, (_, i) => `field_${i}`),
  },
}
const WEATHER_OUT = {
  name: 'weather_out',
  inputSchema: { type: 'object' },
  outputSchema: {
    type: 'object',
    properties: { temperature: { type: 'number' }, conditions: { type: 'string', enum: ['sunny', 'rain'] } },
    required: ['temperature', 'conditions'],
  },
}
const V11 = { 'mcp-protocol-version': '2025-11-25' }
const V06 = { 'mcp-protocol-version': '2025-06-18' }

/** The message of docs/design.md §5, word for word. */
const DESIGN_TEXT = [
  'Invalid arguments for tool "get_forecast":',
  '  - units: must be one of: c, f',
  '  - days: must be an integer',
  'Expected:',
  '  - units (string, optional): Temperature units. Allowed: c, f',
  '  - days (integer, optional, 1..16): Number of forecast days',
  'Fix these arguments and call the tool again.',
].join('\n')

/** The edge's classification of an invalid-arguments isError result (its correlation id is the POST's request id). */
const CLIENT_FAILURE = {
  'io.mcp-edge/failure': {
    class: 'capability',
    code: 'invalid_input',
    correlationId: expect.any(String),
    agentGuidance: "Fix the arguments to match the tool's inputSchema, then call again.",
  },
}

describe.each(RUNTIMES)('rejection messages and output schemas on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let auto: EdgeUnderTest
  let toolError: EdgeUnderTest
  let rpcError: EdgeUnderTest
  let outputAnswer: unknown = {}
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    serveMcp(origin, {
      pages: [[FORECAST, MANY, WEATHER_OUT]],
      call: (name) => (name === 'weather_out' ? outputAnswer : undefined),
    })
    ;[auto, toolError, rpcError] = await Promise.all([
      start({ ORIGIN_URL: origin.url }),
      start({ ORIGIN_URL: origin.url, INVALID_ARGS: 'tool-error', OUTPUT_SCHEMA: 'strict' }),
      start({ ORIGIN_URL: origin.url, INVALID_ARGS: 'rpc-error', OUTPUT_SCHEMA: 'off' }),
    ])
  })
  afterAll(async () => {
    await Promise.all([auto?.close(), toolError?.close(), rpcError?.close()])
    await origin?.close()
  })

  it('2025-11-25: an isError result whose text is exactly the docs/design.md §5 message', async () => {
    const r = await rpc(auto.url, call(1, 'get_forecast', { city: 'Paris', units: 'kelvin', days: 2.5 }), V11)
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: DESIGN_TEXT }], isError: true, _meta: CLIENT_FAILURE } })
  })

  it('2025-06-18: -32602 with the same text and program-readable issues in error.data', async () => {
    const r = await rpc(auto.url, call(2, 'get_forecast', { city: 'Paris', units: 'kelvin', days: 2.5 }), V06)
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32602,
        message: DESIGN_TEXT,
        data: {
          tool: 'get_forecast',
          issues: [
            { path: 'units', keyword: 'enum', expected: 'must be one of: c, f' },
            { path: 'days', keyword: 'type', expected: 'must be an integer' },
          ],
        },
      },
    })
  })

  it('the same mistake again (answers are remembered per tool and issue list) keeps each call its own id and era', async () => {
    const bad = { city: 'Paris', units: 'kelvin', days: 2.5 }
    const text = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get_forecast","arguments":${JSON.stringify(bad)}}}`
    for (let round = 0; round < 2; round++) {
      const a = await rpc(auto.url, text('12345678901234567890123'), V06)
      expect(a.text.startsWith('{"jsonrpc":"2.0","id":12345678901234567890123,"error":{"code":-32602,')).toBe(true)
      expect(a.json.error.message).toBe(DESIGN_TEXT)
      const b = await rpc(auto.url, text('"s-1"'), V11)
      expect(b.json).toEqual({ jsonrpc: '2.0', id: 's-1', result: { content: [{ type: 'text', text: DESIGN_TEXT }], isError: true, _meta: CLIENT_FAILURE } })
      // Another mistake on the same tool gets its own message, not the remembered one.
      const d = await rpc(auto.url, call(8, 'get_forecast', { city: 'Paris', days: 0 }), V06)
      expect(d.json.error.message).toContain('days: must be >= 1')
      expect(d.json.error.message).not.toContain('units')
    }
  })

  it('a tool called often answers alike before and after its validator is promoted (Node: cfworker, then ajv)', async () => {
    const answers = new Set<string>()
    // PROMOTE_AFTER (16) calls and more, a valid one among them each time.
    for (let i = 0; i < 24; i++) {
      const bad = await rpc(auto.url, call(9, 'get_forecast', { city: 'Paris', units: 'kelvin', days: 2.5 }), V06)
      answers.add(bad.text)
      const good = await rpc(auto.url, call(10, 'get_forecast', { city: 'Paris', units: 'c', days: 2 }), V06)
      expect(good.json.error).toBeUndefined()
    }
    expect([...answers]).toHaveLength(1)
    expect(JSON.parse([...answers][0]!).error.message).toBe(DESIGN_TEXT)
  })

  it('INVALID_ARGS overrides the era both ways', async () => {
    const a = await rpc(toolError.url, call(3, 'get_forecast', { city: 'Paris', days: 0 }), V06)
    expect(a.json.result).toMatchObject({ isError: true })
    expect(a.json.result.content[0].text).toContain('days: must be >= 1')
    const b = await rpc(rpcError.url, call(4, 'get_forecast', { city: 'Paris', days: 0 }), V11)
    expect(b.json.error).toMatchObject({ code: -32602, data: { issues: [{ path: 'days', keyword: 'minimum', expected: 'must be >= 1' }] } })
  })

  it('names missing required and forbidden members, states bounds, lists enums', async () => {
    const r = await rpc(auto.url, call(5, 'get_forecast', { units: 'x', days: 17, colour: 'crimson-value', 'two words%zz': 1 }), V06)
    const issues = r.json.error.data.issues as { path: string; keyword: string; expected: string }[]
    expect(issues).toEqual([
      { path: 'city', keyword: 'required', expected: 'is required' },
      { path: 'units', keyword: 'enum', expected: 'must be one of: c, f' },
      { path: 'days', keyword: 'maximum', expected: 'must be <= 16' },
      { path: 'colour', keyword: 'additionalProperties', expected: 'is not an allowed argument' },
      { path: '<unnamed member>', keyword: 'additionalProperties', expected: 'is not an allowed argument' },
    ])
    expect(r.json.error.message).toContain('  - city (string, required): City name')
    expect(r.json.error.message).toContain('  - days (integer, optional, 1..16): Number of forecast days')
    expect(r.json.error.message).not.toContain('two words')
    expect(r.json.error.message).not.toContain('crimson')
  })

  it('bounds the message: at most 8 issues described, the rest counted, at most 2000 characters', async () => {
    const r = await rpc(auto.url, call(6, 'many', {}), V11)
    const text = r.json.result.content[0].text as string
    expect(text.length).toBeLessThanOrEqual(2000)
    expect(text.match(/: is required/g)).toHaveLength(8)
    expect(text).toContain('  - and 32 more')
    expect(toolCalls(origin).filter((c) => c.name === 'many')).toEqual([])
  })

  it('OUTPUT_SCHEMA=warn (default): a non-conforming structuredContent is relayed unchanged and marked in the log', async () => {
    outputAnswer = { content: [{ type: 'text', text: '{}' }], structuredContent: { temperature: 'hot', conditions: 'snow' } }
    const r = await rpc(auto.url, call('w1', 'weather_out', {}), V11)
    expect(r.json.result).toEqual(outputAnswer)
    const row = await eventually(async () =>
      (await auto.logs()).flatMap((l) => (l.grades ?? []) as { id: string; grade: string; outputSchema?: string }[]).find((g) => g.id === '"w1"')
    )
    expect(row).toMatchObject({ grade: 'ok', outputSchema: 'invalid' })
  })

  it('OUTPUT_SCHEMA=strict: an isError result naming the violated paths, never the returned values', async () => {
    outputAnswer = { content: [{ type: 'text', text: 'SECRET-OUTPUT' }], structuredContent: { temperature: 'SECRET-OUTPUT', conditions: 'snow' } }
    const r = await rpc(toolError.url, call('s1', 'weather_out', {}), V11)
    expect(r.json.result.isError).toBe(true)
    expect(r.json.result.structuredContent).toBeUndefined()
    const text = r.json.result.content[0].text as string
    expect(text).toContain('The result of tool "weather_out" does not match its outputSchema:')
    expect(text).toContain('  - structuredContent.temperature: must be a number')
    expect(text).toContain('  - structuredContent.conditions: must be one of: sunny, rain')
    expect(r.text).not.toContain('SECRET-OUTPUT')
    // The edge's classification, its correlation id the POST's request id (docs/security.md).
    expect(r.json.result._meta).toEqual({
      'io.mcp-edge/failure': {
        class: 'capability',
        code: 'output_schema_violation',
        correlationId: expect.any(String),
        agentGuidance: 'The result was withheld because the tool broke its own output schema; do not retry as it is, tell the user.',
      },
    })
    // A declared outputSchema with no structuredContent is a violation too.
    outputAnswer = { content: [{ type: 'text', text: 'no structure' }] }
    const m = await rpc(toolError.url, call('s2', 'weather_out', {}), V11)
    expect(m.json.result.isError).toBe(true)
    expect(m.json.result.content[0].text).toContain('structuredContent: is required')
    // Conforming output and isError results pass untouched.
    for (const ok of [
      { content: [], structuredContent: { temperature: 21.5, conditions: 'sunny' } },
      { content: [{ type: 'text', text: 'tool failed' }], isError: true },
    ]) {
      outputAnswer = ok
      expect((await rpc(toolError.url, call('s3', 'weather_out', {}), V11)).json.result).toEqual(ok)
    }
  })

  it('OUTPUT_SCHEMA=off: nothing is checked', async () => {
    outputAnswer = { content: [], structuredContent: { temperature: 'hot' } }
    expect((await rpc(rpcError.url, call('f1', 'weather_out', {}), V11)).json.result).toEqual(outputAnswer)
  })
})
