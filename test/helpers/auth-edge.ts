/**
 * Parts of the auth tests against the edge (test/auth/edge-auth.test.ts, test/auth/sdk-edge-oauth.test.ts):
 * a free loopback port (the edge must know its own URL, AUTH_AUDIENCE, before it starts) and an
 * origin with an ordinary and an admin tool that records what it receives.
 */
import { createServer } from 'node:net'
import { sendJson, type ScriptedOrigin } from './scripted-origin'
import { initializeReply } from './initialize-reply'

/** A free loopback port (the edge must know its own URL, AUTH_AUDIENCE, before it starts). */
export async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

export const TOOLS = [
  { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'admin_drop', inputSchema: { type: 'object' } },
]
export const ORIGIN_CREDENTIAL = 'Bearer edge-to-origin-credential'

/** An origin with two tools; it answers initialize, tools/list and tools/call, and records everything. */
export function toolOrigin(o: ScriptedOrigin): void {
  o.handle((r, res) => {
    const answer = (m: { id?: unknown; method?: string; params?: { name?: string } }) =>
      m.method === 'initialize'
        ? initializeReply(m)
        : m.method === 'tools/list'
          ? { jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } }
          : { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `ran ${m.params?.name}` }] } }
    const m = r.json as Record<string, unknown> | Record<string, unknown>[] | undefined
    if (r.method !== 'POST') return void res.writeHead(r.method === 'DELETE' ? 200 : 405).end()
    if (Array.isArray(m))
      return sendJson(
        res,
        m.filter((x) => x.id !== undefined).map((x) => answer(x))
      )
    if (m?.id === undefined) return void res.writeHead(202).end()
    sendJson(res, answer(m))
  })
}
