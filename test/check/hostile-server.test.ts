/**
 * `mcp-edge check` against hostile servers (test/helpers/hostile-mcp-server.ts), as a real process
 * (the built command, dist/test/cli.js):
 * 1. a server that puts terminal escape sequences (screen clear, window title, OSC 52 clipboard
 *    write, BEL/BS/CR, DEL, the C1 CSI, bidi overrides and isolates) in its tool names,
 *    descriptions, property names, error texts, server name and a handshake's error body: no
 *    format (table, lines, JSON, JUnit, Markdown) writes any control, C1 or bidi character raw to stdout or stderr;
 *    they are shown as visible `\u001b` escapes;
 * 2. a server whose every reply is 50 MB: the command's peak RSS (its own maxRSS, read at exit)
 *    stays under 200 MB, since at most 1 MiB of each body is read, the SDK clients' included.
 */
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ESCAPES, startEscapingServer, startHugeReplyServer, type HugeStats } from '../helpers/hostile-mcp-server'
import type { ScriptedOrigin } from '../helpers/scripted-origin'
import type { JsonReport } from '../helpers/check-cli'
import { REPO, runCli } from '../helpers/cli-process'

/** A control (C0 but the line feed, DEL, C1), a bidi control, a line/paragraph separator or a BOM, raw. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u

/** The first raw control in `s`, with its position, for the failure message. */
function firstRaw(s: string): string {
  const m = RAW_CONTROL.exec(s)
  return m ? `U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${m.index}: ${JSON.stringify(s.slice(Math.max(0, m.index - 40), m.index + 20))}` : 'none'
}

describe('check against a server that sends terminal escape sequences', () => {
  let server: ScriptedOrigin
  beforeAll(async () => {
    server = await startEscapingServer()
  })
  afterAll(async () => {
    await server?.close()
  })

  const FORMATS: { name: string; args: string[] }[] = [
    { name: 'table', args: ['--format', 'table'] },
    { name: 'lines', args: ['--format', 'lines'] },
    { name: 'json', args: ['--json'] },
    { name: 'junit', args: ['--format', 'junit'] },
    { name: 'markdown', args: ['--format', 'markdown'] },
  ]

  it.each(FORMATS)('--format $name writes no raw control, C1 or bidi character, and shows them escaped', async ({ name, args }) => {
    // --call-all: the valid-call rows show the error texts too; every version, so one handshake fails with an escaping error body.
    const run = await runCli(['check', server.url, '--call-all', ...args], { COLUMNS: '200' }, { timeoutMs: 25_000 })
    expect(run.code, run.stderr).not.toBe(70)
    expect(run.stdout.length).toBeGreaterThan(200)
    expect(firstRaw(run.stdout), 'stdout').toBe('none')
    expect(firstRaw(run.stderr), 'stderr').toBe('none')
    // Shown, not hidden: the escapes are visible text.
    // (Markdown escapes the backslash and the bracket once more: the cell renders as \u001b[2J.)
    expect(run.stdout).toContain(name === 'markdown' ? '\\\\u001b\\[2J' : '\\u001b[2J')
    expect(run.stdout).toContain(name === 'markdown' ? '\\\\u202e' : '\\u202e')
    if (name === 'json') {
      const report = JSON.parse(run.stdout) as JsonReport
      const tools = new Set(report.rows.map((r) => r.tool).filter((t) => t !== undefined))
      // The tool names as check shows them: every control written \uXXXX (the JSON text holds the backslash itself).
      expect([...tools]).toContain(`look${'\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u0007\\u0008\\u000d\\u009b31m\\u007f\\u202e\\u2066\\u200f'}up`)
      for (const r of report.rows) for (const v of Object.values(r)) if (typeof v === 'string') expect(firstRaw(v), `${r.id}`).toBe('none')
      // The handshake whose error body holds the escapes still says why it failed.
      expect(report.versions.find((v) => v.version === '2025-06-18')?.skipped).toBeTruthy()
      expect(ESCAPES.length).toBeGreaterThan(10)
    }
  })
})

describe('check against a server whose replies are 50 MB each', () => {
  const BYTES = 50 * 1024 * 1024
  let server: ScriptedOrigin & { stats: HugeStats }
  beforeAll(async () => {
    server = await startHugeReplyServer(BYTES)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('the command (the built mcp-edge) peaks under 200 MB RSS: at most 1 MiB of each body is read, the SDK handshakes included', async () => {
    const run = await runCli(['check', server.url, '--json'], { NODE_OPTIONS: `--import=${resolve(REPO, 'test/helpers/report-max-rss.mjs')}` }, { timeoutMs: 25_000 })
    const kb = Number(/max-rss-kb=(\d+)/.exec(run.stderr)?.[1])
    expect(kb, run.stderr.slice(0, 500)).toBeGreaterThan(0)
    expect(kb / 1024, `peak RSS ${Math.round(kb / 1024)} MB`).toBeLessThan(200)
    const report = JSON.parse(run.stdout) as JsonReport
    // Every kind of huge reply was met: a whole InitializeResult, a 404 page, a discover result, a tool list, SSE streams.
    expect(Object.keys(server.stats.started).sort()).toEqual(['discover-json', 'initialize-404', 'initialize-json', 'sse', 'tools-list-json'])
    // None of them was read to its end (the server stops writing when the client goes away).
    for (const [kind, n] of Object.entries(server.stats.mostBytes)) expect(n, kind).toBeLessThan(BYTES)
    // The handshakes the SDK could not finish say why.
    expect(report.versions.find((v) => v.version === '2025-03-26')?.skipped).toContain('larger than 1048576 bytes')
  })
})
