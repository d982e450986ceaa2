/**
 * The tool lists of real MCP servers from npm (test/fixtures/real-servers, regathered by
 * scripts/gather-real-servers.mjs) through the edge's validation, in process, on both engines:
 *
 * - every tool's inputSchema is usable on both engines or unusable on both, and every usable one
 *   accepts a valid call holding realistic large strings (test/helpers/valid-instance.ts), on both
 *   engines and within the validation budget;
 * - the largest message each tool accepts under the budget, by the estimate the edge decides on
 *   (tools-call.ts `callEstimateMs`) and by the schema's static figure alone (the estimate before
 *   the call-time walk): printed as a table, summarised in docs/validation.md.
 *
 * The same calls through the real edge (Node and the Worker under Miniflare) to a stand-in origin
 * serving each server's own list: test/real-servers.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createAjvEngine } from '../../../src/validators/ajv'
import { createCfworkerEngine } from '../../../src/validators/cfworker'
import { CompiledValidators } from '../../../src/core/validation/compiled-validators'
import { dialectOf, type ProtocolVersion } from '../../../src/core/jsonrpc/versions'
import { callEstimateMs, DEFAULT_VALIDATION_BUDGET_MS, estimateValidationMs } from '../../../src/core/validation/tools-call'
import type { ResolvedTool } from '../../../src/core/validation/tool-record'
import { validInstance, type InstanceOptions } from '../../helpers/valid-instance'

const DIR = join(import.meta.dirname, '../../fixtures/real-servers')
/** The default `MAX_BODY_BYTES`: no message is larger. */
const MAX_BODY = 4 * 1024 * 1024

interface Fixture {
  package: string
  version: string
  protocolVersion: string | null
  tools: { name: string; inputSchema: unknown }[]
}
export const FIXTURES: Fixture[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Fixture)

const engines = [
  ['ajv', new CompiledValidators(createAjvEngine(), 10_000, { compiles: 0 })],
  ['cfworker', new CompiledValidators(createCfworkerEngine(), 10_000, { compiles: 0 })],
] as const

const message = (name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })

function resolve(f: Fixture, t: Fixture['tools'][number]): [ResolvedTool, ResolvedTool] {
  const era = (f.protocolVersion ?? '2025-06-18') as ProtocolVersion
  const record = { name: t.name, inputSchema: t.inputSchema, dialect: dialectOf(t.inputSchema, era), hash: '0' }
  return [engines[0][1].resolve(record), engines[1][1].resolve(record)]
}

/** A valid call for the tool (both engines accept it), trying every member and then the required ones only. */
function validCall(tools: [ResolvedTool, ResolvedTool], schema: unknown, text: number): Record<string, unknown> | null {
  const tries: InstanceOptions[] = [{ text }, { text, requiredOnly: true }, { text, items: 2 }]
  for (const o of tries) {
    let args: unknown
    try {
      args = validInstance(schema, o)
    } catch {
      continue
    }
    const verdicts = tools.map((t) => t.validate!(args) === null)
    // One verdict on both engines, whatever the generator made.
    expect(verdicts[0], `${JSON.stringify(args).slice(0, 200)}`).toBe(verdicts[1])
    if (verdicts[0]) return args as Record<string, unknown>
  }
  return null
}

describe('real MCP servers: every tool through the validation of the edge', () => {
  it('the corpus holds the 31 servers of the reference list', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(30)
    console.log(`[real-servers] ${FIXTURES.length} servers, ${FIXTURES.reduce((n, f) => n + f.tools.length, 0)} tools`)
  })

  it(
    'every usable inputSchema accepts a valid call with 2,000-character strings, on both engines and within the budget; unusable ones are unusable on both',
    { timeout: 120_000 },
    () => {
      let usable = 0
      const unusable: string[] = []
      const failed: string[] = []
      for (const f of FIXTURES)
        for (const t of f.tools) {
          const tools = resolve(f, t)
          expect(tools[0].unusable, `${f.package} ${t.name}`).toEqual(tools[1].unusable)
          if (!tools[0].validate) {
            unusable.push(`${f.package} ${t.name}: ${tools[0].unusable}`)
            continue
          }
          usable++
          const args = validCall(tools, t.inputSchema, 2_000)
          if (!args) {
            failed.push(`${f.package} ${t.name}`)
            continue
          }
          const est = callEstimateMs(tools[0].cost!, tools[0].costPlan, message(t.name, args).length, args, DEFAULT_VALIDATION_BUDGET_MS)
          expect(est.ms, `${f.package} ${t.name}: ${message(t.name, args).length} characters`).toBeLessThanOrEqual(DEFAULT_VALIDATION_BUDGET_MS)
        }
      console.log(
        `[real-servers] ${usable} usable schemas, each accepted a valid call; ${unusable.length} unusable on both engines${unusable.length ? ': ' + unusable.join('; ') : ''}`
      )
      expect(failed).toEqual([])
    }
  )

  it('the largest message each tool accepts under the budget (call-time estimate, and the static figure alone)', { timeout: 120_000 }, () => {
    const rows: { pkg: string; tool: string; now: number; before: number; grows: boolean }[] = []
    for (const f of FIXTURES)
      for (const t of f.tools) {
        const tools = resolve(f, t)
        if (!tools[0].validate) continue
        // The shape of a valid call is found once (both engines); larger ones only change the length of its free text.
        const shape = ([{}, { requiredOnly: true }, { items: 2 }] as Partial<InstanceOptions>[]).find((o) => {
          try {
            const args = validInstance(t.inputSchema, { text: 64, ...o })
            return tools[0].validate!(args) === null && tools[1].validate!(args) === null
          } catch {
            return false
          }
        })
        if (!shape) continue
        const sizeAt = (text: number) => {
          const args = validInstance(t.inputSchema, { ...shape, text })
          return { args, chars: message(t.name, args).length }
        }
        const grows = sizeAt(64).chars < sizeAt(128).chars
        const largest = (staticOnly: boolean): number => {
          let best = 0
          for (let text = 256; text <= MAX_BODY; text *= 4) {
            const { args, chars } = sizeAt(text)
            if (chars > MAX_BODY) break
            const ms = staticOnly ? estimateValidationMs(tools[0].cost!, chars) : callEstimateMs(tools[0].cost!, tools[0].costPlan, chars, args, DEFAULT_VALIDATION_BUDGET_MS).ms
            if (ms > DEFAULT_VALIDATION_BUDGET_MS) break
            best = chars
            if (!grows) break
          }
          return best
        }
        rows.push({ pkg: f.package, tool: t.name, now: largest(false), before: largest(true), grows })
      }
    const kb = (n: number) => (n === 0 ? 'none' : `${(n / 1024).toFixed(n < 10_240 ? 1 : 0)} KiB`)
    console.log('[real-servers] largest accepted message per tool (free text x4 from 256 characters until refused or past 4 MiB): package | tool | now | static figure alone')
    for (const r of rows)
      console.log(`[real-servers] ${r.pkg} | ${r.tool} | ${r.grows ? kb(r.now) : `no free text (${r.now} chars)`} | ${r.grows ? kb(r.before) : `${r.before} chars`}`)
    const growing = rows.filter((r) => r.grows)
    const under = (n: number, key: 'now' | 'before') => growing.filter((r) => r[key] < n).length
    const sorted = growing.map((r) => r.now).sort((a, b) => a - b)
    console.log(
      `[real-servers] ${rows.length} tools, ${growing.length} with free text: under 10,000 characters now ${under(10_000, 'now')} (static figure alone ${under(10_000, 'before')}); under 1 MiB now ${under(1 << 20, 'now')} (static figure alone ${under(1 << 20, 'before')}); smallest now ${kb(sorted[0]!)}, median ${kb(sorted[sorted.length >> 1]!)}`
    )
    // Every call without free text is accepted; every tool with free text takes a message of 64 KiB.
    expect(rows.filter((r) => !r.grows && r.now === 0).map((r) => `${r.pkg} ${r.tool}`)).toEqual([])
    expect(growing.filter((r) => r.now < 64 * 1024).map((r) => `${r.pkg} ${r.tool} ${r.now}`)).toEqual([])
  })
})
