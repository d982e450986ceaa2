/**
 * Bundles the Worker entry once per test run (esbuild, the same settings wrangler uses for a
 * module Worker), so tests run the real bundle under plain Miniflare: no vitest-pool-workers
 * `Function` patch hides code generation from strings.
 */
import { build, type BuildOptions } from 'esbuild'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'

export const WORKER_BUNDLE = resolve(import.meta.dirname, '../../dist/test/worker.js')

/** How wrangler bundles a module Worker: ESM, the `workerd` export condition, no Node built-ins. */
export const WORKER_BUILD: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser'],
  target: 'es2022',
}

/** Builds the Worker entry into `outfile` (default dist/test/worker.js); returns the path. */
export async function buildWorkerBundle(outfile: string = WORKER_BUNDLE): Promise<string> {
  mkdirSync(resolve(outfile, '..'), { recursive: true })
  await build({
    entryPoints: [resolve(import.meta.dirname, '../../src/adapters/workers/index.ts')],
    outfile,
    ...WORKER_BUILD,
    logLevel: 'warning',
  })
  return outfile
}
