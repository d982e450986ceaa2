#!/usr/bin/env node
/**
 * Regathers test/fixtures/real-servers/*.json: the `tools/list` of real MCP servers from npm,
 * as each answers it over stdio to the official SDK client (`initialize`, every page).
 *
 *   node scripts/gather-real-servers.mjs [--dir /tmp/realservers] [--install] [--only <package>]
 *
 * Each package lives in a folder of its own under --dir (never in the repo): `<dir>/<slug>` where
 * slug is the package name with `@` -> `_` and `/` -> `+`. With --install a missing folder is
 * installed with `npm install --ignore-scripts` where the table says so (those packages download
 * browsers or build native modules in their install scripts), and
 * PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 set.
 *
 * Only `initialize` and `tools/list` are sent: no tool is called. Every server runs with a
 * scratch folder as its working directory and HOME, and placeholder values (not credentials)
 * for the variables some of them need before they answer.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const here = dirname(fileURLToPath(import.meta.url))
const OUT = resolve(here, '../test/fixtures/real-servers')
const PLACEHOLDER = 'placeholder-not-a-credential'

/**
 * package@version, whether its install scripts must be skipped, and how to start it on stdio:
 * `args(scratch)` after the package's bin, `env(scratch)` added to a minimal environment.
 */
export const SERVERS = [
  { spec: '@modelcontextprotocol/server-everything@2026.8.31' },
  { spec: '@modelcontextprotocol/server-filesystem@2026.8.31', args: (s) => [s] },
  { spec: '@modelcontextprotocol/server-memory@2026.8.31', env: (s) => ({ MEMORY_FILE_PATH: join(s, 'memory.jsonl') }) },
  { spec: '@modelcontextprotocol/server-sequential-thinking@2026.8.31' },
  { spec: '@cyanheads/git-mcp-server@2.15.3', env: () => ({ MCP_TRANSPORT_TYPE: 'stdio', MCP_LOG_LEVEL: 'error' }) },
  { spec: '@eslint/mcp@0.3.13' },
  { spec: '@playwright/mcp@0.0.86', args: () => ['--headless', '--isolated'] },
  { spec: '@antv/mcp-server-chart@0.9.10' },
  { spec: 'mcp-server-kubernetes@4.1.7' },
  { spec: '@upstash/context7-mcp@4.1.1' },
  { spec: 'chrome-devtools-mcp@1.11.0', bin: 'chrome-devtools-mcp', args: () => ['--headless', '--isolated'] },
  { spec: 'mongodb-mcp-server@3.0.4', env: () => ({ MDB_MCP_TELEMETRY: 'disabled' }) },
  { spec: '@notionhq/notion-mcp-server@2.5.2' },
  { spec: 'mcp-hello-world@1.1.2' },
  { spec: '@modelcontextprotocol/server-github@2025.4.8', env: () => ({ GITHUB_PERSONAL_ACCESS_TOKEN: PLACEHOLDER }) },
  { spec: '@modelcontextprotocol/server-postgres@0.6.2', args: () => ['postgresql://127.0.0.1:1/none'] },
  { spec: '@launchdarkly/mcp-server@0.6.2', args: () => ['start', '--api-key', PLACEHOLDER] },
  { spec: 'figma-developer-mcp@0.13.2', args: () => ['--stdio', `--figma-api-key=${PLACEHOLDER}`] },
  { spec: '@mastra/mcp-docs-server@0.13.31' },
  { spec: 'n8n-mcp@2.87.0', env: () => ({ MCP_MODE: 'stdio', LOG_LEVEL: 'error', DISABLE_CONSOLE_OUTPUT: 'true' }) },
  { spec: '@wonderwhy-er/desktop-commander@0.2.52', ignoreScripts: true, bin: 'desktop-commander' },
  { spec: '@modelcontextprotocol/server-brave-search@0.6.2', ignoreScripts: true, env: () => ({ BRAVE_API_KEY: PLACEHOLDER }) },
  { spec: '@modelcontextprotocol/server-slack@2025.4.25', ignoreScripts: true, env: () => ({ SLACK_BOT_TOKEN: PLACEHOLDER, SLACK_TEAM_ID: 'T00000000' }) },
  { spec: '@modelcontextprotocol/server-google-maps@0.6.2', ignoreScripts: true, env: () => ({ GOOGLE_MAPS_API_KEY: PLACEHOLDER }) },
  { spec: '@modelcontextprotocol/server-puppeteer@2025.5.12', ignoreScripts: true },
  { spec: 'tavily-mcp@0.2.22', ignoreScripts: true, env: () => ({ TAVILY_API_KEY: PLACEHOLDER }) },
  { spec: 'firecrawl-mcp@3.22.2', ignoreScripts: true, env: () => ({ FIRECRAWL_API_KEY: PLACEHOLDER }) },
  { spec: 'exa-mcp-server@3.4.1', ignoreScripts: true, env: () => ({ EXA_API_KEY: PLACEHOLDER }) },
  { spec: '@sentry/mcp-server@0.36.0', ignoreScripts: true, args: () => [`--access-token=${PLACEHOLDER}`] },
  { spec: '@circleci/mcp-server-circleci@0.20.0', ignoreScripts: true, env: () => ({ CIRCLECI_TOKEN: PLACEHOLDER }) },
  { spec: '@executeautomation/playwright-mcp-server@1.0.12', ignoreScripts: true },
]

const nameOf = (spec) => spec.slice(0, spec.lastIndexOf('@'))
/** The folder (and fixture) name of a package: `@scope/name` -> `_scope+name`. */
export const slugOf = (name) => name.replace(/@/g, '_').replace(/\//g, '+')

function install(dir, s) {
  mkdirSync(dir, { recursive: true })
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"private":true}\n')
  const args = ['install', '--no-audit', '--no-fund', '--loglevel=error', ...(s.ignoreScripts ? ['--ignore-scripts'] : []), s.spec]
  const r = spawnSync('npm', args, { cwd: dir, stdio: 'inherit', env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' } })
  if (r.status !== 0) throw new Error(`npm install ${s.spec} failed`)
}

/** The bin file of the installed package (its only bin, or `s.bin`). */
function binOf(dir, s) {
  const pkgDir = join(dir, 'node_modules', nameOf(s.spec))
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin[s.bin ?? Object.keys(pkg.bin)[0]]
  return { file: join(pkgDir, bin), version: pkg.version }
}

async function gather(dir, s) {
  const scratch = mkdtempSync(join(tmpdir(), 'real-server-'))
  const { file, version } = binOf(dir, s)
  const env = { PATH: process.env.PATH, HOME: scratch, TMPDIR: scratch, NODE_ENV: 'production', ...(s.env?.(scratch) ?? {}) }
  const transport = new StdioClientTransport({ command: process.execPath, args: [file, ...(s.args?.(scratch) ?? [])], env, cwd: scratch, stderr: 'ignore' })
  // The version the server answered `initialize` with: read off the message as it passes.
  let negotiated = null
  let handler
  Object.defineProperty(transport, 'onmessage', {
    get: () => handler,
    set: (h) => {
      handler = (m, extra) => {
        if (negotiated === null && typeof m?.result?.protocolVersion === 'string') negotiated = m.result.protocolVersion
        return h?.(m, extra)
      }
    },
  })
  const client = new Client({ name: 'gather-real-servers', version: '1.0.0' })
  try {
    await client.connect(transport, { timeout: 60_000 })
    const tools = []
    let cursor
    for (let page = 0; page < 100; page++) {
      const r = await client.listTools(cursor ? { cursor } : {}, { timeout: 60_000 })
      tools.push(...r.tools)
      cursor = r.nextCursor
      if (!cursor) break
    }
    return {
      package: nameOf(s.spec),
      version,
      gathered: new Date().toISOString().slice(0, 10),
      transport: 'stdio',
      protocolVersion: negotiated,
      serverInfo: client.getServerVersion() ?? null,
      tools,
    }
  } finally {
    await client.close().catch(() => {})
    rmSync(scratch, { recursive: true, force: true })
  }
}

async function main() {
  const argv = process.argv.slice(2)
  const opt = (k) => {
    const i = argv.indexOf(k)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const root = resolve(opt('--dir') ?? '/tmp/realservers')
  const only = opt('--only')
  mkdirSync(OUT, { recursive: true })
  let failed = 0
  for (const s of SERVERS) {
    const name = nameOf(s.spec)
    if (only && only !== name) continue
    const dir = join(root, slugOf(name))
    try {
      if (!existsSync(join(dir, 'node_modules', name))) {
        if (!argv.includes('--install')) throw new Error(`not installed in ${dir} (pass --install)`)
        install(dir, s)
      }
      const fixture = await gather(dir, s)
      writeFileSync(join(OUT, `${slugOf(name)}.json`), JSON.stringify(fixture, null, 2) + '\n')
      console.log(`${s.spec}: ${fixture.tools.length} tools`)
    } catch (e) {
      failed++
      console.log(`${s.spec}: FAILED ${e instanceof Error ? e.message : e}`)
    }
  }
  process.exitCode = failed > 0 ? 1 : 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
