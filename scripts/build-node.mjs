// Bundles the Node entry (`npm start`) with esbuild: one ESM file, packages left external.
import { build } from 'esbuild'
await build({
  entryPoints: { start: 'scripts/start.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
})
