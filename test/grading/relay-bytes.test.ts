/**
 * An origin's JSON reply that grading leaves as it is reaches the client as the origin's own
 * bytes (white space, escapes, member order, a trailing line break), on Node, on the Worker in
 * workerd and through the Hono middleware; a reply the edge must change is changed only where it
 * must, and a reply whose bytes are not clean UTF-8 (a byte order mark, a bad sequence) is sent as
 * well-formed UTF-8 text instead of being relayed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { ADMIN_TOKEN, mcpHeaders, pushTools } from '../helpers/grading'

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } })
const enc = new TextEncoder()

/** POSTs `body` and returns the answer's status, grade header and raw bytes. */
async function postRaw(edge: EdgeUnderTest, body: unknown, version = '2025-06-18'): Promise<{ status: number; grade: string | null; bytes: Uint8Array }> {
  const res = await fetch(edge.url, { method: 'POST', headers: mcpHeaders(version), body: JSON.stringify(body) })
  return { status: res.status, grade: res.headers.get('mcp-edge-grade'), bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('relaying the origin bytes on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  /** The origin's next body, as bytes. */
  let reply: Uint8Array = new Uint8Array()
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(reply))
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN })
    await pushTools(edge, [{ name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }])
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('a single response: the exact bytes, white space, escapes and trailing line break included', async () => {
    const text = '{ "jsonrpc" : "2.0", "result": {"content": [ {"type":"text", "text":"caf\\u00e9 \\"q\\" \\/ é 😀"} ] }, "id" : 1 }\r\n'
    reply = enc.encode(text)
    const got = await postRaw(edge, call(1))
    expect([got.status, got.grade]).toEqual([200, 'ok=1'])
    expect(Buffer.from(got.bytes).toString('hex')).toBe(Buffer.from(reply).toString('hex'))
  })

  it('a batch answered in full and in order: the exact bytes, the separators as the origin wrote them', async () => {
    const text =
      '[\n  {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"one"}]}} ,\n  {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"two"}]}}\n]\n'
    reply = enc.encode(text)
    const got = await postRaw(edge, [call(1), call(2)], '2025-03-26')
    expect([got.status, got.grade]).toEqual([200, 'ok=2'])
    expect(Buffer.from(got.bytes).toString()).toBe(text)
  })

  it('a batch missing one id: each response as its exact text, the gateway error after them', async () => {
    reply = enc.encode('[ {"jsonrpc":"2.0", "id":1, "result":{"content":[]}} ]')
    const got = await postRaw(edge, [call(1), call(2)], '2025-03-26')
    expect(got.grade).toBe('ok=1 missing=1')
    const text = Buffer.from(got.bytes).toString()
    expect(text.startsWith('[{"jsonrpc":"2.0", "id":1, "result":{"content":[]}},')).toBe(true)
    expect((JSON.parse(text) as { id: number; error?: { code: number } }[]).map((m) => [m.id, m.error?.code])).toEqual([
      [1, undefined],
      [2, -31003],
    ])
  })

  it('a hidden failure: only isError and the classification added, every other byte kept', async () => {
    const text = '{"jsonrpc":"2.0","id":1,"result":{ "content":[{"type":"text","text":"x"}], "structuredContent":{"ok":false} }}\n'
    reply = enc.encode(text)
    const got = await postRaw(edge, call(1))
    expect(got.grade).toBe('tool_error=1')
    const out = Buffer.from(got.bytes).toString()
    expect(out.startsWith('{"jsonrpc":"2.0","id":1,"result":{ "content":[{"type":"text","text":"x"}], "structuredContent":{"ok":false} ,"isError":true')).toBe(true)
    expect((JSON.parse(out) as { result: { isError: boolean } }).result.isError).toBe(true)
  })

  it('a byte order mark is not relayed: the answer is the text without it', async () => {
    const text = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'
    reply = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode(text)])
    const got = await postRaw(edge, call(1))
    expect([got.grade, Buffer.from(got.bytes).toString()]).toEqual(['ok=1', text])
  })

  it('a bad UTF-8 sequence is not relayed: the answer is well-formed UTF-8 with U+FFFD in its place', async () => {
    const head = enc.encode('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a')
    const tail = enc.encode('b"}]}}')
    reply = new Uint8Array([...head, 0xff, 0xfe, ...tail])
    const got = await postRaw(edge, call(1))
    expect(got.grade).toBe('ok=1')
    const text = new TextDecoder('utf-8', { fatal: true }).decode(got.bytes)
    expect((JSON.parse(text) as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe('a\ufffd\ufffdb')
  })
})
