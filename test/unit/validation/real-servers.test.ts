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
 * serving each server's own list: test/interop/real-servers.test.ts.
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
import { LARGE_CALLS } from '../../helpers/real-server-calls'

const DIR = join(import.meta.dirname, '../../fixtures/real-servers')
/** The default `MAX_BODY_BYTES`: no message is larger. */
const MAX_BODY = 4 * 1024 * 1024
/** The longest free-text string tried (256 Ki characters; a tool with one such string sends a message of about 256 KiB). */
const MAX_TEXT = 256 * 1024

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

  it('the realistic large calls are valid on both engines and far within the budget; estimate against measured CPU time', () => {
    for (const c of LARGE_CALLS) {
      const f = FIXTURES.find((x) => x.package === c.package)!
      const t = f.tools.find((x) => x.name === c.tool)!
      const tools = resolve(f, t)
      const chars = message(t.name, c.args).length
      const est = callEstimateMs(tools[0].cost!, tools[0].costPlan, chars, c.args, DEFAULT_VALIDATION_BUDGET_MS)
      const cpu = tools.map((r) => {
        expect(r.validate!(c.args), `${c.package} ${c.tool}`).toBeNull()
        const c0 = process.cpuUsage()
        for (let i = 0; i < 20; i++) r.validate!(c.args)
        const d = process.cpuUsage(c0)
        return (d.user + d.system) / 20
      })
      console.log(
        `[real-servers] ${c.what}: ${chars} characters, static figure ${estimateValidationMs(tools[0].cost!, chars).toFixed(1)} ms, estimate ${est.ms.toFixed(2)} ms, measured ajv ${cpu[0]!.toFixed(0)} us, cfworker ${cpu[1]!.toFixed(0)} us (CPU, mean of 20)`
      )
      expect(est.ms).toBeLessThan(DEFAULT_VALIDATION_BUDGET_MS / 10)
    }
  })

  it('the largest message each tool accepts under the budget (call-time estimate, and the static figure alone)', { timeout: 120_000 }, () => {
    type Largest = { chars: number; by: 'budget' | 'schema' | 'body' }
    const rows: { pkg: string; tool: string; now: Largest; before: Largest; grows: boolean }[] = []
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
        // The message grows until the budget refuses it, it passes MAX_BODY_BYTES, or the schema's own maxLength/maxItems stop it growing.
        const largest = (staticOnly: boolean): Largest => {
          let best = 0
          for (let text = 256; text <= MAX_TEXT; text *= 4) {
            const { args, chars } = sizeAt(text)
            if (chars > MAX_BODY) return { chars: best, by: 'body' }
            const ms = staticOnly ? estimateValidationMs(tools[0].cost!, chars) : callEstimateMs(tools[0].cost!, tools[0].costPlan, chars, args, DEFAULT_VALIDATION_BUDGET_MS).ms
            if (ms > DEFAULT_VALIDATION_BUDGET_MS) return { chars: best, by: 'budget' }
            if (chars === best) break
            best = chars
          }
          return { chars: best, by: sizeAt(MAX_TEXT).chars === sizeAt(MAX_TEXT / 4).chars ? 'schema' : 'body' }
        }
        rows.push({ pkg: f.package, tool: t.name, now: largest(false), before: largest(true), grows })
      }
    const kb = (l: Largest) =>
      `${l.chars === 0 ? 'none' : `${(l.chars / 1024).toFixed(l.chars < 10_240 ? 1 : 0)} KiB`}${l.by === 'budget' ? ' (budget)' : l.by === 'schema' ? ' (its schema allows no more)' : ' (every size tried)'}`
    console.log(
      '[real-servers] largest accepted message per tool (free text x4 from 256 to 256 Ki characters per string, until refused, past 4 MiB, or no longer growing): package | tool | now | static figure alone'
    )
    for (const r of rows)
      console.log(`[real-servers] ${r.pkg} | ${r.tool} | ${r.grows ? kb(r.now) : `no free text (${r.now.chars} chars)`} | ${r.grows ? kb(r.before) : `${r.before.chars} chars`}`)
    const growing = rows.filter((r) => r.grows)
    const byBudget = (key: 'now' | 'before', under: number) => growing.filter((r) => r[key].by === 'budget' && r[key].chars < under).length
    const sorted = growing.map((r) => r.now.chars).sort((a, b) => a - b)
    console.log(
      `[real-servers] ${rows.length} tools, ${growing.length} with free text: capped by the budget under 10,000 characters now ${byBudget('now', 10_000)} (static figure alone ${byBudget('before', 10_000)}), under 1 MiB now ${byBudget('now', 1 << 20)} (static figure alone ${byBudget('before', 1 << 20)}); capped by their own schema ${growing.filter((r) => r.now.by === 'schema').length}; median largest ${(sorted[sorted.length >> 1]! / 1024).toFixed(0)} KiB`
    )
    // Every call without free text is accepted; no tool with free text is capped by the budget below 64 KiB.
    expect(rows.filter((r) => !r.grows && r.now.chars === 0).map((r) => `${r.pkg} ${r.tool}`)).toEqual([])
    expect(growing.filter((r) => r.now.by === 'budget' && r.now.chars < 64 * 1024).map((r) => `${r.pkg} ${r.tool} ${r.now.chars}`)).toEqual([])
  })
})
