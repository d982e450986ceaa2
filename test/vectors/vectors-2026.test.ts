/**
 * The 66 rows of test/fixtures/vectors/spec-vectors-2026.jsonl (n 87-152) on the Node entry and on
 * the built Worker in workerd, against a real scripted HTTP origin. Rows with `profile_overrides`
 * run in the deployment they name: a modern-only edge (151), an edge whose origin speaks only
 * 2025 revisions (152), and an unavailable tool store (147).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES_AND_MIDDLEWARE, type StartEdge } from '../helpers/runtimes'
import { assertKvEffect } from '../helpers/kv-effect'
import { waitFor } from '../helpers/wait'
import type { LogRecord } from '../../src/core/ports'
import { assertCase, deploy, expandRows, readVectors, send, type Case, type Deployment } from './rules-harness'

const rows = readVectors('spec-vectors-2026.jsonl')
const all = expandRows(rows, 'm')

/** The deployment a row needs (the `profile_overrides` of test/fixtures/vectors/README.md). */
function profileOf(c: Case): 'default' | 'modern-only' | 'legacy-origin' | 'kv-down' {
  const p = c.row.profile_overrides ?? {}
  if (p.kv === 'unavailable') return 'kv-down'
  if (p.origin_era === 'legacy') return 'legacy-origin'
  if (Array.isArray(p.supported_versions) && p.supported_versions.join() === '2026-07-28') return 'modern-only'
  return 'default'
}

const PROFILE_VARS: Record<string, Record<string, string>> = {
  default: { ALLOWED_ORIGINS: 'https://app.example' },
  'modern-only': { ALLOWED_ORIGINS: 'https://app.example', SUPPORTED_VERSIONS: '2026-07-28' },
  'legacy-origin': { ALLOWED_ORIGINS: 'https://app.example', SUPPORTED_VERSIONS: '2025-03-26,2025-06-18,2025-11-25' },
  'kv-down': { ALLOWED_ORIGINS: 'https://app.example' },
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('spec-vectors-2026.jsonl on $name', ({ name, start }) => {
  const deployments = new Map<string, Deployment>()
  let ran = 0
  beforeAll(async () => {
    for (const profile of ['default', 'modern-only', 'legacy-origin', 'kv-down'] as const) {
      const cases = all.filter((c) => profileOf(c) === profile)
      const starter: StartEdge = profile === 'kv-down' ? (vars) => start(vars, { kvDown: true }) : start
      deployments.set(profile, await deploy(starter, cases, PROFILE_VARS[profile]))
    }
  })
  afterAll(async () => {
    console.log(`[vectors-2026] ${name}: ${ran} of ${all.length} runs (${rows.length} rows) passed`)
    for (const d of deployments.values()) await d.close()
  })
  it('holds all 66 rows', () => {
    expect(rows.length).toBe(66)
  })
  for (const c of all) {
    it(c.label, async () => {
      const d = deployments.get(profileOf(c))!
      d.setCase(c)
      const a = await send(d, c)
      assertCase(c, a, d.forwarded(), d.pulls())
      // Rows 137-139: where the relayed tool list was stored (docs/scope.md).
      if (c.expected.kv_effect !== undefined) await assertKvEffect(c, d.edge)
      const grade = c.expected.body.grade
      if (typeof grade === 'string') {
        // The row's own line: the Worker's lines arrive after its answers.
        const lastPost = (logs: LogRecord[]) => logs.filter((r) => r.msg === 'mcp.post').at(-1) as { grades: { grade: string }[] } | undefined
        const last = await waitFor(
          async () => {
            const l = lastPost(await d.edge.logs())
            return l?.grades.some((g) => g.grade === grade) ? l : null
          },
          { what: `the last mcp.post line graded ${grade}` }
        ).catch(async () => lastPost(await d.edge.logs()))
        expect(last?.grades.map((g) => g.grade)).toContain(grade)
      }
      ran++
    })
  }
})
