/**
 * The programs some tests start that npm cannot provide: `redis-server` (the Redis store tests),
 * `promtool` (Debian's `prometheus`: the metrics text and the Grafana dashboard's PromQL) and
 * `chromium` (the browser-client tests, driven by playwright-core). The e2e global setup calls
 * {@link ensureSystemPrograms} before any test file, so `npm ci && npm test` on a fresh Debian
 * machine as root installs what is missing with apt-get and says so on
 * stdout. Without root it prints the one command to run; the tests that need a missing program then
 * fail with that same command in their message (never skipped).
 *
 * Every test finds the programs with {@link programPath}: the variable (`PROMTOOL_PATH`,
 * `CHROMIUM_PATH`, `REDIS_SERVER_PATH`) when set, else the first executable of that name on PATH.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, join } from 'node:path'

/** A program the tests start, the Debian package that has it, and who needs it. */
export interface SystemProgram {
  /** The executable's name on PATH. */
  program: 'redis-server' | 'promtool' | 'chromium'
  /** The variable that names it instead of PATH. */
  variable: string
  /** The Debian package that installs it. */
  pkg: string
  /** The tests that start it (for the messages). */
  neededBy: string
}

/** The three programs, in install order. */
export const SYSTEM_PROGRAMS: readonly SystemProgram[] = [
  {
    program: 'redis-server',
    variable: 'REDIS_SERVER_PATH',
    pkg: 'redis-server',
    neededBy: 'the Redis store tests (test/stores, test/access/access-rate-limit, test/pinning/tool-pinning)',
  },
  { program: 'promtool', variable: 'PROMTOOL_PATH', pkg: 'prometheus', neededBy: 'test/observe/metrics.test.ts and test/observe/grafana-dashboard.test.ts' },
  { program: 'chromium', variable: 'CHROMIUM_PATH', pkg: 'chromium', neededBy: 'test/access/browser-cors.test.ts' },
]

/** The first executable file called `name` in the folders of `path` (a PATH value), or undefined. */
export function onPath(name: string, path: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue
    const file = join(dir, name)
    try {
      if (!statSync(file).isFile()) continue
      accessSync(file, constants.X_OK)
      return file
    } catch {
      // not here
    }
  }
  return undefined
}

/**
 * Where a test finds a program: its variable when set (taken as written, even when nothing is
 * there, so the failure names it), else the first one on PATH.
 * @returns the path, or undefined when the variable is unset and PATH has none
 */
export function programPath(program: SystemProgram['program'], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const p = SYSTEM_PROGRAMS.find((s) => s.program === program)!
  return env[p.variable] || onPath(program, env.PATH)
}

/** The command that installs `programs` (what the messages print). */
export function installCommand(programs: readonly SystemProgram[]): string {
  return `apt-get update && apt-get install -y ${programs.map((p) => p.pkg).join(' ')}`
}

/** The failure message of a test whose program is missing. */
export function missingMessage(program: SystemProgram['program']): string {
  const p = SYSTEM_PROGRAMS.find((s) => s.program === program)!
  return `${program} is not installed (or ${p.variable} names no file): ${p.neededBy} need it. npm test installs it when run as root; otherwise run as root: ${installCommand([p])} (or set ${p.variable})`
}

/** What {@link ensureSystemPrograms} did. */
export interface EnsureResult {
  /** Programs missing before. */
  missing: SystemProgram['program'][]
  /** `installed`: apt-get ran and every program is there now; `failed`: it ran and some are still missing; `not-root`: nothing ran. */
  action: 'none' | 'installed' | 'failed' | 'not-root'
}

/** What {@link ensureSystemPrograms} runs and sees; the defaults are the real machine. */
export interface EnsureDeps {
  env?: NodeJS.ProcessEnv
  /** Whether the process may run apt-get itself (root). */
  isRoot?: boolean
  log?: (line: string) => void
  run?: (command: string, args: string[], env: NodeJS.ProcessEnv) => Pick<SpawnSyncReturns<string>, 'status' | 'stdout' | 'stderr' | 'error'>
}

/**
 * Installs with apt-get the programs of {@link SYSTEM_PROGRAMS} that are missing, when this
 * process is root and apt-get is on PATH (a fresh Debian machine or container); prints what it
 * installs and why. Otherwise prints the command to run. Never throws: a test that needs a
 * program still missing fails with {@link missingMessage}.
 */
export function ensureSystemPrograms(deps: EnsureDeps = {}): EnsureResult {
  const env = deps.env ?? process.env
  const log = deps.log ?? ((line: string) => console.log(line))
  const run =
    deps.run ??
    ((command: string, args: string[], e: NodeJS.ProcessEnv) => spawnSync(command, args, { env: e, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 900_000 }))
  const missing = SYSTEM_PROGRAMS.filter((p) => {
    const at = programPath(p.program, env)
    return at === undefined || !isExecutable(at)
  })
  if (missing.length === 0) return { missing: [], action: 'none' }
  const names = missing.map((p) => p.program)
  const root = deps.isRoot ?? process.getuid?.() === 0
  const aptGet = onPath('apt-get', env.PATH)
  if (!root || aptGet === undefined) {
    log(`npm test: ${names.join(', ')} not installed; the tests that start them will fail. Install them as root with: ${installCommand(missing)}`)
    return { missing: names, action: 'not-root' }
  }
  log(`npm test: installing ${missing.map((p) => `${p.pkg} (${p.program}, for ${p.neededBy})`).join(', ')} with apt-get`)
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' }
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...missing.map((p) => p.pkg)],
  ]) {
    const r = run(aptGet, args, aptEnv)
    if (r.status !== 0) {
      log(
        `npm test: apt-get ${args[0]} failed (${r.error?.message ?? `exit ${r.status}`}): ${String(r.stderr ?? '')
          .trim()
          .slice(-800)}`
      )
      return { missing: names, action: 'failed' }
    }
  }
  const still = missing.filter((p) => programPath(p.program, env) === undefined)
  if (still.length > 0) {
    log(`npm test: apt-get installed the packages but ${still.map((p) => p.program).join(', ')} is still not on PATH (${env.PATH ?? ''})`)
    return { missing: names, action: 'failed' }
  }
  log(`npm test: installed ${missing.map((p) => p.pkg).join(', ')}`)
  return { missing: names, action: 'installed' }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}
