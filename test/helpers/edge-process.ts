/**
 * The real Node edge as a child process, for tests that kill it: `node <CLI> serve` (the `mcp-edge`
 * command the global setup built once, ./cli-process.ts) with the given variables and no others
 * (PATH, PORT=0 unless given). Each child gets its own process group, and every child a test
 * started is killed by `killAll`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { CLI, REPO, runCli, type CliRun } from './cli-process'

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
export async function spawnEdge(env: Record<string, string>, timeoutMs = 15_000): Promise<EdgeProcess> {
  const p = startChild(env)
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

/**
 * Runs `mcp-edge serve` with `env` and no other variable (PATH, PORT=0 unless given) to its exit: a start that must fail.
 * Killed with SIGKILL after `timeoutMs`.
 */
export function runEdgeToExit(env: Record<string, string>, timeoutMs = 15_000): Promise<CliRun> {
  return runCli(['serve'], { PORT: '0', ...env }, { timeoutMs, bareEnv: true })
}

function startChild(env: Record<string, string>): Omit<EdgeProcess, 'url' | 'base'> {
  const child = spawn(process.execPath, [CLI, 'serve'], { cwd: REPO, env: { PATH: process.env.PATH, PORT: '0', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))
  return { child, output: () => out, exited }
}
