import { defineConfig } from 'vitest/config'
import { resolve } from 'node:path'

export default defineConfig({
  root: resolve(import.meta.dirname, '..'),
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // workerd and origins are real processes: keep the 2-core machine from thrashing.
    maxWorkers: 2,
    reporters: ['default'],
  },
})
