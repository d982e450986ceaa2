/**
 * The package as published: `npm pack`, installed into an empty project outside the repo. Node
 * loads the `node` build (tiered engine), a Workers bundle of the same import takes the `workerd`
 * build (cfworker, no code generation), and the declarations type-check for a TypeScript user
 * with Node's own module resolution.
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packAndInstall, REPO, type PackedProject } from './helpers/packed-package'

const run = promisify(execFile)
let project: PackedProject

beforeAll(async () => {
  project = await packAndInstall()
}, 240_000)
afterAll(() => project?.remove())

describe('npm pack, installed into an empty project', () => {
  it('Node imports the node build: the tiered engine, the Node server under ./node', async () => {
    const script = `
      import * as edge from 'mcp-edge-validator'
      import * as server from 'mcp-edge-validator/node'
      const engine = edge.createDefaultEngine()
      console.log(JSON.stringify({ engine: edge.DEFAULT_ENGINE, name: engine.name, startEdge: typeof server.startEdge, ajv: typeof edge.createAjvEngine }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project.dir })
    expect(JSON.parse(stdout)).toEqual({ engine: 'tiered', name: expect.stringContaining('cfworker') as string, startEdge: 'function', ajv: 'function' })
  })

  it('a Workers bundle of the same import takes the workerd build: cfworker, no ajv, no code generation', async () => {
    writeFileSync(join(project.dir, 'worker-entry.js'), `import { createDefaultEngine, DEFAULT_ENGINE } from 'mcp-edge-validator'\nexport default { fetch: () => new Response(DEFAULT_ENGINE + ' ' + createDefaultEngine().name) }\n`)
    const out = await build({
      entryPoints: [join(project.dir, 'worker-entry.js')],
      absWorkingDir: project.dir,
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'browser'],
      metafile: true,
      logLevel: 'silent',
    })
    const text = out.outputFiles[0]!.text
    const inputs = Object.keys(out.metafile.inputs)
    expect(inputs.some((p) => p.includes('mcp-edge-validator/dist/lib/exports/workers.js'))).toBe(true)
    expect(inputs.filter((p) => /node_modules\/(ajv|undici)\//.test(p))).toEqual([])
    expect(text).not.toMatch(/new Function\(|\beval\(/)
    expect(text).toContain('"cfworker"')
  })

  it('the declarations type-check under moduleResolution nodenext', async () => {
    writeFileSync(
      join(project.dir, 'check.ts'),
      `import { createDefaultEngine, loadConfig, MemoryKv, type KvStore, type ValidatorEngine } from 'mcp-edge-validator'
import { startEdge, type RunningEdge } from 'mcp-edge-validator/node'
const store: KvStore = new MemoryKv()
const engine: ValidatorEngine = createDefaultEngine()
const maxBodyBytes: number = loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp' }).maxBodyBytes
const start: (o: { port: number; kv: KvStore; engine: ValidatorEngine }) => Promise<RunningEdge> = startEdge
// @ts-expect-error the config has no such field
loadConfig({}).noSuchField
export { store, engine, maxBodyBytes, start }
`
    )
    writeFileSync(
      join(project.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, lib: ['es2022', 'dom'], types: ['node'], typeRoots: [join(REPO, 'node_modules/@types')] },
        files: ['check.ts'],
      })
    )
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [tsc, '-p', project.dir]).then(
      () => '',
      (e: { stdout?: string }) => e.stdout ?? String(e)
    )
    expect(result).toBe('')
  })
})
