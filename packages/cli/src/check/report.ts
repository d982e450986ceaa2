/**
 * @module check/report
 * Turns check reports into output: rows sorted misleading first, a table for a terminal, one
 * plain line per row otherwise, JSON for CI, and the exit status. With a second report (the
 * same server through the edge, `--through`) rows are paired by id and shown side by side.
 * Pure; never throws.
 */
import { redactUrl } from 'mcp-edge-validator/rules'
import { GRADE_ORDER, type CaseRow, type CheckGrade } from './case-table'
import type { CheckReport } from './runner'

/** Exit statuses of `mcp-edge check` (docs/check.md). */
export const EXIT = {
  /** Nothing misleads (and, with --strict, nothing fails the spec). */
  ok: 0,
  /** Some row misleads an agent (or, with --strict, fails the spec). */
  graded: 1,
  /** Bad command line. */
  usage: 2,
  /** No handshake succeeded in any version (or, with --through, on either URL). */
  noConnection: 3,
  /** Cases left unsent because the request budget was reached, and nothing else to report. */
  incomplete: 4,
} as const

/** One output row: a case, and its counterpart through the edge when there is one. */
export interface PairedRow {
  row: CaseRow
  through?: CaseRow
}

const rank = (g: CheckGrade) => GRADE_ORDER.indexOf(g)

/**
 * Rows paired by id and sorted: by the direct grade (misleading first), then the edge's, then
 * version (newest first), tool and case in the order they ran.
 */
export function pairRows(direct: CheckReport, through?: CheckReport): PairedRow[] {
  const byId = new Map((through?.rows ?? []).map((r) => [r.id, r]))
  const seen = new Set<string>()
  const pairs: PairedRow[] = direct.rows.map((row) => {
    seen.add(row.id)
    const t = byId.get(row.id)
    return t ? { row, through: t } : { row }
  })
  for (const t of through?.rows ?? [])
    if (!seen.has(t.id)) pairs.push({ row: { ...t, grade: 'info', answered: '(no such case directly)', why: 'only seen through the edge' }, through: t })
  const order = new Map(pairs.map((p, i) => [p, i]))
  return pairs.sort((a, b) => rank(a.row.grade) - rank(b.row.grade) || rank(a.through?.grade ?? 'info') - rank(b.through?.grade ?? 'info') || order.get(a)! - order.get(b)!)
}

/** Counts of each grade. */
export function counts(rows: readonly CaseRow[]): Record<CheckGrade, number> {
  const c: Record<CheckGrade, number> = { misleads: 0, fails: 0, pass: 0, info: 0 }
  for (const r of rows) c[r.grade]++
  return c
}

/**
 * The exit status. With `--through` the edge's report decides (what agents behind the edge
 * see); connection failures on either URL give {@link EXIT.noConnection}.
 */
export function exitStatus(direct: CheckReport, through: CheckReport | undefined, strict: boolean): number {
  if (!direct.connected || (through && !through.connected)) return EXIT.noConnection
  const judged = through ?? direct
  const c = counts(judged.rows)
  if (c.misleads > 0 || (strict && c.fails > 0)) return EXIT.graded
  if (judged.budgetReached) return EXIT.incomplete
  return EXIT.ok
}

const LABEL: Record<CheckGrade, string> = { misleads: 'MISLEADS', fails: 'FAILS', pass: 'pass', info: 'info' }
const COLOR: Record<CheckGrade, string> = { misleads: '\x1b[1;31m', fails: '\x1b[33m', pass: '\x1b[32m', info: '\x1b[2m' }
const RESET = '\x1b[0m'

function what(r: CaseRow): string {
  return `${r.tool ?? '*'} ${r.case}`
}

/** One plain line per row (not a terminal): `GRADE version tool case: answered | expected | rule | why`. */
export function formatLines(pairs: readonly PairedRow[]): string {
  const lines = pairs.map(({ row: r, through: t }) => {
    const head = `${LABEL[r.grade]} ${r.version} ${what(r)}: ${r.answered} | expected: ${r.expected} | rule: ${r.rule}${r.why ? ` | ${r.why}` : ''}`
    return t ? `${head} | through the edge: ${LABEL[t.grade]}: ${t.answered}${t.why ? ` | ${t.why}` : ''}` : head
  })
  return lines.join('\n') + (lines.length ? '\n' : '')
}

function cut(s: string, n: number): string {
  return s.length > n ? s.slice(0, Math.max(0, n - 1)) + '…' : s.padEnd(n)
}

/**
 * A table for a terminal `width` columns wide: grade, version, tool, case, answered, and either
 * the rule (direct run) or the edge's grade and answer (`--through`); the reason follows each
 * misleading or failing row on its own line, then what the specs require and the source.
 */
export function formatTable(pairs: readonly PairedRow[], width: number, color: boolean): string {
  const side = pairs.some((p) => p.through)
  const w = Math.max(80, width)
  const paint = (g: CheckGrade, s: string) => (color ? COLOR[g] + s + RESET : s)
  const toolW = Math.min(24, Math.max(4, ...pairs.map((p) => (p.row.tool ?? '*').length)))
  const fixed = 9 + 11 + toolW + 1 + 21
  const rest = w - fixed - 1
  const answerW = side ? Math.floor((rest - 10) / 2) : Math.floor(rest * 0.62)
  const lastW = side ? rest - answerW - 10 : rest - answerW - 1
  const header = `${'grade'.padEnd(9)}${'version'.padEnd(11)}${'tool'.padEnd(toolW + 1)}${'case'.padEnd(21)}${cut('answered', answerW)} ${side ? 'edge'.padEnd(9) + cut('through the edge', lastW) : cut('rule', lastW)}`
  const out = [header.trimEnd(), '-'.repeat(Math.min(w, header.trimEnd().length))]
  for (const { row: r, through: t } of pairs) {
    const cells = `${cut(r.version, 10)} ${cut(r.tool ?? '*', toolW)} ${cut(r.case, 20)} ${cut(r.answered, answerW)} ${t ? paint(t.grade, cut(LABEL[t.grade], 8)) + ' ' + cut(t.answered, lastW) : side ? cut('', 9 + lastW) : cut(r.rule, lastW)}`
    out.push(`${paint(r.grade, cut(LABEL[r.grade], 8))} ${cells}`.trimEnd())
    if (r.grade === 'misleads' || r.grade === 'fails') {
      out.push(`${' '.repeat(9)}${cut(`why: ${r.why}`, w - 9).trimEnd()}`)
      out.push(`${' '.repeat(9)}${cut(`spec: ${r.expected}; ${r.rule}`, w - 9).trimEnd()}`)
    }
  }
  return out.join('\n') + '\n'
}

/** A summary line: counts per grade, requests sent, and the exit status meaning. */
export function summaryLine(direct: CheckReport, through?: CheckReport): string {
  const one = (label: string, r: CheckReport) => {
    const c = counts(r.rows)
    return `${label}: ${c.misleads} misleads, ${c.fails} fail the spec, ${c.pass} pass, ${c.info} info; ${r.requests} requests${r.budgetReached ? ' (budget reached: some cases not sent)' : ''}`
  }
  return [one(redactUrl(direct.url), direct), ...(through ? [one(`through ${redactUrl(through.url)}`, through)] : [])].join('\n') + '\n'
}

/** The `--json` document: both reports, the rows sorted as shown, the counts and the exit status. */
export function toJson(direct: CheckReport, through: CheckReport | undefined, status: number): string {
  const pairs = pairRows(direct, through)
  return (
    JSON.stringify(
      {
        // Credentials in the URLs (a query's API key, a password) are not printed (core/redact-url.ts).
        url: redactUrl(direct.url),
        ...(through ? { through: redactUrl(through.url) } : {}),
        exitCode: status,
        versions: direct.versions,
        ...(through ? { throughVersions: through.versions } : {}),
        counts: counts(direct.rows),
        ...(through ? { throughCounts: counts(through.rows) } : {}),
        requests: direct.requests + (through?.requests ?? 0),
        budgetReached: direct.budgetReached || Boolean(through?.budgetReached),
        rows: pairs.map((p) => (p.through ? { ...p.row, through: p.through } : p.row)),
      },
      null,
      2
    ) + '\n'
  )
}
