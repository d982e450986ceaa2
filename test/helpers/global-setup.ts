import { buildWorkerBundle } from './build-worker'
import { buildCli } from './cli-process'

/** Vitest global setup: build the Worker bundle and the `mcp-edge` command (dist/test/cli.js) once. */
export default async function setup(): Promise<void> {
  await buildWorkerBundle()
  buildCli()
}
