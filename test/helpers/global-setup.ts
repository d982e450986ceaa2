import { buildWorkerBundle } from './build-worker'

/** Vitest global setup: build the Worker bundle once. */
export default async function setup(): Promise<void> {
  await buildWorkerBundle()
}
