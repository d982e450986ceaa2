/**
 * No origin of a virtual server takes the name the naming rule gives another origin's tool, on both
 * runtimes with real SDK origins: under `prefix: conditional`, origins `b` and `c` share `x`, so
 * b's is `b__x`; a third origin listed first with a tool of its own named `b__x` neither hides
 * b's `x` nor receives its calls. Its tool is left out and the edge says so in one log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startModernOrigin, type TestOrigin } from './backends'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

async function rpc(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) })
  return (await res.json()) as Record<string, unknown>
}

describe.each(RUNTIMES)('a tool named like another origin prefixed tool on $name', ({ start }) => {
  let other: TestOrigin
  let b: TestOrigin
  let c: TestOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    other = await startModernOrigin('other', ['b__x', 'mine'])
    b = await startModernOrigin('b', ['x'])
    c = await startModernOrigin('c', ['x'])
    edge = await start({
      ORIGINS: JSON.stringify({ other: other.url, b: b.url, c: c.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['other', 'b', 'c'], prefix: 'conditional' } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(32),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await other?.close()
    await b?.close()
    await c?.close()
  })

  it("b__x is b's x: listed with b's definition, called at b, never at the origin whose own tool is named b__x", async () => {
    const at = `${edge.url}/all`
    const list = await rpc(at, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const tools = (list.result as { tools: { name: string; description: string }[] }).tools
    expect(tools.map((t) => `${t.name}=${t.description}`)).toEqual(['mine=other mine', 'b__x=b x', 'c__x=c x'])
    const r = await rpc(at, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'b__x', arguments: { q: 'x' } } })
    expect((r.result as { content: { text: string }[] }).content[0]!.text).toBe('b:x:{"q":"x"}')
    expect(other.calls).toEqual([])
    const logs = await edge.logs({ msg: 'virtual.names_shadowed' })
    expect(logs.find((l) => l.msg === 'virtual.names_shadowed')).toMatchObject({ server: 'all', tools: ['other:b__x'] })
  })
})
