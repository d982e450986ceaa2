/**
 * The repository stands alone: every reference in code, tests, scripts and docs resolves inside
 * it, so a clone or the packed tarball works without the machine it was written on. Reads the files only; starts nothing.
 *
 * - No file names a place outside the repository: a parent `shared` folder, an absolute
 *   `/work/...` path, or the reference notes that lived there (their content is now
 *   docs/design.md and docs/protocol-rules.md).
 * - Every `docs/<name>.md` named anywhere, and every relative link in a Markdown file, points at
 *   a file that exists; a link's `#anchor` exists in its target (GitHub heading slugs and
 *   explicit `<a id>` anchors).
 * - Every decision cited as `D<n>` is a heading of docs/design.md (`#d<n>`), and every
 *   `docs/design.md §<n>` is one of its numbered sections.
 * - Every rule id cited next to `protocol-rules.md` (M39, E12, C5, B7...) is an anchor there.
 * - Every repository path named in a comment or doc (`src/...ts`, `test/...`, `scripts/...`)
 *   exists.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { REPO } from '../helpers/repo'
import { describe, expect, it } from 'vitest'

const SELF = relative(REPO, import.meta.filename)
  .split('\\')
  .join('/')

/** Folders never read: installed or generated content. */
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.wrangler', '.edge-data'])
/** Copied third-party data: read only for the outside-path check, never for ids or links. */
const THIRD_PARTY = 'test/fixtures/json-schema-test-suite/'
const TEXT = /\.(ts|mts|mjs|cjs|js|json|jsonl|md|sh|toml|ya?ml)$|^\.ci\/run$|(^|\/)\.gitignore$/

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP_DIRS.has(name)) return []
    const p = join(dir, name)
    return statSync(p).isDirectory() ? walk(p) : [relative(REPO, p).split('\\').join('/')]
  })
}

const FILES = walk(REPO).filter((f) => TEXT.test(f) && f !== SELF)
const read = (f: string) => readFileSync(join(REPO, f), 'utf8')
/** Files whose text is ours: code, tests, scripts, docs (the JSON Schema Test Suite copy excluded). */
const OWN = FILES.filter((f) => !f.startsWith(THIRD_PARTY))

/** `file:line: text` for every match of `re` in the given files. */
function hits(files: string[], re: RegExp): string[] {
  const out: string[] = []
  for (const f of files) {
    read(f)
      .split('\n')
      .forEach((line, i) => {
        if (re.test(line)) out.push(`${f}:${i + 1}: ${line.trim().slice(0, 160)}`)
      })
  }
  return out
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

const anchorCache = new Map<string, Set<string>>()
/** Every anchor of a Markdown file: heading slugs (with GitHub's -1, -2 for repeats) and `<a id>`s. */
function anchors(file: string): Set<string> {
  let set = anchorCache.get(file)
  if (set) return set
  set = new Set()
  const text = read(file)
  const seen = new Map<string, number>()
  let fence = false
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence
    if (fence) continue
    const h = /^#{1,6}\s+(.*)$/.exec(line)
    if (h) {
      const base = slug(h[1]!)
      const n = seen.get(base) ?? 0
      seen.set(base, n + 1)
      set.add(n === 0 ? base : `${base}-${n}`)
    }
  }
  for (const m of text.matchAll(/<a\s+id="([^"]+)"/g)) set.add(m[1]!)
  anchorCache.set(file, set)
  return set
}

describe('the repository stands alone', () => {
  it('no file names a path outside the repository', () => {
    const outside = new RegExp(['\\.\\./shared\\b', '/work/', '\\bshared' + '/(reference|vectors|conformance|json-schema-test-suite|DESIGN)'].join('|'))
    expect(hits(FILES, outside)).toEqual([])
  })

  it('no file cites the reference notes that lived outside the repository', () => {
    const notes = /\bDESIGN\.md\b|\bspec-2026\.md\b|\bspec-rules\.md\b|\btoolchain-node20\.md\b|\bstyle-anchors\.md\b|(?<![\w-])vectors\.jsonl\b/
    expect(hits(OWN, notes)).toEqual([])
  })

  it('every docs/<name>.md named anywhere exists', () => {
    const missing: string[] = []
    for (const f of OWN) {
      for (const m of read(f).matchAll(/\bdocs\/([\w.-]+\.md)\b/g)) {
        if (!existsSync(join(REPO, 'docs', m[1]!))) missing.push(`${f}: docs/${m[1]}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('no comment or doc cites a tracker issue number: it gives the reason, which a newcomer can read', () => {
    const own = OWN.filter((f) => !f.startsWith('test/fixtures/'))
    expect(hits(own, /\b[Ii]ssues? \d+\b|\b[Ii]ssue #\d+/)).toEqual([])
  })

  it('docs/README.md lists every page of docs/ once, under use, operate or extend', () => {
    const index = read('docs/README.md')
    const sections = [...index.matchAll(/^## (.+)$/gm)].map((m) => m[1])
    expect(sections).toEqual(['Use', 'Operate', 'Extend'])
    const listed = [...index.split(/^## Use$/m)[1]!.matchAll(/^- \[[^\]]+\]\(([^)#]+)\)/gm)].map((m) => m[1]!.replace(/\/.*$/, '/'))
    const pages = readdirSync(join(REPO, 'docs'))
      .filter((n) => n !== 'README.md')
      .map((n) => (statSync(join(REPO, 'docs', n)).isDirectory() ? `${n}/` : n))
    expect([...listed].sort()).toEqual([...pages].sort())
  })

  it('every relative link in a Markdown file resolves, anchors included', () => {
    const broken: string[] = []
    for (const f of OWN.filter((x) => x.endsWith('.md'))) {
      const text = read(f).replace(/```[\s\S]*?```/g, '')
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!
        if (/^[a-z]+:/i.test(target)) continue // http(s):, mailto:
        const [path, anchor] = target.split('#') as [string, string | undefined]
        const file =
          path === ''
            ? f
            : relative(REPO, resolve(dirname(join(REPO, f)), path))
                .split('\\')
                .join('/')
        if (!existsSync(join(REPO, file))) {
          broken.push(`${f}: ${target} (no such file)`)
          continue
        }
        if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${f}: ${target} (no such anchor)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('every decision D<n> cited is a heading of docs/design.md', () => {
    const design = anchors('docs/design.md')
    const sections = new Set([...design].map((a) => /^(\d+)-/.exec(a)?.[1]).filter(Boolean))
    const bad: string[] = []
    for (const f of OWN.filter((x) => !x.startsWith('test/fixtures/'))) {
      const text = read(f)
      for (const m of text.matchAll(/\bD(\d{1,2})\b/g)) if (!design.has(`d${m[1]}`)) bad.push(`${f}: D${m[1]}`)
      for (const m of text.matchAll(/docs\/design\.md\s*§\s*(\d+)/g)) if (!sections.has(m[1])) bad.push(`${f}: docs/design.md §${m[1]}`)
    }
    // Every decision has its heading, and only D1-D18 exist.
    for (let n = 1; n <= 18; n++) expect(design.has(`d${n}`), `docs/design.md has no heading for D${n}`).toBe(true)
    expect(bad).toEqual([])
  })

  it('every rule id cited next to protocol-rules.md is an anchor there', () => {
    const rules = anchors('docs/protocol-rules.md')
    const bad: string[] = []
    for (const f of OWN) {
      const text = read(f)
      for (const m of text.matchAll(/protocol-rules\.md([^\n]{0,60})/g)) {
        // Ids up to the end of the clause: "protocol-rules.md M39, B7)" or "protocol-rules.md E6-E24".
        const clause = m[1]!.split(/[);:]|\. /)[0]!
        for (const id of clause.matchAll(/\b([JLMECAB])(\d{1,2})\b/g)) {
          if (!rules.has(`${id[1]!.toLowerCase()}${Number(id[2])}`)) bad.push(`${f}: ${id[0]}`)
        }
      }
    }
    expect(bad).toEqual([])
  })

  it('every repository path named in code, tests and docs exists', () => {
    const missing: string[] = []
    const path = /(?<![\w./-])((?:src|test|scripts|demo|docs)\/[\w./-]*\.(?:ts|mjs|md|sh|jsonl|json))\b/g
    for (const f of OWN.filter((x) => !x.startsWith('test/fixtures/') || x.endsWith('README.md'))) {
      for (const m of read(f).matchAll(path)) {
        const p = m[1]!
        if (p.includes('*') || p.includes('<')) continue
        // A file of a workspace package (packages/<name>/...) may name paths from its package's root.
        const pkg = /^packages\/[^/]+\//.exec(f)?.[0]
        if (!existsSync(join(REPO, p)) && !(pkg && existsSync(join(REPO, pkg, p)))) missing.push(`${f}: ${p}`)
      }
    }
    expect(missing).toEqual([])
  })
})
