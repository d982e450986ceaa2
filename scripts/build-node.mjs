// Bundles the `mcp-edge` command (src/cli/main.ts) with esbuild into dist/cli.js: one ESM file,
// packages left external (they are the package's dependencies), so an install with
// `--omit=dev` runs it with no build step and no dev tool (docs/deploy-node.md).
// `--outdir <dir>` writes elsewhere (the tests build their own copy into dist/test).
import { build } from 'esbuild'
const at = process.argv.indexOf('--outdir')
await build({
  entryPoints: { cli: 'src/cli/main.ts' },
  outdir: at > 0 ? process.argv[at + 1] : 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
})
