/**
 * CI smoke of `npm run bench` (issue 7): the benchmark runs end to end in its short mode against
 * the real processes (raw origin, floor proxies, Node edge, Worker in workerd) and writes a
 * well-formed report. Timings are not asserted; that the processes under test survive the run
 * is (the script exits non-zero when one dies), and so is the shape of every table.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'))
const out = join(dir, 'BENCHMARKS.md')

/** The markdown table that follows a `## <heading>` line: header cells and body rows. */
function tableAfter(report: string, heading: string): { head: string[]; rows: string[][] } {
  const lines = report.split('\n')
  const at = lines.findIndex((l) => l.startsWith(`## ${heading}`))
  expect(at, `section "${heading}"`).toBeGreaterThan(-1)
  const start = lines.findIndex((l, i) => i > at && l.startsWith('|'))
  const block: string[] = []
  for (let i = start; i < lines.length && lines[i]!.startsWith('|'); i++) block.push(lines[i]!)
  const cells = (l: string) => l.slice(1, -1).split('|').map((c) => c.trim())
  expect(block[1], 'separator row').toMatch(/^\|(---\|)+$/)
  return { head: cells(block[0]!), rows: block.slice(2).map(cells) }
}

describe('npm run bench -- --smoke', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('completes and writes a well-formed report', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
      execFile(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', '--smoke', '--out', out], { cwd: ROOT, timeout: 170_000, maxBuffer: 1 << 24 }, (err, so, se) =>
        res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: so, stderr: se })
      )
    })
    expect(code, stderr.slice(-3000)).toBe(0)
    const report = readFileSync(out, 'utf8')
    expect(stdout).toBe(report)
    expect(report).toMatch(/^# Benchmarks\n/)
    expect(report).toContain('- command: `npm run bench -- --smoke`')
    expect(report).toMatch(/- machine: \d+ cores/)
    expect(report).toContain(`- Node ${process.version}`)

    const main = tableAfter(report, 'Throughput')
    expect(main.head).toEqual(['scenario', 'req/s (median)', 'req/s spread', 'vs floor', 'p50 ms', 'p99 ms', 'CPU µs/req (median)', 'CPU spread', 'errors'])
    expect(main.rows.map((r) => r[0]!.split(' ')[0])).toEqual(['1', '2', '2', '2', '3', '3', '3', '4', '5', '6', '6', '7', '7', '7', '7'])
    for (const r of main.rows) {
      expect(r, r[0]).toHaveLength(main.head.length)
      expect(Number(r[1]!.split(' ')[0]!.replace(/,/g, '')), `${r[0]} req/s`).toBeGreaterThan(0)
      expect(r[8], `${r[0]} errors`).toBe('0')
    }
    // Every process had its CPU measured (for "direct", the origin's).
    for (const r of main.rows) expect(Number(r[6]!.replace(/,/g, '')), `${r[0]} CPU`).toBeGreaterThan(0)

    const targets = tableAfter(report, 'Targets')
    expect(targets.head).toEqual(['target', 'wanted', 'measured', ''])
    expect(targets.rows.length).toBeGreaterThanOrEqual(18)
    for (const r of targets.rows) expect(['met', '**missed**', 'context']).toContain(r[3])
    // The invalid-call runs never reached the origin (a fact, not a timing).
    expect(targets.rows.find((r) => r[0]!.startsWith('4 origin POSTs'))![2]).toBe('0')

    expect(tableAfter(report, 'Latency and CPU at the same offered load').rows).toHaveLength(5)
    expect(tableAfter(report, 'Cold path').rows.map((r) => r[0])).toEqual(['Node, cfworker then ajv', 'workerd, @cfworker/json-schema'])
    const micro = tableAfter(report, 'Validation micro-benchmark')
    expect(micro.rows.map((r) => `${r[0]}/${r[1]}`)).toEqual(['ajv/3', 'ajv/10', 'ajv/20', 'cfworker/3', 'cfworker/10', 'cfworker/20'])
    expect(report).toMatch(/compiled validators held \d+ after the first pass/)
  }, 180_000)
})
