/**
 * Child processes for the peer tests: `wrangler dev`, `npm start`, server-everything and the
 * conformance runner. Every long-lived child is started in its own process group (`detached`, the
 * same as `setsid`) so `stop()` can end it with all its children (wrangler spawns workerd), and
 * only it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { REPO } from './repo'
import { waitFor as waitForCondition } from './wait'

/** The repository root (this file is test/helpers/peers-procs.ts). */
export { REPO }
/** The conformance runner (scripts/run-conformance.sh; provenance in test/fixtures/README.md). */
export const RUN_CONFORMANCE = resolve(REPO, 'scripts/run-conformance.sh')

/** A free TCP port on 127.0.0.1 (asked from the OS, then released). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer()
    s.once('error', rej)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => res(port))
    })
  })
}

/** A child process in its own process group, with its output kept. */
export interface Proc {
  child: ChildProcess
  output(): string
  stop(): Promise<void>
}

/** Starts `cmd args` in a new process group; output (stdout+stderr) is kept in memory. */
export function startProc(cmd: string, args: string[], env: Record<string, string | undefined>, cwd = REPO): Proc {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  return {
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      try {
        process.kill(-child.pid!, 'SIGTERM')
      } catch {
        return
      }
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          // already gone
        }
      }, 5_000)
      await exited
      clearTimeout(t)
    },
  }
}

/** Waits until `probe` resolves true, polling every 100 ms, or throws after `ms`. */
export async function waitFor(what: string, probe: () => Promise<boolean>, ms: number, proc?: Proc): Promise<void> {
  await waitForCondition(
    async () => {
      if (await probe()) return true
      // A process that is gone never gets ready: say so at once, with its output.
      if (proc && proc.child.exitCode !== null) throw new ExitedError(`${what} exited (${proc.child.exitCode}): ${proc.output().slice(-2000)}`)
      return false
    },
    { what: `${what} ready`, timeoutMs: ms, intervalMs: 100, detail: () => proc?.output().slice(-2000) ?? '', fatal: (e) => e instanceof ExitedError }
  )
}

/** A probed process exited: waiting stops. */
class ExitedError extends Error {}

/**
 * Starts the Worker under `wrangler dev` (local workerd, no network) in front of `originUrl`.
 * `ALLOWED_HOSTS=localhost` turns on the edge's Host check (DNS-rebinding protection), which the
 * Worker leaves off unless configured.
 * @returns the process and the MCP URL
 */
export async function startWranglerDev(originUrl: string, vars: Record<string, string> = {}): Promise<{ proc: Proc; url: string }> {
  const port = await freePort()
  const inspector = await freePort()
  const persist = mkdtempSync(join(tmpdir(), 'peers-wrangler-'))
  const varArgs = Object.entries({ ORIGIN_URL: originUrl, ALLOWED_HOSTS: 'localhost', ...vars }).flatMap(([k, v]) => ['--var', `${k}:${v}`])
  const proc = startProc(
    resolve(REPO, 'node_modules/.bin/wrangler'),
    ['dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector), '--persist-to', persist, '--log-level', 'warn', ...varArgs],
    { WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', CI: 'true', NO_COLOR: '1' }
  )
  const base = `http://127.0.0.1:${port}`
  await waitFor('wrangler dev', async () => (await fetch(`${base}/healthz`)).ok, 60_000, proc)
  return { proc, url: `${base}/mcp` }
}

/**
 * Runs `npm start` with no ORIGIN_URL (so it starts the demo origin with the conformance fixtures)
 * on free ports, and waits for the line naming the edge URL.
 */
export async function startNpmStart(extraEnv: Record<string, string> = {}): Promise<{ proc: Proc; url: string; originUrl: string }> {
  const proc = startProc('npm', ['start', '--silent'], { ORIGIN_URL: undefined, DEMO_PORT: '0', PORT: '0', STORE_FILE: 'memory', ...extraEnv })
  let m: RegExpExecArray | null = null
  await waitFor('npm start', async () => (m = /mcp-edge-validator: (\S+) -> (\S+)/.exec(proc.output())) !== null, 60_000, proc)
  return { proc, url: m![1]!, originUrl: m![2]! }
}

/** Starts @modelcontextprotocol/server-everything (Streamable HTTP) bound to 127.0.0.1. */
export async function startServerEverything(): Promise<{ proc: Proc; url: string }> {
  const port = await freePort()
  // server-everything calls app.listen(PORT) with no host, i.e. all interfaces; this preload
  // pins every listen() to loopback (tests talk to 127.0.0.1 only; docs/peers.md).
  const dir = mkdtempSync(join(tmpdir(), 'peers-se-'))
  const preload = join(dir, 'bind-loopback.cjs')
  writeFileSync(
    preload,
    `const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  else if (args[0] && typeof args[0] === 'object' && !args[0].host && !args[0].path) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};
`
  )
  const proc = startProc(process.execPath, ['-r', preload, resolve(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'], {
    PORT: String(port),
  })
  const url = `http://127.0.0.1:${port}/mcp`
  await waitFor(
    'server-everything',
    async () => {
      const r = await fetch(url, { method: 'GET' })
      await r.body?.cancel()
      return r.status > 0
    },
    30_000,
    proc
  )
  return { proc, url }
}

/** Result of one run of run-conformance.sh. */
export interface ConformanceRun {
  label: string
  passed: number
  failed: number
  /** scenario name -> PASS or FAIL */
  scenarios: Record<string, 'PASS' | 'FAIL'>
  /** the runner's whole output */
  output: string
  exitCode: number | null
}

/**
 * Runs scripts/run-conformance.sh against one MCP URL and parses its summary. The suite runs in
 * one process (`ONE_PROCESS=1`) unless `env` says otherwise: one process per scenario took 212 s
 * for one target on this loaded 2-core machine against 18 s in one process, and the conformance
 * test runs four targets at once.
 */
export async function runConformance(label: string, url: string, env: Record<string, string> = {}): Promise<ConformanceRun> {
  const results = mkdtempSync(join(tmpdir(), `peers-conf-${label}-`))
  const child = spawn('bash', [RUN_CONFORMANCE, url], {
    cwd: REPO,
    env: { ...process.env, RESULTS_DIR: results, SCENARIO_TIMEOUT: '90', ONE_PROCESS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (out += d.toString()))
  const exitCode = await new Promise<number | null>((r) => child.once('close', (code) => r(code)))
  const scenarios: Record<string, 'PASS' | 'FAIL'> = {}
  for (const m of out.matchAll(/^(PASS|FAIL) {2}(\S+)/gm)) scenarios[m[2]!] = m[1] as 'PASS' | 'FAIL'
  const last = /^(\d+) passed, (\d+) failed$/m.exec(out)
  return { label, passed: last ? Number(last[1]) : -1, failed: last ? Number(last[2]) : -1, scenarios, output: out, exitCode }
}

/**
 * Runs the conformance suite against several MCP URLs at once, after one small run that installs
 * the runner (several runs installing into the same folder at once would race). Some scenarios
 * time the client against fixed tolerances (sse-retry: 50-200 ms), which several runs at once on a
 * loaded 2-core machine can miss even against the origin alone, so a target with failures runs
 * once more, alone; its first output is printed, never hidden.
 * @param urls target label -> MCP URL; the first run's origin is `installUrl`
 * @returns each target's run (the rerun's where there was one), by label
 * @throws when the install run does not pass its one scenario (the runner is not usable)
 */
export async function runConformanceTargets<T extends string>(urls: Record<T, string>, installUrl: string): Promise<Record<T, ConformanceRun>> {
  const warm = await runConformance('install', installUrl, { SCENARIOS: 'ping' })
  if (warm.passed !== 1) throw new Error(`conformance runner not usable: ${warm.output.slice(-2000)}`)
  const targets = Object.keys(urls) as T[]
  const started = Date.now()
  const done = await Promise.all(targets.map((t) => runConformance(t, urls[t])))
  for (const [i, r] of done.entries()) {
    if (r.failed === 0 && r.exitCode === 0) continue
    console.log(`conformance ${r.label}: ${r.failed} failed on the first run, running it again alone\n${r.output.slice(-4000)}`)
    done[i] = await runConformance(r.label, urls[r.label as T])
  }
  const width = Math.max(...targets.map((t) => t.length))
  const runs = {} as Record<T, ConformanceRun>
  for (const r of done) {
    runs[r.label as T] = r
    console.log(`conformance ${r.label.padEnd(width)} ${urls[r.label as T]}: ${r.passed} passed, ${r.failed} failed (scenarios)`)
    if (r.failed !== 0) console.log(r.output)
  }
  console.log(`conformance: ${targets.length} runs at once took ${Math.round((Date.now() - started) / 1000)} s`)
  return runs
}
