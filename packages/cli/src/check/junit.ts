/**
 * @module check/junit
 * `mcp-edge check --format junit`: the report as JUnit XML, the test-result format CI systems
 * render (GitLab, Jenkins, Azure Pipelines, GitHub test-report actions). One `<testsuite>` per
 * protocol version (and, with `--through`, one more per version for the edge's rows), one
 * `<testcase>` per row: a misleading or failing row holds a `<failure>` with why, what the specs
 * require and the rule; an info row is `<skipped>`; every row's request and answer are in its
 * `<system-out>`. Pure; never throws.
 *
 * Every text goes through the report's sanitiser (./safe-text) before it is XML-escaped, so no
 * control character (C0, C1, bidi, U+2028/9) and no lone surrogate reaches the document; U+FFFE
 * and U+FFFF, which XML 1.0 forbids as well, are escaped the same way.
 */
import { redactUrl } from 'mcp-edge-validator/rules'
import type { CaseRow, CheckGrade } from './case-table'
import { counts, type PairedRow } from './report'
import type { CheckReport } from './runner'
import { safeText } from './safe-text'

const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/**
 * `s` as an XML attribute value (or, with `attribute` false, character data): sanitised, U+FFFE
 * and U+FFFF escaped, then `&`, `<`, `>` (and in an attribute `"` and `'`) as entities.
 */
export function xmlText(s: string, attribute = true): string {
  return safeText(s)
    .replace(/[\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
    .replace(attribute ? /[&<>"']/g : /[&<>]/g, (c) => ENTITY[c]!)
}

/** `s` as XML character data. */
const xmlData = (s: string) => xmlText(s, false)

const LABEL: Record<CheckGrade, string> = { misleads: 'MISLEADS', fails: 'FAILS', pass: 'pass', info: 'info' }

/** One `<testcase>`: named `<tool or *> <case>`, class `mcp-edge-check.<version>` (the suite's name). */
function testcase(r: CaseRow, suite: string): string {
  const attrs = `name="${xmlText(`${r.tool ?? '*'} ${r.case}`)}" classname="${xmlText(`mcp-edge-check.${suite}`)}"`
  const out = `    <system-out>${xmlData(`sent: ${r.sent}`)}\n${xmlData(`answered: ${r.answered}`)}</system-out>\n`
  if (r.grade === 'misleads' || r.grade === 'fails') {
    const message = `${LABEL[r.grade]}: ${r.why || r.expected}`
    const body = [`why: ${r.why}`, `expected: ${r.expected}`, `rule: ${r.rule}`, `answered: ${r.answered}`].map(xmlData).join('\n')
    return `   <testcase ${attrs}>\n    <failure type="${r.grade}" message="${xmlText(message)}">${body}</failure>\n${out}   </testcase>`
  }
  if (r.grade === 'info') return `   <testcase ${attrs}>\n    <skipped message="${xmlText(r.why || 'info')}"/>\n${out}   </testcase>`
  return `   <testcase ${attrs}>\n${out}   </testcase>`
}

/** One `<testsuite>` of rows (one version of one URL). */
function testsuite(name: string, url: string, rows: readonly CaseRow[]): string {
  const c = counts(rows)
  const head = `  <testsuite name="${xmlText(name)}" tests="${rows.length}" failures="${c.misleads + c.fails}" errors="0" skipped="${c.info}">`
  const props = `   <properties>\n    <property name="url" value="${xmlText(redactUrl(url))}"/>\n    <property name="misleads" value="${c.misleads}"/>\n    <property name="fails" value="${c.fails}"/>\n   </properties>`
  return [head, props, ...rows.map((r) => testcase(r, name)), '  </testsuite>'].join('\n')
}

/** Rows grouped by version, in the order of the report's versions (then any other version seen). */
function byVersion(rows: readonly CaseRow[], versions: readonly string[]): [string, CaseRow[]][] {
  const groups = new Map<string, CaseRow[]>(versions.map((v) => [v, []]))
  for (const r of rows) {
    const g = groups.get(r.version)
    if (g) g.push(r)
    else groups.set(r.version, [r])
  }
  return [...groups].filter(([, g]) => g.length > 0)
}

/**
 * The JUnit XML document of a run: rows in the order shown (misleading first), grouped into a
 * suite per protocol version; with `through`, the edge's rows in suites named
 * `<version> through the edge`. The root `<testsuites>` carries the totals and the exit status.
 */
export function toJunit(direct: CheckReport, through: CheckReport | undefined, pairs: readonly PairedRow[], status: number): string {
  const versions = direct.versions.map((v) => v.version)
  const suites = byVersion(
    pairs.map((p) => p.row),
    versions
  ).map(([v, rows]) => testsuite(v, direct.url, rows))
  if (through) {
    const edgeRows = pairs.flatMap((p) => (p.through ? [p.through] : []))
    suites.push(...byVersion(edgeRows, versions).map(([v, rows]) => testsuite(`${v} through the edge`, through.url, rows)))
  }
  const all = [...direct.rows, ...(through?.rows ?? [])]
  const c = counts(all)
  const name = `mcp-edge check ${redactUrl(direct.url)}${through ? ` through ${redactUrl(through.url)}` : ''} (exit ${status})`
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlText(name)}" tests="${all.length}" failures="${c.misleads + c.fails}" errors="0" skipped="${c.info}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n')
}
