/**
 * A client's `notifications/cancelled` on a virtual server reaches the origin that runs the
 * request, in the origin session the client's session carries (both runtimes): the stateful SDK
 * origin's tool sees its request aborted.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSession } from '../helpers/mcp'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { waitFor } from '../helpers/wait'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

const V = '2025-06-18'

describe.each(RUNTIMES)('cancellation through a virtual server on $name', ({ start }) => {
  let files: TestOrigin
  let weather: TestOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'], { waitTool: true })
    weather = await startModernOrigin('weather', ['get_forecast'])
    edge = await start({
      ORIGINS: JSON.stringify({ files: files.url, weather: weather.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['weather', 'files'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(32),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await files?.close()
    await weather?.close()
  })

  it('notifications/cancelled reaches the origin running the request', async () => {
    const at = edge.url.replace(/\/mcp$/, '/mcp/all')
    const h = await openSession(at, V)
    // The call's answer never comes (a cancelled request gets none): sent with node:http, dropped at the end.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'job-7', method: 'tools/call', params: { name: 'files__wait', arguments: { q: 'x' } } })
    const running = request(at, { method: 'POST', headers: { ...h, 'content-length': String(Buffer.byteLength(body)) } })
    running.on('error', () => undefined)
    running.on('response', (res) => res.on('error', () => undefined).resume())
    running.end(body)
    await waitFor(() => (files.calls.some((c) => c.endsWith(':wait')) ? true : null), { what: 'the wait call at the origin' })
    const n = await fetch(at, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'job-7', reason: 'user' } }),
    })
    expect(n.status).toBe(202)
    await waitFor(() => (files.cancelled!.length > 0 ? true : null), { what: 'the cancellation at the origin' })
    // In the origin session this client's session carries.
    expect(files.sessions).toContain(files.cancelled![0]!.split(':')[0])
    running.destroy()
  })
})
