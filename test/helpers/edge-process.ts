/**
 * The real Node edge as a child process, for tests that kill it: the `mcp-edge` command
 * (packages/cli/src/cli/main.ts) bundled once by scripts/build-node.mjs into dist/test/<name>/
 * (the library from its sources; other packages stay external and resolve from the repository's
 * node_modules), run as
 * `node <bundle> serve` with the given variables. Each child gets its own process group, and every
 * child a test started is killed by `killAll`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { REPO } from './repo'

const run = promisify(execFile)

/** Bundles the `mcp-edge` command, library from source, to dist/test/<name>/cli.js (one per test file: files run in parallel). */
export async function buildNodeEdge(name: string): Promise<string> {
  const outdir = resolve(REPO, 'dist/test', name)
  mkdirSync(outdir, { recursive: true })
  await run(process.execPath, ['scripts/build-node.mjs', '--from-source', '--outdir', outdir], { cwd: REPO })
  return resolve(outdir, 'cli.js')
}

/** A running (or exited) edge child. */
export interface EdgeProcess {
  child: ChildProcess
  /** The MCP endpoint, e.g. http://127.0.0.1:1234/mcp */
  url: string
  /** Origin of the edge, e.g. http://127.0.0.1:1234 */
  base: string
  /** stdout and stderr so far. */
  output(): string
  /** Resolves with the exit code and signal once the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const children = new Set<ChildProcess>()

/** Kills every child started here that still runs (afterAll/afterEach). */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(async (c) => {
      if (c.exitCode === null && c.signalCode === null) {
        const gone = new Promise((r) => c.once('exit', r))
        try {
          process.kill(-c.pid!, 'SIGKILL')
        } catch {
          // already gone
        }
        await gone
      }
      children.delete(c)
    })
  )
}

/**
 * Starts `mcp-edge serve` with `env` (PORT=0 unless given) and waits for its start line
 * (`mcp-edge-validator: <url> -> <origin>`).
 * @throws with the child's output when it exits first or does not start within `timeoutMs`
 */
export async function spawnEdge(bundle: string, env: Record<string, string>, timeoutMs = 15_000): Promise<EdgeProcess> {
  const p = startChild(bundle, env)
  const url = await new Promise<string>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`the edge did not start within ${timeoutMs} ms: ${p.output()}`)), timeoutMs)
    const check = () => {
      const m = /mcp-edge-validator: (http:\/\/\S+\/mcp)/.exec(p.output())
      if (m) {
        clearTimeout(t)
        res(m[1]!)
      }
    }
    p.child.stderr!.on('data', check)
    p.child.stdout!.on('data', check)
    void p.exited.then(() => {
      clearTimeout(t)
      rej(new Error(`the edge exited before it started: ${p.output()}`))
    })
  })
  return { ...p, url, base: new URL(url).origin }
}

/** Starts `mcp-edge serve` and waits for it to exit (a start that must fail). */
export async function runEdgeToExit(bundle: string, env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number | null; output: string }> {
  const p = startChild(bundle, env)
  const t = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs)
  const { code } = await p.exited
  clearTimeout(t)
  return { code, output: p.output() }
}

function startChild(bundle: string, env: Record<string, string>): Omit<EdgeProcess, 'url' | 'base'> {
  const child = spawn(process.execPath, [bundle, 'serve'], { cwd: REPO, env: { PATH: process.env.PATH, PORT: '0', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))
  return { child, output: () => out, exited }
}
