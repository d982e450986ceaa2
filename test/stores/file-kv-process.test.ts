/**
 * The file store under a real Node edge process (`mcp-edge serve`, bundled): schemas pushed through
 * the admin API and answered 200 survive `kill -9` right after the answer (in a bounded loop, with
 * concurrent pushes), no temporary file is left; a corrupt store file at start gives one clear line,
 * is kept aside and the edge serves; a second edge on the same file refuses to start, naming the
 * file and the shared store.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { killAll, runEdgeToExit, spawnEdge, type EdgeProcess } from '../helpers/edge-process'
import { emptyToolsOrigin, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/mcp'
import { toolKey } from '../../src/core/validation/tool-store'

const TOKEN = 'store-test-token'
const HEADERS = mcpHeaders()
/** The pushed schema: `units` must be c or f. The origin lists no tools: every schema the edge knows was pushed. */
const STRICT = { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] }

let origin: ScriptedOrigin
const dirs: string[] = []

beforeAll(async () => {
  origin = await startScriptedOrigin()
  // A lost push would show: the tool would be unknown (-32602 naming no argument) after a restart.
  origin.handle(emptyToolsOrigin())
})
afterEach(async () => {
  await killAll()
})
afterAll(async () => {
  await killAll()
  await origin?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function storeDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'edge-store-proc-'))
  dirs.push(d)
  return d
}

function edgeEnv(file: string): Record<string, string> {
  return { ORIGIN_URL: origin.url, STORE_FILE: file, ADMIN_TOKEN: TOKEN }
}

async function push(edge: EdgeProcess, names: string[]): Promise<Response> {
  return fetch(`${edge.base}/admin/tools/default`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tools: names.map((name) => ({ name, inputSchema: STRICT })) }),
  })
}

async function callTool(edge: EdgeProcess, name: string, units: string): Promise<{ forwarded: boolean; body: { error?: { code: number; message: string } } }> {
  origin.reset()
  const res = await fetch(edge.url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { units } } }),
  })
  const body = (await res.json()) as { error?: { code: number; message: string } }
  return { forwarded: origin.forwarded().some((r) => (r.json as { method?: string }).method === 'tools/call'), body }
}

/**
 * The edge holds the pushed schema of `name`: `units: "k"` is refused naming `units` (an unknown
 * tool would be refused naming no argument) and never reaches the origin; `units: "c"` is forwarded.
 */
async function badCall(edge: EdgeProcess, name: string): Promise<{ refused: boolean; body: unknown }> {
  const bad = await callTool(edge, name, 'k')
  const good = await callTool(edge, name, 'c')
  return { refused: bad.body.error?.code === -32602 && bad.body.error.message.includes('units') && !bad.forwarded && good.forwarded, body: { bad: bad.body, good: good.body } }
}

/** Files of the store folder that are neither the store, its lock, nor a kept-aside corrupt file. */
function strayFiles(dir: string): string[] {
  return readdirSync(dir).filter((n) => n !== 'kv.json' && n !== 'kv.json.mcp-edge.lock' && !n.startsWith('kv.json.corrupt-'))
}

describe('file store under kill -9', () => {
  it('every push answered 200 survives kill -9 right after the answer; a start leaves no temporary file (6 rounds)', async () => {
    const dir = storeDir()
    const file = join(dir, 'kv.json')
    const acknowledged: string[] = []
    let leftByKill = 0
    for (let round = 0; round < 6; round++) {
      const edge = await spawnEdge(edgeEnv(file))
      // The kill of the round before may have cut a write (the next one of the group commit): its
      // temporary file is gone once the edge has started, and said so.
      expect(strayFiles(dir), `round ${round}`).toEqual([])
      if (/removed \d+ temporary file/.test(edge.output())) leftByKill++
      const names = Array.from({ length: 8 }, (_, i) => `tool_${round}_${i}`)
      // Eight concurrent pushes (they share file writes); the process dies at the first answer.
      const answers = names.map(async (n) => {
        const res = await push(edge, [n])
        if (res.status === 200) {
          acknowledged.push(n)
          edge.child.kill('SIGKILL')
        }
      })
      await Promise.allSettled(answers)
      const { signal } = await edge.exited
      expect(signal, edge.output()).toBe('SIGKILL')
      if (strayFiles(dir).length > 0)
        expect(
          strayFiles(dir).every((n) => /^kv\.json\.mcp-edge-\d+-\d+\.tmp$/.test(n)),
          strayFiles(dir).join()
        ).toBe(true)
    }
    expect(acknowledged.length).toBeGreaterThanOrEqual(6)
    const edge = await spawnEdge(edgeEnv(file))
    expect(strayFiles(dir)).toEqual([])
    console.log(`kill -9 rounds: ${acknowledged.length} pushes acknowledged, all kept; ${leftByKill} of 5 restarts removed a cut write's temporary file`)
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { entries: Record<string, { value: string }> }
    for (const n of acknowledged) {
      expect(Object.keys(saved.entries), n).toContain(toolKey('default', 'public', n))
      const call = await badCall(edge, n)
      expect(call.refused, `${n}: ${JSON.stringify(call.body)}`).toBe(true)
    }
    // A stop that closes the store removes its lock too.
    edge.child.kill('SIGTERM')
    await edge.exited
    expect(readdirSync(dir)).toEqual(['kv.json'])
  }, 120_000)
})

describe('file store at start', () => {
  it('a truncated store file: one clear line, the file kept aside byte for byte, the edge serves and learns again', async () => {
    const dir = storeDir()
    const file = join(dir, 'kv.json')
    const whole = JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: { [toolKey('default', 'public', 'x')]: { value: '{"name":"x"}', expiresAt: null } } })
    const truncated = whole.slice(0, 40)
    writeFileSync(file, truncated)
    const edge = await spawnEdge(edgeEnv(file))
    const lines = edge
      .output()
      .split('\n')
      .filter((l) => l.includes('corrupt'))
    expect(lines.length, edge.output()).toBe(1)
    expect(lines[0]).toContain(file)
    expect(lines[0]).toMatch(/truncated \(/)
    expect(lines[0]).toMatch(/starting with an empty store/)
    expect(edge.output()).not.toMatch(/\n\s+at /) // no stack trace
    const aside = readdirSync(dir).filter((n) => n.startsWith('kv.json.corrupt-'))
    expect(aside.length).toBe(1)
    expect(lines[0]).toContain(join(dir, aside[0]!))
    expect(readFileSync(join(dir, aside[0]!), 'utf8')).toBe(truncated)
    expect((await fetch(`${edge.base}/healthz`)).status).toBe(200)
    // It learns and keeps schemas again.
    expect((await push(edge, ['after_corrupt'])).status).toBe(200)
    expect(readFileSync(file, 'utf8')).toContain('after_corrupt')
    expect((await badCall(edge, 'after_corrupt')).refused).toBe(true)
  })

  it('a second edge on the same store file refuses to start with one line naming the file and the shared store', async () => {
    const dir = storeDir()
    const file = join(dir, 'kv.json')
    const first = await spawnEdge(edgeEnv(file))
    const second = await runEdgeToExit(edgeEnv(file))
    expect(second.code).toBe(1)
    const lines = (second.stdout + second.stderr).trim().split('\n')
    expect(lines.length, second.stdout + second.stderr).toBe(1)
    expect(lines[0]).toMatch(/^mcp-edge serve: store file /)
    expect(lines[0]).toContain(`store file ${file} is in use by another edge, pid ${first.child.pid}`)
    expect(lines[0]).toContain('STORE_URL=redis://')
    // The first one is untouched and keeps serving.
    expect((await push(first, ['still_first'])).status).toBe(200)
    expect((await badCall(first, 'still_first')).refused).toBe(true)
    // Once the first is gone (even by kill -9), the file can be used again at once.
    first.child.kill('SIGKILL')
    await first.exited
    const next = await spawnEdge(edgeEnv(file))
    expect((await badCall(next, 'still_first')).refused).toBe(true)
  })
})
