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

/**
 * The core is a strict stack: each unit (a folder of src/core, or a file at its top) imports only
 * units on lower floors, so a stage never loads a later stage and the shared vocabulary loads
 * nothing else. Bottom to top. A new folder or top-level file must be given a floor here.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['jsonrpc', 'errors', 'edge-response', 'client-signal', 'redact-url', 'work-slices'],
  ['patterns', 'config-rules', 'grade-table'],
  ['access'],
  ['settings'],
  ['config', 'local-answer', 'ports', 'sse', 'pinning'],
  ['observe', 'request', 'startup-report'],
  ['protocol', 'validation'],
  ['exchange'],
  ['guards'],
  ['grading'],
  ['forwarding'],
  ['batch', 'call-context', 'request-auth'],
  ['pipeline'],
  ['virtual'],
  ['front-door'],
]

/** The unit of a core file: its folder under src/core, or its own name for a top-level file. */
function unitOf(file: string): string {
  const [head, ...rest] = relative(CORE, file).split(sep)
  return rest.length > 0 ? head! : head!.replace(/\.[cm]?[jt]s$/, '')
}

/** The file a relative specifier names (`./a` is `a.ts` or `a/index.ts`), or null for a package. */
function resolveSpec(from: string, spec: string, known: Set<string>): string | null {
  if (!spec.startsWith('.')) return null
  const base = resolve(dirname(from), spec)
  return [base, `${base}.ts`, join(base, 'index.ts')].find((f) => known.has(f)) ?? null
}

/** The relative imports of every file under `dir`, resolved to files. */
function importGraph(dir: string): Map<string, string[]> {
  const files = coreFiles(dir)
  const known = new Set(files)
  return new Map(files.map((f) => [f, specifiers(readFileSync(f, 'utf8')).flatMap((s) => resolveSpec(f, s, known) ?? [])]))
}

/** Every import cycle in a graph, each as the files on it (the first repeated at the end); depth-first search. */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (f: string): void => {
    state.set(f, 'open')
    path.push(f)
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 'open') found.push([...path.slice(path.indexOf(t)), t])
      else if (!state.has(t)) visit(t)
    }
    path.pop()
    state.set(f, 'done')
  }
  for (const f of graph.keys()) if (!state.has(f)) visit(f)
  return found
}

describe('the core stack', () => {
  const SRC = resolve(CORE, '..')

  it('the cycle check finds a circle, a self-import and none in a tree', () => {
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ])
      )
    ).toEqual([['a', 'b', 'c', 'a']])
    expect(cycles(new Map([['a', ['a']]]))).toEqual([['a', 'a']])
    expect(
      cycles(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ])
      )
    ).toEqual([])
  })

  it('no import cycle anywhere in src, type-only imports included', () => {
    const graph = importGraph(SRC)
    expect(graph.size).toBeGreaterThan(100)
    expect(cycles(graph).map((c) => c.map((f) => relative(SRC, f)).join(' > '))).toEqual([])
  })

  it('every core unit has a floor, and each imports only units on lower floors', () => {
    const floor = new Map(FLOORS.flatMap((units, i) => units.map((u) => [u, i] as const)))
    const graph = importGraph(CORE)
    const units = new Set([...graph.keys()].map(unitOf))
    expect([...units].filter((u) => !floor.has(u))).toEqual([])
    const upOrSideways: string[] = []
    for (const [f, targets] of graph)
      for (const t of targets) {
        const [a, b] = [unitOf(f), unitOf(t)]
        if (a !== b && floor.get(b)! >= floor.get(a)!)
          upOrSideways.push(`${relative(CORE, f)} -> ${relative(CORE, t)} (${a} on floor ${floor.get(a)}, ${b} on floor ${floor.get(b)})`)
      }
    expect(upOrSideways).toEqual([])
  })

  it('the vocabulary floor imports nothing else in core', () => {
    const graph = importGraph(join(CORE, 'jsonrpc'))
    expect(graph.size).toBeGreaterThanOrEqual(3)
    expect([...graph.values()].flat().filter((t) => unitOf(t) !== 'jsonrpc')).toEqual([])
  })
})
