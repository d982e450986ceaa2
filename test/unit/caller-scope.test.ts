/**
 * The caller-scope rule (`public`, or `u-` and 64 lower-case hex digits) has one owner,
 * core/config-rules.ts `isCallerScope`, shared with the `mcp-edge` command through
 * `mcp-edge-validator/rules`: the admin API's `?scope=`, the pin manifest's `scope` and
 * `mcp-edge tools --scope` all take it from there, and it accepts every scope the edge gives.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CALLER_SCOPE_EXPECTED, isCallerScope } from '../../src/exports/rules'
import { PUBLIC_SCOPE, privateScope } from '../../src/core/validation/caller-scope'

const REPO = resolve(import.meta.dirname, '../..')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))
}

describe('the caller-scope rule', () => {
  it('accepts the public scope and every private scope the edge computes; refuses anything else', async () => {
    expect(isCallerScope(PUBLIC_SCOPE)).toBe(true)
    for (const auth of [null, 'Bearer a', 'Bearer ' + 'x'.repeat(500)]) expect(isCallerScope(await privateScope(auth))).toBe(true)
    const hex = 'ab'.repeat(32)
    for (const bad of ['', 'Public', 'private', `u-${hex.slice(1)}`, `u-${hex}0`, `u-${hex.toUpperCase()}`, `u-${hex}\n`, ` public`, `U-${hex}`])
      expect(isCallerScope(bad), bad).toBe(false)
    expect(CALLER_SCOPE_EXPECTED).toBe('"public" or a private scope "u-" followed by 64 lower-case hex digits')
  })

  it('is written once: no other source of the library or the command spells the pattern', () => {
    const files = [...sources(join(REPO, 'src')), ...sources(join(REPO, 'packages/cli/src'))]
    const spelled = files.filter((f) => readFileSync(f, 'utf8').includes('u-[0-9a-f]{64}')).map((f) => relative(REPO, f))
    expect(spelled).toEqual(['src/core/config-rules.ts'])
  })
})
