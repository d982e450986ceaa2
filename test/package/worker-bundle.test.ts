/**
 * The Worker as it would be deployed: `wrangler deploy --dry-run` builds the bundle, and the bundle
 * must contain no code generation from strings (workerd forbids `new Function`/`eval` at request
 * time, and vitest-pool-workers would hide that). The detector is proven on a bundle that does
 * contain ajv, so this test can fail.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from '../helpers/repo'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = REPO

/** Places in a bundle that generate code from strings. */
function codegenSites(js: string): string[] {
  const found: string[] = []
  // `eval(` as a call of the global, not a method definition of that name (re2js's prefilter has `eval(input, pos) {`).
  for (const re of [/\bnew Function\s*\(/g, /(?<![\w$.])eval\s*\((?![^)]*\)\s*\{)/g, /\bFunction\s*\(\s*["'`]/g]) {
    for (const m of js.matchAll(re)) found.push(js.slice(Math.max(0, m.index! - 40), m.index! + 40))
  }
  return found
}

describe('Worker bundle', () => {
  it('builds with wrangler deploy --dry-run and holds no code generation from strings', async () => {
    const out = mkdtempSync(join(tmpdir(), 'edge-worker-'))
    const { stdout } = await run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', out], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
    })
    expect(stdout).toMatch(/--dry-run: exiting now/)
    const files = readdirSync(out).filter((f) => f.endsWith('.js'))
    expect(files.length).toBeGreaterThan(0)
    const js = files.map((f) => readFileSync(join(out, f), 'utf8')).join('\n')
    // The Workers engine is in the bundle (cfworker's keyword table), ajv is not.
    expect(js).toContain('dependentRequired')
    expect(js).not.toContain('ajv/dist')
    expect(codegenSites(js)).toEqual([])
    console.log(`worker bundle: ${files.join(', ')}, ${(js.length / 1024).toFixed(1)} KiB, 0 code-generation sites`)
  }, 120_000)

  it('the detector finds code generation in a bundle that includes ajv', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edge-ajv-'))
    const entry = join(dir, 'entry.ts')
    writeFileSync(entry, `import { createAjvEngine } from ${JSON.stringify(join(ROOT, 'src/validators/ajv.ts'))}\nexport default createAjvEngine`)
    const res = await build({ entryPoints: [entry], bundle: true, write: false, format: 'esm', platform: 'neutral', mainFields: ['module', 'main'], logLevel: 'silent' })
    expect(codegenSites(res.outputFiles[0]!.text).length).toBeGreaterThan(0)
  })
})
