/**
 * Graceful stop of `mcp-edge serve` (the built command as a real process, a real HTTP origin):
 * SIGTERM during a slow call lets it finish within SHUTDOWN_GRACE_MS; a call (JSON or SSE) still
 * open at the bound gets its per-id gateway error -31002; the log is flushed (the call's line and
 * `edge.stop`); exit status 0; nothing is left listening. SIGTERM to the `npm` parent of
 * `npm start` stops the edge and the demo origin (no orphan).
 */
import { spawn } from 'node:child_process'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isListening, MCP_HEADERS, REPO, childEnv, startServe, type ServeProcess } from '../helpers/cli-process'
import { startScriptedOrigin, sendJson, type ScriptedOrigin } from '../helpers/scripted-origin'

let origin: ScriptedOrigin
let edge: ServeProcess | undefined

beforeAll(async () => {
  origin = await startScriptedOrigin()
})
afterAll(() => origin.close())
afterEach(() => {
  edge?.kill()
  edge = undefined
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A `resources/read` (forwarded without validation) with `id`. */
function call(url: string, id: number): Promise<{ status: number; text: string; ms: number }> {
  const t0 = Date.now()
  return fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri: 'test://slow' } }) }).then(
    async (r) => ({ status: r.status, text: await r.text(), ms: Date.now() - t0 })
  )
}

async function serve(graceMs: number): Promise<ServeProcess> {
  edge = await startServe([], { ORIGIN_URL: origin.url, PORT: '0', STORE_FILE: 'memory', SHUTDOWN_GRACE_MS: String(graceMs) })
  return edge
}

/**
 * Counts the requests the origin receives: `all` resolves once `n` have arrived, so a test signals
 * the edge while they are surely in flight there (a fixed sleep lost that race on a busy machine).
 */
function arrivals(n: number): { one: () => void; all: Promise<void> } {
  let left = n
  let done!: () => void
  const all = new Promise<void>((r) => (done = r))
  return { one: () => void (--left === 0 && done()), all }
}

describe('mcp-edge serve: graceful stop', () => {
  it('a slow call in flight at SIGTERM finishes within the grace period; exit 0; nothing listening', async () => {
    const seen = arrivals(1)
    origin.handle(async (req, res) => {
      // The start's readiness probe (initialize) reaches this origin too: count the call only.
      if ((req.json as { id?: unknown }).id === 7) seen.one()
      await sleep(1_200)
      sendJson(res, { jsonrpc: '2.0', id: (req.json as { id: number }).id, result: { contents: [{ uri: 'test://slow', text: 'done slowly' }] } })
    })
    // A grace far longer than the call (20 s against 0.9 s left of it): exiting before the grace
    // ends shows the stop waited for the call, not for the clock, however busy the machine is.
    const e = await serve(20_000)
    const pending = call(e.url, 7)
    await seen.all
    const t0 = Date.now()
    e.child.kill('SIGTERM')
    // A new connection after the signal is refused.
    await sleep(100)
    expect(await isListening(e.port)).toBe(false)
    const answer = await pending
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.text)).toEqual({ jsonrpc: '2.0', id: 7, result: { contents: [{ uri: 'test://slow', text: 'done slowly' }] } })
    expect(await e.exited).toBe(0)
    expect(Date.now() - t0).toBeLessThan(20_000)
    expect(await isListening(e.port)).toBe(false)
    // The log is flushed: the call's line and the stop's.
    const lines = e
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.some((l) => JSON.stringify(l).includes('resources/read'))).toBe(true)
    expect(lines.at(-1)).toMatchObject({ msg: 'edge.stop', inFlight: 1, expired: 0 })
  })

  it('a JSON call still open at the bound gets -31002 for its id; exit 0', async () => {
    const seen = arrivals(1)
    origin.handle((req) => void ((req.json as { id?: unknown }).id === 'abc' && seen.one())) // never answers
    const e = await serve(600)
    const pending = call(e.url, 'abc' as unknown as number)
    await seen.all
    const t0 = Date.now()
    e.child.kill('SIGTERM')
    const answer = await pending
    const waited = Date.now() - t0
    expect(answer.status).toBe(200)
    const body = JSON.parse(answer.text) as { id: unknown; error: { code: number; data: { source: string } } }
    expect(body.id).toBe('abc')
    expect(body.error.code).toBe(-31002)
    expect(body.error.data.source).toBe('edge')
    expect(waited).toBeGreaterThanOrEqual(550)
    expect(waited).toBeLessThan(4_000)
    expect(await e.exited).toBe(0)
    expect(await isListening(e.port)).toBe(false)
    expect(e.stdout()).toContain('"expired":1')
  })

  it('an SSE stream in flight finishes; one still open at the bound ends with -31002 for its open id', async () => {
    const seen = arrivals(2)
    origin.handle(async (req, res) => {
      const id = (req.json as { id: number }).id
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: 1 } })}\n\n`)
      if (id === 1 || id === 2) seen.one()
      if (id === 1) {
        await sleep(800)
        res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { contents: [] } })}\n\n`)
      } // id 2: the stream stays open
    })
    const e = await serve(1_500)
    const finishing = call(e.url, 1)
    const hanging = call(e.url, 2)
    await seen.all
    e.child.kill('SIGTERM')
    const [a, b] = await Promise.all([finishing, hanging])
    const events = (t: string) =>
      t
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Record<string, any>)
    expect(events(a.text).at(-1)).toEqual({ jsonrpc: '2.0', id: 1, result: { contents: [] } })
    const last = events(b.text).at(-1)!
    expect(last.id).toBe(2)
    expect(last.error.code).toBe(-31002)
    expect(events(b.text)[0]!.method).toBe('notifications/progress')
    expect(await e.exited).toBe(0)
    expect(await isListening(e.port)).toBe(false)
  })
})

describe('mcp-edge serve: a GET stream open at the bound', () => {
  it('ends cleanly after the origin bytes (no error text in the stream, no stack trace on stderr); exit 0', async () => {
    const hello = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } })}\n\n`
    origin.handle((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(202).end()
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(hello) // then stays open
    })
    const e = await serve(500)
    const r = await fetch(e.url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } })
    expect(r.status).toBe(200)
    const text = r.text()
    await sleep(300)
    e.child.kill('SIGTERM')
    expect(await text).toBe(hello)
    expect(await e.exited).toBe(0)
    expect(e.stderr()).not.toMatch(/^\s+at /m)
    expect(e.stderr()).not.toContain('OriginTimeoutError')
  })
})

describe('npm start: a signal to the npm parent', () => {
  it.each([
    { how: 'SIGTERM to npm only', group: false, signal: 'SIGTERM' as const },
    { how: 'Ctrl-C (SIGINT to the process group: npm and the edge both get one, npm forwards its own)', group: true, signal: 'SIGINT' as const },
  ])('$how: stops the edge and the demo origin; npm exits 0; nothing left listening', async ({ group, signal }) => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: REPO,
      detached: group,
      env: childEnv({ PORT: '0', DEMO_PORT: '0', STORE_FILE: 'memory' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let err = ''
    npm.stderr!.on('data', (d: Buffer) => (err += d.toString()))
    npm.stdout!.resume()
    const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)))
    try {
      const end = Date.now() + 60_000
      let m: RegExpExecArray | null = null
      while (!(m = /mcp-edge-validator: http:\/\/127\.0\.0\.1:(\d+)\/mcp -> http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err))) {
        if (npm.exitCode !== null || Date.now() > end) throw new Error(`npm start did not start: ${err}`)
        await sleep(100)
      }
      const [edgePort, demoPort] = [Number(m[1]), Number(m[2])]
      expect(await isListening(edgePort)).toBe(true)
      if (group) process.kill(-npm.pid!, signal)
      else npm.kill(signal) // the npm process only, not its group
      expect(await exited).toBe(0)
      expect(err).not.toContain('exiting without waiting')
      await sleep(200)
      expect(await isListening(edgePort)).toBe(false)
      expect(await isListening(demoPort)).toBe(false)
    } finally {
      if (npm.exitCode === null) process.kill(group ? -npm.pid! : npm.pid!, 'SIGKILL')
    }
  })
})
