/**
 * The packages as a user gets them: `npm pack` of the library (the repository's root, whose
 * `prepack` builds dist/lib) and of the `mcp-edge` command (the packages/cli workspace), each into
 * a temporary folder, never into the repository, and a scratch project in the system's temp folder
 * that installs the tarballs from their files. Used by test/package/package.test.ts and
 * test/production/production-install.test.ts.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from './repo'
import { promisify } from 'node:util'

const run = promisify(execFile)
export { REPO }

/** What `npm pack --json` says about a tarball. */
export interface PackStats {
  filename: string
  /** The tarball's size in bytes. */
  size: number
  unpackedSize: number
  entryCount: number
  files: { path: string; size: number }[]
}

/** A scratch project with the packed package installed. */
export interface PackedProject {
  /** The scratch project's folder (in the system's temp folder, outside the repo). */
  dir: string
  /** The library's tarball `npm pack` wrote. */
  tarball: string
  pack: PackStats
  /** Packages under node_modules (every package.json of a package folder, nested ones included). */
  packages: string[]
  /** Bytes of every file under node_modules. */
  bytes: number
  /** Removes the folder and the tarball. */
  remove(): void
}

/** npm with update notices, funding and audit off (the tests run npm of the Node under test: 20, 22 or 24). */
export function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return run('npm', args, {
    cwd,
    maxBuffer: 1 << 26,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  })
}

/**
 * npm flags that refuse any package whose `engines` does not admit the Node running the tests: on
 * the Node 20 run (.ci/run runs 20, 22 and 24), a dependency asking for Node 22 fails the install.
 * (npm 11 ignores `--node-version`, so the floor itself cannot be asked for from a later Node.)
 */
export const ENGINE_STRICT = ['--engine-strict']

/** Where {@link pack} holds its lock: packing rebuilds dist/lib (the library's `prepack`), which two test files must not do at once. */
const PACK_LOCK = join(REPO, 'dist/.pack-lock')

/** Runs `fn` holding the pack lock (a directory: `mkdir` is atomic), waiting for it in 250 ms steps; a lock older than 10 min is taken as left over. */
async function withPackLock<T>(fn: () => Promise<T>): Promise<T> {
  mkdirSync(join(REPO, 'dist'), { recursive: true })
  for (;;) {
    try {
      mkdirSync(PACK_LOCK)
      break
    } catch {
      try {
        if (Date.now() - statSync(PACK_LOCK).mtimeMs > 600_000) rmSync(PACK_LOCK, { recursive: true, force: true })
      } catch {
        // released meanwhile
      }
      await new Promise((r) => setTimeout(r, 250))
    }
  }
  try {
    return await fn()
  } finally {
    rmSync(PACK_LOCK, { recursive: true, force: true })
  }
}

/**
 * Packs the library (`workspace` unset) or a workspace of the repo (`packages/cli`) into `dest`,
 * never into the repository; its `prepack` builds it first.
 * @throws when `npm pack` fails (the message holds npm's output)
 */
export async function pack(dest: string, workspace?: string): Promise<PackStats & { tarball: string }> {
  const out = await withPackLock(() => npm(['pack', '--pack-destination', dest, '--json', ...(workspace ? ['--workspace', workspace] : [])], REPO))
  const [entry] = JSON.parse(out.stdout.slice(out.stdout.indexOf('['))) as PackStats[]
  if (!entry) throw new Error(`npm pack named no tarball: ${out.stdout.slice(0, 500)}`)
  return { ...entry, tarball: join(dest, entry.filename) }
}

/** The exact version of a package the repo pins (its lockfile's root entry). */
export function pinned(name: string): string {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> }
  const version = lock.packages[`node_modules/${name}`]?.version
  if (!version) throw new Error(`package-lock.json pins no ${name}`)
  return `${name}@${version}`
}

/** Package folders under a node_modules folder, by name (scoped ones as `@scope/name`; nested copies included). */
export function installedPackages(modules: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    let entries: string[]
    try {
      entries = readdirSync(dir)
    } catch {
      return
    }
    for (const name of entries) {
      if (name.startsWith('.')) continue
      const names = name.startsWith('@') ? readdirSync(join(dir, name)).map((n) => `${name}/${n}`) : [name]
      for (const n of names) {
        const p = join(dir, n)
        try {
          statSync(join(p, 'package.json'))
        } catch {
          continue
        }
        out.push(n)
        walk(join(p, 'node_modules'))
      }
    }
  }
  walk(modules)
  return out.sort()
}

/** Bytes of every file under `dir`. */
export function folderBytes(dir: string): number {
  let total = 0
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size
  return total
}

/**
 * Packs the library and installs the tarball and `hono` (the repo's pinned version) into a new
 * project, with `extra` packages if given: what a Hono-middleware user installs. No optional peer
 * dependency and no CLI. Installs from npm's cache where it can (`--prefer-offline`).
 * @throws when `npm pack` or `npm install` fails (the message holds npm's output)
 */
export async function packAndInstall(extra: string[] = []): Promise<PackedProject> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-edge-pack-'))
  const remove = () => rmSync(dir, { recursive: true, force: true })
  try {
    const packed = await pack(dir)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }))
    // Every package installed must admit the Node running (`engines`).
    await npm(['install', packed.tarball, pinned('hono'), ...extra, '--prefer-offline', '--loglevel=error', ...ENGINE_STRICT], dir)
    const modules = join(dir, 'node_modules')
    return { dir, tarball: packed.tarball, pack: packed, packages: installedPackages(modules), bytes: folderBytes(modules), remove }
  } catch (e) {
    remove()
    throw e
  }
}
