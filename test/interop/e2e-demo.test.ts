/**
 * End to end with the official SDK client (Client + StreamableHTTPClientTransport) through the
 * edge to the demo origin (a real SDK server), on Node and on the Worker in workerd.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { offerVersion } from '../helpers/clients'
import type { LogRecord } from '../../src/core/ports'

async function connect(url: string, protocolVersion?: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  offerVersion(transport, protocolVersion)
  await client.connect(transport)
  return client
}

describe.each(RUNTIMES)('edge on $name in front of the demo origin', ({ start }) => {
  for (const jsonResponse of [false, true]) {
    describe(jsonResponse ? 'origin answers JSON' : 'origin answers SSE', () => {
      let origin: RunningOrigin
      let edge: EdgeUnderTest
      beforeAll(async () => {
        origin = await startDemoOrigin({ jsonResponse })
        edge = await start({ ORIGIN_URL: origin.url })
      })
      afterAll(async () => {
        await edge?.close()
        await origin?.close()
      })

      it('initializes, lists tools and returns a valid call unchanged', async () => {
        const client = await connect(edge.url)
        const direct = await connect(origin.url)
        const { tools } = await client.listTools()
        expect(tools.map((t) => t.name).sort()).toEqual(['create_order', 'echo', 'get_forecast', 'run_query'])
        const args = { name: 'get_forecast', arguments: { city: 'Paris', units: 'c', days: 3 } }
        const viaEdge = await client.callTool(args)
        const viaDirect = await direct.callTool(args)
        expect(viaEdge).toEqual(viaDirect)
        expect(viaEdge.isError).toBeUndefined()
        await client.close()
        await direct.close()
      })

      it('answers an invalid call itself with an isError result (2025-11-25) and the origin never sees it', async () => {
        const client = await connect(edge.url)
        const before = origin.stats.calls.get_forecast ?? 0
        const res = await client.callTool({ name: 'get_forecast', arguments: { city: 'Paris', days: 99, units: 'kelvin' } })
        expect(res.isError).toBe(true)
        const text = (res.content as { type: string; text: string }[])[0]!.text
        expect(text).toContain('Invalid arguments for tool "get_forecast"')
        expect(text).toContain('days: must be <= 16')
        expect(text).toContain('units: must be one of: c, f')
        expect(text).not.toContain('kelvin')
        expect(text).not.toContain('99')
        expect(origin.stats.calls.get_forecast ?? 0).toBe(before)
        await client.close()
      })

      it('answers an invalid call with -32602 for a 2025-06-18 client', async () => {
        const client = await connect(edge.url, '2025-06-18')
        const before = origin.stats.calls.create_order ?? 0
        const err = await client.callTool({ name: 'create_order', arguments: { customer: { name: 'A' }, items: [] } }).catch((e: unknown) => e)
        expect(err).toMatchObject({ code: -32602 })
        expect(String((err as Error).message)).toContain('items: must have at least 1 items')
        expect(origin.stats.calls.create_order ?? 0).toBe(before)
        await client.close()
      })

      it('answers an unknown tool with -32602', async () => {
        const client = await connect(edge.url)
        const err = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e)
        expect(err).toMatchObject({ code: -32602 })
        await client.close()
      })

      it('marks the hidden failure with isError: true and keeps the content', async () => {
        const client = await connect(edge.url)
        const direct = await connect(origin.url)
        const viaEdge = await client.callTool({ name: 'run_query', arguments: { query: 'select 1' } })
        const viaDirect = await direct.callTool({ name: 'run_query', arguments: { query: 'select 1' } })
        expect(viaDirect.isError).toBeUndefined()
        expect(viaEdge.isError).toBe(true)
        expect(viaEdge.content).toEqual(viaDirect.content)
        await client.close()
        await direct.close()
      })

      it('writes one log line per POST with the per-id grades', async () => {
        const hasGrade = (grade: string, tool: string) => (r: LogRecord) =>
          ((r.grades ?? []) as { grade: string; tool?: string }[]).some((g) => g.grade === grade && g.tool === tool)
        await edge.logs({ msg: 'mcp.post', where: hasGrade('rejected', 'get_forecast') })
        const logs = await edge.logs({ msg: 'mcp.post', where: hasGrade('tool_error', 'run_query') })
        const graded = logs.filter((l) => l.msg === 'mcp.post').flatMap((l) => l.grades as { grade: string; tool?: string }[])
        expect(graded.some((g) => g.grade === 'tool_error' && g.tool === 'run_query')).toBe(true)
        expect(graded.some((g) => g.grade === 'rejected' && g.tool === 'get_forecast')).toBe(true)
        expect(graded.some((g) => g.grade === 'ok' && g.tool === 'get_forecast')).toBe(true)
      })
    })
  }
})
