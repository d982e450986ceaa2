/**
 * The package as a user gets it: `npm pack` of this repo (which runs `prepack`, the build), and a
 * scratch project in a temporary folder outside the repo that installs the tarball from the file
 * with the hono packages the repo pins. Used by test/package.test.ts.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from './repo'
import { promisify } from 'node:util'

const run = promisify(execFile)
export { REPO }

/** A scratch project with the packed package installed. */
export interface PackedProject {
  /** The scratch project's folder (in the system's temp folder, outside the repo). */
  dir: string
  /** The tarball `npm pack` wrote. */
  tarball: string
  /** Removes the folder and the tarball. */
  remove(): void
}

/**
 * Packs the repo and installs the tarball, `hono` and `@hono/node-server` into a new project.
 * Installs from npm's cache where it can (`--prefer-offline`); needs the registry otherwise.
 * @throws when `npm pack` or `npm install` fails (the message holds npm's output)
 */
export async function packAndInstall(): Promise<PackedProject> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-edge-pack-'))
  const remove = () => rmSync(dir, { recursive: true, force: true })
  try {
    const packed = await run('npm', ['pack', '--pack-destination', dir, '--json'], { cwd: REPO, maxBuffer: 1 << 24 })
    const [entry] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[]
    if (!entry) throw new Error(`npm pack named no tarball: ${packed.stdout.slice(0, 500)}`)
    const tarball = join(dir, entry.filename)
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; dependencies: Record<string, string> }
    const pin = (name: string) => `${name}@${pkg.devDependencies[name] ?? pkg.dependencies[name]}`
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }))
    await run('npm', ['install', tarball, pin('hono'), pin('@hono/node-server'), '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      maxBuffer: 1 << 24,
    })
    return { dir, tarball, remove }
  } catch (e) {
    remove()
    throw e
  }
}
