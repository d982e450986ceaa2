/**
 * The edge's own tool-list pull reads its replies with the configured MAX_JSON_DEPTH (it used the
 * default, 64, whatever the setting said): a deeper limit lets a deep but allowed schema in, a
 * shallower one keeps a deeper reply out.
 */
import { describe, expect, it } from 'vitest'
import { pullToolList } from '../../../src/core/forwarding/tool-list-pull'
import type { OriginClient, OriginRequest } from '../../../src/core/ports'

/** An object schema nesting `levels` objects below its root. */
function deepSchema(levels: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'string' }
  for (let i = 0; i < levels; i++) s = { type: 'object', properties: { a: s } }
  return s
}

/** An origin answering tools/list (2026-07-28: no initialize) with one tool of that schema. */
function originWith(schema: Record<string, unknown>): OriginClient {
  return async (req: OriginRequest) => {
    const msg = JSON.parse(String(req.body)) as { id: number }
    const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'deep', inputSchema: schema }] } })
    return { status: 200, headers: { 'content-type': 'application/json' }, text: async () => body, stream: () => null, discard: () => {} }
  }
}

const pull = (schema: Record<string, unknown>, maxJsonDepth?: number) =>
  pullToolList({
    client: originWith(schema),
    url: 'http://127.0.0.1:1/mcp',
    era: '2026-07-28',
    headers: {},
    timeoutMs: 1000,
    ...(maxJsonDepth !== undefined ? { maxJsonDepth } : {}),
  })

describe('tool-list pull: MAX_JSON_DEPTH', () => {
  it('a reply deeper than the default 64 is read when MAX_JSON_DEPTH allows it', async () => {
    const schema = deepSchema(60) // about 125 levels of nesting with its properties objects
    await expect(pull(schema)).rejects.toThrow(/nests too deep/)
    const pulled = await pull(schema, 200)
    expect(pulled.tools).toHaveLength(1)
  })

  it('a reply deeper than a MAX_JSON_DEPTH below 64 is refused', async () => {
    const schema = deepSchema(15) // about 35 levels
    expect((await pull(schema)).tools).toHaveLength(1)
    await expect(pull(schema, 16)).rejects.toThrow(/nests too deep/)
  })
})
