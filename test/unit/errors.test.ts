/**
 * One error vocabulary: every Error subclass in src derives from EdgeError with a documented code,
 * and the tool-list pull's failures are recognised by their class and step, not by their message.
 */
import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { EdgeError, PULL_STEPS, PullError, type PullStep } from '../../src/core/errors'
import { ConfigError } from '../../src/core/config'
import { OriginReplyTooLargeError, OriginTimeoutError, SchemaUnusableError } from '../../src/core/ports'
import { StoreUnavailableError } from '../../src/core/validation/tool-registry'
import { StoreCannotListError } from '../../src/core/validation/tool-store'
import { PatternUnusableError } from '../../src/core/patterns/linear-pattern'
import { originCause } from '../../src/core/observe/origin-cause'
import { readRpcResponse } from '../../src/core/forwarding/tool-list-pull'
import type { OriginReply } from '../../src/core/ports'

const SRC = resolve(import.meta.dirname, '../../src')
/** The library's sources and the command's (packages/cli), whose errors share the vocabulary. */
const CLI_SRC = resolve(import.meta.dirname, '../../packages/cli/src')
const DOC = readFileSync(resolve(import.meta.dirname, '../../docs/errors.md'), 'utf8')
const ERRORS = readFileSync(join(SRC, 'core', 'errors.ts'), 'utf8')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))
}

describe('the error vocabulary', () => {
  it('no class in src extends Error directly except EdgeError itself', () => {
    const direct = [...sources(SRC), ...sources(CLI_SRC)].flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/class (\w+) extends Error\b/g)].map((m) => m[1]))
    expect(direct).toEqual(['EdgeError'])
  })

  it('every EdgeError subclass in src has a name and a code listed in core/errors.ts and docs/errors.md', () => {
    const found = [...sources(SRC), ...sources(CLI_SRC)].flatMap((f) => {
      const text = readFileSync(f, 'utf8')
      return [...text.matchAll(/class (\w+) extends EdgeError \{\n {2}override readonly name = '(\w+)'\n {2}override readonly code = '(\w+)'/g)].map((m) => ({
        cls: m[1]!,
        name: m[2]!,
        code: m[3]!,
      }))
    })
    const declared = [...sources(SRC), ...sources(CLI_SRC)].flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/class (\w+) extends EdgeError\b/g)].map((m) => m[1]))
    expect(found.map((c) => c.cls).sort()).toEqual(declared.sort())
    expect(found.length).toBeGreaterThanOrEqual(16)
    for (const c of found) {
      expect(c.name, c.cls).toBe(c.cls)
      expect(ERRORS, c.code).toContain(`| '${c.code}'`)
      expect(DOC, c.code).toContain(`| \`${c.code}\` | \`${c.cls}\``)
    }
    expect(new Set(found.map((c) => c.code)).size).toBe(found.length)
  })

  it('instances carry their name and code at run time', () => {
    const cases: [EdgeError, string, string][] = [
      [new ConfigError('MAX_BATCH: bad', 'MAX_BATCH'), 'ConfigError', 'EDGE_ERR_CONFIG'],
      [new SchemaUnusableError('why'), 'SchemaUnusableError', 'EDGE_ERR_SCHEMA_UNUSABLE'],
      [new PatternUnusableError('why'), 'PatternUnusableError', 'EDGE_ERR_PATTERN_UNUSABLE'],
      [new OriginTimeoutError(), 'OriginTimeoutError', 'EDGE_ERR_ORIGIN_TIMEOUT'],
      [new OriginReplyTooLargeError(), 'OriginReplyTooLargeError', 'EDGE_ERR_ORIGIN_REPLY_TOO_LARGE'],
      [new StoreUnavailableError(), 'StoreUnavailableError', 'EDGE_ERR_STORE_UNAVAILABLE'],
      [new StoreCannotListError(), 'StoreCannotListError', 'EDGE_ERR_STORE_CANNOT_LIST'],
      [new PullError('status', 502), 'PullError', 'EDGE_ERR_PULL'],
    ]
    for (const [e, name, code] of cases) {
      expect(e).toBeInstanceOf(EdgeError)
      expect(e).toBeInstanceOf(Error)
      expect([e.name, e.code]).toEqual([name, code])
      expect(String(e)).toMatch(new RegExp(`^${name}: `))
    }
  })
})

describe('PullError', () => {
  const reply = (text: string, type = 'application/json'): OriginReply =>
    ({ status: 200, headers: { 'content-type': type }, text: async () => text, stream: () => null, discard: () => {} }) as unknown as OriginReply

  it('names its step; the message is the step text, with the status for `status`', () => {
    expect(new PullError('status', 500).message).toBe('status 500')
    for (const step of Object.keys(PULL_STEPS) as PullStep[]) if (step !== 'status') expect(new PullError(step).message).toBe(PULL_STEPS[step])
  })

  it('a failed pull step reads as cause PULL by its class', async () => {
    const e = await readRpcResponse(reply('{"jsonrpc":"2.0","id":9,"result":{}}'), 1).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(PullError)
    expect((e as PullError).step).toBe('no-response')
    expect(originCause(e)).toEqual({ code: 'PULL', text: 'tool-list pull: no response for the id' })
    expect(originCause(new PullError('status', 503))).toEqual({ code: 'PULL', text: 'tool-list pull: status 503' })
    const empty = await readRpcResponse(reply('', 'text/event-stream'), 1).catch((x: unknown) => x)
    expect((empty as PullError).step).toBe('empty-stream')
  })

  it('a plain Error whose text happens to match a step is not taken for the pull (no message matching)', () => {
    expect(originCause(new Error('status 500')).code).not.toBe('PULL')
  })

  it("an EdgeError's own code is not read as the network cause", () => {
    expect(originCause(new Error('fetch failed', { cause: new ConfigError('x') }))).not.toMatchObject({ code: 'EDGE_ERR_CONFIG' })
  })
})
