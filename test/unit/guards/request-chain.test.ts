/**
 * The request chain (src/core/guards/request-chain.ts) and the denial vocabulary
 * (src/core/guards/denial.ts): the guards each configuration lists, in the order of their effects;
 * the runner is synchronous until a guard awaits, the first refusal wins and what a guard passes on
 * reaches the ones after it; the metric docs list the reasons of the one union; the answer kind per
 * era. The guards acting on real requests are test/guards/guard-path-table.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadConfig } from '../../../src/core/config'
import { messageChain, requestChain, runRequestGuards } from '../../../src/core/guards/request-chain'
import { DENIAL_REASONS, denialAnswerKind, reasonsCountedIn } from '../../../src/core/guards/denial'
import type { GuardedRequest, RequestGuard, RequestGuardContext, RequestVerdict } from '../../../src/core/guards/guard'
import type { CallAnswer } from '../../../src/core/local-answer'

const ORIGIN = { ORIGIN_URL: 'http://127.0.0.1:9/mcp' }
const EVERY_GUARD = {
  ...ORIGIN,
  AUTH_ISSUER: 'http://127.0.0.1:9',
  AUTH_AUDIENCE: 'http://127.0.0.1:8/mcp',
  AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
  RATE_LIMIT: '10/min',
  TOOLS_DENY: 'x_*',
  TOOL_SCOPES: '{"*":"mcp:tools"}',
  TOOL_PINNING: 'enforce',
}

describe('the request chain of a configuration', () => {
  it('lists every guard in the order of its effects: token, rate budget, tool filter, scopes, pins, arguments', () => {
    expect(requestChain(loadConfig(EVERY_GUARD)).map((g) => g.name)).toEqual(['token', 'rate_budget', 'tool_filter', 'tool_scopes', 'tool_pins', 'arguments'])
    // The token runs once per HTTP request at the front door; each message runs the rest.
    expect(messageChain(loadConfig(EVERY_GUARD)).map((g) => g.name)).toEqual(['rate_budget', 'tool_filter', 'tool_scopes', 'tool_pins', 'arguments'])
  })

  it('leaves out the guards whose settings are off, and builds one list per configuration object', () => {
    const config = loadConfig(ORIGIN)
    expect(requestChain(config).map((g) => g.name)).toEqual(['arguments'])
    expect(requestChain(loadConfig({ ...ORIGIN, ORIGINS: '{"a":{"url":"http://127.0.0.1:9/a","toolsDeny":["x"]}}' })).map((g) => g.name)).toEqual(['tool_filter', 'arguments'])
    expect(requestChain(config)).toBe(requestChain(config))
    expect(requestChain(loadConfig({ ...ORIGIN, TOOL_PINNING: 'audit' })).map((g) => g.name)).not.toContain('tool_pins')
  })

  it('gives every guard the shape of the chain: a stable name, the request phase, where it runs', () => {
    for (const g of requestChain(loadConfig(EVERY_GUARD))) {
      expect(g.phase).toBe('request')
      expect(g.name).toMatch(/^[a-z_]+$/)
      expect(['http', 'message']).toContain(g.at)
    }
  })
})

const request = (method: string): GuardedRequest => ({ kind: 'request', id: { raw: '1', key: 'n:1' }, method, text: '{}' }) as unknown as GuardedRequest
const context = (): RequestGuardContext => ({ info: {} }) as unknown as RequestGuardContext
const answer: CallAnswer = { kind: 'call', id: { raw: '1', key: 'n:1' } as CallAnswer['id'], text: 'refused' }

/** A guard that records its call and gives `verdict` (as a promise with `async`). */
function guard(name: string, seen: string[], verdict: RequestVerdict, opts: { async?: boolean; methods?: string[] } = {}): RequestGuard {
  return {
    name,
    phase: 'request',
    at: 'message',
    appliesTo: (m) => !opts.methods || opts.methods.includes(m),
    check: (_c, ctx) => {
      seen.push(`${name}:${JSON.stringify(ctx.info)}`)
      return opts.async ? Promise.resolve(verdict) : verdict
    },
  }
}

describe('runRequestGuards', () => {
  it('is synchronous when no guard awaits, runs the guards in order and passes info on', () => {
    const seen: string[] = []
    const v = runRequestGuards([guard('a', seen, { kind: 'pass', info: { pull: undefined } }), guard('b', seen, { kind: 'pass' })], request('tools/call'), context())
    expect(v).not.toBeInstanceOf(Promise)
    expect(v).toEqual({ kind: 'pass' })
    expect(seen).toEqual(['a:{}', 'b:{}'])
  })

  it('goes on after a guard that awaits, and the first refusal ends the run', async () => {
    const seen: string[] = []
    const chain = [
      guard('a', seen, { kind: 'pass' }, { async: true }),
      guard('skipped', seen, { kind: 'deny', answer }, { methods: ['tools/list'] }),
      guard('b', seen, { kind: 'deny', answer }),
      guard('c', seen, { kind: 'pass' }),
    ]
    const v = runRequestGuards(chain, request('tools/call'), context())
    expect(v).toBeInstanceOf(Promise)
    expect(await v).toEqual({ kind: 'deny', answer })
    expect(seen).toEqual(['a:{}', 'b:{}'])
  })

  it('stops at a guard that forwards', () => {
    const seen: string[] = []
    const pending = { id: { raw: '1', key: 'n:1' }, method: 'tools/call', unvalidated: false, answered: false } as never
    const v = runRequestGuards([guard('a', seen, { kind: 'forward', pending }), guard('b', seen, { kind: 'pass' })], request('tools/call'), context())
    expect(v).toEqual({ kind: 'forward', pending })
    expect(seen).toEqual(['a:{}'])
  })
})

describe('the denial vocabulary', () => {
  const doc = readFileSync(resolve(import.meta.dirname, '../../../docs/observability.md'), 'utf8')
  const row = (metric: string) => doc.split('\n').find((l) => l.startsWith(`| \`${metric}\``)) ?? ''
  const labels = (line: string) => [...line.matchAll(/`([a-z_-]+)`/g)].map((m) => m[1]!)

  it('the metric docs list the label values of each counter from the one reason union', () => {
    const denials = labels(row('mcp_edge_denials_total')).filter((l) => l in DENIAL_REASONS)
    expect(denials).toEqual(reasonsCountedIn('denials'))
    const pins = new Set(labels(row('mcp_edge_tool_pin_blocks_total')).filter((l) => l in DENIAL_REASONS))
    expect([...pins].sort()).toEqual(reasonsCountedIn('pin_blocks').sort())
  })

  it('decides the answer kind of each refusal per era in one place', () => {
    const single = { era: '2025-06-18' as const, batch: false }
    expect(denialAnswerKind('no_token', { ...single, batch: true })).toBe('http')
    expect(denialAnswerKind('insufficient_scope', single)).toBe('http')
    expect(denialAnswerKind('insufficient_scope', { ...single, batch: true })).toBe('per-id-error')
    expect(denialAnswerKind('rate_limited', { ...single, batch: true })).toBe('per-id-error')
    expect(denialAnswerKind('tool_filtered', single)).toBe('rpc-error')
    // Pins answer as invalid arguments do: an isError result from 2025-11-25 on (INVALID_ARGS=auto).
    expect(denialAnswerKind('changed', { ...single, invalidArgs: 'auto' })).toBe('rpc-error')
    expect(denialAnswerKind('changed', { era: '2025-11-25', batch: false, invalidArgs: 'auto' })).toBe('is-error-result')
    expect(denialAnswerKind('changed', { era: '2025-11-25', batch: false, invalidArgs: 'auto', taskAugmented: true })).toBe('rpc-error')
    expect(denialAnswerKind('changed', { ...single, invalidArgs: 'tool-error' })).toBe('is-error-result')
    expect(denialAnswerKind('result_secret', { ...single, reply: true })).toBe('is-error-result')
  })
})
