/**
 * The test origins' async request handlers (test/helpers/async-listener.ts): a handler that rejects
 * fails its own exchange (a 500, or a cut reply once one started) instead of leaving an unhandled
 * rejection that vitest would report apart from the test that caused it.
 */
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createAsyncServer } from '../helpers/async-listener'

describe('createAsyncServer', () => {
  let close: () => Promise<void> = async () => {}
  afterEach(() => close())

  async function serve(handler: Parameters<typeof createAsyncServer>[0]): Promise<string> {
    const server = createAsyncServer(handler)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  }

  it('answers 500 when the handler rejects before any reply', async () => {
    const url = await serve(async () => {
      throw new Error('origin script failed')
    })
    const res = await fetch(url)
    expect(res.status).toBe(500)
  })

  it('cuts the reply when the handler rejects after the reply started', async () => {
    const url = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('half')
      await new Promise((r) => setTimeout(r, 10))
      throw new Error('origin script failed mid-reply')
    })
    const res = await fetch(url)
    expect(res.status).toBe(200)
    await expect(res.text()).rejects.toThrow()
  })
})
