/**
 * `node --import tsx scripts/validators/evaluate.ts`: no-codegen JSON Schema engines for the
 * Workers runtime, against the edge's @cfworker/json-schema, to learn whether a faster one could replace it (results in
 * docs/validators.md). Every candidate runs inside workerd (scripts/validators/engines-worker.ts
 * under Miniflare, no `nodejs_compat`), where code generation from strings is forbidden.
 *
 * 1. JSON-Schema-Test-Suite (test/fixtures/json-schema-test-suite), draft-07 and 2020-12, the
 *    required tests with `format` as an annotation (as test/validation/json-schema-suite.test.ts runs them):
 *    passed and failed per engine, and every failing group.
 * 2. Differential: the differential test's corpus and generator (test/helpers/tool-schema-corpus.ts),
 *    each schema put through the edge's portability gate and normal form, inputs generated with
 *    fast-check (fixed seed); every candidate's verdict compared with the Node engine's (ajv, in
 *    this process, as production runs it) with formats asserted.
 * 3. Speed inside workerd: validations per second for the benchmark's schemas (3, 10, 20, 100
 *    properties, 16 levels deep), passing and failing arguments, and the compile cost. workerd's
 *    clock does not advance while a request computes, so the time is taken from outside: two
 *    requests doing `n1` and `n2` validations, rate = (n2 - n1) / (t2 - t1), median of 5.
 *
 * Prints Markdown tables on stdout. Flags: `--quick` (fewer inputs and shorter timings, to check
 * the script; figures meaningless).
 *
 * The candidates are not dependencies of the project (ata-validator's optional native packages
 * are not all published for 1.27.1, which `npm ci` refuses): install them first with
 * `npm install --no-save ata-validator@1.27.1 @hyperjump/json-schema@1.18.0`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { build } from 'esbuild'
import fc from 'fast-check'
import { Miniflare } from 'miniflare'
import { SchemaUnusableError } from '../../src/core/ports'
import { dialectOf, type Dialect, type ProtocolVersion } from '../../src/core/jsonrpc/versions'
import { normaliseSchema } from '../../src/core/validation/schema-normal-form'
import { portabilityProblem } from '../../src/core/validation/schema-portability'
import { createAjvEngine } from '../../src/validators/ajv'
import { arb, toolSchemaCorpus, type Schema } from '../../test/helpers/tool-schema-corpus'
import { makeDeepTool, makeTool, TOOLS } from '../bench/schemas'
import { median, table, fmt } from '../bench/stats'

const ROOT = resolve(import.meta.dirname, '../..')
const QUICK = process.argv.includes('--quick')
const SUITE = resolve(ROOT, 'test/fixtures/json-schema-test-suite')
const ENGINES = ['cfworker', 'ata', 'hyperjump'] as const
type Engine = (typeof ENGINES)[number]
type Verdict = boolean | 'unusable' | 'error'

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.json') ? [p] : []
  })
}

function loadRemotes(): Record<string, unknown> {
  const root = join(SUITE, 'remotes')
  const out: Record<string, unknown> = {}
  for (const f of walk(root)) out[`http://localhost:1234/${relative(root, f).split('\\').join('/')}`] = JSON.parse(readFileSync(f, 'utf8'))
  return out
}

async function startWorkerd(): Promise<{ url: string; mf: Miniflare }> {
  const outfile = resolve(ROOT, 'dist/validators/engines-worker.js')
  await build({
    entryPoints: [resolve(ROOT, 'scripts/validators/engines-worker.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'error',
    plugins: [
      {
        // @hyperjump/browser maps its Node entry (node:fs, node:url for file: URIs) to a browser
        // one through the package.json "browser" field, which its "exports" shadow for esbuild.
        name: 'hyperjump-browser-entry',
        setup(b) {
          b.onResolve({ filter: /^@hyperjump\/browser$/ }, () => ({ path: resolve(ROOT, 'node_modules/@hyperjump/browser/lib/index.browser.js') }))
        },
      },
    ],
  })
  const mf = new Miniflare({ modules: true, scriptPath: outfile, compatibilityDate: '2026-04-20', host: '127.0.0.1', port: 0 })
  return { url: (await mf.ready).toString(), mf }
}

async function post<T>(base: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(new URL(path, base), { method: 'POST', body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`${path}: ${res.status} ${(await res.text()).slice(0, 300)}`)
  return (await res.json()) as T
}

// ---------------------------------------------------------------- 1. suite

interface SuiteGroup {
  description: string
  schema: unknown
  tests: { description: string; data: unknown; valid: boolean }[]
}

async function suite(base: string): Promise<string> {
  const remotes = loadRemotes()
  const rows: string[][] = []
  const failures: string[] = []
  for (const [dir, dialect] of [
    ['draft7', 'draft-07'],
    ['draft2020-12', '2020-12'],
  ] as const) {
    const files = readdirSync(join(SUITE, 'tests', dir)).filter((f) => f.endsWith('.json'))
    for (const engine of ENGINES) {
      let passed = 0
      let failed = 0
      let refused = 0
      const failedGroups = new Map<string, number>()
      for (const f of files) {
        const groups = JSON.parse(readFileSync(join(SUITE, 'tests', dir, f), 'utf8')) as SuiteGroup[]
        const verdicts = await post<Verdict[][]>(base, '/verdicts', { engine, dialect, formats: 'annotate', remotes, groups })
        groups.forEach((g, gi) =>
          g.tests.forEach((t, ti) => {
            const v = verdicts[gi]![ti]
            if (v === t.valid) passed++
            else {
              failed++
              if (v === 'unusable') refused++
              const id = `${dir}/${f} | ${g.description}`
              failedGroups.set(id, (failedGroups.get(id) ?? 0) + 1)
            }
          })
        )
      }
      rows.push([dialect, engine, String(passed), String(failed), String(refused)])
      failures.push(`- ${dialect}, ${engine}: ${failedGroups.size ? [...failedGroups].map(([g, n]) => `${g} (${n})`).join('; ') : 'none'}`)
    }
  }
  return `### JSON-Schema-Test-Suite, required tests, inside workerd\n\n${table(['dialect', 'engine', 'passed', 'failed', 'of which schema refused'], rows)}\n\nFailing groups (failed cases):\n\n${failures.join('\n')}`
}

// ---------------------------------------------------------------- 2. differential

async function differential(base: string): Promise<string> {
  const corpus = await toolSchemaCorpus()
  const ajv = createAjvEngine()
  const numRuns = QUICK ? 20 : 150
  const stats = Object.fromEntries(ENGINES.map((e) => [e, { agree: 0, disagree: 0, refusedByEngine: 0, examples: [] as string[] }])) as Record<
    Engine,
    { agree: number; disagree: number; refusedByEngine: number; examples: string[] }
  >
  let pairs = 0
  let gated = 0
  let inputs = 0
  let valid = 0
  for (const entry of corpus) {
    for (const era of ['2025-06-18', '2025-11-25'] as ProtocolVersion[]) {
      const dialect = dialectOf(entry.schema, era)
      if (!dialect || portabilityProblem(entry.schema) !== null) {
        gated++
        continue
      }
      let reference: (v: unknown) => boolean
      try {
        const v = ajv.compile(entry.schema, dialect)
        reference = (x) => v(x) === null
      } catch (e) {
        if (e instanceof SchemaUnusableError) {
          gated++
          continue
        }
        throw e
      }
      pairs++
      const normal = normaliseSchema(entry.schema, dialect)
      const data = fc.sample(arb(entry.schema, entry.schema as Schema, 0), { numRuns, seed: 4242 })
      const expected = data.map(reference)
      inputs += data.length
      valid += expected.filter(Boolean).length
      for (const engine of ENGINES) {
        const [verdicts] = await post<Verdict[][]>(base, '/verdicts', {
          engine,
          dialect,
          formats: 'assert',
          remotes: {},
          groups: [{ schema: normal, tests: data.map((d) => ({ data: d })) }],
        })
        const s = stats[engine]
        if (verdicts!.every((v) => v === 'unusable')) {
          s.refusedByEngine++
          s.disagree += data.length
          if (s.examples.length < 6) s.examples.push(`${entry.name} (${dialect}): schema refused`)
          continue
        }
        verdicts!.forEach((v, i) => {
          if (v === expected[i]) s.agree++
          else {
            s.disagree++
            if (s.examples.length < 6) s.examples.push(`${entry.name} (${dialect}): ${JSON.stringify(data[i]).slice(0, 120)} ajv=${expected[i]} ${engine}=${v}`)
          }
        })
      }
    }
  }
  const rows = ENGINES.map((e) => [e, fmt(stats[e].agree), fmt(stats[e].disagree), String(stats[e].refusedByEngine)])
  return (
    `### Differential against the Node engine (ajv), formats asserted\n\n${corpus.length} schemas of the differential test's corpus, 2 eras each: ${pairs} (schema, dialect) pairs compiled (${gated} refused by the edge's portability gate or by ajv, skipped); ` +
    `${fmt(inputs)} generated inputs (${numRuns} per pair, seed 4242), ${fmt(valid)} valid and ${fmt(inputs - valid)} invalid for ajv.\n\n` +
    `${table(['engine', 'same verdict as ajv', 'different verdict', 'schemas the engine refused'], rows)}\n\n` +
    ENGINES.map((e) => `- ${e}: ${stats[e].examples.length ? stats[e].examples.join('; ') : 'no disagreement'}`).join('\n')
  )
}

// ---------------------------------------------------------------- 3. speed

const modes = new Set<string>()

async function timed(base: string, body: object): Promise<number> {
  const t0 = process.hrtime.bigint()
  const r = await post<{ mode: string }>(base, '/speed', body)
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  modes.add(r.mode)
  return ms
}

async function speed(base: string): Promise<string> {
  const tools = [...TOOLS, makeTool(100), makeDeepTool(16)]
  const reps = QUICK ? 1 : 5
  const rows: string[][] = []
  for (const t of tools) {
    const label = t.name.startsWith('deep') ? `${t.size} levels deep` : `${t.size} properties`
    for (const engine of ENGINES) {
      const cells: string[] = [label, engine]
      let compileMs = NaN
      for (const [kind, data] of [
        ['valid', t.valid],
        ['invalid', t.invalid],
      ] as const) {
        const job = (n: number) => ({ engine, dialect: 'draft-07', schema: t.inputSchema, data, n })
        // Calibrate n so the long request takes about 300 ms (30 ms with --quick).
        let n = 200
        for (;;) {
          const ms = (await timed(base, job(n))) - (await timed(base, job(0)))
          if (ms > (QUICK ? 30 : 300) || n > 5e6) break
          n *= 4
        }
        const rates: number[] = []
        const zeros: number[] = []
        for (let i = 0; i < reps; i++) {
          const t0 = await timed(base, job(0))
          const t1 = await timed(base, job(n))
          zeros.push(t0)
          rates.push(n / ((t1 - t0) / 1000))
        }
        cells.push(fmt(median(rates)))
        if (kind === 'valid') compileMs = median(zeros)
      }
      cells.push(fmt(compileMs, 2))
      rows.push(cells)
    }
  }
  return `### Speed inside workerd (draft-07; median of ${reps}; engine modes seen: ${[...modes].join(', ')})\n\n"compile + request ms": a request that compiles the schema and validates nothing (includes the HTTP round trip through Miniflare, the same for every engine).\n\n${table(['schema', 'engine', 'valid args /s', 'invalid args /s', 'compile + request ms'], rows)}`
}

async function main(): Promise<void> {
  for (const pkg of ['ata-validator', '@hyperjump/json-schema']) {
    if (!existsSync(resolve(ROOT, 'node_modules', pkg, 'package.json'))) {
      process.stderr.write(`evaluate: ${pkg} is not installed; run: npm install --no-save ata-validator@1.27.1 @hyperjump/json-schema@1.18.0\n`)
      process.exit(2)
    }
  }
  const { url, mf } = await startWorkerd()
  try {
    const parts = [await suite(url), await differential(url), await speed(url)]
    process.stdout.write(
      `## Validator engines in workerd (\`node --import tsx scripts/validators/evaluate.ts\`, ${new Date().toISOString()}, Node ${process.version})\n\n${parts.join('\n\n')}\n`
    )
  } finally {
    await mf.dispose()
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`evaluate failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  process.exit(1)
})
