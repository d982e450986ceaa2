/**
 * The core is runtime-neutral (docs/design.md; README "Layout"): nothing under src/core imports a
 * runtime (`node:*`, Node built-ins, `cloudflare:*`), the web framework (`hono`, `@hono/*`), an
 * HTTP client (`undici`) or a validator engine (`ajv*`, `@cfworker/*`); those come in through the
 * ports (src/core/ports.ts) from src/adapters and src/validators. Relative imports stay inside
 * src/core for the same reason. Every module specifier is read from the parsed source (oxc, the
 * parser vite's bundler uses), so `import type`, re-exports, `import()` and `require()` all count.
 */
import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { parseAst } from 'rolldown/parseAst'

const CORE = resolve(import.meta.dirname, '../../src/core')

/** Package names and prefixes the core must not import. */
const FORBIDDEN = [/^node:/, /^cloudflare:/, /^hono(\/|$)/, /^@hono\//, /^ajv(-[a-z]+)?(\/|$)/, /^@cfworker\//, /^undici(\/|$)/]
const BUILTINS = new Set(builtinModules)

/** Every module specifier in a TypeScript source: static, type-only, re-exports, `import()`, `import('x').T`, `require()`. */
export function specifiers(source: string): string[] {
  const out: string[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (typeof node !== 'object' || node === null) return
    const n = node as Record<string, unknown> & { type?: string }
    const src = (n.source ?? n.argument) as { type?: string; value?: unknown } | undefined
    if (
      (n.type === 'ImportDeclaration' || n.type === 'ExportAllDeclaration' || n.type === 'ExportNamedDeclaration' || n.type === 'ImportExpression' || n.type === 'TSImportType') &&
      src
    ) {
      const lit = (src.type === 'TSLiteralType' ? (src as { literal?: { value?: unknown } }).literal : src) as { value?: unknown } | undefined
      if (typeof lit?.value === 'string') out.push(lit.value)
    }
    if (n.type === 'CallExpression' && (n.callee as { name?: string })?.name === 'require') {
      const a = (n.arguments as { value?: unknown }[])[0]
      if (typeof a?.value === 'string') out.push(a.value)
    }
    if (n.type === 'TSExternalModuleReference') {
      const e = n.expression as { value?: unknown }
      if (typeof e?.value === 'string') out.push(e.value)
    }
    for (const k in n) if (k !== 'type' && k !== 'start' && k !== 'end') walk(n[k])
  }
  walk(parseAst(source, { lang: 'ts' }).body)
  return out
}

/** Why a specifier is not allowed in a core file at `file`, or null. */
export function violation(file: string, spec: string): string | null {
  if (spec.startsWith('.')) {
    const target = resolve(dirname(file), spec)
    return target === CORE || target.startsWith(CORE + sep) ? null : `leaves src/core (${relative(CORE, target)})`
  }
  if (FORBIDDEN.some((re) => re.test(spec))) return 'a runtime, framework or validator'
  if (BUILTINS.has(spec) || BUILTINS.has(spec.split('/')[0]!)) return 'a Node built-in'
  return null
}

function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? coreFiles(join(dir, e.name)) : /\.[cm]?[jt]s$/.test(e.name) ? [join(dir, e.name)] : []))
}

describe('the core boundary', () => {
  it('finds every kind of import the parser sees', () => {
    const src = [
      `import type { Context } from 'hono'`,
      `import { a } from './a'`,
      `export * from 'node:fs'`,
      `export { b } from '@cfworker/json-schema'`,
      `const c = await import('undici')`,
      `let d: import('ajv').default`,
      `const e = require('cloudflare:workers')`,
      `import f = require('path')`,
      `const g = 'hono' // a string is not an import`,
    ].join('\n')
    expect(specifiers(src)).toEqual(['hono', './a', 'node:fs', '@cfworker/json-schema', 'undici', 'ajv', 'cloudflare:workers', 'path'])
    const file = join(CORE, 'request', 'x.ts')
    expect(specifiers(src).map((s) => violation(file, s) !== null)).toEqual([true, false, true, true, true, true, true, true])
    expect(violation(file, '../../adapters/node/file-kv')).toMatch(/leaves src\/core/)
    expect(violation(file, '../jsonrpc/jsonrpc')).toBeNull()
    expect(violation(file, 'eventsource-parser')).toBeNull()
  })

  it('src/core imports no runtime, framework, validator, or file outside src/core', () => {
    const files = coreFiles(CORE)
    expect(files.length).toBeGreaterThan(20)
    const bad: string[] = []
    for (const f of files)
      for (const s of specifiers(readFileSync(f, 'utf8'))) {
        const why = violation(f, s)
        if (why) bad.push(`${relative(CORE, f)}: '${s}' (${why})`)
      }
    expect(bad).toEqual([])
  })
})

describe('one writer of JSON-RPC envelopes', () => {
  const SRC = resolve(CORE, '..')
  const WRITER = join(CORE, 'jsonrpc', 'jsonrpc.ts')
  /** An envelope written as text (`"jsonrpc":"2.0"`) or as an object member (`jsonrpc: '2.0'`). */
  const ENVELOPE = /"jsonrpc"\s*:\s*"2\.0"|\bjsonrpc\s*:\s*['"`]2\.0['"`]|['"]jsonrpc['"]\s*:\s*['"`]2\.0/

  it('the pattern finds both spellings and not a check of the member', () => {
    expect(ENVELOPE.test('`{"jsonrpc":"2.0","id":${id}}`')).toBe(true)
    expect(ENVELOPE.test("post({ jsonrpc: '2.0', method })")).toBe(true)
    expect(ENVELOPE.test("if (v.jsonrpc !== '2.0') return")).toBe(false)
  })

  it('only src/core/jsonrpc/jsonrpc.ts writes "jsonrpc":"2.0"', () => {
    const found = coreFiles(SRC)
      .filter((f) => f !== WRITER)
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => [line, i] as const)
          .filter(([line]) => ENVELOPE.test(line) && !/^\s*(\*|\/\/)/.test(line))
          .map(([, i]) => `${relative(SRC, f)}:${i + 1}`)
      )
    expect(found).toEqual([])
  })
})
