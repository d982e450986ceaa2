import { buildWorkerBundle } from './build-worker'
import { bundleCli } from './cli-process'
import { ensureSystemPrograms } from './system-programs'

/**
 * Vitest global setup, once per run before any test file: installs the Debian programs some tests
 * start when they are missing and this is root (system-programs.ts; it says so on stdout), then
 * builds the Worker bundle and the `mcp-edge` command (dist/test/cli.js).
 */
export default async function setup(): Promise<void> {
  ensureSystemPrograms()
  await buildWorkerBundle()
  await bundleCli()
}
