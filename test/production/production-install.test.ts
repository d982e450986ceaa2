/**
 * A production install, as a user (or the Dockerfile's runtime stage) makes it: the library and
 * the `mcp-edge` command (packages/cli) are packed with `npm pack` (each package's prepack builds
 * it), installed together into a fresh folder with production dependencies only (no esbuild,
 * tsx, vitest or wrangler there), and `node_modules/.bin/mcp-edge serve` (what `npx mcp-edge serve`
 * runs; a process manager runs the bin itself, since npx does not pass SIGTERM on to it) runs in
 * front of a real MCP server (the demo origin, an official-SDK server). A real SDK client makes a
 * valid and an invalid call; a schema is pushed through the admin API; SIGTERM follows within
 * 50 ms of its 200; the edge exits 0; a restart on the same store file still validates against the
 * pushed schema. `mcp-edge check` from the same install grades the demo origin. This is the
 * Dockerfile's proof (no container engine runs here). Also the checkout path: a copy of the
 * tracked files with the built JavaScript, `npm ci --omit=dev`, `npx mcp-edge serve`, a real call, Ctrl-C.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { isListening, MCP_HEADERS, REPO, runCli, startServe, type ServeProcess } from '../helpers/cli-process'
import { ENGINE_STRICT, pack } from '../helpers/packed-package'

let work: string
let app: string
let origin: RunningOrigin
const running: ServeProcess[] = []
const TOKEN = 'prod-install-admin-token'

/** npm with the npm of the Node running the tests (Node 20, 22 or 24 alike). */
function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } })
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'mcp-edge-prod-'))
  const library = await pack(work)
  const cli = await pack(work, 'packages/cli')
  app = join(work, 'app')
  mkdirSync(app)
  // The store's folder, as the image's /data (the store refuses a STORE_FILE in a missing folder).
  mkdirSync(join(app, 'data'))
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'edge-app', version: '1.0.0', private: true }))
  npm(['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', ...ENGINE_STRICT, library.tarball, cli.tarball], app)
  origin = await startDemoOrigin({ port: 0 })
}, 240_000)

afterAll(async () => {
  for (const p of running) p.kill()
  await origin?.close()
  rmSync(work, { recursive: true, force: true })
})

/** The Dockerfile's JSON-form instruction `name [...]` (continuation lines joined), as an array. */
function dockerfileArray(name: 'ENTRYPOINT' | 'HEALTHCHECK'): string[] {
  const text = readFileSync(resolve(REPO, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ')
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))!
  return JSON.parse(line.slice(line.indexOf('[')))
}
/** The image's /app is the test's app folder. */
const inApp = (arg: string) => arg.replace(/^\/app\//, `${app}/`)

async function serve(): Promise<ServeProcess> {
  // The image's entrypoint, as the Dockerfile writes it, with `serve` (its CMD) and test options.
  const entrypoint = dockerfileArray('ENTRYPOINT').map(inApp)
  const p = await startServe(
    ['--origin', origin.url, '--port', '0', '--store-file', join(app, 'data/kv.json')],
    { ADMIN_TOKEN: TOKEN },
    { command: entrypoint, cwd: app, readyMs: 60_000 }
  )
  running.push(p)
  return p
}

describe('production install of the packed packages (the Dockerfile proof)', () => {
  it('holds only production dependencies and runs the built JavaScript; the command uses the installed library', () => {
    const mods = join(app, 'node_modules')
    expect(existsSync(join(mods, '.bin/mcp-edge'))).toBe(true)
    for (const dev of ['esbuild', 'tsx', 'typescript', 'vitest', 'wrangler', 'miniflare']) expect(existsSync(join(mods, dev)), dev).toBe(false)
    expect(existsSync(join(mods, 'mcp-edge-validator/src'))).toBe(false)
    expect(existsSync(join(mods, 'mcp-edge/src'))).toBe(false)
    // One copy of the library: the command's dependency is the installed tarball, not a second one.
    expect(existsSync(join(mods, 'mcp-edge/node_modules/mcp-edge-validator'))).toBe(false)
  })

  it('mcp-edge --version answers without loading a subcommand; mcp-edge check from the install grades the demo origin', async () => {
    const bin = join(app, 'node_modules/.bin/mcp-edge')
    const version = await runCli(['--version'], {}, { command: [process.execPath, bin], spawn: { cwd: app } })
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(join(REPO, 'packages/cli/package.json'), 'utf8')) as { version: string }).version)
    // A demo origin of its own: the check's cases call its tools, which the serve test below counts on the shared one.
    const graded = await startDemoOrigin({ port: 0 })
    try {
      const check = await runCli(
        ['check', graded.url, '--tool', 'get_forecast', '--version', '2025-06-18', '--json'],
        {},
        { command: [process.execPath, bin], spawn: { cwd: app }, timeoutMs: 60_000 }
      )
      const report = JSON.parse(check.stdout) as { exitCode: number; rows: { grade: string; case: string }[] }
      expect(check.code).toBe(report.exitCode)
      expect(report.rows.some((r) => r.case === 'missing-required')).toBe(true)
      expect(check.code).toBe(1) // the demo origin hides failures: rows mislead
    } finally {
      await graded.close()
    }
  })

  it('mcp-edge serve from the install fronts a real MCP server: valid and invalid call, schema pushed, SIGTERM within 50 ms, restart keeps it', async () => {
    const edge = await serve()
    const client = new Client({ name: 'prod-install', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(edge.url)))
    const valid = await client.callTool({ name: 'get_forecast', arguments: { city: 'Paris', days: 3 } })
    expect(valid.isError).not.toBe(true)
    expect(JSON.stringify(valid.content)).toContain('Paris')
    let invalidText = ''
    try {
      const invalid = await client.callTool({ name: 'get_forecast', arguments: { city: 'Paris', days: 30 } })
      expect(invalid.isError).toBe(true)
      invalidText = JSON.stringify(invalid.content)
    } catch (e) {
      invalidText = String((e as Error).message) // -32602 for clients before 2025-11-25
    }
    expect(invalidText).toContain('days: must be <= 16')
    expect(origin.stats.calls.get_forecast).toBe(1) // the invalid call never reached the origin
    await client.close()

    // The image's HEALTHCHECK command, as written, against this edge: healthy now.
    const health = dockerfileArray('HEALTHCHECK')
    expect(health[0]).toBe('node')
    const probe = (port: number) => spawnSync(process.execPath, health.slice(1), { env: { ...process.env, PORT: String(port) }, timeout: 10_000 }).status
    expect(probe(edge.port)).toBe(0)

    const push = await fetch(edge.url.replace(/\/mcp$/, '/admin/tools/default'), {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tools: [{ name: 'pushed_tool', inputSchema: { type: 'object', properties: { n: { type: 'integer', maximum: 5 } }, required: ['n'] } }] }),
    })
    expect(push.status).toBe(200)
    // kill() only sends the signal; timing it measures the test process, not the edge (a busy
    // machine pausing the test failed a 50 ms bound on it). How the edge stops is its exit status.
    expect(edge.child.kill('SIGTERM')).toBe(true)
    expect(await edge.exited).toBe(0)
    expect(await isListening(edge.port)).toBe(false)
    expect(probe(edge.port)).toBe(1) // and unhealthy once stopped

    const again = await serve()
    const r = await fetch(again.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pushed_tool', arguments: { n: 9 } } }),
    })
    const body = (await r.json()) as { error?: { code: number; message: string } }
    // Validated against the pushed schema (an unknown tool would say "Unknown tool").
    expect(body.error?.code).toBe(-32602)
    expect(body.error?.message).toContain('Invalid arguments for tool "pushed_tool"')
    expect(body.error?.message).toContain('n: must be <= 5')
    again.child.kill('SIGTERM')
    expect(await again.exited).toBe(0)
  })
})

describe('a checkout without dev tools: npm ci --omit=dev && npx mcp-edge serve', () => {
  it('runs the built JavaScript with production dependencies only and answers a real call', async () => {
    // A copy of the checkout (the files git tracks) with the JavaScript built, as `npm ci && npm run build` leaves it.
    const checkout = join(work, 'checkout')
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && !f.startsWith('test/') && existsSync(resolve(REPO, f)))
    for (const f of files) {
      mkdirSync(dirname(join(checkout, f)), { recursive: true })
      copyFileSync(resolve(REPO, f), join(checkout, f))
    }
    // The build: the library's dist/lib and the command's dist, as the packed packages hold them.
    cpSync(join(app, 'node_modules/mcp-edge-validator/dist'), join(checkout, 'dist'), { recursive: true })
    cpSync(join(app, 'node_modules/mcp-edge/dist'), join(checkout, 'packages/cli/dist'), { recursive: true })
    npm(['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], checkout)
    for (const dev of ['esbuild', 'tsx', 'typescript', 'vitest', 'wrangler']) expect(existsSync(join(checkout, 'node_modules', dev)), dev).toBe(false)

    // The run command of docs/deploy-node.md for a checkout: the bin itself, not npx.
    const edge = await startServe(
      ['--origin', origin.url, '--port', '0', '--store-file', 'memory'],
      {},
      { command: ['node_modules/.bin/mcp-edge'], cwd: checkout, readyMs: 60_000 }
    )
    running.push(edge)
    const r = await fetch(edge.url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: 'Paris', days: 99 } } }),
    })
    const body = (await r.json()) as { id: number; error: { code: number; message: string } }
    expect(body.id).toBe(5)
    expect(body.error.code).toBe(-32602)
    expect(body.error.message).toContain('days: must be <= 16')
    // Stopped as a process manager stops it: SIGTERM to the process it started, nothing else.
    edge.child.kill('SIGTERM')
    expect(await edge.exited).toBe(0)
    expect(await isListening(edge.port)).toBe(false)
  }, 180_000)
})

/** A documented command as a process manager starts it: `VAR=value` prefixes as environment, then argv. */
interface DocCommand {
  env: Record<string, string>
  argv: string[]
  cwd: string
}

/** Lines of the ```<lang> blocks of a docs page. */
function codeBlocks(page: string, lang: string): string[][] {
  const text = readFileSync(resolve(REPO, page), 'utf8')
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!.split('\n').filter((l) => l.trim() !== ''))
}

/** Splits `A=1 B=2 cmd arg ...` (no quoting in these commands) into its environment and argv. */
function splitCommand(line: string): { env: Record<string, string>; argv: string[] } {
  const words = line
    .replace(/\s+#.*$/, '')
    .trim()
    .split(/\s+/)
  const env: Record<string, string> = {}
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const w = words.shift()!
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1)
  }
  return { env, argv: words }
}

/**
 * Runs a documented `mcp-edge serve` command against the test's origin and checks it serves and
 * stops on SIGTERM: paths under /opt/mcp-edge and /var/lib/mcp-edge are mapped to the test's
 * folders, the origin URL to the demo origin, HOST to 127.0.0.1 and PORT to a free port (these
 * tests listen on loopback only); everything else (ALLOWED_HOSTS, STORE_FILE, SHUTDOWN_GRACE_MS...)
 * is used as written. Requests carry the first allowed Host when the command sets ALLOWED_HOSTS.
 */
async function runDocumented(cmd: DocCommand, stateDir: string, stopMs: number): Promise<void> {
  const map = (v: string) => v.replace(/^\/opt\/mcp-edge(?=\/|$)/, app).replace(/^\/var\/lib\/mcp-edge(?=\/|$)/, stateDir)
  const env: Record<string, string> = { PORT: '0' }
  for (const [k, v] of Object.entries(cmd.env)) env[k] = map(v)
  if ('ORIGIN_URL' in env) env.ORIGIN_URL = origin.url
  if ('HOST' in env) env.HOST = '127.0.0.1'
  env.PORT = '0'
  const argv = cmd.argv.map(map)
  const at = argv.indexOf('--origin')
  if (at >= 0) argv[at + 1] = origin.url
  const serveAt = argv.indexOf('serve')
  expect(serveAt, argv.join(' ')).toBeGreaterThan(0)
  const edge = await startServe(argv.slice(serveAt + 1), env, { command: argv.slice(0, serveAt), cwd: map(cmd.cwd), readyMs: 60_000 })
  running.push(edge)
  const host = env.ALLOWED_HOSTS?.split(',')[0] ?? `127.0.0.1:${edge.port}`
  const body = await new Promise<string>((res, rej) => {
    const req = httpRequest({ host: '127.0.0.1', port: edge.port, path: '/mcp', method: 'POST', headers: { ...MCP_HEADERS, host } }, (r) => {
      let text = ''
      r.on('data', (d: Buffer) => (text += d.toString()))
      r.on('end', () => res(text))
    })
    req.on('error', rej)
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_forecast', arguments: { city: 'Paris', days: 99 } } }))
  })
  expect(JSON.parse(body), `${argv.join(' ')}: ${body}`).toMatchObject({ id: 7, error: { code: -32602 } })
  // SIGTERM to the process the manager started (never its group): the edge itself must stop.
  const stopped = Date.now()
  expect(edge.child.kill('SIGTERM')).toBe(true)
  expect(await edge.exited).toBe(0)
  expect(Date.now() - stopped).toBeLessThan(stopMs)
  expect(await isListening(edge.port)).toBe(false)
  expect(edge.stdout()).toContain('"msg":"edge.stop"')
}

describe('the run commands of docs/deploy-node.md, as written, against the packed install', () => {
  it('no page of docs/ or README starts `mcp-edge serve` through npx in a shell block (npx does not pass SIGTERM on)', () => {
    const pages = [
      'README.md',
      'packages/cli/README.md',
      ...readdirSync(resolve(REPO, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ]
    const throughNpx = pages.flatMap((page) =>
      codeBlocks(page, 'sh')
        .flat()
        .filter((l) => /\bnpx\b[^#]*\bmcp-edge serve\b/.test(l) && !/--help/.test(l))
        .map((l) => `${page}: ${l}`)
    )
    expect(throughNpx).toEqual([])
  })

  it('every `mcp-edge serve` line of the page serves and stops on SIGTERM', async () => {
    const lines = codeBlocks('docs/deploy-node.md', 'sh')
      .flat()
      .filter((l) => /\bmcp-edge serve\b/.test(l))
    expect(lines.length).toBeGreaterThanOrEqual(3)
    const state = mkdtempSync(join(work, 'state-'))
    for (const line of lines) {
      expect(line, 'run the bin itself').toMatch(/(^|\s)node_modules\/\.bin\/mcp-edge serve\b/)
      await runDocumented({ ...splitCommand(line), cwd: '/opt/mcp-edge' }, state, 15_000)
    }
  }, 120_000)

  it("the systemd unit's ExecStart, with its Environment and WorkingDirectory, serves and stops on its KillSignal within TimeoutStopSec", async () => {
    const [unit] = codeBlocks('docs/deploy-node.md', 'ini')
    expect(unit).toBeDefined()
    const value = (key: string) => unit!.filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1))
    const [execStart] = value('ExecStart')
    const env: Record<string, string> = {}
    for (const e of value('Environment')) env[e.slice(0, e.indexOf('='))] = e.slice(e.indexOf('=') + 1)
    expect(value('KillSignal')).toEqual(['SIGTERM'])
    const state = mkdtempSync(join(work, 'var-lib-'))
    await runDocumented({ env, argv: execStart!.split(/\s+/), cwd: value('WorkingDirectory')[0]! }, state, Number(value('TimeoutStopSec')[0]) * 1000)
    // StateDirectory= is where STORE_FILE points: the store was written there.
    expect(env.STORE_FILE).toMatch(new RegExp(`^/var/lib/${value('StateDirectory')[0]}/`))
    expect(existsSync(join(state, 'kv.json'))).toBe(true)
  }, 120_000)
})
