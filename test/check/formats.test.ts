/**
 * `mcp-edge check --format junit` and `--format markdown`, run as a real process against the demo
 * origin (directly and through the edge, Node) and against a server that puts markup in every
 * text check shows:
 * - JUnit: a well-formed XML document (fast-xml-parser's XMLValidator), one testsuite per
 *   protocol version (and one per version for the edge's rows), one testcase per row of the
 *   `--json` run, MISLEADS and FAILS rows as <failure> with the why and the rule, info rows as
 *   <skipped>, and the same exit status as `--json`;
 * - Markdown: a header line with the counts, the misleading and failing rows in a table first,
 *   the others in a <details> block; every cell escaped, so a server's `|`, line feed or
 *   `</details>` neither breaks a row nor ends the block.
 */
import type { ServerResponse } from 'node:http'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { checkJson, runMcpEdge, type JsonReport } from '../helpers/check-cli'
import { sendJson, startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from '../helpers/scripted-origin'
import { initializeReply } from '../helpers/initialize-reply'

interface Failure {
  '@type': string
  '@message': string
  '#text': string
}
interface TestCase {
  '@name': string
  '@classname': string
  failure?: Failure
  skipped?: { '@message': string }
  'system-out'?: string
}
interface Suite {
  '@name': string
  '@tests': string
  '@failures': string
  '@skipped': string
  testcase: TestCase[]
}
interface Junit {
  testsuites: { '@tests': string; '@failures': string; testsuite: Suite[] }
}

/** Parses a JUnit document after checking it is well-formed XML (the validator's error names line and column). */
function parseJunit(xml: string): Junit {
  expect(XMLValidator.validate(xml)).toBe(true)
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => name === 'testsuite' || name === 'testcase', parseTagValue: false })
  return parser.parse(xml) as Junit
}

/** The cells of a Markdown table line, split on the pipes that are not escaped. */
const cells = (line: string) => line.split(/(?<!\\)\|/).slice(1, -1)

const ARGS = ['--version', '2026-07-28', '--version', '2025-11-25', '--call', 'run_query']

describe('--format junit and markdown against the demo origin', () => {
  let origin: RunningOrigin
  let edge: RunningEdge
  let json: { code: number | null; report: JsonReport }
  beforeAll(async () => {
    origin = await startDemoOrigin()
    edge = await startEdge({ port: 0, env: { ORIGIN_URL: origin.url, STORE_FILE: 'memory' }, log: () => undefined })
    const { run, report } = await checkJson(origin.url, ARGS)
    json = { code: run.code, report }
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('junit: well-formed XML, a suite per version, a testcase per row; MISLEADS and FAILS as <failure> with why and rule, info as <skipped>; the exit status of --json', async () => {
    const run = await runMcpEdge(['check', origin.url, ...ARGS, '--format', 'junit'])
    expect(run.code, run.stderr).toBe(json.code)
    expect(run.code).toBe(1)
    expect(run.stdout.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true)
    const doc = parseJunit(run.stdout)
    const suites = doc.testsuites.testsuite
    expect(suites.map((s) => s['@name'])).toEqual(['2026-07-28', '2025-11-25'])
    const rows = json.report.rows
    expect(Number(doc.testsuites['@tests'])).toBe(rows.length)
    expect(Number(doc.testsuites['@failures'])).toBe(json.report.counts.misleads! + json.report.counts.fails!)
    expect(suites.flatMap((s) => s.testcase)).toHaveLength(rows.length)
    for (const r of rows) {
      const suite = suites.find((s) => s['@name'] === r.version)!
      const tc = suite.testcase.find((t) => t['@name'] === `${r.tool ?? '*'} ${r.case}`)
      expect(tc, r.id).toBeDefined()
      expect(tc!['@classname']).toBe(`mcp-edge-check.${r.version}`)
      if (r.grade === 'misleads' || r.grade === 'fails') {
        expect(tc!.failure?.['@type'], r.id).toBe(r.grade)
        expect(tc!.failure?.['@message']).toBe(`${r.grade === 'misleads' ? 'MISLEADS' : 'FAILS'}: ${r.why}`)
        expect(tc!.failure?.['#text']).toContain(`rule: ${r.rule}`)
      } else expect(tc!.failure, r.id).toBeUndefined()
      if (r.grade === 'info') expect(tc!.skipped?.['@message'], r.id).toBe(r.why)
      else expect(tc!.skipped, r.id).toBeUndefined()
    }
    // The demo's hidden failure, as a CI system shows it.
    const valid = suites[1]!.testcase.find((t) => t['@name'] === 'run_query valid-call')!
    expect(valid.failure?.['#text']).toContain('success: false')
    expect(valid['system-out']).toContain('answered: HTTP 200')
  })

  it('junit with --through: the edge rows in suites of their own, none failing; exit 0 (the edge decides)', async () => {
    const run = await runMcpEdge(['check', origin.url, '--version', '2025-11-25', '--through', edge.url, '--format', 'junit'])
    expect(run.code, run.stderr).toBe(0)
    const suites = parseJunit(run.stdout).testsuites.testsuite
    expect(suites.map((s) => s['@name'])).toEqual(['2025-11-25', '2025-11-25 through the edge'])
    expect(Number(suites[0]!['@failures'])).toBeGreaterThan(10)
    expect(suites[1]!['@failures']).toBe('0')
    expect(suites[1]!.testcase.length).toBe(suites[0]!.testcase.length)
  })

  it('markdown: a header line with the counts, the misleading and failing rows first, the passing rows in a <details> block', async () => {
    const run = await runMcpEdge(['check', origin.url, ...ARGS, '--format', 'markdown'])
    expect(run.code, run.stderr).toBe(1)
    const lines = run.stdout.split('\n')
    const c = json.report.counts
    expect(lines[0]).toBe(`### mcp-edge check ${origin.url}: exit 1`)
    expect(lines[2]).toBe(`${c.misleads} misleads, ${c.fails} fail the spec, ${c.pass} pass, ${c.info} info; ${json.report.requests} requests`)
    const open = lines.indexOf(`<details><summary>${c.pass} passing and ${c.info} info rows</summary>`)
    expect(open).toBeGreaterThan(4)
    const table = lines.slice(0, open).filter((l) => l.startsWith('| '))
    const folded = lines.slice(open).filter((l) => l.startsWith('| '))
    expect(cells(table[0]!).map((x) => x.trim())).toEqual(['grade', 'version', 'tool', 'case', 'answered', 'why', 'expected', 'rule'])
    // header, separator, then one line per misleading or failing row, misleading first
    expect(table.length - 2).toBe(c.misleads! + c.fails!)
    expect(table.slice(2, 2 + c.misleads!).every((l) => l.startsWith('| **MISLEADS** |'))).toBe(true)
    expect(table.slice(2 + c.misleads!).every((l) => l.startsWith('| **FAILS** |'))).toBe(true)
    expect(folded.length - 2).toBe(c.pass! + c.info!)
    expect(run.stdout).toContain('| **MISLEADS** | 2025-11-25 | run\\_query | valid-call |')
    expect(lines.filter((l) => l === '</details>')).toHaveLength(1)
  })
})

/** Markup in every text the server controls: a cell break, a line feed, a closing tag, a CDATA end, an entity, a link, emphasis, a control. */
const MARKUP = 'a|b\nc</details><script>x</script>]]>&amp;[link](http://evil.invalid) *em* `code` \x1b[2J'

function markupHandler(req: ReceivedRequest, res: ServerResponse): void {
  if (req.method === 'DELETE') return void res.writeHead(200).end()
  if (req.method !== 'POST') return void res.writeHead(405).end()
  if (req.json === undefined || Array.isArray(req.json)) return void sendJson(res, { jsonrpc: '2.0', id: null, error: { code: -32700, message: MARKUP } }, 400)
  const m = req.json as { id?: unknown; method?: unknown; params?: { protocolVersion?: string } }
  switch (m.method) {
    case 'initialize':
      return sendJson(res, initializeReply(m, { echo: '2025-03-26', serverInfo: { name: MARKUP, version: '1' } }), 200, { 'mcp-session-id': 'markup-session' })
    case 'tools/list':
      return sendJson(res, {
        jsonrpc: '2.0',
        id: m.id,
        result: { tools: [{ name: `t${MARKUP}`, inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }] },
      })
    case 'tools/call':
      // a success for every call: the argument cases mislead, so the server's text lands in the first table
      return sendJson(res, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: MARKUP }] } })
    default:
      if (m.id === undefined) return void res.writeHead(202).end()
      return sendJson(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: MARKUP } })
  }
}

describe('--format junit and markdown against a server that puts markup in its texts', () => {
  let server: ScriptedOrigin
  beforeAll(async () => {
    server = await startScriptedOrigin()
    server.handle(markupHandler)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('junit stays well-formed: the markup is character data, the control a visible escape', async () => {
    const run = await runMcpEdge(['check', server.url, '--version', '2025-11-25', '--format', 'junit'])
    expect(run.code, run.stderr).toBe(1)
    const doc = parseJunit(run.stdout)
    expect(run.stdout).not.toContain('\x1b')
    expect(run.stdout).not.toContain('<script>')
    const names = doc.testsuites.testsuite[0]!.testcase.map((t) => t['@name'])
    // the parser gives back the server's text as check shows it (the line feed and ESC written \u000a, \u001b)
    expect(names).toContain('ta|b\\u000ac</details><script>x</script>]]>&amp;[link](http://evil.invalid) *em* `code` \\u001b[2J wrong-type')
  })

  it('markdown: one table line per row, no tag or </details> from the server, the text escaped', async () => {
    const run = await runMcpEdge(['check', server.url, '--version', '2025-11-25', '--format', 'markdown'])
    expect(run.code, run.stderr).toBe(1)
    expect(run.stdout).not.toContain('\x1b')
    expect(run.stdout).not.toContain('<script>')
    expect(run.stdout).not.toMatch(/(?<!\\)\]\(http/)
    const lines = run.stdout.split('\n')
    expect(lines.filter((l) => l.includes('</details>'))).toEqual(['</details>'])
    const open = lines.findIndex((l) => l.startsWith('<details>'))
    // each table's lines have as many cells as its header: no server text ends a cell or a row
    for (const table of [lines.slice(0, open), lines.slice(open)].map((part) => part.filter((l) => l.startsWith('| ')))) {
      expect(table.length).toBeGreaterThan(2)
      for (const l of table) expect(cells(l), l).toHaveLength(cells(table[0]!).length)
    }
    expect(run.stdout).toContain(
      'ta\\|b\\\\u000ac&lt;/details&gt;&lt;script&gt;x&lt;/script&gt;\\]\\]&gt;&amp;amp;\\[link\\](http://evil.invalid) \\*em\\* \\`code\\` \\\\u001b\\[2J'
    )
  })
})
