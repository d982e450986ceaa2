/**
 * Two real Node edge processes (`mcp-edge serve`, bundled) on one real redis-server
 * (`STORE_URL=redis://...`): a schema pushed through edge A's admin API validates calls on edge B;
 * a change pushed on A reaches B's memory at once (pub/sub), for a tool B held and for one B had
 * found unknown; Redis down while running: B fails open (D8), nothing hangs. At start, an
 * unreachable Redis or a bad STORE_URL is one line, the password redacted, exit 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killAll, runEdgeToExit, spawnEdge, type EdgeProcess } from '../helpers/edge-process'
import { freePort } from '../helpers/peers-procs'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { pollUntil } from '../helpers/wait'
import { initializeReply } from '../helpers/initialize-reply'

const TOKEN = 'redis-test-token'
const HEADERS = mcpHeaders()
const STRICT = { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] }
const LOOSER = { type: 'object', properties: { units: { enum: ['c', 'f', 'k'] } }, required: ['units'] }

let origin: ScriptedOrigin
let redis: RedisServer
let a: EdgeProcess
let b: EdgeProcess

beforeAll(async () => {
  redis = await startRedisServer()
  origin = await startScriptedOrigin()
  origin.handle((req, res) => {
    const m = req.json as { id?: unknown; method?: string }
    if (m.method === 'initialize') return sendJson(res, initializeReply(m))
    // The origin lists nothing: every schema the edges know came through the admin API and Redis.
    if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } })
    if (m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
    sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'forwarded' }] } })
  })
  const env = { ORIGIN_URL: origin.url, STORE_URL: redis.url, STORE_PREFIX: `shared-${process.pid}:`, ADMIN_TOKEN: TOKEN }
  ;[a, b] = await Promise.all([spawnEdge(env), spawnEdge(env)])
})
afterAll(async () => {
  await killAll()
  await origin?.close()
  await redis?.stop()
})

async function push(edge: EdgeProcess, name: string, inputSchema: unknown): Promise<number> {
  const res = await fetch(`${edge.base}/admin/tools/default`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tools: [{ name, inputSchema }] }),
  })
  return res.status
}

/** Calls a tool with `units`; `forwarded`: the origin saw the call. */
async function call(edge: EdgeProcess, name: string, units: string): Promise<{ forwarded: boolean; body: { error?: { code: number; message: string }; result?: unknown } }> {
  origin.reset()
  const res = await fetch(edge.url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { units } } }),
  })
  const body = (await res.json()) as { error?: { code: number; message: string }; result?: unknown }
  return { forwarded: origin.forwarded().some((r) => (r.json as { method?: string }).method === 'tools/call'), body }
}

/** Polls `check` up to `ms` until `ok`; returns its last answer. */
const within = <T>(ms: number, check: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => pollUntil(check, ok, { timeoutMs: ms })

describe('two edges on one redis-server', () => {
  it('a schema pushed on edge A validates calls on edge B', async () => {
    expect(await push(a, 'shared_tool', STRICT)).toBe(200)
    const bad = await call(b, 'shared_tool', 'k')
    expect(bad.forwarded).toBe(false)
    expect(bad.body.error?.code).toBe(-32602)
    expect(bad.body.error?.message).toContain('units')
    expect((await call(b, 'shared_tool', 'c')).forwarded).toBe(true)
  })

  it('a change pushed on A reaches B, which held the old schema in memory, at once', async () => {
    // B holds STRICT in memory from the test before (a call per TTL reads Redis at most once).
    expect((await call(b, 'shared_tool', 'k')).forwarded).toBe(false)
    expect(await push(a, 'shared_tool', LOOSER)).toBe(200)
    // Without the change notice B would refuse for SCHEMA_TTL_S (300 s).
    const after = await within(
      2_000,
      () => call(b, 'shared_tool', 'k'),
      (r) => r.forwarded
    )
    expect(after.forwarded, JSON.stringify(after.body)).toBe(true)
    // And back the other way: a push on B reaches A.
    expect((await call(a, 'shared_tool', 'k')).forwarded).toBe(true)
    expect(await push(b, 'shared_tool', STRICT)).toBe(200)
    const onA = await within(
      2_000,
      () => call(a, 'shared_tool', 'k'),
      (r) => !r.forwarded
    )
    expect(onA.forwarded).toBe(false)
  })

  it('a tool B found unknown becomes known on B once A pushes it', async () => {
    const unknown = await call(b, 'late_tool', 'c')
    expect(unknown.forwarded).toBe(false)
    expect(unknown.body.error?.code).toBe(-32602)
    expect(unknown.body.error?.message).toMatch(/unknown|not found|no tool/i)
    expect(await push(a, 'late_tool', STRICT)).toBe(200)
    const known = await within(
      2_000,
      () => call(b, 'late_tool', 'c'),
      (r) => r.forwarded
    )
    expect(known.forwarded, JSON.stringify(known.body)).toBe(true)
    const bad = await call(b, 'late_tool', 'k')
    expect(bad.forwarded).toBe(false)
    expect(bad.body.error?.message).toContain('units')
  })

  it('Redis down while running: B fails open for a tool it never read (D8) within the command bound and keeps serving; a push on A is 503, not 200', async () => {
    await redis.stop()
    const t0 = Date.now()
    const r = await call(b, 'never_read', 'k')
    // Redis refuses at once, and a read is bounded by the 1 s command bound in any case: the upper
    // bound only catches a call that waits for Redis to come back (10x).
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(r.forwarded, JSON.stringify(r.body)).toBe(true)
    expect(r.body.result).toEqual({ content: [{ type: 'text', text: 'forwarded' }] })
    // A tool B holds in memory is still validated.
    expect((await call(b, 'late_tool', 'k')).forwarded).toBe(false)
    expect((await fetch(`${b.base}/healthz`)).status).toBe(200)
    // A push is acknowledged only once stored: with Redis down the admin API answers 503.
    const res = await fetch(`${a.base}/admin/tools/default`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tools: [{ name: 'while_down', inputSchema: STRICT }] }),
    })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'the tool schema store could not be written: the push is not (or not wholly) stored, send it again' })
    expect(b.child.exitCode).toBeNull()
    expect(a.child.exitCode).toBeNull()
  })
})

describe('Redis store at start', () => {
  it('an unreachable Redis: one line naming STORE_URL, the password redacted, exit 1', async () => {
    const port = await freePort()
    const r = await runEdgeToExit({ ORIGIN_URL: origin.url, STORE_URL: `redis://edge:hunter2@127.0.0.1:${port}/0` })
    expect(r.code).toBe(1)
    const lines = (r.stdout + r.stderr).trim().split('\n')
    expect(lines.length, r.stdout + r.stderr).toBe(1)
    expect(lines[0]).toContain(`cannot reach Redis at STORE_URL=redis://edge:***@127.0.0.1:${port}/0 (connect ECONNREFUSED 127.0.0.1:${port})`)
    expect(lines[0]).toMatch(/^mcp-edge serve: /)
    expect(r.stdout + r.stderr).not.toContain('hunter2')
  })

  it('a STORE_URL that is not redis:// is a configuration error naming it', async () => {
    for (const [value, want] of [
      ['http://127.0.0.1:6379', 'STORE_URL=http://127.0.0.1:6379: expected a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0'],
      ['redis//:pw@nowhere', 'STORE_URL=redis//:***@nowhere: expected a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0'],
      ['redis://:pw@', 'STORE_URL=redis://:***@: expected a redis:// or rediss:// URL with a host, such as redis://127.0.0.1:6379/0'],
    ] as const) {
      const r = await runEdgeToExit({ ORIGIN_URL: origin.url, STORE_URL: value })
      expect(r.code).toBe(1)
      expect((r.stdout + r.stderr).trim().split('\n'), r.stdout + r.stderr).toEqual([`mcp-edge serve: ${want}`])
    }
  })
})
