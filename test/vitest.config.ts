import { defineConfig } from 'vitest/config'
import { resolve } from 'node:path'

/**
 * Two tiers, one run (`npm test` runs both; `npm run test:unit` only the first):
 * - `unit`: the pure core, imported directly (test/unit/ mirrors src/core/); no processes, no
 *   Worker build, so it runs in seconds;
 * - `e2e`: everything else, through real Node servers, the Worker bundle under Miniflare and real
 *   MCP SDK peers (the global setup builds the Worker bundle once).
 */
const root = resolve(import.meta.dirname, '..')

export default defineConfig({
  root,
  // The mcp-edge command (packages/cli) imports the library by its package name: in the tests that
  // name is the library's sources, as tsconfig.json's `paths` make it for tsc and tsx.
  resolve: {
    alias: [
      { find: /^mcp-edge-validator$/, replacement: resolve(root, 'src/exports/index.ts') },
      { find: /^mcp-edge-validator\/(.*)$/, replacement: resolve(root, 'src/exports/$1.ts') },
      { find: /^#runtime$/, replacement: resolve(root, 'src/exports/runtime-node.ts') },
    ],
  },
  test: {
    // workerd and origins are real processes: keep the 2-core machine from thrashing.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 10_000 },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', '**/node_modules/**'],
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
})
