/**
 * The Worker as it is deployed: `wrangler deploy --dry-run` (what `npm run build:worker` runs)
 * builds the bundle, scripts/worker-size.mjs prints its size, and the gzip size stays within
 * {@link WORKER_GZIP_BUDGET_BYTES}. The Env type checked in (worker-configuration.d.ts) is what
 * `wrangler types` generates from wrangler.toml now (`wrangler types --check`, offline).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { REPO } from '../helpers/repo'
import { afterAll, describe, expect, it } from 'vitest'

const WRANGLER = resolve(REPO, 'node_modules/.bin/wrangler')
const ENV = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', CI: 'true', NO_COLOR: '1' }

/**
 * 284 KiB gzip. The bundle is 257.9 KiB gzip today (1,012 KiB raw, wrangler's unminified output:
 * hono, @cfworker/json-schema, re2js, jose and the core). re2js, the linear-time regular-expression
 * engine for `pattern` (about 82 KiB gzip, most of it Unicode tables), is there on purpose:
 * ECMAScript's backtracking RegExp let one call block the isolate for seconds. The governance
 * features (the OAuth resource server with jose's JWT verification, tool filtering and rate limits,
 * tool pinning with its JCS digests) added about 61 KiB gzip over the 156.4 KiB before them:
 * minified with esbuild, core/pinning is 34 KiB, jose 18.6 KiB, core/access 10.8 KiB. The checks on
 * what comes back and the virtual servers added about 47 KiB gzip over the 211.0 KiB before them
 * (minified: core/guards 21.8 KiB with the result checks and their secret and hidden-character
 * scans, core/virtual 20.4 KiB and more with prompts and resources, core/pinning 10 KiB more with
 * the server instructions and the operator's actions).
 * Cloudflare's own limit (3 MB gzip on the Free plan) is far away; this budget is about what a
 * Worker pays per cold start (the isolate parses the whole script) and about catching a
 * dependency pulled in by accident: ajv with its formats (about 35 KiB gzip), the MCP SDK or zod
 * (more) would each break it, while the core's own growth over a release (a few KiB) does not.
 */
export const WORKER_GZIP_BUDGET_BYTES = 284 * 1024

const out = mkdtempSync(join(tmpdir(), 'worker-build-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

describe('Worker build', () => {
  it(`the deployable bundle's gzip size is printed and stays within ${WORKER_GZIP_BUDGET_BYTES} bytes`, () => {
    execFileSync(WRANGLER, ['deploy', '--dry-run', '--outdir', out, '--env='], { cwd: REPO, env: ENV, stdio: 'pipe' })
    const line = execFileSync(process.execPath, ['scripts/worker-size.mjs', out], { cwd: REPO, encoding: 'utf8' })
    const m = /gzip [\d.]+ KiB \((\d+) bytes\)/.exec(line)
    expect(m, line).not.toBeNull()
    const gzip = Number(m![1])
    expect(gzip).toBeGreaterThan(20 * 1024) // a real bundle, not an empty file
    expect(gzip, line).toBeLessThanOrEqual(WORKER_GZIP_BUDGET_BYTES)
    // keep_names = false (wrangler.toml): no `__name(fn, ...)` wrapper runs on the request path,
    // so the deployed Worker is the bundle the benchmark measures.
    const bundle = readdirSync(out).find((f) => f.endsWith('.js'))!
    expect(readFileSync(join(out, bundle), 'utf8')).not.toContain('__name(')
  }, 120_000)

  it('worker-configuration.d.ts is what `wrangler types` generates from wrangler.toml', () => {
    // --check exits non-zero when the file is out of date (e.g. a binding added to wrangler.toml).
    execFileSync(WRANGLER, ['types', '--include-runtime=false', '--strict-vars=false', '--check'], { cwd: REPO, env: ENV, stdio: 'pipe' })
  }, 60_000)
})
