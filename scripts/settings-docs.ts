/**
 * Writes the settings tables of docs/configuration.md from the settings table (src/core/settings.ts):
 * each `<!-- settings: <section> -->` ... `<!-- /settings -->` block is replaced by that section's
 * rows (variable, flag, typed option, default, example, meaning). Run `npm run docs:settings`
 * after changing a row; test/unit/settings.test.ts fails while the doc differs from the table.
 *
 *   node --import tsx scripts/settings-docs.ts          # rewrite docs/configuration.md
 *   node --import tsx scripts/settings-docs.ts --check  # exit 1 when it is out of date
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { SECTIONS, SETTINGS, defaultText, flagOf, type Setting } from '../src/core/settings'

/** docs/configuration.md of this checkout. */
export const CONFIGURATION_DOC = resolve(import.meta.dirname, '../docs/configuration.md')

/** A markdown table cell: `|` escaped (also inside code spans, where GitHub needs `\|` too). */
const cell = (s: string) => s.replaceAll('|', '\\|')

/** One row of a section table. */
function docRow(s: Setting): string {
  const flag = `\`${flagOf(s.variable)} <${s.arg}>\``
  const flags = s.alias ? `\`${s.alias} <${s.arg}>\` or ${flag}` : flag
  const option = s.runtime === 'node' ? `\`${s.option}\` (Node: \`NodeServerOptions\`)` : `\`${s.option}\``
  const meaning = s.runtime === 'node' && s.section === 'Limits' ? `Node only: ${s.doc}` : s.doc
  return `| ${[`\`${s.variable}\``, flags, option, defaultText(s), `\`${s.example}\``, meaning].map(cell).join(' | ')} |`
}

/** The table of one section of docs/configuration.md. */
export function sectionTable(section: string): string {
  const rows = (SETTINGS as readonly Setting[]).filter((s) => s.section === section)
  return ['| variable | flag | typed option | default | example | meaning |', '|---|---|---|---|---|---|', ...rows.map(docRow)].join('\n')
}

/**
 * The doc with every settings block rewritten from the table.
 * @throws Error when a section of the table has no block in the doc, or a block names no section
 */
export function renderSettingsDoc(doc: string): string {
  const seen = new Set<string>()
  const out = doc.replace(/<!-- settings: (.+?) -->\n[\s\S]*?<!-- \/settings -->/g, (_m, section: string) => {
    if (!(SECTIONS as readonly string[]).includes(section)) throw new Error(`docs/configuration.md: no settings section named ${section}`)
    seen.add(section)
    return `<!-- settings: ${section} -->\n${sectionTable(section)}\n<!-- /settings -->`
  })
  for (const section of new Set(SETTINGS.map((s) => s.section))) if (!seen.has(section)) throw new Error(`docs/configuration.md: no <!-- settings: ${section} --> block`)
  return out
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const doc = readFileSync(CONFIGURATION_DOC, 'utf8')
  const next = renderSettingsDoc(doc)
  if (process.argv.includes('--check')) {
    if (next !== doc) {
      process.stderr.write('docs/configuration.md is out of date with src/core/settings.ts: run npm run docs:settings\n')
      process.exit(1)
    }
  } else if (next !== doc) {
    writeFileSync(CONFIGURATION_DOC, next)
    process.stdout.write('docs/configuration.md: settings tables written\n')
  } else process.stdout.write('docs/configuration.md: up to date\n')
}
