/**
 * MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0, `--cli <url> --method ...`)
 * connected to a virtual server on both runtimes, with a stateful 2025 SDK origin and a stateless
 * 2026-07-28 one behind it: tools/list, tools/call, prompts/list and resources/read work as with a
 * single origin.
 *
 * The Inspector needs Node >= 22.19. It runs under this Node when it is new enough, else under
 * the Node 22 binary .ci/run installs (`$NODE22_PREFIX/node_modules/node/bin/node`, default
 * /tmp/node22); without one these tests are skipped and say why. The Inspector is installed from
 * the npm registry into /tmp/mcp-inspector-2.12.0 on the first run (as the conformance runner
 * installs its suite), not into the repository: its web UI brings a large tree the edge never uses.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

const run = promisify(execFile)
const VERSION = '2.12.0'
const DIR = join(tmpdir(), `mcp-inspector-${VERSION}`)
const BIN = join(DIR, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js')

/** A Node >= 22.19 binary: this one, else the one .ci/run installs; null when none. */
function node22(): string | null {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number]
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath
  const bin = join(process.env.NODE22_PREFIX ?? '/tmp/node22', 'node_modules/node/bin/node')
  return existsSync(bin) ? bin : null
}
const NODE = node22()

/** Installs the Inspector into {@link DIR} once. */
async function install(): Promise<void> {
  if (existsSync(BIN)) return
  mkdirSync(DIR, { recursive: true })
  if (!existsSync(join(DIR, 'package.json'))) writeFileSync(join(DIR, 'package.json'), '{"name":"inspector-runner","private":true}')
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `@modelcontextprotocol/inspector@${VERSION}`], { cwd: DIR, timeout: 240_000 })
}

describe.skipIf(NODE === null).each(RUNTIMES)('MCP Inspector CLI against a virtual server on $name', ({ start }) => {
  let files: TestOrigin
  let weather: TestOrigin
  let edge: EdgeUnderTest
  let home: string
  let url: string

  /** Runs the Inspector CLI against the virtual server; its stdout as JSON. */
  const inspector = async (...args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await run(NODE!, [BIN, '--cli', url, '--transport', 'http', ...args], {
      cwd: home,
      timeout: 60_000,
      // Its catalog and settings go to a folder of this test, never the user's home.
      env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json') },
    })
    return JSON.parse(stdout) as Record<string, unknown>
  }

  beforeAll(async () => {
    await install()
    home = mkdtempSync(join(tmpdir(), 'inspector-home-'))
    files = await startStatefulOrigin('files', ['read_file', 'search'], {
      extra: (s) => {
        s.registerPrompt('greet', { argsSchema: { who: z.string() } }, ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `hi ${who}` } }] }))
        s.registerResource('readme', 'files://readme', { mimeType: 'text/plain' }, (uri) => ({ contents: [{ uri: uri.href, text: 'files readme' }] }))
      },
    })
    weather = await startModernOrigin('weather', ['get_forecast', 'search'])
    edge = await start({
      ORIGINS: JSON.stringify({ files: files.url, weather: weather.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'weather'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(40),
    })
    url = edge.url.replace(/\/mcp$/, '/mcp/all')
  }, 300_000)
  afterAll(async () => {
    await edge?.close()
    await Promise.all([files?.close(), weather?.close()])
    if (home) rmSync(home, { recursive: true, force: true })
  })

  it('tools/list shows the merged list', async () => {
    const out = await inspector('--method', 'tools/list')
    expect((out.tools as { name: string }[]).map((t) => t.name)).toEqual(['files__read_file', 'files__search', 'weather__get_forecast', 'weather__search'])
  })

  it('tools/call reaches each origin under its own name', async () => {
    const a = await inspector('--method', 'tools/call', '--tool-name', 'files__search', '--tool-arg', 'q=inspector')
    expect(a.content).toEqual([{ type: 'text', text: 'files:search:{"q":"inspector"}' }])
    const b = await inspector('--method', 'tools/call', '--tool-name', 'weather__get_forecast', '--tool-arg', 'q=paris')
    expect(b.content).toEqual([{ type: 'text', text: 'weather:get_forecast:{"q":"paris"}' }])
  })

  it('prompts/list, prompts/get and resources/read go through too', async () => {
    expect(((await inspector('--method', 'prompts/list')).prompts as { name: string }[]).map((p) => p.name)).toEqual(['files__greet'])
    const g = await inspector('--method', 'prompts/get', '--prompt-name', 'files__greet', '--prompt-args', 'who=ann')
    expect(g.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'hi ann' } }])
    const r = await inspector('--method', 'resources/read', '--uri', 'files://readme')
    expect(r.contents).toEqual([{ uri: 'files://readme', text: 'files readme' }])
  })
})

if (NODE === null)
  describe('MCP Inspector CLI against a virtual server', () => {
    it.skip(`skipped: @modelcontextprotocol/inspector ${VERSION} needs Node >= 22.19 (this is ${process.version}) and no Node 22 binary was found at ${join(process.env.NODE22_PREFIX ?? '/tmp/node22', 'node_modules/node/bin/node')} (.ci/run installs it there; or set NODE22_PREFIX)`, () => {})
  })
