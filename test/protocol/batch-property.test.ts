/**
 * Property-based (fast-check) tests of 2025-03-26 batches, on the Node entry and on the built
 * Worker in workerd, with a real scripted HTTP origin that misbehaves at random (drops, repeats
 * and invents ids, reorders, answers JSON or SSE):
 * 1. every request id of a random batch of 50 mixed elements (valid calls, invalid calls,
 *    unknown tools, malformed params, other requests, notifications, MCP-invalid notifications,
 *    duplicate ids, garbage) gets exactly one reply, and notifications none;
 * 2. a `tools/call` answered locally inside a batch gets exactly the answer it gets alone.
 */
import fc from 'fast-check'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from '../helpers/scripted-origin'
import { initializeResult } from '../helpers/initialize-reply'

const TOOLS = [
  { name: 'calc', inputSchema: { type: 'object', properties: { a: { type: 'integer' }, op: { enum: ['add', 'sub'] } }, required: ['a'] } },
  { name: 'free', inputSchema: { type: 'object' } },
]

/** One generated element: its JSON text and the id token its reply must carry (undefined: no reply). */
interface El {
  text: string
  /** `null` for a reply with id null; undefined when no reply is due (notifications). */
  reply?: string | null
  /** Answered by the edge itself, whatever the origin does (compared with the same message alone). */
  local?: boolean
  /** A notification the edge must drop (D15). */
  invalidNotification?: boolean
}

const idToken = fc.oneof(
  fc.integer({ min: -1000, max: 100000 }).map(String),
  fc.constantFrom('0', '9007199254740993', '12345678901234567890', '-9223372036854775809'),
  fc.stringMatching(/^[a-z0-9]{0,6}$/).map((s) => JSON.stringify(s)),
  fc.constantFrom('""', '"1"', '"0"')
)

const element = (id: string): fc.Arbitrary<El> =>
  fc.oneof(
    // valid call -> forwarded
    fc.integer({ min: -5, max: 5 }).map((a) => ({ text: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"calc","arguments":{"a":${a}}}}`, reply: id })),
    // invalid arguments -> local -32602
    fc
      .constantFrom('{"a":"x"}', '{}', '{"a":1,"op":"mul"}', '{"a":1.5}')
      .map((args) => ({ text: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"calc","arguments":${args}}}`, reply: id, local: true })),
    // unknown tool, malformed params -> local -32602
    fc
      .constantFrom('{"name":"nope","arguments":{}}', '{"arguments":{}}', '{"name":"calc","arguments":[1]}', '{"name":7}')
      .map((p) => ({ text: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${p}}`, reply: id, local: true })),
    // params not an object -> local -32600
    fc.constant({ text: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":"calc"}`, reply: id, local: true }),
    // other requests -> forwarded
    fc.constantFrom('ping', 'tools/list', 'resources/list', 'x/unknown').map((m) => ({ text: `{"jsonrpc":"2.0","id":${id},"method":"${m}"}`, reply: id })),
    // free tool: any object passes
    fc.constant({ text: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"free"}}`, reply: id })
  )

const noReply: fc.Arbitrary<El> = fc.oneof(
  fc.constantFrom('notifications/cancelled', 'notifications/progress', 'notifications/x').map((m) => ({ text: `{"jsonrpc":"2.0","method":"${m}","params":{"requestId":1}}` })),
  // MCP-invalid notifications (bad params, bad method type): dropped, no entry (D15)
  fc.constantFrom('{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}', '{"jsonrpc":"2.0","method":1}').map((t) => ({ text: t, invalidNotification: true }))
)

const garbage: fc.Arbitrary<El> = fc.oneof(
  fc.constantFrom('1', '"x"', 'null', 'true', '[]', '{}', '{"foo":"boo"}').map((t) => ({ text: t, reply: null, local: true })),
  fc
    .constantFrom(
      '{"jsonrpc":"2.0","id":null,"method":"ping"}',
      '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
      '{"jsonrpc":"2.0","id":{},"method":"ping"}',
      '{"jsonrpc":"2.0","id":true,"method":"ping"}'
    )
    .map((t) => ({ text: t, reply: null, local: true })),
  idToken.map((id) => ({ text: `{"jsonrpc":"1.0","id":${id},"method":"ping"}`, reply: id, local: true }))
)

/** A batch of 50 elements; ids are drawn from a small pool, so repeated ids (D4: later ones -32600) are common. */
const batch = fc
  .array(fc.tuple(fc.nat(9), idToken), { minLength: 50, maxLength: 50 })
  .chain((slots) => fc.tuple(...slots.map(([k, id]) => (k < 6 ? element(id) : k < 8 ? noReply : garbage))))

/** How the origin misbehaves for one POST. */
interface Misbehaviour {
  sse: boolean
  /** Share of the requests the origin never answers, 0..1. */
  drop: number
  repeat: boolean
  invent: boolean
  reverse: boolean
  errorNullId: boolean
}
const misbehaviour: fc.Arbitrary<Misbehaviour> = fc.record({
  sse: fc.boolean(),
  drop: fc.double({ min: 0, max: 1, noNaN: true }),
  repeat: fc.boolean(),
  invent: fc.boolean(),
  reverse: fc.boolean(),
  errorNullId: fc.boolean(),
})

/** Id tokens of the top-level elements of a JSON array text (origin results carry no `id` member). */
function idTokens(text: string): string[] {
  return [...text.matchAll(/"id":\s*(-?\d+|"[a-z0-9]*"|null)/g)].map((m) => m[1]!)
}

function sorted(xs: string[]): string[] {
  return [...xs].sort()
}

async function post(url: string, body: string): Promise<{ status: number; text: string; ct: string }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' },
    body,
  })
  const text = await res.body.text()
  return { status: res.statusCode, text, ct: String(res.headers['content-type'] ?? '') }
}

/** SSE data payloads joined as one JSON array text. */
function sseToArray(text: string): string {
  const parts: string[] = []
  for (const block of text.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('')
    if (!data) continue
    parts.push(data.startsWith('[') ? data.slice(1, -1) : data)
  }
  return `[${parts.filter(Boolean).join(',')}]`
}

describe.each(RUNTIMES)('batches on $name (fast-check)', ({ name, start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let how: Misbehaviour = { sse: false, drop: 0, repeat: false, invent: false, reverse: false, errorNullId: false }
  let checked = 0
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((r: ReceivedRequest, res) => {
      const j = r.json as { id?: number; method?: string } | unknown[] | undefined
      if (!Array.isArray(j)) {
        const m = (j as { method?: string } | undefined)?.method
        if (r.method === 'DELETE' || m === 'notifications/initialized' || !j || !('id' in (j as object))) return void res.writeHead(202).end()
        const id = (j as { id: number }).id
        const result = m === 'initialize' ? initializeResult({}, { version: '2025-03-26', serverInfo: { name: 'p', version: '1' } }) : m === 'tools/list' ? { tools: TOOLS } : {}
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }))
      }
      // The forwarded sub-batch: answer each request by its exact id token, then misbehave.
      const tokens = idTokens(r.body)
      let answers = tokens.map((t, i) =>
        how.errorNullId && i === 0
          ? `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"boom"}}`
          : `{"jsonrpc":"2.0","id":${t},"result":{"content":[{"type":"text","text":"ok"}]}}`
      )
      answers = answers.filter((_, i) => (i * 7919) % 100 >= how.drop * 100)
      if (how.repeat && answers.length) answers.push(answers[0]!)
      if (how.invent) answers.push('{"jsonrpc":"2.0","id":"invented-by-origin","result":{}}')
      if (how.reverse) answers.reverse()
      if (!answers.length) return void res.writeHead(202).end()
      if (how.sse) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(answers.map((a) => `event: message\ndata: ${a}\n\n`).join(''))
      res.writeHead(200, { 'content-type': 'application/json' }).end(`[${answers.join(',')}]`)
    })
    edge = await start({ ORIGIN_URL: origin.url, MAX_BATCH: '60' })
  })
  afterAll(async () => {
    console.log(`[batch-property] ${name}: ${checked} random batches checked`)
    await edge?.close()
    await origin?.close()
  })

  it('answers every request id of a random batch exactly once, notifications never', async () => {
    await fc.assert(
      fc.asyncProperty(batch, misbehaviour, async (els, m) => {
        how = m
        const body = `[${els.map((e) => e.text).join(',')}]`
        const a = await post(edge.url, body)
        expect(a.status).toBeLessThan(500)
        const due = els.filter((e) => e.reply !== undefined).map((e) => e.reply as string | null)
        if (due.length === 0) {
          // Notifications only: 202 with no body, or 400 when none of them could be forwarded (D5, D15).
          const anyValid = els.some((e) => !e.invalidNotification)
          expect(a.status).toBe(anyValid ? 202 : 400)
          if (anyValid) expect(a.text).toBe('')
          checked++
          return
        }
        const text = a.ct.includes('event-stream') ? sseToArray(a.text) : a.text
        expect(text.trim().startsWith('['), text.slice(0, 200)).toBe(true)
        const got = idTokens(text)
        expect(sorted(got)).toEqual(sorted(due.map((d) => (d === null ? 'null' : d))))
        checked++
      }),
      { numRuns: 40 }
    )
  })

  it('answers a tools/call inside a batch exactly as it answers it alone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 12 }).chain((ids) => fc.tuple(...ids.map((id) => element(String(id))))),
        async (els) => {
          how = { sse: false, drop: 0, repeat: false, invent: false, reverse: false, errorNullId: false }
          const locals = els.filter((e) => e.local && e.reply !== null)
          const a = await post(edge.url, `[${els.map((e) => e.text).join(',')}]`)
          const entries = JSON.parse(a.text) as unknown[]
          for (const e of locals) {
            const alone = await post(edge.url, e.text)
            expect(alone.status).toBe(200)
            const twin = entries.find((x) => JSON.stringify((x as { id: unknown }).id) === JSON.stringify((JSON.parse(alone.text) as { id: unknown }).id))
            expect(twin, `${e.text} -> ${alone.text}`).toEqual(JSON.parse(alone.text))
          }
        }
      ),
      { numRuns: 15 }
    )
  })
})
