/**
 * Bounded validation cost: the schemas and calls a hostile probe used to hold the event loop for
 * seconds, each with its reproducer, on the Node entry (tiered cfworker -> ajv) and the built
 * Worker in workerd (cfworker), against a real scripted HTTP origin.
 *
 * Structure (robust on a busy machine): each attack is sized so that the unbounded engines took
 * 10 s or more for it (the backtracking patterns double per character; the quadratic uniqueItems
 * grows with the square), and a second client's call is sent while the attack is in flight. Both
 * must be answered within {@link GENEROUS_MS}, a bound 2.5x or more below what the old code needed
 * and 10x above what the bounded code took on this 2-core machine under a load average of 17. The per-call validation figures
 * against the 50 ms bound are measured in process, in the unit tier (test/unit/validation/validation-cost.test.ts).
 *
 * Cases, with what the unbounded code did:
 * - `pattern: "^(\\w|\\d)*$"` (passed safe-regex2) and 29 digits + `!`: about 16 s (986 ms at 25);
 * - `pattern: "^(a|a)*$"` and 26 `a` + `!`: about 13 s (53.9 s at 28); it is usable now (linear time);
 * - `uniqueItems` over 10,000 objects (14.5 s) and over 30,000 strings (about 17 s; 7.7 s at 20,000);
 * - `anyOf` of two `$ref`s nested 22 levels (1.6 s at 20, doubling per level), `required` with
 *   100,000 names (2.4 s per call), an `enum` of 200,000 values (0.7 s per wrong call), and the
 *   `$ref` loops (`{"$ref":"#"}`, a -> b -> a): now refused at ingest, named in the admin PUT's
 *   `unusable` list and in one `registry.schema_unusable` log line; their calls are forwarded
 *   graded `unvalidated` (D8), or answered -32603 with `ON_SCHEMA_ERROR=reject`.
 * - past the per-call validation budget (`VALIDATION_BUDGET_MS`, default 50; the second edge keeps
 *   the default, the first runs the attacks above with a budget above them): a 3.5 MB string
 *   against one pattern (about 300 ms of re2js), `allOf` of 64 `maxLength` over 1 MB (1.2 s at
 *   4 MiB before): answered at once as invalid arguments, never validated nor forwarded.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { serveMcp } from '../helpers/mcp-script'
import { ADMIN_TOKEN, mcpHeaders, post, postLogs, type LoggedGrade } from '../helpers/grading'

/** Both the attack and the concurrent call must be answered within this (the old code: 10 s and more). */
const GENEROUS_MS = 5_000

const call = (id: number | string, name: string, args: unknown = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

/** `anyOf` of two `$ref`s to the next level, `levels` deep: 3 written nodes per level, 2^levels evaluations. */
function refFanOut(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {}
  for (let i = 0; i < levels; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }
  defs[`d${levels}`] = { type: 'string', minLength: 1000 }
  return { type: 'object', properties: { v: { $ref: '#/$defs/d0' } }, $defs: defs }
}

const object = (properties: Record<string, unknown>) => ({ type: 'object', properties })

/** The tools of the probe, pushed with one admin PUT. */
const TOOLS = [
  { name: 'cheap', inputSchema: object({ n: { type: 'integer' } }) },
  { name: 'word_digits', inputSchema: object({ s: { type: 'string', pattern: '^(\\w|\\d)*$' } }) },
  { name: 'a_or_a', inputSchema: object({ s: { type: 'string', pattern: '^(a|a)*$' } }) },
  { name: 'unique_objects', inputSchema: object({ list: { type: 'array', uniqueItems: true } }) },
  { name: 'unique_strings', inputSchema: object({ list: { type: 'array', items: { type: 'string' }, uniqueItems: true } }) },
  { name: 'ref_fan_out', inputSchema: refFanOut(22) },
  { name: 'many_required', inputSchema: { type: 'object', required: Array.from({ length: 100_000 }, (_, i) => `p${i}`) } },
  { name: 'huge_enum', inputSchema: object({ v: { enum: Array.from({ length: 200_000 }, (_, i) => `v${i}`) } }) },
  { name: 'ref_root', inputSchema: { $ref: '#' } },
  { name: 'ref_loop', inputSchema: { $defs: { a: { $ref: '#/$defs/b' }, b: { allOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' } },
  { name: 'backreference', inputSchema: object({ s: { type: 'string', pattern: '^(a+)\\1$' } }) },
  { name: 'one_pattern', inputSchema: object({ s: { type: 'string', pattern: '^[a-z]*$' } }) },
  { name: 'large_pattern', inputSchema: object({ s: { type: 'string', pattern: '[ab]*a[ab]{999}c' } }) },
  { name: 'tiny_multiple', inputSchema: object({ l: { type: 'array', items: { multipleOf: 5e-324 } } }) },
  { name: 'many_max_length', inputSchema: object({ s: { allOf: Array.from({ length: 64 }, () => ({ maxLength: 1e9 })) } }) },
]
const REFUSED = ['ref_fan_out', 'many_required', 'huge_enum', 'ref_root', 'ref_loop', 'backreference']

async function putTools(edge: EdgeUnderTest): Promise<{ status: number; body: { stored: string[]; unusable?: { index: number; name: string; problem: string }[] } }> {
  const res = await fetch(new URL('/admin/tools/default', new URL(edge.url)), {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tools: TOOLS, protocolVersion: '2025-06-18' }),
  })
  return { status: res.status, body: (await res.json()) as never }
}

/**
 * Sends `attack`, then (once it is on its way) another client's cheap call, and returns both
 * answers with the time each took. The cheap call is refused locally (-32602), so no origin
 * latency is in its figure.
 */
async function withConcurrentCall(edge: EdgeUnderTest, attack: string, otherEdge = edge) {
  const t0 = performance.now()
  const slow = post(edge, attack).then((r) => ({ ...r, ms: performance.now() - t0 }))
  await new Promise((r) => setTimeout(r, 20))
  const t1 = performance.now()
  const other = post(otherEdge, call('other', 'cheap', { n: 'not an integer' })).then((r) => ({ ...r, ms: performance.now() - t1 }))
  const [a, b] = await Promise.all([slow, other])
  expect(JSON.parse(b.text)).toMatchObject({ id: 'other', error: { code: -32602 } })
  expect(a.ms).toBeLessThan(GENEROUS_MS)
  expect(b.ms).toBeLessThan(GENEROUS_MS)
  return { attack: a, other: b }
}

describe.each(RUNTIMES)('bounded validation cost on $name', ({ name, start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let rejectEdge: EdgeUnderTest
  let put: Awaited<ReturnType<typeof putTools>>
  const figures: string[] = []
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    ;[edge, rejectEdge] = await Promise.all([
      // A budget above these attacks: what they test here is that the engines run in linear time.
      start({ ORIGIN_URL: origin.url, ADMIN_TOKEN, REFRESH_MIN_INTERVAL_MS: '60000', VALIDATION_BUDGET_MS: '10000' }),
      start({ ORIGIN_URL: origin.url, ADMIN_TOKEN, REFRESH_MIN_INTERVAL_MS: '60000', ON_SCHEMA_ERROR: 'reject' }),
    ])
    serveMcp(origin, { pages: [TOOLS.map((t) => ({ name: t.name, inputSchema: { type: 'object' } }))] })
    put = await putTools(edge)
    expect((await putTools(rejectEdge)).status).toBe(200)
  })
  afterAll(async () => {
    // The figures of this run (the other call's wait while each attack was validated).
    console.log(`[validation-cost ${name}] ${figures.join('; ')}`)
    await Promise.all([edge?.close(), rejectEdge?.close()])
    await origin?.close()
  })
  beforeEach(() => serveMcp(origin, { pages: [TOOLS.map((t) => ({ name: t.name, inputSchema: { type: 'object' } }))] }))

  it('a pattern that backtracks exponentially (^(\\w|\\d)*$, 29 digits + "!") is judged at once, while another call is answered', async () => {
    const { attack, other } = await withConcurrentCall(edge, call(1, 'word_digits', { s: '1'.repeat(29) + '!' }))
    expect(JSON.parse(attack.text)).toMatchObject({ id: 1, error: { code: -32602 } })
    figures.push(`word_digits ${attack.ms.toFixed(0)}/${other.ms.toFixed(0)} ms`)
    // Same verdicts as ECMAScript's for the strings it can still run.
    expect(JSON.parse((await post(edge, call(2, 'word_digits', { s: 'abc123' }))).text)).toMatchObject({ id: 2, result: {} })
  })

  it('^(a|a)*$ is usable (no unusable entry: it runs in linear time); 26 "a" + "!" is judged at once, while another call is answered', async () => {
    expect(put.status).toBe(200)
    expect((put.body.unusable ?? []).map((u) => u.name)).not.toContain('a_or_a')
    const { attack, other } = await withConcurrentCall(edge, call(3, 'a_or_a', { s: 'a'.repeat(26) + '!' }))
    expect(JSON.parse(attack.text)).toMatchObject({ id: 3, error: { code: -32602 } })
    figures.push(`a_or_a ${attack.ms.toFixed(0)}/${other.ms.toFixed(0)} ms`)
  })

  it('uniqueItems over 10,000 objects and over 30,000 strings is checked in linear time, while another call is answered', async () => {
    const objects = Array.from({ length: 10_000 }, (_, i) => ({ id: i, tag: 't' }))
    const o = await withConcurrentCall(edge, call(4, 'unique_objects', { list: objects }))
    expect(JSON.parse(o.attack.text)).toMatchObject({ id: 4, result: {} }) // distinct: forwarded
    // JSON Schema equality: member order does not matter, 1 and 1.0 are one number.
    const dup = await post(edge, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"unique_objects","arguments":{"list":[{"a":1.0,"b":2},{"b":2,"a":1}]}}}`)
    expect(JSON.parse(dup.text)).toMatchObject({ id: 5, error: { code: -32602 } })
    const strings = Array.from({ length: 30_000 }, (_, i) => `s${i}`)
    const s = await withConcurrentCall(edge, call(6, 'unique_strings', { list: [...strings, 's7'] }))
    expect(JSON.parse(s.attack.text)).toMatchObject({ id: 6, error: { code: -32602 } }) // one duplicate
    figures.push(`unique_objects ${o.attack.ms.toFixed(0)}/${o.other.ms.toFixed(0)} ms`, `unique_strings ${s.attack.ms.toFixed(0)}/${s.other.ms.toFixed(0)} ms`)
  })

  it('schemas past the cost bounds ($ref fan-out, required, enum, $ref loops, a backreference) are named in the PUT answer and in one log line each', async () => {
    expect(put.status).toBe(200)
    expect(put.body.stored).toEqual(TOOLS.map((t) => t.name))
    const unusable = new Map((put.body.unusable ?? []).map((u) => [u.name, u.problem]))
    expect([...unusable.keys()].sort()).toEqual([...REFUSED].sort())
    expect(unusable.get('ref_fan_out')).toMatch(/applies more than 4096 subschemas to one value once its \$refs are followed/)
    expect(unusable.get('many_required')).toMatch(/requires more than 1024 properties/)
    expect(unusable.get('huge_enum')).toMatch(/enum of more than 4096 values/)
    expect(unusable.get('ref_root')).toMatch(/\$ref loop/)
    expect(unusable.get('ref_loop')).toMatch(/\$ref loop/)
    expect(unusable.get('backreference')).toMatch(/backreference/)
    // One log line per refused schema, with the tool and the reason.
    const logged = async () => (await edge.logs()).filter((l) => l.msg === 'registry.schema_unusable')
    await expect.poll(async () => new Set((await logged()).map((l) => l.tool)).size, { timeout: 5_000 }).toBe(REFUSED.length)
    for (const tool of REFUSED) {
      const lines = (await logged()).filter((l) => l.tool === tool)
      expect(lines).toHaveLength(1)
      expect(lines[0]!.reason).toBe(unusable.get(tool))
    }
  })

  it('calls to those tools are forwarded graded unvalidated (D8) at once, while another call is answered', async () => {
    const args: Record<string, unknown> = {
      ref_fan_out: { v: 'x' },
      many_required: {},
      huge_enum: { v: 'nope' },
      ref_root: { a: 1 },
      ref_loop: { a: 1 },
      backreference: { s: 'aa' },
    }
    for (const [i, tool] of REFUSED.entries()) {
      const { attack, other } = await withConcurrentCall(edge, call(10 + i, tool, args[tool]))
      expect(JSON.parse(attack.text)).toMatchObject({ id: 10 + i, result: {} })
      const grade = async () => (await postLogs(edge)).flatMap((l) => (l.grades ?? []) as LoggedGrade[]).find((g) => String(g.id).replace(/"/g, '') === String(10 + i))?.grade
      await expect.poll(grade, { timeout: 5_000 }).toBe('unvalidated')
      figures.push(`${tool} ${attack.ms.toFixed(0)}/${other.ms.toFixed(0)} ms`)
    }
  })

  it('with ON_SCHEMA_ERROR=reject those calls get -32603 naming the tool and the reason, and nothing is forwarded', async () => {
    origin.reset()
    serveMcp(origin, { pages: [TOOLS.map((t) => ({ name: t.name, inputSchema: { type: 'object' } }))] })
    for (const [i, tool] of REFUSED.entries()) {
      const r = await post(rejectEdge, call(30 + i, tool, {}))
      const body = JSON.parse(r.text)
      expect(body).toMatchObject({ id: 30 + i, error: { code: -32603, data: { source: 'edge', tool } } })
      expect(body.error.message).toMatch(new RegExp(`^Cannot validate tool "${tool}": its inputSchema `))
    }
    expect(origin.forwarded().filter((f) => f.body.includes('tools/call'))).toHaveLength(0)
  })

  it('a pattern of 1,005 instructions against 40 KB and 170,000 x 1.797e308 against multipleOf 5e-324 are judged at once (budget or validation), while another call is answered', async () => {
    let x = 12345
    const ab = Array.from({ length: 40_000 }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 2 === 0 ? 'a' : 'b')).join('') + 'c'
    for (const [id, tool, args] of [
      [50, 'large_pattern', { s: ab }],
      [51, 'tiny_multiple', { l: Array.from({ length: 170_000 }, () => 1.7976931348623157e308) }],
    ] as const) {
      const { attack, other } = await withConcurrentCall(rejectEdge, call(id, tool, args), edge)
      expect(JSON.parse(attack.text)).toMatchObject({ id, error: { code: -32602, data: { tool, reason: 'validation-budget' } } })
      figures.push(`${tool} ${attack.ms.toFixed(0)}/${other.ms.toFixed(0)} ms`)
    }
  })

  it('the request scan stays linear on every call: a ping carrying 680,000 numbers is answered at once, twice, while another call is answered', async () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping', params: { x: Array.from({ length: 680_000 }, () => 1) } })
    for (let k = 0; k < 2; k++) {
      const { attack, other } = await withConcurrentCall(edge, ping)
      expect(JSON.parse(attack.text)).toMatchObject({ id: 'p' })
      figures.push(`ping of 680,000 numbers ${attack.ms.toFixed(0)}/${other.ms.toFixed(0)} ms`)
    }
  })

  it('past the validation budget (a 3.5 MB string against one pattern; allOf of 64 maxLength over 1 MB) the call is answered at once as invalid arguments, not validated or forwarded, while another call is answered', async () => {
    origin.reset()
    serveMcp(origin, { pages: [TOOLS.map((t) => ({ name: t.name, inputSchema: { type: 'object' } }))] })
    for (const [id, tool, size] of [
      [40, 'one_pattern', 3_500_000],
      [41, 'many_max_length', 1_000_000],
    ] as const) {
      const { attack, other } = await withConcurrentCall(rejectEdge, call(id, tool, { s: 'a'.repeat(size) }), edge)
      const body = JSON.parse(attack.text)
      expect(body).toMatchObject({ id, error: { code: -32602, data: { tool, reason: 'validation-budget', budgetMs: 50 } } })
      expect(body.error.message).toMatch(
        new RegExp(
          `^Invalid arguments for tool "${tool}": arguments of \\d+ characters are too large for this tool's schema to be checked within the edge's validation budget .*raise VALIDATION_BUDGET_MS\\.$`
        )
      )
      expect(attack.text).not.toContain('aaaa')
      figures.push(`${tool} over budget ${attack.ms.toFixed(0)}/${other.ms.toFixed(0)} ms`)
    }
    // From 2025-11-25 the same refusal is an isError result; small arguments are validated as before.
    const modern = await post(rejectEdge, call(42, 'one_pattern', { s: 'a'.repeat(1_000_000) }), {
      ...mcpHeaders(),
      'mcp-protocol-version': '2025-11-25',
      'x-request-id': 'budget-42',
    })
    expect(JSON.parse(modern.text)).toMatchObject({
      id: 42,
      result: {
        isError: true,
        content: [{ type: 'text', text: expect.stringMatching(/validation budget/) }],
        _meta: {
          'io.mcp-edge/failure': {
            class: 'capability',
            code: 'validation_budget',
            correlationId: 'budget-42',
            agentGuidance: 'Send smaller or simpler arguments, then call again.',
          },
        },
      },
    })
    expect(JSON.parse((await post(rejectEdge, call(43, 'one_pattern', { s: 'abc' }))).text)).toMatchObject({ id: 43, result: {} })
    expect(origin.forwarded().filter((f) => f.body.includes('"id":40') || f.body.includes('"id":41') || f.body.includes('"id":42'))).toHaveLength(0)
  })
})
