/**
 * The package as published: `npm pack`, installed into an empty project outside the repo. Node
 * loads the `node` build (tiered engine), a Workers bundle of the same import takes the `workerd`
 * build (cfworker, no code generation), and the declarations type-check for a TypeScript user
 * with Node's own module resolution. Then a ten-line Hono app of that project mounts `mcpEdge` in
 * front of the demo origin (a real MCP SDK server) and runs on Node (@hono/node-server) and in
 * workerd (its esbuild bundle under plain Miniflare), driven by the official SDK client.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../demo/origin'
import { WORKER_BUILD } from './helpers/build-worker'
import { packAndInstall, REPO, type PackedProject } from './helpers/packed-package'
import { mcpHeaders } from './helpers/mcp'

const run = promisify(execFile)
let project: PackedProject

/** Bundles a file of the scratch project as wrangler would for workerd (in memory, with its metafile). */
function bundleForWorkerd(entry: string) {
  return build({ ...WORKER_BUILD, entryPoints: [join(project.dir, entry)], absWorkingDir: project.dir, write: false, metafile: true, logLevel: 'silent' })
}

beforeAll(async () => {
  project = await packAndInstall()
}, 240_000)
afterAll(() => project?.remove())

/** The user's app: the same file runs on Node and, bundled, in workerd (README, "Use it as Hono middleware"). */
const APP = `import { Hono } from 'hono'
import { mcpEdge } from 'mcp-edge-validator'

const app = new Hono()
app.get('/', (c) => c.text('my app'))
// The origin: the Worker's env on Workers, process.env on Node.
app.route('/mcp', mcpEdge((env) => ({ origin: env?.ORIGIN_URL ?? globalThis.process?.env.ORIGIN_URL })))

export default app
`

/** Serves the app on Node; prints the port. */
const NODE_SERVER = `import { serve } from '@hono/node-server'
import app from './app.mjs'
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => console.log('port=' + info.port))
`

const H = (version: string) => mcpHeaders(version)
const invalidCall = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: 'Paris', days: 30 } } })

/** What the app must show wherever it runs: local answers in each era's shape, forwarding, isError added. */
async function checkApp(base: string, origin: RunningOrigin): Promise<void> {
  expect(await (await fetch(base)).text()).toBe('my app')
  const legacy = await fetch(`${base}/mcp`, { method: 'POST', headers: H('2025-06-18'), body: invalidCall(1) })
  expect(legacy.status).toBe(200)
  const legacyBody = (await legacy.json()) as { id: number; error: { code: number; message: string } }
  expect(legacyBody).toMatchObject({ id: 1, error: { code: -32602 } })
  expect(legacyBody.error.message).toContain('days: must be <= 16')
  const modern = await fetch(`${base}/mcp`, { method: 'POST', headers: H('2025-11-25'), body: invalidCall(2) })
  expect(await modern.json()).toMatchObject({ id: 2, result: { isError: true } })
  expect(origin.stats.calls.get_forecast).toBeUndefined() // answered by the edge: the origin never saw them

  const client = new Client({ name: 'package-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
  try {
    const valid = await client.callTool({ name: 'get_forecast', arguments: { city: 'Paris', days: 3 } })
    expect(valid.isError).toBeFalsy()
    expect(origin.stats.calls.get_forecast).toBe(1)
    const hidden = await client.callTool({ name: 'run_query', arguments: { query: 'select 1' } })
    expect(hidden.isError).toBe(true) // the origin answered success: false without isError; the edge added it
  } finally {
    await client.close()
  }
}

describe('a Hono app of the scratch project mounts mcpEdge', () => {
  let origin: RunningOrigin
  beforeEach(async () => {
    origin = await startDemoOrigin()
    writeFileSync(join(project.dir, 'app.mjs'), APP)
  })
  afterEach(async () => origin?.close())

  it('on Node (@hono/node-server)', async () => {
    writeFileSync(join(project.dir, 'server.mjs'), NODE_SERVER)
    let child: ChildProcess | undefined
    try {
      child = spawn(process.execPath, ['server.mjs'], { cwd: project.dir, env: { ...process.env, ORIGIN_URL: origin.url }, stdio: ['ignore', 'pipe', 'inherit'] })
      const port = await new Promise<number>((resolve, reject) => {
        let out = ''
        child!.stdout!.on('data', (d: Buffer) => {
          out += d.toString()
          const m = /port=(\d+)/.exec(out)
          if (m) resolve(Number(m[1]))
        })
        child!.once('exit', (code) => reject(new Error(`the app exited with ${code}: ${out}`)))
      })
      await checkApp(`http://127.0.0.1:${port}`, origin)
    } finally {
      child?.kill()
    }
  })

  it('in workerd (Miniflare), bundled with the workerd condition: no code generation in the bundle', async () => {
    const script = (await bundleForWorkerd('app.mjs')).outputFiles[0]!.text
    expect(script).not.toMatch(/new Function\(|\beval\(/)
    const mf = new Miniflare({
      modules: true,
      script,
      compatibilityDate: '2026-04-20',
      bindings: { ORIGIN_URL: origin.url },
      host: '127.0.0.1',
      port: 0,
      // The Worker's per-POST log lines are not this test's business; its errors are.
      handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
        stdout.resume()
        stderr.pipe(process.stderr)
      },
    })
    try {
      const base = (await mf.ready).toString().replace(/\/$/, '')
      await checkApp(base, origin)
    } finally {
      await mf.dispose()
    }
  })
})

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
    writeFileSync(
      join(project.dir, 'worker-entry.js'),
      `import { createDefaultEngine, DEFAULT_ENGINE } from 'mcp-edge-validator'\nexport default { fetch: () => new Response(DEFAULT_ENGINE + ' ' + createDefaultEngine().name) }\n`
    )
    const out = await bundleForWorkerd('worker-entry.js')
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
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          lib: ['es2022', 'dom'],
          types: ['node'],
          typeRoots: [join(REPO, 'node_modules/@types')],
        },
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
