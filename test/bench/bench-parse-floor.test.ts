/**
 * The benchmark's Node floors (scripts/bench/bare-node.ts, docs/performance.md "The floors"): the
 * parse floor (`BARE_PARSE=1`) and the validating floor (`BARE_VALIDATE=1`), the numerator of every
 * Node target in BENCHMARKS.md. Each must relay the origin's bytes unchanged and really do its
 * work: parse both messages; validate the arguments against the tool's schema and write one log
 * line per POST (a floor that skipped its work would make every edge ratio look worse than it is).
 * Real processes: the bench origin (scripts/bench/origin.ts), the floors and bare Node, and a
 * `node:http` origin in this process that answers what no real server would (a reply that does not
 * parse) and counts what reaches it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO } from '../helpers/repo'
import { TOOLS } from '../../scripts/bench/schemas'

const children: ChildProcess[] = []

/** Lines the validating floor has written to its stdout (its log). */
const logged: string[] = []
/** Resolves once `logged` holds `n` lines (the floor writes a turn's lines after that turn). */
function loggedLines(n: number): Promise<string[]> {
  return new Promise((res) => {
    const check = () => (logged.length >= n ? res(logged.slice(0, n)) : setImmediate(check))
    check()
  })
}

/**
 * Starts `scripts/bench/<name>.ts` under tsx with an IPC channel; resolves with the port it
 * reports. `log`: its stdout lines go to {@link logged}.
 */
function start(name: string, env: Record<string, string>, log = false): Promise<string> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(REPO, `scripts/bench/${name}.ts`)], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', log ? 'pipe' : 'ignore', 'inherit', 'ipc'],
  })
  children.push(proc)
  if (log) {
    let rest = ''
    proc.stdout!.on('data', (d: Buffer) => {
      const lines = (rest + d.toString()).split('\n')
      rest = lines.pop()!
      logged.push(...lines)
    })
  }
  return new Promise((res, rej) => {
    proc.once('message', (m) => res(`http://127.0.0.1:${(m as { port: number }).port}`))
    proc.once('exit', (code) => rej(new Error(`${name} exited with ${code} before it was ready`)))
  })
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: TOOLS[1]!.name, arguments: TOOLS[1]!.valid } })

async function post(url: string, body: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const r = await fetch(url, { method: 'POST', headers: HEADERS, body })
  return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) }
}

/** What the in-process origin answers next, and the POSTs it has received. */
const broken = { reply: { type: 'application/json', body: '' }, received: 0 }
let brokenServer: Server
let origin: string
let parseFloor: string
let bare: string
let parseToBroken: string
let bareToBroken: string
let validating: string
let validatingToBroken: string
const TOOLS_JSON = JSON.stringify(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))

beforeAll(async () => {
  brokenServer = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      broken.received++
      res.writeHead(200, { 'content-type': broken.reply.type }).end(broken.reply.body)
    })
  })
  await new Promise<void>((r) => brokenServer.listen(0, '127.0.0.1', r))
  const brokenBase = `http://127.0.0.1:${(brokenServer.address() as AddressInfo).port}`
  origin = await start('origin', {})
  ;[parseFloor, bare, parseToBroken, bareToBroken, validating, validatingToBroken] = await Promise.all([
    start('bare-node', { ORIGIN_BASE: origin, BARE_PARSE: '1' }),
    start('bare-node', { ORIGIN_BASE: origin }),
    start('bare-node', { ORIGIN_BASE: brokenBase, BARE_PARSE: '1' }),
    start('bare-node', { ORIGIN_BASE: brokenBase }),
    start('bare-node', { ORIGIN_BASE: origin, BARE_VALIDATE: '1', BENCH_TOOLS: TOOLS_JSON }, true),
    start('bare-node', { ORIGIN_BASE: brokenBase, BARE_VALIDATE: '1', BENCH_TOOLS: TOOLS_JSON }),
  ])
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await new Promise((r) => brokenServer?.close(r))
})

describe('the parse floor (BARE_PARSE=1)', () => {
  it.each([
    ['a small reply', '/mcp', JSON.stringify(call(1))],
    ['a 100 KB text reply', '/text/102400', JSON.stringify(call(2))],
    ['a 1 MB text reply', '/text/1048576', JSON.stringify(call(3))],
    ['a 100 KB structuredContent reply', '/reply/102400', JSON.stringify(call(4))],
    ['a batch of 10', '/mcp', JSON.stringify(Array.from({ length: 10 }, (_, i) => call(i + 1)))],
    ['an SSE reply of 1,000 events', '/sse/1000', JSON.stringify(call(5))],
  ])('relays %s byte for byte, as the origin sent it', async (_what, path, body) => {
    const direct = await post(origin + path, body)
    expect(direct.status).toBe(200)
    const relayed = await post(parseFloor + path, body)
    expect(relayed.status).toBe(200)
    expect(relayed.type).toBe(direct.type)
    expect(relayed.bytes.equals(direct.bytes)).toBe(true)
  })

  it('parses the request: a body that is not JSON is answered 400 without the origin (bare Node forwards it)', async () => {
    broken.reply = { type: 'application/json', body: '{"jsonrpc":"2.0","id":1,"result":{}}' }
    const before = broken.received
    const r = await post(`${parseToBroken}/mcp`, '{"jsonrpc":"2.0","id":1,')
    expect(r.status).toBe(400)
    expect(JSON.parse(r.bytes.toString()).error.code).toBe(-32700)
    expect(broken.received).toBe(before)
    const forwarded = await post(`${bareToBroken}/mcp`, '{"jsonrpc":"2.0","id":1,')
    expect(forwarded.status).toBe(200)
    expect(broken.received).toBe(before + 1)
  })

  it('parses a JSON reply: one that does not parse never reaches the client (bare Node relays it)', async () => {
    broken.reply = { type: 'application/json', body: '{"jsonrpc":"2.0","id":1,"result":' }
    await expect(post(`${parseToBroken}/mcp`, JSON.stringify(call(1)))).rejects.toThrow()
    expect((await post(`${bareToBroken}/mcp`, JSON.stringify(call(1)))).bytes.toString()).toBe(broken.reply.body)
  })

  it("parses every SSE event's data: an event that does not parse cuts the stream (bare Node relays it)", async () => {
    const good = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n'
    broken.reply = { type: 'text/event-stream', body: `${good}event: message\ndata: {"jsonrpc":"2.0","id":1,"result":\n\n` }
    await expect(post(`${parseToBroken}/mcp`, JSON.stringify(call(1)))).rejects.toThrow()
    expect((await post(`${bareToBroken}/mcp`, JSON.stringify(call(1)))).bytes.toString()).toBe(broken.reply.body)
    // The same stream with a final event that parses is relayed whole.
    broken.reply = { type: 'text/event-stream', body: `${good}event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n` }
    expect((await post(`${parseToBroken}/mcp`, JSON.stringify(call(1)))).bytes.toString()).toBe(broken.reply.body)
  })
})

describe('the validating floor (BARE_VALIDATE=1)', () => {
  const invalidCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: TOOLS[1]!.name, arguments: TOOLS[1]!.invalid } })

  it.each([
    ['a small reply', '/mcp', JSON.stringify(call(1))],
    ['a 100 KB text reply', '/text/102400', JSON.stringify(call(2))],
    ['a batch of 10', '/mcp', JSON.stringify(Array.from({ length: 10 }, (_, i) => call(i + 1)))],
  ])('relays %s of a valid call byte for byte, as the origin sent it', async (_what, path, body) => {
    const direct = await post(origin + path, body)
    const relayed = await post(validating + path, body)
    expect(relayed.status).toBe(200)
    expect(relayed.type).toBe(direct.type)
    expect(relayed.bytes.equals(direct.bytes)).toBe(true)
  })

  it("validates the arguments against the tool's schema: a failing call is answered -32602 without the origin (the parse floor forwards it)", async () => {
    broken.reply = { type: 'application/json', body: '{"jsonrpc":"2.0","id":7,"result":{}}' }
    const before = broken.received
    const r = await post(`${validatingToBroken}/mcp`, JSON.stringify(invalidCall(7)))
    expect(r.status).toBe(200)
    expect(JSON.parse(r.bytes.toString())).toMatchObject({ id: 7, error: { code: -32602 } })
    expect(broken.received).toBe(before)
    // The same call with valid arguments goes through.
    expect((await post(`${validatingToBroken}/mcp`, JSON.stringify(call(7)))).bytes.toString()).toBe(broken.reply.body)
    expect(broken.received).toBe(before + 1)
    await post(`${parseToBroken}/mcp`, JSON.stringify(invalidCall(7)))
    expect(broken.received).toBe(before + 2)
  })

  it('writes one JSON log line per POST, naming every call it held', async () => {
    const start = logged.length
    await post(`${validating}/mcp`, JSON.stringify(call(41)))
    await post(`${validating}/mcp`, JSON.stringify([call(42), call(43)]))
    await post(`${validating}/mcp`, JSON.stringify(invalidCall(44)))
    const lines = (await loggedLines(start + 3)).slice(start).map((l) => JSON.parse(l) as { calls: { id: number; tool: string; valid: boolean }[]; status: number })
    expect(lines.map((l) => l.calls.map((c) => [c.id, c.tool, c.valid]))).toEqual([
      [[41, TOOLS[1]!.name, true]],
      [
        [42, TOOLS[1]!.name, true],
        [43, TOOLS[1]!.name, true],
      ],
      [[44, TOOLS[1]!.name, false]],
    ])
    expect(lines.every((l) => l.status === 200)).toBe(true)
  })
})
