// Bundles the `mcp-edge` command (packages/cli/src/cli/main.ts) with esbuild into
// packages/cli/dist: ESM, packages left external (they are the command's dependencies, the
// library `mcp-edge-validator` included), so an install with `--omit=dev` runs it with no build
// step and no dev tool (docs/deploy-node.md). Code splitting: each subcommand is its own chunk,
// loaded by `await import()` only when that subcommand runs, so `mcp-edge --version` loads
// neither the MCP SDKs nor the server.
//
// `--outdir <dir>` writes elsewhere. `--from-source` bundles the library from its sources
// (src/exports/<subpath>.ts for `mcp-edge-validator/<subpath>`) instead of leaving it external:
// what `npm start` and the tests run, so they need no `npm run build` of dist/lib and never
// see a stale one.
import { build } from 'esbuild'
import { existsSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const arg = (name) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1] : undefined
}
const fromSource = process.argv.includes('--from-source')

/** Resolves `mcp-edge-validator[/subpath]` (and the library's internal `#runtime`) to the library's sources. */
const librarySources = {
  name: 'library-sources',
  setup(b) {
    b.onResolve({ filter: /^(mcp-edge-validator(\/.*)?|#runtime)$/ }, (args) => {
      const sub = args.path === '#runtime' ? 'runtime-node' : args.path === 'mcp-edge-validator' ? 'index' : args.path.slice('mcp-edge-validator/'.length)
      const file = resolve(root, 'src/exports', `${sub}.ts`)
      if (!existsSync(file)) return { errors: [{ text: `${args.path}: no such subpath of the library (src/exports/${sub}.ts)` }] }
      return { path: file }
    })
  },
}

const outdir = resolve(root, arg('--outdir') ?? 'packages/cli/dist')
// Chunk names carry a hash: the previous build's chunks would stay beside the new ones.
rmSync(resolve(outdir, 'chunks'), { recursive: true, force: true })

await build({
  entryPoints: { cli: resolve(root, 'packages/cli/src/cli/main.ts') },
  outdir,
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  plugins: fromSource ? [librarySources] : [],
  // Not the repository's tsconfig.json: its `paths` map the library's name to its sources for
  // tsc and tsx, which the shipped command must not bundle (it imports the installed library).
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
})
