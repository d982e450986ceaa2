// The library's build (`prepack`; `npm run build` runs it before the command's,
// scripts/build-node.mjs): its JavaScript and declarations in dist/lib, one .js and one .d.ts per
// module of src/ (docs/library.md, "How the package is built").
//
// Why tsc and tsc-alias: the project type-checks with TypeScript 7 (`tsc -p .`), so the same
// compiler emits the JavaScript and the declarations, file for file. The sources import without
// extensions (`moduleResolution: Bundler`), which TypeScript emits unchanged and Node's ESM loader
// cannot resolve; tsc-alias (`resolveFullPaths`) appends `.js` or `/index.js` to each relative
// specifier in the emitted .js and .d.ts, after checking the target file exists. The declaration
// bundlers (api-extractor, rollup-plugin-dts, dts-bundle-generator) drive the TypeScript 5
// compiler API, which TypeScript 7 (the native port) does not ship.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'
import { replaceTscAliasPaths } from 'tsc-alias'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'dist/lib')
const config = join(root, 'tsconfig.build.json')

rmSync(out, { recursive: true, force: true })
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', config], { stdio: 'inherit' })
await replaceTscAliasPaths({ configFile: config, resolveFullPaths: true })

// ajv-formats' format table (one module, no imports) is bundled in: ajv-formats depends on ajv, and
// a Hono-middleware install should bring neither (the ajv engine is an optional peer). Its licence
// goes with it. validators/formats.js then imports the bundled copy.
const VENDORED = 'ajv-formats/dist/formats.js'
const vendorFile = join(out, 'vendor/ajv-formats-formats.js')
const ajvFormatsDir = join(root, 'node_modules/ajv-formats')
const { version: ajvFormatsVersion } = JSON.parse(readFileSync(join(ajvFormatsDir, 'package.json'), 'utf8'))
const licence = readFileSync(join(ajvFormatsDir, 'LICENSE'), 'utf8').trim()
await build({
  stdin: { contents: `export { fullFormats } from '${VENDORED}'`, resolveDir: root, loader: 'js' },
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  outfile: vendorFile,
  banner: { js: `/*! ajv-formats ${ajvFormatsVersion}, dist/formats.js, bundled by scripts/build-package.mjs.\n${licence}\n*/` },
  logLevel: 'warning',
})
const formatsModule = join(out, 'validators/formats.js')
const formatsText = readFileSync(formatsModule, 'utf8')
if (!formatsText.includes(`'${VENDORED}'`)) {
  console.error(`build: ${formatsModule} no longer imports '${VENDORED}'`)
  process.exit(1)
}
writeFileSync(formatsModule, formatsText.replace(`'${VENDORED}'`, "'../vendor/ajv-formats-formats.js'"))

// Every relative specifier must now name a file; one that does not would fail at import time.
const unresolved = []
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) walk(p)
    else if (/\.(d\.ts|js)$/.test(e.name)) {
      for (const m of readFileSync(p, 'utf8').matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]*)['"]/g)) {
        if (!m[1].endsWith('.js')) unresolved.push(`${p.slice(root.length + 1)}: ${m[1]}`)
      }
    }
  }
}
walk(out)
if (unresolved.length > 0) {
  console.error(`build: ${unresolved.length} relative import(s) without a .js file:\n  ${unresolved.join('\n  ')}`)
  process.exit(1)
}
