/**
 * `mcp-edge schemas list|get|push|pull|delete` (the built command as a real process): through a
 * running edge's admin API (`mcp-edge serve` as a process, the SDK demo origin behind it) and
 * directly against a store file; what is pushed is what the edge validates with; pull writes
 * what push reads; errors are one line with exit 1, bad command lines exit 2.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { MCP_HEADERS, runCli, startServe, type CliRun, type ServeProcess } from '../helpers/cli-process'
import { freePort } from '../helpers/peers-procs'
import { startRedisServer } from '../helpers/redis-server'

const TOKEN = 'schemas-cli-token'
let dir: string
let origin: RunningOrigin
let edge: ServeProcess
let base: string

const TOOLS = {
  tools: [
    { name: 'ship', inputSchema: { type: 'object', properties: { weight: { type: 'number', maximum: 30 } }, required: ['weight'] } },
    {
      name: 'track',
      inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{2}[0-9]{6}$' } }, required: ['code'] },
      outputSchema: { type: 'object' },
    },
  ],
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'schemas-cli-'))
  writeFileSync(join(dir, 'tools.json'), JSON.stringify(TOOLS))
  origin = await startDemoOrigin({ port: 0 })
  edge = await startServe([], { ORIGIN_URL: origin.url, PORT: '0', STORE_FILE: join(dir, 'edge-kv.json'), ADMIN_TOKEN: TOKEN })
  base = edge.url.replace(/\/mcp$/, '')
})

afterAll(async () => {
  edge?.kill()
  await origin?.close()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * Runs independent `mcp-edge` processes two at a time (one per core of the test machine) and
 * resolves with their runs in order. Each start of the built command costs about 0.9 s of CPU, most
 * of it loading every subcommand's dependencies (a bundle of only `schemas` and its imports starts
 * in 0.35 s); one after another, the eleven of one test took over 30 s with a second suite beside
 * it. More at once would not be faster on two cores, only slower per process (runCli's bound).
 */
async function runAll(runs: (() => Promise<CliRun>)[]): Promise<CliRun[]> {
  const out: CliRun[] = new Array(runs.length)
  let next = 0
  const lane = async () => {
    for (let i = next++; i < runs.length; i = next++) out[i] = await runs[i]!()
  }
  await Promise.all([lane(), lane()])
  return out
}

const viaEdge = (args: string[], env: Record<string, string> = {}) => runCli(['schemas', ...args, '--edge', base], { ADMIN_TOKEN: TOKEN, ...env })

async function callTool(name: string, args: unknown): Promise<{ error?: { code: number; message: string } }> {
  const r = await fetch(edge.url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  })
  return (await r.json()) as { error?: { code: number; message: string } }
}

describe('mcp-edge schemas against a running edge (admin API)', () => {
  it('push stores the file; the edge validates with it', async () => {
    const run = await viaEdge(['push', join(dir, 'tools.json')])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('stored 2 tools: ship, track\n')
    const refused = await callTool('ship', { weight: 99 })
    expect(refused.error?.code).toBe(-32602)
    expect(refused.error?.message).toContain('Invalid arguments for tool "ship"')
  })

  it('list and get show the stored records', async () => {
    const list = await viaEdge(['list'])
    expect(list.code).toBe(0)
    const names = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t')[0])
    expect(names).toEqual(expect.arrayContaining(['ship', 'track']))
    const json = await viaEdge(['list', '--json'])
    const listed = JSON.parse(json.stdout) as { tools: { name: string; hash: string }[] }
    expect(listed.tools.find((t) => t.name === 'ship')?.hash).toMatch(/^[0-9a-f]+$/)
    const get = await viaEdge(['get', 'track'])
    expect(get.code).toBe(0)
    expect(JSON.parse(get.stdout)).toMatchObject({ name: 'track', inputSchema: TOOLS.tools[1]!.inputSchema, outputSchema: { type: 'object' } })
  })

  it('pull writes what push reads', async () => {
    const file = join(dir, 'pulled.json')
    const pull = await viaEdge(['pull', file])
    expect(pull.code).toBe(0)
    const pulled = JSON.parse(readFileSync(file, 'utf8')) as typeof TOOLS
    for (const t of TOOLS.tools) expect(pulled.tools).toContainEqual(t)
    const again = await viaEdge(['push', file])
    expect(again.code).toBe(0)
  })

  it('delete removes a record: get then fails with one line, exit 1', async () => {
    const del = await viaEdge(['delete', 'ship'])
    expect(del.code).toBe(0)
    expect(del.stdout).toBe('deleted ship\n')
    const get = await viaEdge(['get', 'ship'])
    expect(get.code).toBe(1)
    expect(get.stderr).toBe('mcp-edge schemas get: no stored schema for tool ship\n')
    const twice = await viaEdge(['delete', 'ship'])
    expect(twice.code).toBe(1)
  })

  it('a wrong token, an unreachable edge and a bad file are one line each, exit 1; the token is not echoed', async () => {
    const closed = await freePort()
    writeFileSync(join(dir, 'bad.json'), '{"tools":[{"inputSchema":{}}]}')
    const [wrong, gone, bad] = await runAll([
      () => viaEdge(['list'], { ADMIN_TOKEN: 'not-the-token-123' }),
      () => runCli(['schemas', 'list', '--edge', `http://127.0.0.1:${closed}`, '--token', 'x']),
      () => viaEdge(['push', join(dir, 'bad.json')]),
    ])
    expect(wrong!.code).toBe(1)
    expect(wrong!.stderr).toMatch(/^mcp-edge schemas list: the edge at http:\/\/127\.0\.0\.1:\d+ refused the token \(401\): check --token or ADMIN_TOKEN\n$/)
    expect(wrong!.stderr).not.toContain('not-the-token-123')
    expect(gone!.code).toBe(1)
    expect(gone!.stderr).toBe(`mcp-edge schemas list: cannot reach the edge at http://127.0.0.1:${closed}: ECONNREFUSED\n`)
    expect(bad!.code).toBe(1)
    expect(bad!.stderr).toContain('tools[0] needs a non-empty "name" and an "inputSchema"')
  })

  it('bad command lines exit 2', async () => {
    const lines = [
      ['schemas', 'list'], // neither --edge nor --store-file
      ['schemas', 'list', '--edge', base, '--store-file', join(dir, 'x.json')],
      ['schemas', 'get', '--edge', base], // missing <tool>
      ['schemas', 'list', '--edge', 'not a url', '--token', 't'],
      ['schemas', 'frobnicate'],
    ]
    // Independent runs, two at a time (see `runAll`).
    const runs = await runAll(lines.map((args) => () => runCli(args)))
    for (const [i, run] of runs.entries()) expect(run.code, lines[i]!.join(' ')).toBe(2)
  })
})

describe('mcp-edge schemas directly against a store file', () => {
  it('push, list, get, pull, delete on a file; an edge started on it validates with what was pushed', async () => {
    const store = join(dir, 'direct-kv.json')
    const at = ['--store-file', store]
    const push = await runCli(['schemas', 'push', join(dir, 'tools.json'), ...at])
    expect(push.code, push.stderr).toBe(0)
    expect(push.stdout).toBe('stored 2 tools: ship, track\n')
    const list = await runCli(['schemas', 'list', ...at])
    expect(list.code, list.stderr).toBe(0)
    expect(
      list.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0])
    ).toEqual(['ship', 'track'])
    const pull = await runCli(['schemas', 'pull', ...at])
    expect((JSON.parse(pull.stdout) as typeof TOOLS).tools).toEqual(TOOLS.tools)
    const del = await runCli(['schemas', 'delete', 'track', ...at])
    expect(del.code).toBe(0)
    const gone = await runCli(['schemas', 'get', 'track', ...at])
    expect(gone.code).toBe(1)

    const other = await startServe([], { ORIGIN_URL: origin.url, PORT: '0', STORE_FILE: store })
    try {
      const r = await fetch(other.url, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ship', arguments: { weight: 31 } } }),
      })
      const body = (await r.json()) as { error?: { code: number; message: string } }
      expect(body.error?.message).toContain('weight: must be <= 30')
      // The running edge holds the file: a direct run is refused with one line, exit 1.
      const held = await runCli(['schemas', 'list', ...at])
      expect(held.code).toBe(1)
      expect(held.stderr.trim().split('\n')).toHaveLength(1)
      expect(held.stderr).toMatch(/^mcp-edge schemas list: /)
    } finally {
      other.kill()
    }
  })

  it('a --store-file that is not a store is refused and left as it is; a missing one is not created by a read', async () => {
    const notes = join(dir, 'notes.txt')
    writeFileSync(notes, '# my notes, not a store\n')
    const config = join(dir, 'package.json')
    writeFileSync(config, '{"name":"my-app","version":"1.0.0"}')
    const commands = [['list'], ['get', 'ship'], ['pull'], ['delete', 'ship'], ['push', join(dir, 'tools.json')]]
    for (const file of [notes, config]) {
      const before = readFileSync(file, 'utf8')
      // The five refusals two at a time (see `runAll`); the file is compared with what it held
      // before them all, so a command that touched it still fails the test.
      const runs = await runAll(commands.map((args) => () => runCli(['schemas', ...args, '--store-file', file])))
      for (const [i, run] of runs.entries()) {
        const command = commands[i]![0]
        expect(run.code, `${command}: ${run.stderr}`).toBe(1)
        expect(run.stderr).toBe(`mcp-edge schemas ${command}: ${file} is not an edge store file (left as it is): check --store-file\n`)
      }
      expect(readFileSync(file, 'utf8')).toBe(before)
    }
    const missing = join(dir, 'no-such-dir', 'kv.json')
    const list = await runCli(['schemas', 'list', '--store-file', missing])
    expect(list.code).toBe(1)
    expect(list.stderr).toContain(`no store file at ${missing}`)
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false)
  })
})

describe('mcp-edge schemas directly against Redis (--store-url)', () => {
  it('push and list through Redis; a running edge on the same Redis validates with the pushed schema at once', async () => {
    const redis = await startRedisServer()
    const shared = await startServe([], { ORIGIN_URL: origin.url, PORT: '0', STORE_URL: redis.url, STORE_PREFIX: 'cli-test:' })
    try {
      const at = ['--store-url', redis.url, '--store-prefix', 'cli-test:']
      const push = await runCli(['schemas', 'push', join(dir, 'tools.json'), ...at])
      expect(push.code, push.stderr).toBe(0)
      expect(push.stdout).toBe('stored 2 tools: ship, track\n')
      const list = await runCli(['schemas', 'list', ...at])
      expect(
        list.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t')[0])
      ).toEqual(['ship', 'track'])
      const r = await fetch(shared.url, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ship', arguments: { weight: 31 } } }),
      })
      expect(((await r.json()) as { error?: { message: string } }).error?.message).toContain('weight: must be <= 30')
      const bad = await runCli(['schemas', 'list', '--store-url', 'redis://'])
      expect(bad.code).toBe(1)
      expect(bad.stderr).toMatch(/^mcp-edge schemas list: --store-url redis:\/\/: expected a redis:\/\/ or rediss:\/\/ URL/)
    } finally {
      shared.kill()
      await redis.stop()
    }
  })
})
