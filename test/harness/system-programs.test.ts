/**
 * The test run's own set-up (test/helpers/system-programs.ts, called by the global setup): on a
 * machine without redis-server, promtool or chromium it installs them with apt-get when root and
 * says so, and otherwise prints the one command to run. The programs are hidden with a PATH that
 * holds only `node` (the machine's packages are never removed here); apt-get's two runs are
 * recorded, and the package names are checked against the machine's real apt (`apt-get install
 * --simulate`, which changes nothing). The real install is what `npm test` does on a fresh machine.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ensureSystemPrograms, installCommand, onPath, programPath, SYSTEM_PROGRAMS } from '../helpers/system-programs'

let bare: string
beforeEach(() => {
  bare = mkdtempSync(join(tmpdir(), 'mcp-edge-bare-path-'))
  symlinkSync(process.execPath, join(bare, 'node'))
})
afterEach(() => rmSync(bare, { recursive: true, force: true }))

/** An executable script at `dir/name`. */
function fakeProgram(dir: string, name: string): void {
  writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n')
  chmodSync(join(dir, name), 0o755)
}

describe('ensureSystemPrograms (the global setup of npm test)', () => {
  it('finds each program on PATH, or by its variable', () => {
    expect(programPath('redis-server', { PATH: bare })).toBeUndefined()
    fakeProgram(bare, 'promtool')
    expect(programPath('promtool', { PATH: bare })).toBe(join(bare, 'promtool'))
    expect(programPath('chromium', { PATH: bare, CHROMIUM_PATH: '/opt/chrome/chrome' })).toBe('/opt/chrome/chrome')
  })

  it('with nothing installed and no root: runs nothing and prints the command to run', () => {
    const lines: string[] = []
    const runs: string[][] = []
    const r = ensureSystemPrograms({
      env: { PATH: bare },
      isRoot: false,
      log: (l) => lines.push(l),
      run: (c, a) => (runs.push([c, ...a]), { status: 0, stdout: '', stderr: '', error: undefined }),
    })
    expect(r).toEqual({ missing: ['redis-server', 'promtool', 'chromium'], action: 'not-root' })
    expect(runs).toEqual([])
    expect(lines).toEqual([
      'npm test: redis-server, promtool, chromium not installed; the tests that start them will fail. Install them as root with: apt-get update && apt-get install -y redis-server prometheus chromium',
    ])
  })

  it('as root with apt-get: says what it installs and why, runs apt-get update then install of the missing packages only, and finds them after', () => {
    fakeProgram(bare, 'promtool') // present: not installed again
    const apt = join(bare, 'apt-get')
    fakeProgram(bare, 'apt-get')
    const lines: string[] = []
    const runs: string[][] = []
    const r = ensureSystemPrograms({
      env: { PATH: bare },
      isRoot: true,
      log: (l) => lines.push(l),
      run: (c, a, env) => {
        runs.push([c, ...a, `DEBIAN_FRONTEND=${env.DEBIAN_FRONTEND}`])
        if (a[0] === 'install') for (const p of ['redis-server', 'chromium']) fakeProgram(bare, p) // what the packages put on PATH
        return { status: 0, stdout: '', stderr: '', error: undefined }
      },
    })
    expect(r).toEqual({ missing: ['redis-server', 'chromium'], action: 'installed' })
    expect(runs).toEqual([
      [apt, 'update', '-qq', 'DEBIAN_FRONTEND=noninteractive'],
      [apt, 'install', '-y', '-qq', 'redis-server', 'chromium', 'DEBIAN_FRONTEND=noninteractive'],
    ])
    expect(lines[0]).toMatch(
      /^npm test: installing redis-server \(redis-server, for the Redis store tests.*\), chromium \(chromium, for test\/access\/browser-cors\.test\.ts\) with apt-get$/
    )
    expect(lines.at(-1)).toBe('npm test: installed redis-server, chromium')
  })

  it('as root, a failing apt-get is reported with its error and nothing is claimed', () => {
    fakeProgram(bare, 'apt-get')
    const lines: string[] = []
    const r = ensureSystemPrograms({
      env: { PATH: bare },
      isRoot: true,
      log: (l) => lines.push(l),
      run: () => ({ status: 100, stdout: '', stderr: 'E: Unable to locate package chromium', error: undefined }),
    })
    expect(r.action).toBe('failed')
    expect(lines.at(-1)).toBe('npm test: apt-get update failed (exit 100): E: Unable to locate package chromium')
  })

  it.runIf(onPath('apt-get') !== undefined)("the package names are the machine's apt packages (apt-get install --simulate: nothing changes)", () => {
    const r = spawnSync('apt-get', ['install', '--simulate', '-qq', ...SYSTEM_PROGRAMS.map((p) => p.pkg)], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(onPath('apt-get')!)}:/usr/sbin:/usr/bin:/sbin:/bin` },
    })
    expect(r.status, r.stderr).toBe(0)
    expect(installCommand(SYSTEM_PROGRAMS)).toBe('apt-get update && apt-get install -y redis-server prometheus chromium')
  })
})
