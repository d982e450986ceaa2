/**
 * A 3-second run of the load script (scripts/load.ts; docs/reliability.md) as a real process: 20
 * clients mixing valid, invalid, malformed and batch traffic against the Node edge (`mcp-edge
 * serve` as a child) in front of an origin failing 5% of calls (resets, 500s, hangs, garbage).
 * It must exit 0 with every id answered once and rightly. No timing is asserted.
 */
import { spawn } from 'node:child_process'
import { REPO } from '../helpers/repo'
import { describe, expect, it } from 'vitest'

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/load.ts', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('exit', (code) => {
      clearTimeout(kill)
      done({ code, out })
    })
  })
}

describe('npm run load (3 s)', () => {
  it('20 clients, 5% origin failures: exit 0; lost 0, duplicated 0, wrong 0; faults were injected', async () => {
    const { code, out } = await run(['--clients', '20', '--seconds', '3'])
    expect(out).toMatch(/lost 0, duplicated 0, wrong 0/)
    const ids = Number(/(\d+) ids: answered (\d+)/.exec(out)?.[1])
    expect(ids).toBeGreaterThan(50)
    expect(Number(/answered (\d+)/.exec(out)?.[1])).toBe(ids)
    // The origin did fail some calls, and the edge answered them with gateway errors.
    const origin = /origin: reset (\d+), status500 (\d+), hang (\d+), garbage (\d+)/.exec(out)
    expect(origin).not.toBeNull()
    expect(Number(origin![1]) + Number(origin![2]) + Number(origin![3]) + Number(origin![4])).toBeGreaterThan(0)
    expect(out).toMatch(/edge RSS: [\d.]+ MiB after warm-up, [\d.]+ MiB at the end/)
    expect(code).toBe(0)
  }, 90_000)

  it('a bad argument exits 2 with a message naming it', async () => {
    const { code, out } = await run(['--clients', 'many'])
    expect(code).toBe(2)
    expect(out).toContain('--clients must be a positive integer, got "many"')
  }, 30_000)
})
