/**
 * The benchmark's processes: core pinning, CPU accounting from /proc, and the child processes
 * under test (bundled with esbuild, started with an IPC channel, stopped with the run).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { resolve } from 'node:path'
import { build } from 'esbuild'

export const ROOT = resolve(import.meta.dirname, '../..')

export const CORES = os.availableParallelism()
const HAS_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
const PIN = HAS_TASKSET && CORES >= 2
/** `taskset` prefix of the process under test (core 0), or nothing. */
export const UNDER_TEST = PIN ? ['taskset', '-c', '0'] : []
/** `taskset` prefix of the origin (core 1, or core 2 with 3 or more cores), or nothing. */
export const SUPPORT = PIN ? ['taskset', '-c', CORES >= 3 ? '2' : '1'] : []
/** What the report says about pinning. */
export const PINNING = PIN
  ? `process under test alone on core 0; ${CORES >= 3 ? 'autocannon and this script on core 1, the origin on core 2' : 'the origin, autocannon and this script share core 1'}`
  : 'no pinning (taskset missing or a single core)'

/** Moves this process (the load generator) to core 1 when pinning is possible. */
export function pinSelf(): void {
  if (PIN) execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' })
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
  } catch {
    return 100
  }
})()

/** Pids of a process and all its descendants (workerd under Miniflare, nginx's worker). */
function tree(pid: number): number[] {
  const out = [pid]
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim()
      if (kids) for (const k of kids.split(/\s+/)) out.push(...tree(Number(k)))
    }
  } catch {
    // process gone
  }
  return out
}

/**
 * The workerd process under a Miniflare host `pid` (its descendant whose command is `workerd`):
 * the process tree whose CPU the workerd rows count. The host's own CPU is left out: it drains
 * workerd's stdout (every `console.log` line of the Worker) through Node streams, work a deployed
 * Worker never pays (about 190 µs per edge call in a loaded loop run, scripts/bench/worker-profile.ts).
 * @throws Error when there is none
 */
export function workerdPid(pid: number): number {
  const kids = (p: number): number[] =>
    readdirSync(`/proc/${p}/task`).flatMap((t) => readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number))
  const queue = kids(pid)
  while (queue.length) {
    const p = queue.shift()!
    if (readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'workerd') return p
    queue.push(...kids(p))
  }
  throw new Error('no workerd under the worker process')
}

/**
 * CPU time of one process in ns from the scheduler's own account, `/proc/<pid>/task/<tid>/schedstat`
 * (first field: time on a CPU, in ns) summed over its threads; null where the kernel has no
 * schedstat. `/proc/<pid>/stat`'s utime + stime count whole clock ticks (10 ms at CLK_TCK 100):
 * nginx serving a sub-second smoke run used less than one tick and read 0 µs per request.
 */
function schedNs(pid: number): number | null {
  let ns = 0
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // the thread ended
      }
    }
  } catch {
    return null
  }
  return Number.isFinite(ns) ? ns : null
}

/** utime + stime of one process, in clock ticks (0 once it is gone). */
function statTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15)
  } catch {
    return 0
  }
}

/**
 * CPU time of a process tree, in microseconds: the scheduler's ns account of its threads where
 * the kernel has schedstat (threads of the processes under test live as long as the run), else
 * user + system time in clock ticks (grain 10 ms).
 */
export function cpuUs(pid: number): number {
  let us = 0
  for (const p of tree(pid)) {
    const ns = schedNs(p)
    us += ns !== null ? ns / 1000 : (statTicks(p) * 1e6) / CLK_TCK
  }
  return us
}

/** A child process under test: its first IPC message (`ready`) and how to stop it. */
export interface Child<T> {
  proc: ChildProcess
  ready: T
  stop(): Promise<void>
}

/** Every child still expected to live: a death among them ends the run. */
export const children = new Set<ChildProcess>()

process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL')
})

/** Ends every child at once (a failed run). */
export function killAll(): void {
  for (const c of children) c.kill('SIGKILL')
}

/**
 * Bundles the child processes' scripts with esbuild into dist/bench/ (packages external, as
 * `npm start` does), so the processes under test run plain JavaScript: under tsx every function
 * would also carry a `__name` call (keepNames) and module loading would go through its loader.
 * The bare Worker is bundled for workerd (platform neutral).
 */
export async function buildRunners(): Promise<void> {
  await build({
    entryPoints: ['origin', 'floor', 'bare-node', 'edge', 'worker', 'micro'].map((n) => resolve(ROOT, `scripts/bench/${n}.ts`)),
    outdir: resolve(ROOT, 'dist/bench'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  })
  await build({
    entryPoints: [resolve(ROOT, 'scripts/bench/bare-worker.ts')],
    outfile: resolve(ROOT, 'dist/bench/bare-worker.js'),
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    target: 'es2022',
    logLevel: 'warning',
  })
}

/**
 * Starts `node [nodeArgs] dist/bench/<name>.js` (pinned with `pin`) and resolves with its first
 * IPC message. If the process dies before `stop()`, the whole run stops (its figures would be
 * garbage).
 */
export function startChild<T>(name: string, env: Record<string, string>, pin: string[], nodeArgs: string[] = []): Promise<Child<T>> {
  const cmd = [...pin, process.execPath, ...nodeArgs, resolve(ROOT, `dist/bench/${name}.js`)]
  const proc = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  children.add(proc)
  proc.once('exit', (code, signal) => {
    if (children.has(proc)) {
      process.stderr.write(`bench: ${name} died (${signal ?? code}) during the run\n`)
      killAll()
      process.exit(1)
    }
  })
  return new Promise((res, rej) => {
    proc.once('message', (ready) =>
      res({
        proc,
        ready: ready as T,
        stop: () =>
          new Promise<void>((done) => {
            children.delete(proc)
            if (proc.exitCode !== null) return done()
            const t = setTimeout(() => proc.kill('SIGKILL'), 5000)
            proc.once('exit', () => {
              clearTimeout(t)
              done()
            })
            proc.disconnect()
          }),
      })
    )
    proc.once('exit', (code) => rej(new Error(`${name} exited with ${code} before it was ready`)))
  })
}

/** Asks a child for a reply over IPC. */
export function ask<T>(child: Child<unknown>, msg: object): Promise<T> {
  return new Promise((res) => {
    child.proc.once('message', (m) => res(m as T))
    child.proc.send(msg)
  })
}
