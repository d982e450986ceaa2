/**
 * The real-server corpus (test/fixtures/real-servers, scripts/gather-real-servers.mjs) and the
 * realistic large calls the validation budget used to refuse: valid by each tool's own schema,
 * the sizes agents send every day (a file edit, a knowledge-graph write, a review, page content,
 * a PDF from markdown, a long search query).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { prose } from './valid-instance'

/** One server's `tools/list` as gathered. */
export interface RealServerFixture {
  package: string
  version: string
  protocolVersion: string | null
  tools: { name: string; inputSchema: unknown; [k: string]: unknown }[]
}

const DIR = join(import.meta.dirname, '../fixtures/real-servers')

/** Every fixture, by file name order. */
export const REAL_SERVERS: RealServerFixture[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as RealServerFixture)

/** The fixture of one package. */
export function fixtureOf(pkg: string): RealServerFixture {
  const f = REAL_SERVERS.find((x) => x.package === pkg)
  if (!f) throw new Error(`no fixture for ${pkg}`)
  return f
}

/** A paragraph of `n` characters of prose, distinct per `seed`. */
const paragraph = (n: number, seed: number) => `Paragraph ${seed}. ${prose(n)}`.slice(0, n)

/** A large, valid call of a real tool, and what it stands for. */
export interface LargeCall {
  package: string
  tool: string
  what: string
  args: Record<string, unknown>
}

export const LARGE_CALLS: LargeCall[] = [
  {
    package: '@modelcontextprotocol/server-filesystem',
    tool: 'edit_file',
    what: 'edit_file replacing a 5 KB paragraph (11 KB message)',
    args: { path: 'notes.md', edits: [{ oldText: paragraph(5_000, 1), newText: paragraph(5_800, 2) }], dryRun: false },
  },
  {
    package: '@modelcontextprotocol/server-memory',
    tool: 'create_entities',
    what: 'create_entities with 22 entities (8 KB)',
    args: {
      entities: Array.from({ length: 22 }, (_, i) => ({
        name: `Entity ${i}`,
        entityType: i % 2 ? 'person' : 'project',
        observations: Array.from({ length: 4 }, (_, j) => paragraph(80, i * 10 + j)),
      })),
    },
  },
  {
    package: '@modelcontextprotocol/server-github',
    tool: 'create_pull_request_review',
    what: 'a pull-request review with a 3 KB body',
    args: { owner: 'octo-org', repo: 'octo-repo', pull_number: 42, body: paragraph(3_000, 3), event: 'COMMENT' },
  },
  {
    package: '@notionhq/notion-mcp-server',
    tool: 'API-patch-block-children',
    what: '8 Notion paragraphs (4 KB)',
    args: {
      block_id: '123e4567-e89b-12d3-a456-426614174000',
      children: Array.from({ length: 8 }, (_, i) => ({ type: 'paragraph', paragraph: { rich_text: [{ type: 'text', text: { content: paragraph(480, 10 + i) } }] } })),
    },
  },
  {
    package: '@wonderwhy-er/desktop-commander',
    tool: 'write_pdf',
    what: 'a PDF written from 3.2 KB of markdown',
    args: { path: 'report.pdf', content: `# Report\n\n${paragraph(1_500, 20)}\n\n## Details\n\n- ${paragraph(1_600, 21)}\n` },
  },
  {
    package: 'firecrawl-mcp',
    tool: 'firecrawl_search',
    what: 'a search query of 1,300 characters',
    args: { query: paragraph(1_300, 30), limit: 5 },
  },
]
