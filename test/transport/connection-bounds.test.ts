/**
 * Connection bounds of the Node edge, so slow or idle clients cannot exhaust its sockets
 * (docs/reliability.md): with small limits
 * (MAX_CONNECTIONS=50, HEADERS_TIMEOUT_MS=500, REQUEST_TIMEOUT_MS=1000, KEEP_ALIVE_TIMEOUT_MS=300),
 * real sockets on 127.0.0.1 against the real Node entry:
 * - connections past MAX_CONNECTIONS are closed at once; the held ones stay under the cap;
 * - a client whose headers never end is answered 408 and closed after HEADERS_TIMEOUT_MS, and a
 *   normal client is served again;
 * - a client whose body trickles is answered 408 and closed after REQUEST_TIMEOUT_MS;
 * - an idle kept-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS;
 * - a bad value stops the start with an error naming the variable.
 */
import { connect, type Socket } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { ConfigError } from '../../src/core/config'
import { checkingIntervalMs, loadConnectionBounds } from '../../src/adapters/node/connection-bounds'
import type { NodeServerOptions } from '../../src/adapters/node/node-config'
import { pollUntil } from '../helpers/wait'

const HEAD = 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'

interface SlowSocket {
  s: Socket
  opened: number
  closedAt?: number
  data: string
}

function openSlow(port: number, first: string): Promise<SlowSocket> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    const e: SlowSocket = { s, opened: Date.now(), data: '' }
    s.on('data', (d) => void (e.data += d.toString()))
    s.on('error', () => undefined)
    s.on('close', () => void (e.closedAt ??= Date.now()))
    s.on('connect', () => {
      s.write(first)
      resolve(e)
    })
  })
}

/** True once `cond()` holds, false if it still does not after `ms`. */
const until = (cond: () => boolean, ms: number): Promise<boolean> => pollUntil(cond, Boolean, { timeoutMs: ms, intervalMs: 20 })

async function healthz(edge: RunningEdge): Promise<number> {
  try {
    const r = await request(`http://127.0.0.1:${edge.port}/healthz`, { headersTimeout: 2000, bodyTimeout: 2000, reset: true })
    await r.body.text()
    return r.statusCode
  } catch {
    return 0
  }
}

/** A POST whose body trickles a byte every 100 ms until the edge closes it (or 4 s pass). */
async function trickledBody(port: number, all: SlowSocket[]): Promise<SlowSocket> {
  const e = await openSlow(port, `${HEAD}Content-Length: 100\r\n\r\n`)
  all.push(e)
  const drip = setInterval(() => e.closedAt === undefined && e.s.write('['), 100)
  try {
    expect(await until(() => e.closedAt !== undefined, 4000)).toBe(true)
  } finally {
    clearInterval(drip)
  }
  expect(e.data).toMatch(/^HTTP\/1\.1 408 /)
  return e
}

/** A kept-alive connection answered once, then idle until the edge closes it (or 3 s pass); resolves with the ms it stayed open after its answer. */
async function idleAfterAnswer(port: number, all: SlowSocket[]): Promise<number> {
  const e = await openSlow(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  all.push(e)
  expect(await until(() => e.data.includes('\r\n\r\n'), 2000)).toBe(true)
  const answered = Date.now()
  expect(e.data).toMatch(/^HTTP\/1\.1 200 /)
  expect(await until(() => e.closedAt !== undefined, 3000)).toBe(true)
  return e.closedAt! - answered
}

/** The edge of the enclosing describe: started before its tests with `env` (and `options`), closed after them with every socket in `all`. */
function edgeFor(env: Record<string, string>, options: NodeServerOptions = {}): { edge: () => RunningEdge; all: SlowSocket[] } {
  let edge: RunningEdge | undefined
  const all: SlowSocket[] = []
  beforeAll(async () => {
    edge = await startEdge({ env: { ORIGIN_URL: 'http://127.0.0.1:9/mcp', STORE_FILE: 'memory', ...env }, port: 0, log: () => undefined, ...options })
  })
  afterAll(async () => {
    for (const e of all) e.s.destroy()
    await edge?.close()
  })
  return { edge: () => edge!, all }
}

describe('connection bounds on node', () => {
  const fx = edgeFor({ MAX_CONNECTIONS: '50', HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000', KEEP_ALIVE_TIMEOUT_MS: '300' })

  it('holds at most MAX_CONNECTIONS; slow headers get 408 and are closed after HEADERS_TIMEOUT_MS; then normal clients are served', async () => {
    const slow = await Promise.all(Array.from({ length: 60 }, () => openSlow(fx.edge().port, HEAD)))
    fx.all.push(...slow)
    // The 10 past the cap are closed on accept: with no answer at all, where the header deadline
    // answers 408 (so which bound closed them shows without timing them; 3 s only bounds a hang).
    expect(await until(() => slow.filter((e) => e.closedAt !== undefined).length >= 10, 3000)).toBe(true)
    expect(slow.filter((e) => e.closedAt !== undefined && e.data === '').length).toBeGreaterThanOrEqual(10)
    const drip = setInterval(() => slow.forEach((e) => e.closedAt === undefined && e.s.write('x')), 100)
    try {
      // Every held one is closed by the header deadline (500 ms, checked every 125 ms), with a 408.
      expect(await until(() => slow.every((e) => e.closedAt !== undefined), 3000)).toBe(true)
    } finally {
      clearInterval(drip)
    }
    const held = slow.filter((e) => e.data !== '')
    expect(held.length).toBe(50)
    for (const e of held) {
      expect(e.data).toMatch(/^HTTP\/1\.1 408 /)
      expect(e.closedAt! - e.opened).toBeGreaterThanOrEqual(450)
    }
    expect(await healthz(fx.edge())).toBe(200)
  })

  it('a body that trickles is answered 408 and closed after REQUEST_TIMEOUT_MS', async () => {
    const e = await trickledBody(fx.edge().port, fx.all)
    expect(e.closedAt! - e.opened).toBeGreaterThanOrEqual(950)
  })

  it('an idle kept-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
    expect(await idleAfterAnswer(fx.edge().port, fx.all)).toBeGreaterThanOrEqual(250)
  })

  it('defaults: 10,000 connections, 10 s headers, 30 s request, 5 s keep-alive; checked every 2.5 s', () => {
    const b = loadConnectionBounds({})
    expect(b).toEqual({ maxConnections: 10_000, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 })
    expect(checkingIntervalMs(b)).toBe(2_500)
  })

  it.each([
    ['MAX_CONNECTIONS', '0'],
    ['HEADERS_TIMEOUT_MS', 'soon'],
    ['REQUEST_TIMEOUT_MS', '1.5'],
    ['KEEP_ALIVE_TIMEOUT_MS', '-1'],
  ])('%s=%s stops the start with an error naming the variable', async (name, value) => {
    const err = await startEdge({ env: { ORIGIN_URL: 'http://127.0.0.1:9/mcp', STORE_FILE: 'memory', [name]: value }, port: 0, log: () => undefined }).then(
      (e) => e.close().then(() => null),
      (e: unknown) => e
    )
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as Error).message).toContain(name)
    expect((err as Error).message).toContain(`${name}=${value}`)
  })

  it('REQUEST_TIMEOUT_MS below HEADERS_TIMEOUT_MS is refused', () => {
    expect(() => loadConnectionBounds({ HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '1000' })).toThrow('REQUEST_TIMEOUT_MS=1000: expected at least HEADERS_TIMEOUT_MS (2000)')
    expect(() => loadConnectionBounds({}, { headersTimeoutMs: 2000, requestTimeoutMs: 1000 })).toThrow('REQUEST_TIMEOUT_MS=1000: expected at least HEADERS_TIMEOUT_MS (2000)')
  })
})

// startEdge's typed options (NodeServerOptions, docs/library.md) reach the server and win over the
// variables: the variables below are the defaults' far looser bounds.
describe('connection bounds given as startEdge options', () => {
  const fx = edgeFor(
    { MAX_CONNECTIONS: '10000', HEADERS_TIMEOUT_MS: '10000', REQUEST_TIMEOUT_MS: '30000', KEEP_ALIVE_TIMEOUT_MS: '5000' },
    { maxConnections: 5, headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 250 }
  )

  it('maxConnections and headersTimeoutMs: past 5 connections closed on accept, slow headers 408 after 400 ms', async () => {
    expect(fx.edge().nodeConfig).toMatchObject({ maxConnections: 5, headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 250 })
    const slow = await Promise.all(Array.from({ length: 8 }, () => openSlow(fx.edge().port, HEAD)))
    fx.all.push(...slow)
    expect(await until(() => slow.filter((e) => e.closedAt !== undefined && e.data === '').length >= 3, 3000)).toBe(true)
    // The held ones get the header deadline's 408 long before the variable's 10 s.
    expect(await until(() => slow.every((e) => e.closedAt !== undefined), 3000)).toBe(true)
    const held = slow.filter((e) => e.data !== '')
    expect(held.length).toBe(5)
    for (const e of held) expect(e.data).toMatch(/^HTTP\/1\.1 408 /)
    expect(await healthz(fx.edge())).toBe(200)
  })

  it("requestTimeoutMs: a trickling body is answered 408 after 800 ms, not the variable's 30 s", async () => {
    const e = await trickledBody(fx.edge().port, fx.all)
    expect(e.closedAt! - e.opened).toBeGreaterThanOrEqual(750)
  })

  it("keepAliveTimeoutMs: an idle kept-alive connection is closed after 250 ms, not the variable's 5 s", async () => {
    expect(await idleAfterAnswer(fx.edge().port, fx.all)).toBeGreaterThanOrEqual(200)
  })

  it('a bad option stops the start naming the option and its variable', async () => {
    const err = await startEdge({ env: { ORIGIN_URL: 'http://127.0.0.1:9/mcp', STORE_FILE: 'memory' }, port: 0, maxConnections: 0, log: () => undefined }).then(
      (e) => e.close().then(() => null),
      (e: unknown) => e
    )
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as Error).message).toBe('maxConnections=0 (MAX_CONNECTIONS): expected an integer >= 1 (connections)')
  })
})
