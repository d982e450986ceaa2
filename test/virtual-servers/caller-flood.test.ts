/**
 * A flood of distinct callers on a virtual server whose origins have long tool lists (auth off:
 * each `Authorization` is a caller, and each caller's lists are pulled for it) does not hold the
 * lists once per caller: callers given the same lists share one merged list, and tool pinning's
 * audit (the default) checks a list it already audited for that origin and scope once, instead of
 * queueing one audit of every origin's whole list per caller. The real `mcp-edge serve` (a child
 * with a 192 MB heap, so holding the lists per caller makes it run out of memory) in front of a
 * real SDK server with 1500 tools, listed by 120 callers: every list answered, the edge alive.
 */
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Server as SdkServer } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { createAsyncServer } from '../helpers/async-listener'
import { killAll, spawnEdge, type EdgeProcess } from '../helpers/edge-process'

const TOOLS = Array.from({ length: 1500 }, (_, i) => ({
  name: `tool_${i}`,
  description: `${'Reads one record of the catalogue. '.repeat(6)}${i}`,
  inputSchema: { type: 'object' as const, properties: { id: { type: 'string', description: 'the record id '.repeat(12) }, n: { type: 'integer' } }, required: ['id'] },
}))
const CALLERS = 120
const AT_ONCE = 12

describe('a flood of callers on a virtual server with long tool lists', () => {
  let origin: Server
  let edge: EdgeProcess
  beforeAll(async () => {
    origin = createAsyncServer(async (req, res) => {
      const server = new SdkServer({ name: 'catalogue', version: '1.0.0' }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      res.on('close', () => void transport.close())
      await server.connect(transport)
      await transport.handleRequest(req, res)
    })
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp`
    edge = await spawnEdge({
      NODE_OPTIONS: '--max-old-space-size=192',
      STORE_FILE: 'memory',
      ORIGINS: JSON.stringify({ one: url, two: url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['one', 'two'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(32),
    })
  })
  afterAll(async () => {
    await killAll()
    origin?.closeAllConnections()
    await new Promise((r) => origin?.close(r))
  })

  it('every caller gets the merged list, and the edge keeps running', async () => {
    let answered = 0
    for (let i = 0; i < CALLERS; i += AT_ONCE)
      await Promise.all(
        Array.from({ length: AT_ONCE }, async (_, j) => {
          const res = await fetch(`${edge.url}/all`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-06-18',
              authorization: `Bearer caller${i + j}`,
            },
            body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
          })
          const msg = (await res.json()) as { result: { tools: { name: string }[]; nextCursor?: string } }
          expect(msg.result.tools[0]!.name).toBe('one__tool_0')
          expect(msg.result.nextCursor).toBeDefined()
          answered++
        })
      )
    expect(answered).toBe(CALLERS)
    expect(edge.child.exitCode).toBeNull()
  })
})
