/**
 * Bundles the Worker entry once per test run (esbuild, the same settings wrangler uses for a
 * module Worker), so tests run the real bundle under plain Miniflare: no vitest-pool-workers
 * `Function` patch hides code generation from strings.
 */
import { build } from 'esbuild'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'

export const WORKER_BUNDLE = resolve(import.meta.dirname, '../../dist/test/worker.js')

/** Builds dist/test/worker.js. */
export async function buildWorkerBundle(): Promise<string> {
  mkdirSync(resolve(WORKER_BUNDLE, '..'), { recursive: true })
  await build({
    entryPoints: [resolve(import.meta.dirname, '../../src/adapters/workers/index.ts')],
    outfile: WORKER_BUNDLE,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'warning',
  })
  return WORKER_BUNDLE
}
