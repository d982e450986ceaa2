/**
 * The built `mcp-edge` command as a real process: built once by the global setup into
 * dist/test/cli.js (what `npm run build` writes to packages/cli/dist, but with the library bundled
 * from its sources, and apart from `npm start`'s copy so a concurrent `npm start` never rewrites
 * the file a test runs), run with `node`, its output kept.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { connect } from 'node:net'
import { resolve } from 'node:path'
import { REPO } from './repo'
import { mcpHeaders } from './mcp'

export { REPO }
/** The command under test. */
export const CLI = resolve(REPO, 'dist/test/cli.js')

/** Builds dist/test/cli.js (and its chunks) with the command's build script, the library from its sources. */
export function buildCli(): void {
  execFileSync(process.execPath, ['scripts/build-node.mjs', '--from-source', '--outdir', 'dist/test'], { cwd: REPO, stdio: 'inherit' })
}

/** What a finished run printed and how it ended. */
export interface CliRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Environment for a child: the test's own, minus every variable the edge reads, plus `env`. */
export function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(ORIGIN_URL|ORIGINS|PORT|HOST|STORE_|ADMIN_TOKEN|SHUTDOWN_GRACE_MS|DEMO_PORT|MAX_|ALLOWED_)/.test(k)) out[k] = v
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  return out
}

/** Runs `node dist/test/cli.js args` to its end (killed after `timeoutMs`). */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, opts: { timeoutMs?: number; spawn?: SpawnOptions; cli?: string } = {}): Promise<CliRun> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [opts.cli ?? CLI, ...args], { cwd: REPO, ...opts.spawn, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      res({ code, signal, stdout, stderr })
    })
  })
}

/** A running `mcp-edge serve`. */
export interface ServeProcess {
  child: ChildProcess
  /** The MCP endpoint it printed. */
  url: string
  port: number
  stdout(): string
  stderr(): string
  /** Resolves with the exit code (null after a signal) once the process is gone. */
  exited: Promise<number | null>
  /** SIGKILL if still running (tests' cleanup). */
  kill(): void
}

/**
 * Starts `<command> serve args` (default `node dist/test/cli.js`) and waits for the start line
 * `mcp-edge-validator: <url> -> ...` on stderr. `group`: in a process group of its own (`kill`
 * then kills the whole group, e.g. npx and the edge it started).
 */
export async function startServe(
  args: string[],
  env: Record<string, string | undefined>,
  opts: { command?: string[]; cwd?: string; readyMs?: number; group?: boolean } = {}
): Promise<ServeProcess> {
  const cmd = opts.command ?? [process.execPath, CLI]
  const child = spawn(cmd[0]!, [...cmd.slice(1), 'serve', ...args], { cwd: opts.cwd ?? REPO, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: opts.group ?? false })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const kill = () => {
    if (opts.group) {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // the group is gone
      }
    } else if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  const end = Date.now() + (opts.readyMs ?? 20_000)
  let m: RegExpExecArray | null = null
  while (!(m = /mcp-edge-validator: (http:\/\/\S+?:(\d+)\/mcp) -> /.exec(err))) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${err}`)
    if (Date.now() > end) {
      kill()
      throw new Error(`serve not ready: ${err}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { child, url: m[1]!, port: Number(m[2]), stdout: () => out, stderr: () => err, exited, kill }
}

/** True when a TCP connection to 127.0.0.1:`port` is accepted. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ port, host })
    s.once('connect', () => {
      s.destroy()
      res(true)
    })
    s.once('error', () => res(false))
  })
}

/** Headers of a JSON POST to the edge (2025-06-18). */
export const MCP_HEADERS = mcpHeaders()
