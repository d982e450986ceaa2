/**
 * CI smoke of `npm run bench` (method: docs/performance.md): the benchmark runs end to end in its short mode
 * against the real processes (raw origin, bare Node and Hono floors, nginx when installed, Node
 * edge, edge and bare Workers in workerd, every growth axis) and writes a well-formed report.
 * Timings are not asserted; that the processes under test survive the run is (the script exits
 * non-zero when one dies), and so is the shape of every table. Without nginx the nginx rows say
 * "not installed".
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from './helpers/repo'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = REPO
const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'))
const out = join(dir, 'BENCHMARKS.md')

/** The markdown table that follows a heading line starting with `heading` (e.g. `## Targets`): header cells and body rows. */
function tableAfter(report: string, heading: string): { head: string[]; rows: string[][] } {
  const lines = report.split('\n')
  const at = lines.findIndex((l) => l.startsWith(heading))
  expect(at, `section "${heading}"`).toBeGreaterThan(-1)
  const start = lines.findIndex((l, i) => i > at && l.startsWith('|'))
  const block: string[] = []
  for (let i = start; i < lines.length && lines[i]!.startsWith('|'); i++) block.push(lines[i]!)
  const cells = (l: string) =>
    l
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim())
  expect(block[1], 'separator row').toMatch(/^\|(---\|)+$/)
  const t = { head: cells(block[0]!), rows: block.slice(2).map(cells) }
  for (const r of t.rows) expect(r, `${heading}: ${r[0]}`).toHaveLength(t.head.length)
  return t
}

const num = (cell: string) => Number(cell.split(' ')[0]!.replace(/,/g, ''))

describe('npm run bench -- --smoke', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  // About 60-80 s alone; inside the full suite on the loaded 2-core machine it took over 170 s
  // (every process start and run slows down), hence the generous bound.
  it('completes and writes a well-formed report', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
      execFile(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', '--smoke', '--out', out], { cwd: ROOT, timeout: 400_000, maxBuffer: 1 << 24 }, (err, so, se) =>
        res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: so, stderr: se })
      )
    })
    expect(code, stderr.slice(-3000)).toBe(0)
    // The plan is printed before the run, progress while it runs.
    expect(stderr).toMatch(/this run will take about \d+:\d\d/)
    expect(stderr).toMatch(/\[bench \d+:\d\d elapsed, about \d+:\d\d left\] main scenarios: round 1\/1/)
    const report = readFileSync(out, 'utf8')
    expect(stdout).toBe(report)
    expect(report).toMatch(/^# Benchmarks\n/)
    expect(report).toContain('- command: `npm run bench -- --smoke`')
    expect(report).toMatch(/- machine: \d+ cores/)
    expect(report).toContain(`- Node ${process.version}; nginx: `)
    expect(report).toMatch(/- load average at start [\d.]+, [\d.]+, [\d.]+, at end /)
    const nginx = !report.includes('nginx: not installed')

    const targets = tableAfter(report, '## Targets')
    expect(targets.head).toEqual(['target', 'wanted', 'measured', ''])
    for (const r of targets.rows) expect(['met', '**missed**', 'context', 'not installed'], r[0]).toContain(r[3])
    for (const t of [
      'Node, valid call: saturated throughput vs bare Node',
      'Node, rejected call: saturated throughput vs bare Node forwarding',
      'Workers, valid call',
      'Workers, rejected call',
      'growth: edge CPU per valid call against schema size',
      'growth: edge CPU per call against JSON reply size',
      'growth: edge CPU per POST against batch size',
      'growth: edge / bare Node throughput',
      'growth: heap against tools held',
    ]) {
      expect(
        targets.rows.some((r) => r[0]!.startsWith(t)),
        t
      ).toBe(true)
    }
    expect(targets.rows.find((r) => r[0]!.startsWith("Node, valid call: CPU per call vs nginx's"))![3]).toEqual(
      nginx ? expect.stringMatching(/^(met|\*\*missed\*\*)$/) : 'not installed'
    )
    // The rejected-call runs never reached the origin (a fact, not a timing).
    expect(targets.rows.find((r) => r[0]!.startsWith('Node, rejected call: origin POSTs'))![2]).toBe('0')

    const main = tableAfter(report, '## Throughput')
    expect(main.head).toEqual(['scenario', 'req/s (median)', 'req/s spread', 'vs floor', 'CPU µs/req (median)', 'CPU spread', 'errors'])
    expect(main.rows.map((r) => r[0]!.split(/[ :,]/)[0])).toEqual(['direct', 'nginx', 'bare', 'bare', 'Hono', 'edge', 'edge', 'bare', 'edge', 'edge'])
    for (const r of main.rows) {
      if (r[0]!.startsWith('nginx') && !nginx) {
        expect(r[1]).toBe('not installed')
        continue
      }
      expect(num(r[1]!), `${r[0]} req/s`).toBeGreaterThan(0)
      // Every process had its CPU measured (for "direct", the origin's).
      expect(num(r[4]!), `${r[0]} CPU`).toBeGreaterThan(0)
      expect(r[6], `${r[0]} errors`).toBe('0')
    }

    const lat = tableAfter(report, '## Latency and CPU at one offered load')
    expect(lat.head).toEqual(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'p99 vs bare Node', 'CPU µs/req', 'CPU vs bare Node', 'CPU / nginx'])
    expect(lat.rows).toHaveLength(5)
    for (const r of lat.rows.filter((x) => x[1] !== 'not installed')) {
      // Sub-millisecond percentiles, in order.
      expect(num(r[2]!), r[0]).toBeGreaterThan(0)
      expect(num(r[3]!), r[0]).toBeGreaterThanOrEqual(num(r[2]!))
      expect(num(r[4]!), r[0]).toBeGreaterThanOrEqual(num(r[3]!))
    }

    // One table per growth axis, every row measured without errors.
    for (const [heading, rows] of [
      ['### Schema size', 8],
      ['### Reply size', 4],
      ['### Batch size', 3],
      ['### Concurrent connections', 3],
    ] as const) {
      const t = tableAfter(report, heading)
      expect(t.head[3], heading).toBe('edge / bare')
      expect(t.rows, heading).toHaveLength(rows)
      for (const r of t.rows) {
        expect(num(r[1]!), `${heading} ${r[0]} bare req/s`).toBeGreaterThan(0)
        expect(num(r[2]!), `${heading} ${r[0]} edge req/s`).toBeGreaterThan(0)
        expect(r[8], `${heading} ${r[0]} errors`).toBe('0')
      }
    }
    const held = tableAfter(report, '### Tools held')
    expect(held.rows.map((r) => r[0])).toEqual(['1', '20', '200'])
    for (const r of held.rows) expect(num(r[2]!), `lookup ns with ${r[0]} tools`).toBeGreaterThan(0)

    expect(tableAfter(report, '## Cold path').rows.map((r) => r[0])).toEqual(['Node, cfworker then ajv', 'workerd, @cfworker/json-schema'])
    const micro = tableAfter(report, '## Validation micro-benchmark')
    expect(micro.rows.map((r) => `${r[0]}/${r[1]}`)).toEqual(['ajv/3', 'ajv/10', 'ajv/20', 'cfworker/3', 'cfworker/10', 'cfworker/20'])
    expect(report).toMatch(/compiled validators held \d+ after the first pass/)
  }, 420_000)
})
