import { buildWorkerBundle } from './build-worker'
import { bundleCli } from './cli-process'

/** Vitest global setup: build the Worker bundle and the `mcp-edge` command (dist/test/cli.js) once per run, before any test file. */
export default async function setup(): Promise<void> {
  await buildWorkerBundle()
  await bundleCli()
}
