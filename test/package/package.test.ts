/**
 * The library as published: `npm pack`, installed into an empty project outside the repo with
 * `hono` and nothing else: no CLI, no optional peer dependency (ajv, ajv-formats, undici,
 * prom-client, ioredis, @opentelemetry/api, @hono/node-server, commander and the MCP SDKs are
 * absent; ajv-formats' format table is bundled into dist/lib/vendor). The install stays within 20 packages
 * and 10 MB. Node loads the package (a failure to find an optional peer would throw here), a
 * Workers bundle of the same import takes the Workers `#runtime` (no code generation), the
 * declarations type-check under `moduleResolution` `bundler` and `nodenext` alike, and the API
 * report (docs/api-report.md) matches the packed declarations. Then a ten-line Hono app of that
 * project mounts `mcpEdge` in front of the demo origin (a real MCP SDK server) and runs on Node
 * (served by `node:http` through a 20-line bridge: the project has no @hono/node-server) and in
 * workerd (its esbuild bundle under plain Miniflare), driven by the official SDK client.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { WORKER_BUILD } from '../helpers/build-worker'
import { packAndInstall, REPO, type PackedProject } from '../helpers/packed-package'
import { mcpHeaders } from '../helpers/mcp'
import { freePort } from '../helpers/peers-procs'
import { waitFor } from '../helpers/wait'

/** The most a Hono-middleware install may bring (the package and its dependencies, hono included). */
const MAX_PACKAGES = 20
const MAX_BYTES = 10 * 1024 * 1024
/**
 * Code generation from strings, which workerd refuses at request time: `new Function(` or a call
 * of the global `eval(` (not a method of that name: re2js's prefilter has one, `x.eval(input, pos)`).
 */
const CODE_GENERATION = /new Function\(|(?<![.\w$])eval\((?![^)]*\)\s*\{)|,\s*eval\)\(/

/** What only the optional subpaths or the CLI need: none of it may be installed. */
const ABSENT = [
  'ajv',
  'ajv-formats',
  'undici',
  'prom-client',
  'ioredis',
  '@opentelemetry/api',
  '@hono/node-server',
  'commander',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/client',
  'mcp-edge',
]

const run = promisify(execFile)
let project: PackedProject

/**
 * The relative link targets of a packed Markdown page (inline `[text](target)` and reference
 * definitions `[label]: target`; anchors dropped; URLs with a scheme left out), as paths inside the
 * package, read from the installed copy of the page.
 */
function relativeLinks(page: string): string[] {
  const text = readFileSync(join(project.dir, 'node_modules/mcp-edge-validator', page), 'utf8')
  const targets = [...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g), ...text.matchAll(/^\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!)
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#')).map((t) => posix.normalize(posix.join(posix.dirname(page), decodeURI(t.split('#')[0]!))))
}

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

/**
 * Serves the app on Node with `node:http` and a minimal request/response bridge (streamed both
 * ways; the client going away aborts the request's signal); prints the port.
 */
const NODE_SERVER = `import { createServer } from 'node:http'
import app from './app.mjs'

const server = createServer(async (req, res) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value)
  const gone = new AbortController()
  res.on('close', () => res.writableFinished || gone.abort())
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
  const request = new Request('http://' + req.headers.host + req.url, { method: req.method, headers, signal: gone.signal, ...(hasBody ? { body: req, duplex: 'half' } : {}) })
  const response = await app.fetch(request)
  res.writeHead(response.status, [...response.headers].flat())
  if (response.body) for await (const chunk of response.body) res.write(chunk)
  res.end()
})
server.listen(0, '127.0.0.1', () => console.log('port=' + server.address().port))
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

  it('on Node (node:http, no @hono/node-server)', async () => {
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
    expect(script).not.toMatch(CODE_GENERATION)
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

describe('the Worker host app of docs/library.md under wrangler dev', () => {
  let origin: RunningOrigin
  let child: ChildProcess | undefined
  beforeEach(async () => {
    origin = await startDemoOrigin()
  })
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM')
      await new Promise((r) => child!.once('exit', r))
    }
    await origin?.close()
  })

  it('its wrangler.toml and app file, as written, serve the edge: an invalid call answered locally, a valid one forwarded', async () => {
    const doc = readFileSync(join(REPO, 'docs/library.md'), 'utf8')
    const blocks = [...doc.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }))
    const toml = blocks.find((b) => b.lang === 'toml' && b.body.includes('main = "src/index.js"'))
    const app = blocks.find((b) => b.lang === 'js' && b.body.includes('mcpEdge((env) =>'))
    expect(toml && app, 'docs/library.md: the wrangler.toml and the Worker app').toBeTruthy()
    const dir = join(project.dir, 'worker-app')
    mkdirSync(join(dir, 'src'), { recursive: true })
    writeFileSync(join(dir, 'wrangler.toml'), toml!.body)
    writeFileSync(join(dir, 'src/index.js'), app!.body)
    const port = await freePort()
    // The doc's command with a free port and the test's origin (a loopback origin, as the doc's).
    child = spawn(
      process.execPath,
      [join(REPO, 'node_modules/wrangler/bin/wrangler.js'), 'dev', '--ip', '127.0.0.1', '--port', String(port), '--var', `ORIGIN_URL:${origin.url}`],
      {
        cwd: dir,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', CI: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }
    )
    let out = ''
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
    await waitFor(() => out.includes(`Ready on http://127.0.0.1:${port}`) || child!.exitCode !== null, {
      what: 'wrangler dev ready',
      timeoutMs: 90_000,
      detail: () => out.slice(-2000),
    })
    expect(child.exitCode, out.slice(-2000)).toBeNull()
    const base = `http://127.0.0.1:${port}/mcp`
    const invalid = await fetch(base, { method: 'POST', headers: H('2025-06-18'), body: invalidCall(1) })
    const body = (await invalid.json()) as { id: number; error: { code: number; message: string } }
    expect(body).toMatchObject({ id: 1, error: { code: -32602 } })
    expect(body.error.message).toContain('days: must be <= 16')
    const client = new Client({ name: 'wrangler-dev-app', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(base)))
    try {
      const valid = await client.callTool({ name: 'get_forecast', arguments: { city: 'Paris', days: 3 } })
      expect(valid.isError).toBeFalsy()
      expect(origin.stats.calls.get_forecast).toBe(1) // forwarded once: the invalid call never reached it
    } finally {
      await client.close()
    }
  }, 150_000)
})

describe('npm pack, installed into an empty project with hono alone', () => {
  it(`brings at most ${MAX_PACKAGES} packages and ${MAX_BYTES / 1024 / 1024} MB, none of them an optional peer or the CLI`, () => {
    console.log(
      `middleware install: ${project.packages.length} packages, ${project.bytes} bytes; tarball ${project.pack.size} bytes (${project.pack.unpackedSize} unpacked, ${project.pack.entryCount} files)`
    )
    expect(project.packages.length).toBeLessThanOrEqual(MAX_PACKAGES)
    expect(project.bytes).toBeLessThanOrEqual(MAX_BYTES)
    expect(project.packages.filter((p) => ABSENT.includes(p))).toEqual([])
  })

  it("the README's and docs/library.md's install figures are these (packages exact, sizes within 10%)", () => {
    const near = (shown: number, measured: number) => Math.abs(shown - measured) / measured <= 0.1
    const readme = /That installs (\d+) packages, ([\d.]+) MB with hono/.exec(readFileSync(join(REPO, 'README.md'), 'utf8'))
    expect(readme, 'README: "That installs N packages, X MB with hono"').not.toBeNull()
    expect(Number(readme![1])).toBe(project.packages.length)
    expect(near(Number(readme![2]) * 1e6, project.bytes), `README says ${readme![2]} MB, measured ${project.bytes} bytes`).toBe(true)
    const row = /^\| the library now [^|]*\| (\d+) \| ([\d.]+) MB \| ([\d,]+) KB \(([\d,]+) KB unpacked, (\d+) files\) \|$/m.exec(
      readFileSync(join(REPO, 'docs/library.md'), 'utf8')
    )
    expect(row, 'docs/library.md: the "the library now" row').not.toBeNull()
    const kb = (t: string) => Number(t.replaceAll(',', '')) * 1000
    expect(Number(row![1])).toBe(project.packages.length)
    expect(near(Number(row![2]) * 1e6, project.bytes), `library.md: ${row![2]} MB, measured ${project.bytes} bytes`).toBe(true)
    expect(near(kb(row![3]!), project.pack.size), `library.md: ${row![3]} KB tarball, measured ${project.pack.size} bytes`).toBe(true)
    expect(near(kb(row![4]!), project.pack.unpackedSize), `library.md: ${row![4]} KB unpacked, measured ${project.pack.unpackedSize}`).toBe(true)
    expect(near(Number(row![5]), project.pack.entryCount), `library.md: ${row![5]} files, measured ${project.pack.entryCount}`).toBe(true)
  })

  it('ships the library, its licence and the docs the README links to; no CLI, no sources, no tests', () => {
    const files = project.pack.files.map((f) => f.path)
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/lib/exports/index.js', 'dist/lib/exports/index.d.ts']))
    expect(files.filter((f) => /^(src|test|packages|dist\/lib\/(cli|check)|dist\/cli)/.test(f) || f.endsWith('.tgz'))).toEqual([])
    expect(relativeLinks('README.md').length).toBeGreaterThan(0)
  })

  it('every relative link of every packed Markdown page resolves to a file in the tarball', () => {
    const files = project.pack.files.map((f) => f.path)
    const pages = files.filter((f) => f.endsWith('.md'))
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/security.md', 'docs/pinning.md', 'docs/api-report.md']))
    const broken = pages.flatMap((page) =>
      relativeLinks(page)
        .filter((target) => !files.includes(target))
        .map((target) => `${page} -> ${target}`)
    )
    expect(broken).toEqual([])
  })

  it('Node imports the package without any optional peer; the subpaths that need one say which', async () => {
    const script = `
      import * as edge from 'mcp-edge-validator'
      const engine = edge.createDefaultEngine()
      const failed = {}
      for (const sub of ['node', 'redis', 'prometheus', 'otel', 'engines/ajv']) {
        failed[sub] = await import('mcp-edge-validator/' + sub).then(() => 'loaded', (e) => e.code + ' ' + /Cannot find package '([^']+)'/.exec(e.message)?.[1])
      }
      console.log(JSON.stringify({ engine: edge.DEFAULT_ENGINE, name: engine.name, mcpEdge: typeof edge.mcpEdge({ origin: 'http://127.0.0.1:1/mcp' }).fetch, failed }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project.dir })
    // mcpEdge() also writes its start-up line (the governance in force) through the default logger.
    const lines = stdout.trim().split('\n')
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(records.filter((r) => r.msg !== undefined).map((r) => r.msg)).toEqual(['edge.governance'])
    expect(records.find((r) => r.msg === undefined)).toEqual({
      engine: 'cfworker',
      name: expect.stringContaining('cfworker') as string,
      mcpEdge: 'function',
      failed: {
        node: expect.stringMatching(/^ERR_MODULE_NOT_FOUND (@hono\/node-server|undici)$/) as string,
        redis: 'ERR_MODULE_NOT_FOUND ioredis',
        prometheus: 'ERR_MODULE_NOT_FOUND prom-client',
        otel: 'ERR_MODULE_NOT_FOUND @opentelemetry/api',
        'engines/ajv': 'ERR_MODULE_NOT_FOUND ajv',
      },
    })
  })

  it('a Workers bundle of the same import takes the Workers runtime: no node:*, ajv, undici or code generation', async () => {
    writeFileSync(
      join(project.dir, 'worker-entry.js'),
      `import { createDefaultEngine, DEFAULT_ENGINE } from 'mcp-edge-validator'\nexport default { fetch: () => new Response(DEFAULT_ENGINE + ' ' + createDefaultEngine().name) }\n`
    )
    const out = await bundleForWorkerd('worker-entry.js')
    const text = out.outputFiles[0]!.text
    const inputs = Object.keys(out.metafile.inputs)
    expect(inputs.some((p) => p.includes('mcp-edge-validator/dist/lib/exports/runtime-workers.js'))).toBe(true)
    expect(inputs.filter((p) => /runtime-node\.js|node_modules\/(ajv|undici)\//.test(p))).toEqual([])
    expect(text).not.toMatch(CODE_GENERATION)
    expect(text).not.toMatch(/from ['"]node:/)
    expect(text).toContain('"cfworker"')
  })

  // The same check.ts under both resolutions: bundler used to see the Workers declarations and
  // nodenext the Node ones (createAjvEngine was missing under bundler, TS2305). Now `.` has one
  // declaration and the engines are subpaths.
  it.each([
    ['bundler', 'esnext'],
    ['nodenext', 'nodenext'],
  ])('the declarations type-check under moduleResolution %s', async (moduleResolution, module) => {
    writeFileSync(
      join(project.dir, 'check.ts'),
      `import { createDefaultEngine, loadConfig, mcpEdge, MemoryKv, TextMetrics, type KvStore, type McpEdge, type ValidatorEngine } from 'mcp-edge-validator'
import { createAjvEngine } from 'mcp-edge-validator/engines/ajv'
const store: KvStore = new MemoryKv()
const engine: ValidatorEngine = createDefaultEngine()
const ajv: ValidatorEngine = createAjvEngine()
const edge: McpEdge = mcpEdge({ origin: 'http://127.0.0.1:1/mcp', store, engine: ajv, metrics: new TextMetrics(), limits: { maxBodyBytes: 1024 } })
const maxBodyBytes: number = loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp' }).maxBodyBytes
// @ts-expect-error the config has no such field
loadConfig({}).noSuchField
// @ts-expect-error not a policy value
mcpEdge({ policies: { unknownTool: 'ignore' } })
export { store, engine, edge, maxBodyBytes }
`
    )
    const tsconfig = `tsconfig.${moduleResolution}.json`
    writeFileSync(
      join(project.dir, tsconfig),
      JSON.stringify({
        compilerOptions: { module, moduleResolution, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, lib: ['es2022', 'dom'], types: [] },
        files: ['check.ts'],
      })
    )
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [tsc, '-p', join(project.dir, tsconfig)]).then(
      () => '',
      (e: { stdout?: string }) => e.stdout ?? String(e)
    )
    expect(result).toBe('')
  })

  it('the API report (docs/api-report.md) is the packed declarations: a change of the public API changes the report', async () => {
    const lib = join(project.dir, 'node_modules/mcp-edge-validator/dist/lib')
    const result = await run(process.execPath, [join(REPO, 'scripts/build-api-report.mjs'), '--check', lib]).then(
      () => '',
      (e: { stderr?: string }) => e.stderr ?? String(e)
    )
    expect(result).toBe('')
  })
})
