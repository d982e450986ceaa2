/**
 * The settings table (src/core/settings.ts) and what is derived from it: every row reads its own
 * default in both forms, every variable the code reads is a row, the typed options are checked by
 * the rows' rules on the values themselves (wrong types and unknown keys refused by name), and
 * docs/configuration.md is what the table generates.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/core/config'
import { SETTINGS, readText, readTyped, settingsOf, type Setting } from '../../src/core/settings'
import { resolveConfig, type McpEdgeOptions } from '../../src/edge-options'
import { loadNodeConfig } from '../../src/adapters/node/node-config'
import { CONFIGURATION_DOC, renderSettingsDoc } from '../../scripts/settings-docs'

const ROWS = SETTINGS as readonly Setting[]
const REPO = resolve(import.meta.dirname, '../..')
/** The library's sources and, once the command is a package of its own, the command's. */
const SOURCES = ['src', 'packages/cli/src'].map((d) => resolve(REPO, d)).filter((d) => existsSync(d))

function errorOf(f: () => unknown): ConfigError {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return e as ConfigError
  }
  throw new Error('no error')
}

/** Sets `value` at an option path (`limits.maxBatch`). */
function optionsWith(path: string, value: unknown): McpEdgeOptions {
  const out: Record<string, unknown> = {}
  let o = out
  const steps = path.split('.')
  for (const step of steps.slice(0, -1)) o = (o[step] = {}) as Record<string, unknown>
  o[steps.at(-1)!] = value
  return out as McpEdgeOptions
}

/** A value of the wrong type for a row's typed option. */
function wrongType(s: Setting): unknown {
  switch (s.kind.type) {
    case 'number':
      return '5'
    case 'boolean':
      return 'on'
    case 'string[]':
      return 'a,b'
    case 'Record<string, string>':
      return ['not', 'an', 'object']
    default:
      return 5
  }
}

describe('the settings table', () => {
  it('every row has a variable, a typed option, a flag argument, help and a doc text; variables, options and keys are unique', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(38)
    for (const s of ROWS) {
      expect(s.variable).toMatch(/^[A-Z][A-Z0-9_]+$/)
      expect(s.option, s.variable).toMatch(/^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*$/)
      expect(s.arg, s.variable).not.toBe('')
      expect(s.help, s.variable).not.toBe('')
      expect(s.doc, s.variable).not.toBe('')
      expect(s.example, s.variable).not.toBe('')
      if (s.default === null) expect(s.defaultDoc, s.variable).toBeDefined()
    }
    for (const field of ['variable', 'option', 'key'] as const) expect(new Set(ROWS.map((s) => s[field])).size, field).toBe(ROWS.length)
  })

  it('every row reads its default, written as text and given as its typed option, to the default', () => {
    for (const s of ROWS) {
      expect(readText(s, undefined), s.variable).toEqual(s.default)
      expect(readText(s, ''), s.variable).toEqual(s.default)
      if (s.default === null || s.default === '') continue
      const shown = s.kind.show(s.default)
      if (shown !== '' && !(Array.isArray(s.default) && s.default.length === 0) && !(typeof s.default === 'object' && Object.keys(s.default as object).length === 0))
        expect(readText(s, shown), s.variable).toEqual(s.default)
      const typed = readTyped(s, s.default)
      if (typed !== undefined) expect(typed, s.variable).toEqual(s.default)
    }
    // The readers give every field its default.
    const config = loadConfig({})
    for (const s of settingsOf('all')) expect((config as unknown as Record<string, unknown>)[s.key], s.variable).toEqual(s.default)
    const node = loadNodeConfig({})
    for (const s of settingsOf('node')) expect((node as unknown as Record<string, unknown>)[s.key], s.variable).toEqual(s.default)
  })

  it('the readers read exactly the variables of the table (an env Proxy records every read)', () => {
    const read = new Set<string>()
    const env = new Proxy({} as Record<string, unknown>, {
      get: (_t, p) => {
        if (typeof p === 'string') read.add(p)
        return undefined
      },
    })
    loadConfig(env)
    expect([...read].sort()).toEqual(
      settingsOf('all')
        .map((s) => s.variable)
        .sort()
    )
    read.clear()
    loadNodeConfig(env)
    expect([...read].sort()).toEqual(
      settingsOf('node')
        .map((s) => s.variable)
        .sort()
    )
    read.clear()
    resolveConfig({ env })
    expect([...read].sort()).toEqual(
      settingsOf('all')
        .map((s) => s.variable)
        .sort()
    )
  })

  it('every variable the sources read by name is a row of the table (or a binding, or a terminal setting of the CLI)', () => {
    const notSettings = new Set(['TOOL_SCHEMAS', 'COLUMNS', 'NO_COLOR'])
    const files: string[] = []
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') && files.push(join(dir, e.name))
    }
    for (const dir of SOURCES) walk(dir)
    const variables = new Set(ROWS.map((s) => s.variable))
    const found = new Set<string>()
    for (const f of files) {
      const source = readFileSync(f, 'utf8')
      for (const m of source.matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)\b|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]|\(env, ['"]([A-Z][A-Z0-9_]+)['"]/g)) found.add((m[1] ?? m[2] ?? m[3])!)
    }
    expect(found.size).toBeGreaterThanOrEqual(8)
    for (const name of found) if (!notSettings.has(name)) expect(variables.has(name), `${name} is read by name but is no row of src/core/settings.ts`).toBe(true)
  })
})

describe('typed options', () => {
  it('each is checked by its row rule on the value: a value of the wrong type is refused naming the option and its variable', () => {
    for (const s of settingsOf('all')) {
      const e = errorOf(() => resolveConfig(optionsWith(s.option, wrongType(s))))
      expect(e.message, s.variable).toMatch(new RegExp(`^${s.option.replaceAll('.', '\\.')}=.* \\(${s.variable}\\): expected `))
      expect(e.variable, s.variable).toBe(s.variable)
      if (s.secret) expect(e.message).toContain('(value not shown)')
    }
    expect(() => resolveConfig({ limits: { maxBatch: '5' as unknown as number } })).toThrow(/^limits\.maxBatch="5" \(MAX_BATCH\): expected an integer >= 1$/)
    expect(() => resolveConfig({ policies: { hiddenFailures: 'off' as unknown as boolean } })).toThrow(
      /^policies\.hiddenFailures="off" \(HIDDEN_FAILURES\): expected true or false$/
    )
    expect(() => resolveConfig({ adminToken: 'my secret!' })).not.toThrow(/my secret/)
  })

  it('a typed value is used as it is, with no string round trip, and wins over env', () => {
    const c = resolveConfig({
      env: { MAX_BATCH: '7', ORIGIN_URL: 'http://127.0.0.1:1/mcp', STREAM_IDLE_MS: '5' },
      limits: { maxBatch: 3, streamIdleMs: 0, schemaRecheckMs: 10, streamMaxMs: 20 },
      policies: { supportedVersions: ['2025-06-18'], hiddenFailures: false },
      allowedHosts: ['edge.example.com'],
      origins: { w: 'http://127.0.0.1:2/mcp' },
      metricsToken: 'abc',
    })
    expect(c).toMatchObject({ maxBatch: 3, streamIdleMs: 0, schemaRecheckMs: 10, streamMaxMs: 20, supportedVersions: ['2025-06-18'], hiddenFailures: false, metricsToken: 'abc' })
    expect(c.originUrl).toBe('http://127.0.0.1:1/mcp')
    expect(c.allowedHosts).toEqual(['edge.example.com'])
    expect(c.origins).toEqual({ w: { url: 'http://127.0.0.1:2/mcp', toolsAllow: [], toolsDeny: [] } })
  })

  it('an unknown key is refused, nested too, naming it and the closest option', () => {
    expect(errorOf(() => resolveConfig({ orign: 'http://127.0.0.1:1/mcp' } as McpEdgeOptions)).message).toBe('unknown option orign of mcpEdge() (did you mean origin?)')
    expect(errorOf(() => resolveConfig({ limits: { maxBodyByte: 10 } } as McpEdgeOptions)).message).toBe(
      'unknown option limits.maxBodyByte of mcpEdge() (did you mean limits.maxBodyBytes?)'
    )
    expect(errorOf(() => resolveConfig({ policies: { unknwnTool: 'forward' } } as McpEdgeOptions)).message).toContain('did you mean policies.unknownTool?')
    expect(errorOf(() => resolveConfig({ zzzzzzzzzz: 1 } as McpEdgeOptions)).message).toMatch(/^unknown option zzzzzzzzzz of mcpEdge\(\) \(the options are .*limits.*origin/)
    expect(errorOf(() => resolveConfig({ limits: 5 } as unknown as McpEdgeOptions)).message).toMatch(/^limits: expected an object of maxBodyBytes, /)
  })
})

describe('docs/configuration.md', () => {
  it('its settings tables are what the table generates (npm run docs:settings writes them)', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8')
    expect(renderSettingsDoc(doc), 'docs/configuration.md is out of date with src/core/settings.ts: run npm run docs:settings').toBe(doc)
    for (const s of ROWS) expect(doc, s.variable).toContain(`| \`${s.variable}\` |`)
  })
})

/** Units a doc may write a default in, in the setting's own unit: ms (`_MS`), s (`_S`), bytes (`_BYTES`). */
const UNITS: Record<string, number> = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, bytes: 1, KiB: 1024, MiB: 1024 * 1024 }

/** A default as a doc writes it (`` `audit` ``, `10000`, `16 MiB`, `1 h`), as the text the setting's variable would hold. */
function docText(s: Setting, written: string): string {
  const t = written.replace(/^`(.*)`$/, '$1')
  const m = /^(\d+(?:,\d{3})*)\s*(ms|s|min|h|bytes|KiB|MiB)$/.exec(t)
  if (!m) return /^\d+(?:,\d{3})*$/.test(t) ? t.replaceAll(',', '') : t
  const n = Number(m[1]!.replaceAll(',', '')) * UNITS[m[2]!]!
  return String(s.variable.endsWith('_S') ? n / 1000 : n)
}

/** A typed default as docs/library.md's options table writes it (`'auto'`, `true`, `{}`, `4194304`). */
function docTyped(written: string): unknown {
  const t = written.replace(/^`(.*)`$/, '$1').replace(/^'(.*)'$/, '"$1"')
  try {
    return JSON.parse(t)
  } catch {
    return t
  }
}

describe('defaults restated in the docs', () => {
  const DOCS = [...readdirSync(join(REPO, 'docs')).map((f) => `docs/${f}`), 'README.md'].filter(
    (f) => f.endsWith('.md') && f !== 'docs/configuration.md' && f !== 'docs/api-report.md'
  )
  const byVariable = new Map(ROWS.map((s) => [s.variable, s]))
  const NAMES = ROWS.map((s) => s.variable).join('|')
  const VALUE = '(`[^`]+`|\\d+(?:,\\d{3})*(?:\\s*(?:ms|s|min|h|bytes|KiB|MiB)\\b)?|[a-z][\\w:.-]*)'
  /** `VAR` (default X) / `VAR`, default X / the `VAR` setting (default X); `VAR=X` (the default); default `VAR=X`; `VAR` (X) in a bound column. */
  const FORMS = [
    new RegExp(`\`?\\b(${NAMES})\\b(?:=[^\`\\s]*)?\`?(?: setting)?\\s*(?:\\(|,\\s*)default:?\\s+${VALUE}`, 'g'),
    new RegExp(`default \`(${NAMES})=([^\`]+)\``, 'g'),
    new RegExp(`\`(${NAMES})=([^\`]+)\` \\(the default\\)`, 'g'),
    new RegExp(`\`(${NAMES})\` \\((\\d+(?:,\\d{3})*(?:\\s*(?:ms|s|min|h|bytes|KiB|MiB))?)\\)`, 'g'),
  ]

  it('every default a doc states beside its variable is the table default (a doc that differs fails here)', () => {
    const wrong: string[] = []
    let checked = 0
    for (const f of DOCS) {
      readFileSync(join(REPO, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const re of FORMS)
            for (const m of line.matchAll(re)) {
              const s = byVariable.get(m[1]!)!
              checked++
              let value: unknown
              try {
                value = readText(s, docText(s, m[2]!))
              } catch {
                value = Symbol('unreadable')
              }
              if (!isDeepStrictEqual(value, s.default)) wrong.push(`${f}:${i + 1}: ${m[0]} (the table: ${s.kind.show(s.default)})`)
            }
        })
    }
    expect(wrong).toEqual([])
    // The forms above are the ones the docs use: a reworded doc that no form matches shows here.
    expect(checked).toBeGreaterThanOrEqual(40)
  })

  it("docs/library.md's options table gives each option the table default (a literal), or the same words as the table", () => {
    const wrong: string[] = []
    let checked = 0
    for (const line of readFileSync(join(REPO, 'docs/library.md'), 'utf8').split('\n')) {
      const cells = line.split(/(?<!\\)\|/).map((c) => c.trim())
      const s = byVariable.get(cells[4]?.replace(/^`(.*)`$/, '$1') ?? '')
      if (!s || cells[1] !== `\`${s.option}\``) continue
      checked++
      const written = cells[3]!
      if (!/^`[^`]*`$/.test(written)) {
        if (s.defaultDoc === undefined) wrong.push(`${s.option}: "${written}" in words, but the table's default is ${s.kind.show(s.default)}`)
        continue
      }
      let value: unknown
      try {
        value = readTyped(s, docTyped(written)) ?? s.default
      } catch {
        value = Symbol('unreadable')
      }
      if (!isDeepStrictEqual(value, s.default)) wrong.push(`${s.option}: ${written} (the table: ${s.kind.show(s.default)})`)
    }
    expect(wrong).toEqual([])
    // Every option row of the page was checked.
    expect(checked).toBe(settingsOf('all').filter((s) => readFileSync(join(REPO, 'docs/library.md'), 'utf8').includes(`| \`${s.option}\` |`)).length)
    expect(checked).toBeGreaterThanOrEqual(30)
  })
})
