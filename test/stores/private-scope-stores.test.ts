/**
 * The bounds of private tool-list scopes on the stores a Node edge runs with, through real
 * `mcp-edge serve` processes in front of a real origin that marks its list `cacheScope: "private"`
 * (docs/scope.md "Bounds"):
 * - the file store: every private key is written with PRIVATE_SCOPE_TTL_S (the file keeps its
 *   expiry), at most MAX_PRIVATE_SCOPES scopes stay, also across a restart (the new process sweeps
 *   what the earlier one left);
 * - Redis, shared by two edges: the values carry `EX`, and the two together keep the origin at
 *   MAX_PRIVATE_SCOPES (+ one sweep per edge), the key index included.
 */
import { Redis } from 'ioredis'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepEvery } from '../../src/core/validation/private-scopes'
import { killAll, spawnEdge, type EdgeProcess } from '../helpers/edge-process'
import { startRedisServer, type RedisServer } from '../helpers/redis-server'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { toolPrefix, scopeMarkerPrefix } from '../../src/core/validation/tool-store'
import { initializeReply } from '../helpers/initialize-reply'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
const TOOLS = [
  { name: 'get_weather', inputSchema: { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] } },
  { name: 'get_alerts', inputSchema: { type: 'object' } },
]
const MAX = 5
const TTL_S = 120
const BOUND = MAX + sweepEvery(MAX)
const SETTINGS = { MAX_PRIVATE_SCOPES: String(MAX), PRIVATE_SCOPE_TTL_S: String(TTL_S), REFRESH_BUDGET_PER_MIN: '1000' }

let origin: ScriptedOrigin
let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-edge-private-scopes-'))
  origin = await startScriptedOrigin()
  origin.handle((req, res) => {
    const m = req.json as { id?: unknown; method?: string }
    if (m.method === 'initialize') return sendJson(res, initializeReply(m))
    if (m.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: TOOLS, cacheScope: 'private' } })
    if (m.id === undefined || req.method !== 'POST') return void res.writeHead(202).end()
    sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'forwarded' }] } })
  })
})
afterAll(async () => {
  await killAll()
  await origin?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** One caller's call with invalid arguments: the edge pulls its private list and refuses the call from it. */
async function callAs(edge: EdgeProcess, caller: string): Promise<void> {
  const res = await fetch(edge.url, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${caller}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { units: 'k' } } }),
  })
  const body = (await res.json()) as { error?: { message: string } }
  expect(body.error?.message, JSON.stringify(body)).toContain('units')
}

/** Distinct private scopes among `keys` under `prefix` (toolPrefix: `tools:default:u-...:<tool>`, scopeMarkerPrefix: `scopes:default:u-...`). */
function scopesOf(keys: string[], prefix: string): Set<string> {
  return new Set(keys.filter((k) => k.startsWith(`${prefix}u-`)).map((k) => k.slice(prefix.length).split(':')[0]!))
}

/** Polls `check` every 25 ms up to `ms`; returns its last answer. */
async function eventually<T>(ms: number, check: () => T | Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await check()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('the file store', () => {
  it('private keys expire after PRIVATE_SCOPE_TTL_S and at most MAX_PRIVATE_SCOPES scopes stay, also after a restart', async () => {
    const file = join(dir, 'kv.json')
    const entries = () => (JSON.parse(readFileSync(file, 'utf8')) as { entries: Record<string, { expiresAt: number | null }> }).entries
    let edge = await spawnEdge({ ORIGIN_URL: origin.url, STORE_FILE: file, ...SETTINGS })
    const t0 = Date.now()
    for (let i = 0; i < 30; i++) {
      await callAs(edge, `file-caller-${i}`)
      expect(scopesOf(Object.keys(entries()), toolPrefix('default')).size).toBeLessThanOrEqual(BOUND)
    }
    const e = entries()
    const privateKeys = Object.keys(e).filter((k) => /^(tools|toollist):default:u-/.test(k))
    expect(privateKeys.length).toBeGreaterThanOrEqual(MAX * 3)
    for (const k of privateKeys) {
      expect(e[k]!.expiresAt, k).toBeGreaterThanOrEqual(t0 + TTL_S * 1000)
      expect(e[k]!.expiresAt, k).toBeLessThanOrEqual(Date.now() + TTL_S * 1000)
    }
    for (const k of Object.keys(e).filter((k) => k.startsWith(scopeMarkerPrefix('default')))) expect(e[k]!.expiresAt, k).toBeGreaterThanOrEqual(t0 + 2 * TTL_S * 1000)
    expect(scopesOf(Object.keys(e), scopeMarkerPrefix('default'))).toEqual(scopesOf(Object.keys(e), toolPrefix('default')))

    // A restart: the new process never held the earlier scopes; its own new ones sweep them out.
    edge.child.kill('SIGTERM')
    await edge.exited
    const before = scopesOf(Object.keys(entries()), toolPrefix('default'))
    edge = await spawnEdge({ ORIGIN_URL: origin.url, STORE_FILE: file, ...SETTINGS })
    for (let i = 0; i < 10; i++) await callAs(edge, `file-caller-after-${i}`)
    const after = await eventually(
      3_000,
      () => scopesOf(Object.keys(entries()), toolPrefix('default')),
      (s) => s.size <= BOUND
    )
    expect(after.size).toBeLessThanOrEqual(BOUND)
    expect([...after].filter((s) => before.has(s))).toEqual([])
    expect(scopesOf(Object.keys(entries()), scopeMarkerPrefix('default')).size).toBeLessThanOrEqual(BOUND)
  })
})

describe('Redis shared by two edges', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedisServer()
  })
  afterAll(async () => {
    await killAll()
    await redis?.stop()
  })

  it('private values carry EX; the two edges together keep the origin at MAX_PRIVATE_SCOPES, its key index included', async () => {
    const prefix = `private-${process.pid}:`
    const env = { ORIGIN_URL: origin.url, STORE_URL: redis.url, STORE_PREFIX: prefix, ...SETTINGS }
    const [a, b] = await Promise.all([spawnEdge(env), spawnEdge(env)])
    const client = new Redis(redis.url)
    try {
      const storeKeys = async () => (await client.keys(`${prefix}v:*`)).map((k) => k.slice(`${prefix}v:`.length))
      for (let i = 0; i < 30; i++) await callAs(i % 2 ? a : b, `redis-caller-${i}`)
      // Each edge deletes what it dropped at once; the other edge's scopes go with its sweeps.
      const kept = await eventually(
        3_000,
        async () => scopesOf(await storeKeys(), toolPrefix('default')),
        (s) => s.size <= BOUND
      )
      expect(kept.size).toBeLessThanOrEqual(BOUND)
      expect(scopesOf(await storeKeys(), scopeMarkerPrefix('default')).size).toBeLessThanOrEqual(BOUND)
      const sample = (await storeKeys()).find((k) => k.startsWith(`${toolPrefix('default')}u-`))!
      const pttl = await client.pttl(`${prefix}v:${sample}`)
      expect(pttl).toBeGreaterThan(0)
      expect(pttl).toBeLessThanOrEqual(TTL_S * 1000)
      // The sorted-set index holds no member for a deleted key.
      const members = await client.zrange(`${prefix}keys`, '0', '-1')
      expect(scopesOf(members, toolPrefix('default')).size).toBeLessThanOrEqual(BOUND)
    } finally {
      client.disconnect()
    }
  })
})
