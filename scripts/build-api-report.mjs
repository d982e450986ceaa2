// The API report: every name each subpath of the package exports (package.json `exports`), with
// its declaration text as the built declarations (dist/lib, `npm run build`) give it, written to
// docs/api-report.md. `node scripts/build-api-report.mjs` rewrites the report; `--check <dist/lib>`
// compares the report with the declarations under that folder and exits 1 when they differ
// (test/package/package.test.ts runs it on the packed package).
//
// Why not api-extractor: it drives the TypeScript 5 compiler API, which TypeScript 7 (the native
// port this project compiles with) does not ship (node_modules/typescript/lib holds only tsc.js).
// The declarations tsc emits are regular enough to read with a small scanner: top-level
// statements, `export { a, type B } from './x.js'` chains followed to the declaring file, and
// each declaration cut at its closing brace or semicolon (strings and comments skipped).
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const REPORT = join(root, 'docs/api-report.md')

/** The declaration file's text without comments. */
function source(file) {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
}

/** Top-level statements of a declaration file, each as its text. */
function statements(text) {
  const out = []
  let depth = 0
  let start = 0
  let i = 0
  while (i < text.length) {
    const ch = text[i]
    if (ch === "'" || ch === '"' || ch === '`') {
      const q = ch
      i++
      while (i < text.length && text[i] !== q) i += text[i] === '\\' ? 2 : 1
    } else if (ch === '{' || ch === '(' || ch === '[') depth++
    else if (ch === '}' || ch === ')' || ch === ']') {
      depth--
      // A block statement (interface, class, enum, namespace) ends at its closing brace.
      if (depth === 0 && ch === '}' && /^\s*(export\s+)?(declare\s+)?(abstract\s+)?(interface|class|enum|namespace|module)\b/.test(text.slice(start, i))) {
        out.push(text.slice(start, i + 1).trim())
        start = i + 1
      }
    } else if (ch === ';' && depth === 0) {
      out.push(text.slice(start, i + 1).trim())
      start = i + 1
    }
    i++
  }
  return out.filter((s) => s !== '' && s !== ';')
}

const DECL = /^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(function|const|let|var|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/

/** Parses `{ a, type B, c as d }` into [imported, exported] pairs. */
function specifiers(list) {
  return list
    .split(',')
    .map((s) => s.trim().replace(/^type\s+/, ''))
    .filter(Boolean)
    .map((s) => {
      const [from, to] = s.split(/\s+as\s+/)
      return [from.trim(), (to ?? from).trim()]
    })
}

/** The declarations of `name` in `file` (several for overloads, or an interface merged with a const), following re-exports. */
function declarationOf(file, name, seen = new Set()) {
  const key = `${file}#${name}`
  if (seen.has(key)) throw new Error(`api report: re-export cycle at ${key}`)
  seen.add(key)
  const found = []
  for (const s of statements(source(file))) {
    const m = DECL.exec(s)
    if (m && m[2] === name) {
      found.push(s.replace(/^export\s+/, '').replace(/^declare\s+/, ''))
      continue
    }
    const re = /^(?:export|import)\s+(?:type\s+)?\{([^}]*)\}\s*(?:from\s+['"]([^'"]+)['"])?/.exec(s)
    if (re) {
      for (const [from, to] of specifiers(re[1])) {
        if (to !== name) continue
        if (re[2]) return declarationOf(resolve(dirname(file), re[2].replace(/\.js$/, '.d.ts')), from, seen)
        if (from !== name) return declarationOf(file, from, seen)
      }
    }
    if (name === 'default' && /^export\s+default\s+/.test(s)) {
      const target = /^export\s+default\s+([A-Za-z_$][\w$]*);$/.exec(s)
      if (target) return declarationOf(file, target[1], seen)
      found.push(s)
    }
  }
  if (found.length === 0) throw new Error(`api report: no declaration of ${name} in ${relative(root, file)}`)
  return found
}

/** The names a subpath's declaration file exports, in the order they are written, with their declarations. */
function exportsOf(file) {
  const names = []
  for (const s of statements(source(file))) {
    const re = /^export\s+(?:type\s+)?\{([^}]*)\}/.exec(s)
    if (re) for (const [, to] of specifiers(re[1])) names.push(to)
    else if (/^export\s+default\b/.test(s)) names.push('default')
    else if (/^export\s+\*/.test(s)) throw new Error(`api report: ${relative(root, file)} has \`export *\`; list the names`)
    else {
      const m = DECL.exec(s)
      if (m && /^export\s/.test(s) && !names.includes(m[2])) names.push(m[2])
    }
  }
  return names.map((n) => ({ name: n, declarations: declarationOf(file, n) }))
}

/** The report's text for the declarations under `lib` (a dist/lib folder). */
export function apiReport(lib) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const lines = [
    '# API report of mcp-edge-validator',
    '',
    'For a reviewer of a change, or a library user looking up a signature: every name each import path of the package exports, with its declaration as the built `.d.ts` files give it',
    '(comments left out). Generated by `node scripts/build-api-report.mjs` after `npm run build`; test/package/package.test.ts',
    "fails when the packed package's declarations differ from this file, so a change of the public API is a change",
    'of this file too (reviewed in the same commit).',
    '',
  ]
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue // ./package.json
    const dts = join(lib, relative('dist/lib', target.types))
    lines.push(`## \`${subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`}\``, '')
    for (const { name, declarations } of exportsOf(dts)) {
      lines.push(`### ${name}`, '', '```ts', ...declarations.map((d) => d.replace(/\n\s*\n/g, '\n')), '```', '')
    }
  }
  return lines.join('\n')
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const at = process.argv.indexOf('--check')
  if (at > 0) {
    const lib = resolve(process.argv[at + 1])
    const now = apiReport(lib)
    if (now !== readFileSync(REPORT, 'utf8')) {
      console.error(`api report: the declarations under ${lib} differ from docs/api-report.md; run npm run build && node scripts/build-api-report.mjs and commit the report`)
      process.exit(1)
    }
  } else writeFileSync(REPORT, apiReport(join(root, 'dist/lib')))
}
