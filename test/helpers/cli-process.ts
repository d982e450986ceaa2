/**
 * The built `mcp-edge` command as a real process, and the one way tests build it: the global setup
 * (global-setup.ts) calls {@link bundleCli} once per run, before any test file starts, into
 * dist/test/cli.js (what `npm run build` writes to packages/cli/dist, but with the library bundled
 * from its sources, and apart from `npm start`'s copy so a concurrent `npm start` never rewrites
 * the file a test runs). Test files never build: they run {@link CLI} (with `runCli`, `startServe`,
 * or edge-process.ts's `spawnEdge`), so files running in parallel neither race on the bundle nor
 * build it twice.
 */
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { connect } from 'node:net'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { REPO } from './repo'
import { mcpHeaders } from './mcp'

export { REPO }
/** The command under test (built by the global setup). */
export const CLI = resolve(REPO, 'dist/test/cli.js')

let bundled: Promise<string> | undefined

/**
 * Builds {@link CLI} (and its chunks) with the command's build script (scripts/build-node.mjs),
 * the library from its sources, once per process (a second call gets the first build). Called by
 * the global setup only, so once per run.
 * @returns the path of the command ({@link CLI})
 * @throws with the build script's output when the build fails
 */
export function bundleCli(): Promise<string> {
  bundled ??= promisify(execFile)(process.execPath, ['scripts/build-node.mjs', '--from-source', '--outdir', 'dist/test'], { cwd: REPO }).then(() => CLI)
  return bundled
}

/** What one finished run of the command printed and how it ended. */
export interface CliRun {
  /** Exit status; null when a signal ended it. */
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Wall time from spawn to close, in ms. */
  ms: number
}

/** Environment for a child: `base` (default the test's own), minus every variable the edge reads, plus `env`. */
export function childEnv(env: Record<string, string | undefined>, base: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(base))
    if (v !== undefined && !/^(ORIGIN_URL|ORIGINS|PORT|HOST|STORE_|ADMIN_TOKEN|SHUTDOWN_GRACE_MS|DEMO_PORT|MAX_|ALLOWED_)/.test(k)) out[k] = v
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  return out
}

/**
 * Runs `node dist/test/cli.js args` (or `opts.command` + args) to its end, stdin closed, stdout
 * not a TTY; killed with SIGKILL after `timeoutMs` (default 15 s). `env` is added to the test's
 * own environment minus every variable the edge reads ({@link childEnv}); with `bareEnv`, to PATH
 * alone (a start whose outcome no variable of the test runner may change).
 */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  opts: { timeoutMs?: number; spawn?: SpawnOptions; command?: string[]; bareEnv?: boolean } = {}
): Promise<CliRun> {
  const started = Date.now()
  const cmd = opts.command ?? [process.execPath, CLI]
  const childVars = opts.bareEnv ? childEnv(env, { PATH: process.env.PATH }) : childEnv(env)
  return new Promise((res) => {
    const child = spawn(cmd[0]!, [...cmd.slice(1), ...args], { cwd: REPO, ...opts.spawn, env: childVars, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      res({ code, signal, stdout, stderr, ms: Date.now() - started })
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
