/**
 * The `mcp-edge` command line: --help and --version, usage errors (exit 2, naming the option and
 * the value), a server that cannot be reached (exit 3), the request bound (exit 4 when cases are
 * left unsent; the server never sees more requests than the bound), --timeout against a server
 * that never answers, --header on every request, --call-all's warning, and no stack trace in any
 * CLI message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServerResponse } from 'node:http'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { serveMcp } from '../helpers/mcp-script'
import { freePort } from '../helpers/peers-procs'
import { checkJson, row, runMcpEdge, type CliRun, type JsonReport } from '../helpers/check-cli'
import { runCli } from '../helpers/cli-process'
import { initializeReply } from '../helpers/initialize-reply'
import pkg from '../../packages/cli/package.json' with { type: 'json' }

const TOOL = { name: 'lookup', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }

let honest: ScriptedOrigin
beforeAll(async () => {
  honest = await startScriptedOrigin()
  serveMcp(honest, {
    pages: [[TOOL]],
    call: (_name, args, id, res: ServerResponse) => {
      const ok = typeof args === 'object' && typeof (args as { q?: unknown }).q === 'string'
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            ok
              ? { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'hit' }] } }
              : { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'q must be a string' }], isError: true } }
          )
        )
      return undefined
    },
  })
})
afterAll(async () => {
  await honest?.close()
})

describe('mcp-edge program', () => {
  it('--help lists the check subcommand; check --help documents flags and exit statuses', async () => {
    const help = await runMcpEdge(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/Usage: mcp-edge \[options\] \[command\]/)
    expect(help.stdout).toMatch(/check \[options\] <mcp-url>/)
    const sub = await runMcpEdge(['check', '--help'])
    expect(sub.code).toBe(0)
    for (const flag of [
      '--version <version>',
      '--tool <name>',
      '--call <name>',
      '--call-all',
      '--header <header>',
      '--timeout <ms>',
      '--max-requests <n>',
      '--through <edge-url>',
      '--strict',
      '--json',
    ])
      expect(sub.stdout).toContain(flag)
    expect(sub.stdout).toContain('3 could not connect')
  })

  it('the sources under tsx (what scripts/load.ts runs) and the built command (what the other tests run) give the same check', async () => {
    const args = ['check', honest.url, '--json', '--version', '2025-06-18']
    const [sources, built] = await Promise.all([
      runCli(args, {}, { command: [process.execPath, '--import', 'tsx', 'packages/cli/src/cli/main.ts'], timeoutMs: 60_000 }),
      runMcpEdge(args),
    ])
    expect(sources.code, sources.stderr).toBe(0)
    expect(built.code, built.stderr).toBe(0)
    const versions = (run: CliRun) => (JSON.parse(run.stdout) as JsonReport).versions
    expect(versions(sources)).toEqual([{ version: '2025-06-18', negotiated: '2025-06-18' }])
    expect(versions(built)).toEqual(versions(sources))
  })

  it('--version prints the package version', async () => {
    const v = await runMcpEdge(['--version'])
    expect(v.code).toBe(0)
    expect(v.stdout.trim()).toBe(pkg.version)
  })

  it.each([
    [['check'], /missing required argument 'mcp-url'/],
    [['check', 'ftp://example.com/mcp'], /mcp-url must be an http or https URL, got "ftp:\/\/example.com\/mcp"/],
    [['check', 'not a url'], /mcp-url must be an http or https URL, got "not a url"/],
    [['check', 'http://127.0.0.1:1/mcp', '--header', 'no colon here'], /--header must look like 'Name: value', got "no colon here"/],
    [['check', 'http://127.0.0.1:1/mcp', '--version', '2024-10-07'], /--version must be one of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, got "2024-10-07"/],
    [['check', 'http://127.0.0.1:1/mcp', '--timeout', '0'], /--timeout must be a whole number from 1 to 600000, got "0"/],
    [['check', 'http://127.0.0.1:1/mcp', '--max-requests', 'lots'], /--max-requests must be a whole number from 1 to 100000, got "lots"/],
    [['check', 'http://127.0.0.1:1/mcp', '--format', 'xml'], /--format must be one of table, lines, json, junit, markdown, got "xml"/],
    [['chekc'], /unknown command 'chekc'/],
  ])('usage error %j exits 2 with a clear message', async (args, message) => {
    const r = await runMcpEdge(args)
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).not.toMatch(/\n\s+at /)
    expect(r.stdout).toBe('')
  })
})

describe('check run bounds', () => {
  it('exits 3 when no handshake succeeds (nothing listens)', async () => {
    const port = await freePort()
    const { run, report } = await checkJson(`http://127.0.0.1:${port}/mcp`)
    expect(run.code).toBe(3)
    expect(report.versions.every((v) => v.skipped !== undefined)).toBe(true)
    expect(row(report, '2025-11-25 * handshake').grade).toBe('fails')
    // The cause, not fetch's bare "fetch failed".
    for (const v of report.versions) expect(v.skipped).toBe('cannot connect: connection refused (ECONNREFUSED)')
    expect(run.stderr).not.toMatch(/\n\s+at /)
  })

  it('an honest server passes with exit 0, and --header reaches every request', async () => {
    honest.reset()
    const { run, report } = await checkJson(honest.url, ['--header', 'Authorization: Bearer test-token', '--header', 'X-Team: edge', '--call', 'lookup', '--version', '2025-06-18'])
    expect(report.counts.misleads).toBe(0)
    expect(run.code).toBe(0)
    expect(honest.received.length).toBe(report.requests)
    for (const r of honest.received) {
      expect(r.headers.authorization).toBe('Bearer test-token')
      expect(r.headers['x-team']).toBe('edge')
    }
    expect(row(report, '2025-06-18 lookup valid-call').answered).toBe('HTTP 200 json: result "hit"')
  })

  it('--strict exits 1 when a row fails the spec (the scripted server answers the unknown tool with a result)', async () => {
    const { run, report } = await checkJson(honest.url, ['--strict', '--version', '2025-06-18'])
    expect(report.counts.misleads).toBe(0)
    expect(report.counts.fails).toBeGreaterThan(0)
    expect(run.code).toBe(1)
  })

  it('never sends more requests than --max-requests, and exits 4 when cases were left unsent', async () => {
    honest.reset()
    const { run, report } = await checkJson(honest.url, ['--max-requests', '7'])
    expect(honest.received.length).toBeLessThanOrEqual(7)
    expect(report.requests).toBe(honest.received.length)
    expect(report.budgetReached).toBe(true)
    expect(report.rows.some((r) => r.why === 'not sent: the request budget was spent')).toBe(true)
    expect(run.code).toBe(4)
  })

  it('--timeout bounds each request against a server that never answers calls', async () => {
    const hang = await startScriptedOrigin()
    hang.handle((req, res) => {
      const m = req.json as { id?: unknown; method?: string; params?: { protocolVersion?: string } } | undefined
      if (m?.method === 'initialize') return sendJson(res, initializeReply(m, { echo: true, serverInfo: { name: 'hang', version: '1' } }))
      if (m?.method === 'tools/list') return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { tools: [TOOL] } })
      if (m?.method === 'tools/call') return // never answers
      res.writeHead(202).end()
    })
    try {
      const { run, report } = await checkJson(hang.url, ['--timeout', '1500', '--version', '2025-06-18', '--tool', 'lookup'])
      const r = row(report, '2025-06-18 lookup missing-required')
      expect(r.grade).toBe('fails')
      expect(r.why).toBe('no answer within the timeout')
      expect(r.answered).toBe('no answer (timed out)')
      // Ended by --timeout (not before it); the upper bound only catches a run that waits for the answer.
      expect(run.ms).toBeGreaterThanOrEqual(1_500)
      expect(run.ms).toBeLessThan(20_000)
    } finally {
      await hang.close()
    }
  })

  it('--call-all warns that tools can have side effects', async () => {
    const { run } = await checkJson(honest.url, ['--call-all', '--version', '2025-06-18'])
    expect(run.stderr).toContain('warning: --call-all calls every listed tool')
  })
})
