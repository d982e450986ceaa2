/**
 * The file store under real `mcp-edge serve` processes never touches a file it did not make: user
 * files beside `STORE_FILE` (numbered logs, `<store>.lock` such as yarn.lock) stay byte for byte
 * through a start, a push and a stop; a symlink to a store in use is refused and no acknowledged
 * push is lost; a file that is not an edge store (JSON with comments) is refused and left as it is;
 * a `STORE_FILE` in a missing folder (also under /proc) is refused with one line naming it and the
 * folder, exit 1, nothing created; the default `.edge-data` is still created on a fresh checkout.
 */
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { killAll, runEdgeToExit, spawnEdge, type EdgeProcess } from '../helpers/edge-process'
import { CLI } from '../helpers/cli-process'
import { emptyToolsOrigin, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'

const TOKEN = 'user-files-token'
const STRICT = { type: 'object', properties: { units: { enum: ['c', 'f'] } }, required: ['units'] }

let origin: ScriptedOrigin
const dirs: string[] = []

beforeAll(async () => {
  origin = await startScriptedOrigin()
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

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'edge-user-files-'))
  dirs.push(d)
  return d
}

/** Writes the user's files (name -> content) in `dir`; returns a check that each is still there byte for byte. */
function plant(dir: string, files: Record<string, string>): () => void {
  for (const [n, text] of Object.entries(files)) writeFileSync(join(dir, n), text)
  return () => {
    for (const [n, text] of Object.entries(files)) expect(readFileSync(join(dir, n), 'utf8'), `${n} is the user's`).toBe(text)
  }
}

async function push(edge: EdgeProcess, name: string): Promise<number> {
  const res = await fetch(`${edge.base}/admin/tools/default`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tools: [{ name, inputSchema: STRICT }] }),
  })
  await res.text()
  return res.status
}

/** The edge holds the pushed schema of `name`: a bad `units` is refused naming it. */
async function holds(edge: EdgeProcess, name: string): Promise<boolean> {
  const res = await fetch(edge.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { units: 'k' } } }),
  })
  const body = (await res.json()) as { error?: { code: number; message: string } }
  return body.error?.code === -32602 && body.error.message.includes('units')
}

async function stop(edge: EdgeProcess): Promise<void> {
  edge.child.kill('SIGTERM')
  const { code } = await edge.exited
  expect(code, edge.output()).toBe(0)
}

const env = (file: string) => ({ ORIGIN_URL: origin.url, STORE_FILE: file, ADMIN_TOKEN: TOKEN })

describe('file store: the user files beside STORE_FILE', () => {
  it('STORE_FILE=logs/app.log: app.log.1, app.log.2, app.log.20261201, app.log.1.tmp stay byte for byte through start, push and stop', async () => {
    const dir = freshDir()
    const same = plant(dir, { 'app.log.1': 'line 1\n', 'app.log.2': 'line 2\n', 'app.log.20261201': 'december\n', 'app.log.1.tmp': 'an editor copy\n' })
    const edge = await spawnEdge(env(join(dir, 'app.log')))
    expect(edge.output()).not.toContain('removed')
    same()
    expect(await push(edge, 'weather')).toBe(200)
    await stop(edge)
    same()
    expect(readdirSync(dir).sort()).toEqual(['app.log', 'app.log.1', 'app.log.1.tmp', 'app.log.2', 'app.log.20261201'])
  })

  it('STORE_FILE=proj/yarn: an old yarn.lock beside it (not a lock of the edge) stays byte for byte', async () => {
    const dir = freshDir()
    const same = plant(dir, { 'yarn.lock': '# yarn lockfile v1\n\n"left-pad@^1.3.0":\n  version "1.3.0"\n' })
    // Older than the lock's "being written" window: the earlier lock took it for a stale lock and deleted it.
    const past = new Date(Date.now() - 3_600_000)
    utimesSync(join(dir, 'yarn.lock'), past, past)
    const edge = await spawnEdge(env(join(dir, 'yarn')))
    same()
    expect(await push(edge, 'weather')).toBe(200)
    await stop(edge)
    same()
    expect(readdirSync(dir).sort()).toEqual(['yarn', 'yarn.lock'])
  })
})

describe('file store: one edge per file, whatever the path', () => {
  it("a second edge on a symlink to the first one's store file is refused with one line; an acknowledged push survives a restart", async () => {
    const dir = freshDir()
    const file = join(dir, 'kv.json')
    const first = await spawnEdge(env(file))
    expect(await push(first, 'before')).toBe(200)
    symlinkSync(file, join(dir, 'link.json'))
    const second = await runEdgeToExit(env(join(dir, 'link.json')), 8_000)
    expect(second.code, second.stdout + second.stderr).toBe(1)
    const lines = (second.stdout + second.stderr).trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`store file ${file} (given as ${join(dir, 'link.json')}) is in use by another edge, pid ${first.child.pid}`)
    expect(await push(first, 'after')).toBe(200)
    first.child.kill('SIGKILL')
    await first.exited
    const again = await spawnEdge(env(join(dir, 'link.json')))
    expect(await holds(again, 'before')).toBe(true)
    expect(await holds(again, 'after')).toBe(true)
    await stop(again)
  }, 60_000)
})

describe('file store: refusals leave everything as it was', () => {
  it('a JSON-with-comments file at STORE_FILE is refused with one line and left byte for byte (not renamed aside)', async () => {
    const dir = freshDir()
    const text = '{\n  "compilerOptions": { "strict": true }, // keep strict\n  "include": ["src"]\n}\n'
    const same = plant(dir, { 'tsconfig.json': text })
    const run = await runEdgeToExit(env(join(dir, 'tsconfig.json')), 8_000)
    expect(run.code, run.stdout + run.stderr).toBe(1)
    expect((run.stdout + run.stderr).trim().split('\n')).toHaveLength(1)
    expect(run.stdout + run.stderr).toContain(join(dir, 'tsconfig.json'))
    expect(run.stdout + run.stderr).toContain('left as it is')
    same()
    expect(readdirSync(dir)).toEqual(['tsconfig.json'])
  })

  it('STORE_FILE=.prettierrc.json holding {} is refused with one line saying what to do; the file stays byte for byte with its mode 0644', async () => {
    const dir = freshDir()
    const same = plant(dir, { '.prettierrc.json': '{}\n' })
    chmodSync(join(dir, '.prettierrc.json'), 0o644)
    const run = await runEdgeToExit(env(join(dir, '.prettierrc.json')), 8_000)
    expect(run.code, run.stdout + run.stderr).toBe(1)
    expect((run.stdout + run.stderr).trim().split('\n')).toHaveLength(1)
    expect(run.stdout + run.stderr).toContain(`STORE_FILE=${join(dir, '.prettierrc.json')}: expected the path of an edge store file, or of a new one`)
    expect(run.stdout + run.stderr).toContain('if it is an empty store of an earlier version, delete it (it holds no entries)')
    same()
    expect(statSync(join(dir, '.prettierrc.json')).mode & 0o777).toBe(0o644)
    expect(readdirSync(dir)).toEqual(['.prettierrc.json'])
  })

  const blockers: [string, (dir: string) => void, string, string[]][] = [
    [
      'a FIFO at a temporary name (the clean-up opened it and blocked)',
      (d) => execFileSync('mkfifo', [join(d, 'kv.json.mcp-edge-1-1.tmp')]),
      'start',
      ['kv.json.mcp-edge-1-1.tmp'],
    ],
    ['a FIFO at the lock name (the lock reader blocked)', (d) => execFileSync('mkfifo', [join(d, 'kv.json.mcp-edge.lock')]), 'is taken by a FIFO', ['kv.json.mcp-edge.lock']],
    [
      'a symlink to /dev/zero at the lock name (memory grew without bound)',
      (d) => symlinkSync('/dev/zero', join(d, 'kv.json.mcp-edge.lock')),
      'is taken by a symbolic link',
      ['kv.json.mcp-edge.lock'],
    ],
    ['a FIFO at STORE_FILE', (d) => execFileSync('mkfifo', [join(d, 'kv.json')]), 'cannot be read (a FIFO, not a regular file)', ['kv.json']],
  ]
  for (const [label, make, expected, names] of blockers)
    it(`${label}: the start does not hang: it serves or is refused in one line, and the file is left`, async () => {
      const dir = freshDir()
      make(dir)
      const before = names.map((n) => lstatSync(join(dir, n)))
      if (expected === 'start') {
        const edge = await spawnEdge(env(join(dir, 'kv.json')), 15_000)
        expect(edge.output()).toContain('store: left 1 file(s) named like temporary files')
        expect(await push(edge, 'weather')).toBe(200)
        await stop(edge)
      } else {
        const run = await runEdgeToExit(env(join(dir, 'kv.json')), 8_000)
        expect(run.code, run.stdout + run.stderr).toBe(1)
        expect((run.stdout + run.stderr).trim().split('\n')).toHaveLength(1)
        expect(run.stdout + run.stderr).toContain(expected)
      }
      const after = names.map((n) => lstatSync(join(dir, n)))
      expect(after.map((s) => [s.ino, s.mode])).toEqual(before.map((s) => [s.ino, s.mode]))
    }, 30_000)

  it('a STORE_FILE in a missing folder is refused with one line naming STORE_FILE and the folder; nothing is created', async () => {
    const dir = freshDir()
    const file = join(dir, 'no', 'such', 'kv.json')
    const run = await runEdgeToExit(env(file), 8_000)
    expect(run.code, run.stdout + run.stderr).toBe(1)
    expect(run.stdout + run.stderr).toBe(
      `mcp-edge serve: STORE_FILE=${file}: the folder ${join(dir, 'no', 'such')} does not exist; create it first (mkdir -p ${join(dir, 'no', 'such')}) or choose a path in an existing folder\n`
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it("a STORE_FILE under /proc in a missing folder is refused at once (Node 20's recursive mkdir spun at 100% CPU there)", async () => {
    const run = await runEdgeToExit(env('/proc/mcp-edge-no-such/kv.json'), 8_000)
    expect(run.code, run.stdout + run.stderr).toBe(1)
    expect(run.stdout + run.stderr).toContain('STORE_FILE=/proc/mcp-edge-no-such/kv.json: the folder /proc/mcp-edge-no-such does not exist')
  })

  it('without STORE_FILE, on a fresh checkout, the default .edge-data folder is created and the store works', async () => {
    const cwd = freshDir()
    const child = spawn(process.execPath, [CLI, 'serve'], {
      cwd,
      env: { PATH: process.env.PATH, PORT: '0', ORIGIN_URL: origin.url, ADMIN_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
    try {
      for (let i = 0; i < 150 && !/mcp-edge-validator: http/.test(out) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100))
      const m = /mcp-edge-validator: (http:\/\/\S+)\/mcp/.exec(out)
      expect(m, out).not.toBeNull()
      const edge = { base: m![1]!, url: `${m![1]}/mcp` } as EdgeProcess
      expect(await push(edge, 'weather')).toBe(200)
      child.kill('SIGTERM')
      expect(await exited, out).toBe(0)
      expect(readdirSync(join(cwd, '.edge-data'))).toEqual(['kv.json'])
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })
})
