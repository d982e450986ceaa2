/**
 * The Node listener's write batch (src/adapters/node/post-listener.ts `WriteBatch`) on a real
 * `node:http` server: answers decided during one turn of the event loop are written together in
 * its check phase, each to its own client; an answer whose client left before the flush is
 * dropped with its stream released; one failing answer does not hold back the others; and the
 * tiered engine's deferred compile runs after the answers of its turn are written.
 */
import { createServer, type ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deferCompile } from '../../src/adapters/node/node-edge'
import { WriteBatch } from '../../src/adapters/node/post-listener'
import type { ByteSource, EdgeResponse } from '../../src/core/edge-response'

/** Responses of requests received and not answered yet, in arrival order. */
const waiting: ServerResponse[] = []
let arrived: () => void = () => undefined
const server = createServer((_req, res) => {
  waiting.push(res)
  arrived()
})
let base = ''

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

/** Resolves once `n` requests wait for an answer. */
function requestsWaiting(n: number): Promise<ServerResponse[]> {
  return new Promise((resolve) => {
    const check = () => {
      if (waiting.length >= n) resolve(waiting.splice(0, n))
    }
    arrived = check
    check()
  })
}

/** A request sent over a socket of the test's own, so the test can cut it; resolves with its response on the server. */
async function rawRequest() {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1')
  socket.on('error', () => undefined)
  socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n')
  const [res] = await requestsWaiting(1)
  return { socket, res }
}

const answer = (text: string): EdgeResponse => ({ status: 200, headers: { 'content-type': 'application/json' }, body: text })
const nextTurn = () => new Promise((r) => setImmediate(r))

describe('WriteBatch', () => {
  it('writes the answers of one turn together after that turn, each to its own client', async () => {
    const replies = [fetch(`${base}/a`), fetch(`${base}/b`)]
    const [first, second] = await requestsWaiting(2)
    const batch = new WriteBatch()
    batch.add(answer('{"n":1}'), first!)
    batch.add(answer('{"n":2}'), second!)
    // Nothing is written while the turn that decided them is still running.
    expect(first!.headersSent).toBe(false)
    expect(second!.headersSent).toBe(false)
    await nextTurn()
    expect(first!.headersSent).toBe(true)
    expect(second!.headersSent).toBe(true)
    const [a, b] = await Promise.all(replies)
    expect(a!.headers.get('content-length')).toBe('7')
    expect(await a!.text()).toBe('{"n":1}')
    expect(await b!.text()).toBe('{"n":2}')
  })

  it('drops the answer of a client that left before the flush and cancels its stream', async () => {
    const { socket, res } = await rawRequest()
    const closed = new Promise((r) => res!.once('close', r))
    socket.destroy()
    await closed
    let cancelled = false
    const body: ByteSource = {
      read: () => new Promise(() => undefined),
      cancel: async () => {
        cancelled = true
      },
    }
    const batch = new WriteBatch()
    batch.add({ status: 200, headers: { 'content-type': 'text/event-stream' }, body }, res!)
    await nextTurn()
    expect(cancelled).toBe(true)
    expect(res!.headersSent).toBe(false)
    // The batch keeps working for the next turn's answers.
    const reply = fetch(`${base}/c`)
    const [next] = await requestsWaiting(1)
    batch.add(answer('{"n":3}'), next!)
    expect(await (await reply).text()).toBe('{"n":3}')
  })

  it('drops the answer of a socket that died in the same turn, before its response heard of it', async () => {
    const { socket, res } = await rawRequest()
    let reads = 0
    let cancelled = false
    const body: ByteSource = {
      read: () => {
        reads++
        return new Promise(() => undefined)
      },
      cancel: async () => {
        cancelled = true
      },
    }
    res!.socket!.destroy()
    expect(res!.destroyed).toBe(false)
    const batch = new WriteBatch()
    batch.add({ status: 200, headers: { 'content-type': 'text/event-stream' }, body }, res!)
    await nextTurn()
    expect(cancelled).toBe(true)
    expect(reads).toBe(0)
    socket.destroy()
  })

  it('writes the rest of a batch when one answer fails', async () => {
    const replies = [fetch(`${base}/d`), fetch(`${base}/e`)]
    const [first, second] = await requestsWaiting(2)
    first!.destroy()
    const throwing: ByteSource = {
      read: () => new Promise(() => undefined),
      cancel: () => {
        throw new Error('cancel failed')
      },
    }
    const batch = new WriteBatch()
    batch.add({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: throwing }, first!)
    batch.add(answer('{"n":5}'), second!)
    await expect(replies[0]).rejects.toThrow()
    expect(await (await replies[1]!).text()).toBe('{"n":5}')
  })

  it('runs a deferred compile after the answers decided in its turn are written', async () => {
    const reply = fetch(`${base}/f`)
    const [res] = await requestsWaiting(1)
    const batch = new WriteBatch()
    let sentWhenCompiled: boolean | undefined
    // The compile is deferred before the turn's first answer is decided, as on a tool's 16th call.
    const compiled = new Promise<void>((resolve) =>
      deferCompile(() => {
        sentWhenCompiled = res!.headersSent
        resolve()
      })
    )
    batch.add(answer('{"n":6}'), res!)
    await compiled
    expect(sentWhenCompiled).toBe(true)
    expect(await (await reply).text()).toBe('{"n":6}')
  })
})
