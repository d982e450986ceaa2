/**
 * @module check/markdown
 * `mcp-edge check --format markdown`: the report as a CI job summary (GitHub Actions
 * `$GITHUB_STEP_SUMMARY`, GitLab and Azure markdown reports): a header line with the counts,
 * a table of the misleading and failing rows first, the passing and info rows folded in a
 * `<details>` block. Pure; never throws.
 *
 * Every cell goes through the report's sanitiser (./safe-text: no control character, so no line
 * feed can end a table row) and is then escaped for a Markdown table cell: `|` and the characters
 * that would turn server text into markup (emphasis, code, links, HTML tags, entities).
 */
import { redactUrl } from 'mcp-edge-validator/rules'
import type { CaseRow, CheckGrade } from './case-table'
import { counts, type PairedRow } from './report'
import type { CheckReport } from './runner'
import { safeText } from './safe-text'

/**
 * `s` as the text of one Markdown table cell: sanitised (no line feed, carriage return or other
 * control), `&`, `<` and `>` as HTML entities (no tag or `</details>` from a server), and the
 * Markdown specials ``\ ` * _ [ ] ~ |`` backslash-escaped (no link, emphasis or cell break).
 */
export function markdownCell(s: string): string {
  return safeText(s)
    .replace(/[\r\n]+/g, ' ')
    .replace(/[&<>]/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt' }[c]};`)
    .replace(/[\\`*_[\]~|]/g, '\\$&')
}

const LABEL: Record<CheckGrade, string> = { misleads: '**MISLEADS**', fails: '**FAILS**', pass: 'pass', info: 'info' }

function line(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`
}

function countsText(r: CheckReport): string {
  const c = counts(r.rows)
  return `${c.misleads} misleads, ${c.fails} fail the spec, ${c.pass} pass, ${c.info} info; ${r.requests} requests${r.budgetReached ? ' (budget reached: some cases not sent)' : ''}`
}

/** The cells every table shares: grade, version, tool, case, answered (each escaped). */
function rowCells(r: CaseRow): string[] {
  return [LABEL[r.grade], r.version, markdownCell(r.tool ?? '*'), markdownCell(r.case), markdownCell(r.answered)]
}

/**
 * The Markdown summary of a run: a `###` header line with the URL, exit status and counts (with
 * `through`, a second counts line for the edge), the misleading and failing rows in a table (why,
 * what the specs require, rule; with `through`, the edge's grade and answer), then the other rows
 * in a `<details>` block.
 */
export function toMarkdown(direct: CheckReport, through: CheckReport | undefined, pairs: readonly PairedRow[], status: number): string {
  const side = Boolean(through)
  const edge = (p: PairedRow) => (side ? [p.through ? LABEL[p.through.grade] : '', p.through ? markdownCell(p.through.answered) : ''] : [])
  const edgeHead = side ? ['through the edge', 'edge answered'] : []
  const bad = pairs.filter((p) => p.row.grade === 'misleads' || p.row.grade === 'fails' || (p.through && (p.through.grade === 'misleads' || p.through.grade === 'fails')))
  const rest = pairs.filter((p) => !bad.includes(p))
  const out = [
    `### mcp-edge check ${markdownCell(redactUrl(direct.url))}: exit ${status}`,
    '',
    `${markdownCell(countsText(direct))}${through ? `  \nthrough ${markdownCell(redactUrl(through.url))}: ${markdownCell(countsText(through))}` : ''}`,
    '',
  ]
  if (bad.length > 0) {
    const head = ['grade', 'version', 'tool', 'case', 'answered', ...edgeHead, 'why', 'expected', 'rule']
    out.push(line(head), line(head.map(() => '---')))
    for (const p of bad) {
      const r = p.row
      const why = r.why || p.through?.why || ''
      out.push(line([...rowCells(r), ...edge(p), markdownCell(why), markdownCell(r.expected), markdownCell(r.rule)]))
    }
  } else out.push('Nothing misleads and nothing fails the spec.')
  if (rest.length > 0) {
    const c = counts(rest.map((p) => p.row))
    const head = ['grade', 'version', 'tool', 'case', 'answered', ...edgeHead]
    out.push('', `<details><summary>${c.pass} passing and ${c.info} info rows</summary>`, '', line(head), line(head.map(() => '---')))
    for (const p of rest) out.push(line([...rowCells(p.row), ...edge(p)]))
    out.push('', '</details>')
  }
  return out.join('\n') + '\n'
}
