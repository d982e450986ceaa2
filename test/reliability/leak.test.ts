/**
 * Leak test on both runtimes: every rejected argument in the table below carries a canary string
 * (and one a canary number), in every position a caller can put a value: too long, wrong format,
 * not in an enum, failing a pattern, wrong type, wrong const, under `not`, inside arrays and nested
 * objects, as the value of a forbidden member, as a forbidden member name that is not a field
 * name, matching two `oneOf` branches, `arguments` sent as a JSON string, arguments of an unknown
 * tool, a body that is not JSON, and a 2025-03-26 batch. Each is sent in the -32602 era
 * (2025-06-18) and the isError era (2025-11-25). No byte of any response (body or header) or of
 * any log line may contain a canary, and the origin must receive none of these calls. The newer
 * log lines (registry events, readiness, request ids, a pull for a caller whose Authorization is a
 * canary, a schema whose remote $ref names one) hold no canary and no scope digest either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, serveMcp, toolCalls } from '../helpers/mcp-script'
import { toolKey } from '../../src/core/validation/tool-store'

const PROFILE = {
  name: 'profile',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 10, description: 'Display name' },
      email: { type: 'string', format: 'email' },
      role: { type: 'string', enum: ['admin', 'user'] },
      pin: { type: 'string', pattern: '^[0-9]{4}$' },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      tags: { type: 'array', items: { type: 'string', maxLength: 5 }, maxItems: 2 },
      kind: { const: 'person' },
      token: { not: { type: 'string' } },
      address: { type: 'object', properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } }, additionalProperties: false },
    },
    required: ['name'],
    additionalProperties: false,
  },
}
const CHOICE = {
  name: 'choice',
  inputSchema: {
    type: 'object',
    oneOf: [
      { properties: { id: { type: 'string' } }, required: ['id'] },
      { properties: { label: { type: 'string' } }, required: ['label'] },
    ],
  },
}

const C = (n: number) => `CANARY-${n}-s3cr3t-value`
/** Rejected calls: `[label, body text]`. */
const CASES: [string, string][] = [
  ['too long', JSON.stringify(call(1, 'profile', { name: C(1) }))],
  ['format', JSON.stringify(call(2, 'profile', { name: 'ok', email: C(2) }))],
  ['enum', JSON.stringify(call(3, 'profile', { name: 'ok', role: C(3) }))],
  ['pattern', JSON.stringify(call(4, 'profile', { name: 'ok', pin: C(4) }))],
  ['type', JSON.stringify(call(5, 'profile', { name: 'ok', age: C(5) }))],
  ['array items', JSON.stringify(call(6, 'profile', { name: 'ok', tags: [C(6), { deep: C(61) }, C(62)] }))],
  ['const', JSON.stringify(call(7, 'profile', { name: 'ok', kind: C(7) }))],
  ['not', JSON.stringify(call(8, 'profile', { name: 'ok', token: C(8) }))],
  ['forbidden member value', JSON.stringify(call(9, 'profile', { name: 'ok', extra: C(9) }))],
  ['forbidden member name', JSON.stringify(call(10, 'profile', { name: 'ok', [`${C(10)} as a key!`]: 1 }))],
  ['nested forbidden member', JSON.stringify(call(11, 'profile', { name: 'ok', address: { zip: C(11), [`${C(111)}=`]: C(112) } }))],
  ['oneOf', JSON.stringify(call(12, 'choice', { id: C(12), label: C(121) }))],
  ['canary number', '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"profile","arguments":{"name":"ok","age":98765432123456789}}}'],
  ['arguments as a JSON string', JSON.stringify(call(14, 'profile', JSON.stringify({ password: C(14) })))],
  ['unknown tool', JSON.stringify(call(15, 'no_such_tool', { secret: C(15) }))],
  ['missing name', JSON.stringify({ jsonrpc: '2.0', id: 16, method: 'tools/call', params: { arguments: { secret: C(16) } } })],
  ['not JSON', `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"profile","arguments":{"name": ${C(17)}}}}`],
]
const BATCH = JSON.stringify([call(20, 'profile', { name: C(20) }), call(21, 'profile', { name: 'ok', role: C(21) }), call(22, 'choice', { id: C(22), label: C(221) })])
const CANARY_PATTERNS = ['CANARY', 's3cr3t', '98765432123456789', '9876543212345678']

function leaks(text: string): string[] {
  return CANARY_PATTERNS.filter((c) => text.includes(c))
}

describe.each(RUNTIMES)('no canary leaves the edge on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    serveMcp(origin, { pages: [[PROFILE, CHOICE]] })
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  for (const era of ['2025-06-18', '2025-11-25']) {
    it(`rejects every canary call (${era}) without echoing it, in body or headers`, async () => {
      for (const [label, body] of CASES) {
        const res = await fetch(edge.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': era },
          body,
        })
        const text = await res.text()
        const headerText = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n')
        expect(leaks(text + headerText), `${label}: ${text}`).toEqual([])
        // Each is refused with a message the caller can act on.
        const msg = JSON.parse(text) as { error?: { code: number; message: string }; result?: { isError: boolean; content: { text: string }[] } }
        expect(msg.error?.code ?? (msg.result?.isError ? 'isError' : 'accepted'), label).not.toBe('accepted')
      }
    })
  }

  it('rejects a 2025-03-26 batch of canary calls per id without echoing them', async () => {
    const res = await fetch(edge.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: BATCH })
    const text = await res.text()
    expect(leaks(text)).toEqual([])
    const answers = JSON.parse(text) as { id: number; error?: { code: number } }[]
    expect(answers.map((a) => [a.id, a.error?.code]).sort()).toEqual([
      [20, -32602],
      [21, -32602],
      [22, -32602],
    ])
  })

  it('the newer lines hold no canary either: registry events, readiness, request ids, an Authorization canary', async () => {
    // A tool-list pull made for a caller whose Authorization is a canary (it carries that header
    // to the origin): the registry.refresh line names the scope it stored into, never the header or its digest.
    const auth = { authorization: `Bearer ${C(900)}` }
    const unknown = await fetch(edge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...auth },
      body: JSON.stringify(call(900, 'no_such_tool_either', { secret: C(901) })),
    })
    expect(leaks(await unknown.text())).toEqual([])
    // A schema the edge cannot use, whose remote $ref names a canary: the registry.schema_unusable line gives a reason, not the schema.
    await edge.kvPut(
      toolKey('default', 'public', 'canary_ref'),
      JSON.stringify({ name: 'canary_ref', inputSchema: { $ref: `https://${C(902)}.example/s.json` }, dialect: '2020-12', hash: '0' })
    )
    const unusable = await fetch(edge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify(call(903, 'canary_ref', { pin: 'abc' })),
    })
    expect(leaks(await unusable.text())).toEqual([])
    expect((await fetch(new URL('/readyz', edge.url))).status).toBe(200)
    const logs = await edge.logs({ msg: 'mcp.post', where: (r) => ((r.grades ?? []) as { id: string }[]).some((g) => g.id === '903') })
    // The canary caller's own pull (its scope is new to the rate limit): a second registry.refresh line.
    expect(logs.filter((l) => l.msg === 'registry.refresh').length).toBeGreaterThanOrEqual(2)
    expect(logs.some((l) => l.msg === 'registry.schema_unusable' && l.tool === 'canary_ref')).toBe(true)
    expect(logs.some((l) => l.msg === 'edge.readiness')).toBe(true)
    for (const line of logs) {
      expect(leaks(JSON.stringify(line)), JSON.stringify(line)).toEqual([])
      expect(JSON.stringify(line)).not.toMatch(/u-[0-9a-f]{64}/)
      expect(typeof line.level).toBe('string')
    }
  })

  it('wrote no canary into any log line, and the origin received none of the calls', async () => {
    const logs = await edge.logs({ msg: 'mcp.post', atLeast: CASES.length * 2 + 1 })
    expect(logs.filter((l) => l.msg === 'mcp.post').length).toBeGreaterThanOrEqual(CASES.length * 2 + 1)
    for (const line of logs) expect(leaks(JSON.stringify(line)), JSON.stringify(line)).toEqual([])
    // The one forwarded call is canary_ref's (its schema cannot be used, so it went unvalidated), with canary-free arguments.
    expect(toolCalls(origin).map((c) => c.name)).toEqual(['canary_ref'])
    expect(leaks(origin.received.map((r) => r.body).join('\n'))).toEqual([])
  })
})
