/**
 * A real `redis-server` (Debian package; the test run's global setup installs it when missing and
 * root, see system-programs.ts) for the Redis store tests, started on a free loopback port without
 * persistence (`--save '' --appendonly no`) and stopped after. When the binary is missing the
 * tests FAIL with a message saying how to install it (never skip).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createConnection } from 'node:net'
import { freePort } from './peers-procs'
import { missingMessage, programPath } from './system-programs'

/** A running redis-server. */
export interface RedisServer {
  port: number
  /** The server's process id (to SIGSTOP it: a Redis that hangs). */
  pid: number
  /** `redis://127.0.0.1:<port>` */
  url: string
  /** Output of the server so far (for failure messages). */
  output(): string
  /** Stops it (SIGTERM, SIGKILL after 3 s); resolves when it has exited. Idempotent. */
  stop(): Promise<void>
}

/** @throws Error with install instructions when `redis-server` is not on PATH */
export function requireRedisServer(): void {
  const at = programPath('redis-server')
  const probe = at === undefined ? undefined : spawnSync(at, ['--version'], { encoding: 'utf8' })
  if (!probe || probe.error || probe.status !== 0) throw new Error(missingMessage('redis-server'))
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port })
    let buf = ''
    const done = (ok: boolean) => {
      s.destroy()
      resolve(ok)
    }
    s.setTimeout(500, () => done(false))
    s.on('error', () => done(false))
    s.on('connect', () => s.write('PING\r\n'))
    s.on('data', (d: Buffer) => {
      buf += d.toString()
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'))
    })
  })
}

/**
 * Starts redis-server on a free port of 127.0.0.1 (or `port`) and waits until it answers PING.
 * @throws when it is not installed or does not answer within 10 s
 */
export async function startRedisServer(port?: number): Promise<RedisServer> {
  requireRedisServer()
  const p = port ?? (await freePort())
  const child: ChildProcess = spawn(
    programPath('redis-server')!,
    ['--save', '', '--appendonly', 'no', '--port', String(p), '--bind', '127.0.0.1', '--protected-mode', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const t = setTimeout(() => child.kill('SIGKILL'), 3_000)
    await exited
    clearTimeout(t)
  }
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break
    if (await answersPing(p)) return { port: p, pid: child.pid!, url: `redis://127.0.0.1:${p}`, output: () => out, stop }
    await new Promise((r) => setTimeout(r, 50))
  }
  await stop()
  throw new Error(`redis-server did not answer PING on 127.0.0.1:${p}: ${out.slice(-500)}`)
}
