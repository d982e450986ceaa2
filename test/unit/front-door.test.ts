/**
 * The front door (src/core/front-door.ts), the one entry of an MCP POST for both carriers: the
 * path rule on raw URLs and on router segments, the length rule, and the order of servePost's
 * answers (404, transport refusal, declared 413 before any read, 413 while reading, then the
 * pipeline), with a carrier that records what it was asked.
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/core/config'
import { declaredBodyBytes, originNameOf, servePost, targetFor, type McpPost } from '../../src/core/front-door'
import { isOriginName } from '../../src/core/config'
import type { EdgeDeps } from '../../src/core/exchange'
import { TextMetrics } from '../../src/observe/text-metrics'
import type { LogRecord } from '../../src/core/ports'
import { createToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../src/validators/cfworker'

describe('the path rule', () => {
  it.each([
    ['/mcp', undefined],
    ['/mcp?x=1', undefined],
    ['/mcp/weather', 'weather'],
    ['/mcp/a.b_c~d-e?q', 'a.b_c~d-e'],
    ['/mcp/', null],
    ['/mcp/.', null],
    ['/mcp/..', null],
    ['/mcp/a%20b', null],
    ['/mcp/a/b', null],
    ['/mcpx', null],
    ['/mcpx/a', null],
    ['/other', null],
    ['', null],
  ])('originNameOf(%j, "/mcp") is %j', (url, name) => {
    expect(originNameOf(url, '/mcp')).toBe(name)
  })

  it('works for any mount point', () => {
    expect(originNameOf('/gateway/mcp', '/gateway/mcp')).toBeUndefined()
    expect(originNameOf('/gateway/mcp/x', '/gateway/mcp')).toBe('x')
    expect(originNameOf('/mcp/x', '/gateway/mcp')).toBeNull()
  })

  it('holds router segments to the same names', () => {
    expect(['a', 'A-9', '~x', '...'].every(isOriginName)).toBe(true)
    expect(['', '.', '..', 'a b', 'a/b', 'é', 'a%41'].some(isOriginName)).toBe(false)
    const config = loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', ORIGINS: '{"w":"http://127.0.0.1:2/mcp"}' })
    expect(targetFor(config, undefined)).toEqual({ id: 'default', url: 'http://127.0.0.1:1/mcp' })
    expect(targetFor(config, 'w')).toEqual({ id: 'w', url: 'http://127.0.0.1:2/mcp' })
    expect(targetFor(config, 'x')).toBeNull()
    expect(targetFor(config, 'constructor')).toBeNull()
  })
})

describe('the length rule', () => {
  const h = (entries: Record<string, string>) => new Headers(entries)
  it.each([
    [{ 'content-length': '42' }, 42],
    [{ 'content-length': '0' }, 0],
    [{ 'content-length': '42', 'transfer-encoding': 'chunked' }, undefined],
    [{ 'transfer-encoding': 'chunked' }, undefined],
    [{ 'content-length': '4e2' }, undefined],
    [{ 'content-length': '-1' }, undefined],
    [{ 'content-length': '' }, undefined],
    [{}, undefined],
  ])('%j declares %j bytes', (headers, bytes) => {
    expect(declaredBodyBytes(h(headers))).toBe(bytes)
  })
})

describe('servePost', () => {
  const config = loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', MAX_BODY_BYTES: '100' })
  const logs: LogRecord[] = []
  const deps: EdgeDeps = {
    config,
    registry: createToolRegistry(config, new MemoryKv(), createCfworkerEngine()),
    origin: () => Promise.reject(new Error('no origin in this test')),
    log: (r) => logs.push(r),
    defer: () => undefined,
    metrics: new TextMetrics(),
  }
  const POST = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }

  /** A carrier with `body` to give; records the reads it was asked for. */
  function carrier(originName: string | undefined, headers: Record<string, string>, body: string | null) {
    const reads: (number | undefined)[] = []
    const post: McpPost = {
      originName,
      headers: new Headers(headers),
      readBody: (maxBytes) => {
        reads.push(maxBytes)
        return Promise.resolve(body === null ? null : new TextEncoder().encode(body))
      },
    }
    return { post, reads }
  }
  const json = (r: { body: unknown }) =>
    JSON.parse(typeof r.body === 'string' ? r.body : new TextDecoder().decode(r.body as Uint8Array)) as { id: unknown; error?: { code: number; message: string } }

  it('404 for a path with no origin, before anything else, unlogged', async () => {
    const n = logs.length
    const { post, reads } = carrier('nowhere', { 'content-type': 'text/plain' }, '{}')
    const r = await servePost(deps, post)
    expect([r.status, json(r).error?.code, reads, logs.length - n]).toEqual([404, -32600, [], 0])
  })

  it('a transport refusal before the body is read, logged', async () => {
    const n = logs.length
    const { post, reads } = carrier(undefined, { ...POST, 'content-type': 'text/plain', 'content-length': '2' }, '{}')
    const r = await servePost(deps, post)
    expect([r.status, reads, logs.length - n]).toEqual([415, [], 1])
  })

  it('413 for a declared length past MAX_BODY_BYTES, before the body is read', async () => {
    const { post, reads } = carrier(undefined, { ...POST, 'content-length': '101' }, 'x'.repeat(101))
    const r = await servePost(deps, post)
    expect([r.status, json(r).error?.message, reads]).toEqual([413, 'Payload Too Large: the body exceeds 100 bytes', []])
  })

  it('an undeclared length is read with the bound; null from the carrier is 413', async () => {
    const { post, reads } = carrier(undefined, { ...POST, 'transfer-encoding': 'chunked' }, null)
    const r = await servePost(deps, post)
    expect([r.status, reads]).toEqual([413, [100]])
  })

  it('a declared length is read without a bound, then the pipeline answers', async () => {
    const { post, reads } = carrier(undefined, { ...POST, 'content-length': '17' }, '{"jsonrpc":"2.0",')
    const r = await servePost(deps, post)
    expect([r.status, json(r).error?.code, reads]).toEqual([400, -32700, [undefined]])
  })

  it('a carrier that fails is a 500 -32603, never a rejection', async () => {
    const post: McpPost = { originName: undefined, headers: new Headers(POST), readBody: () => Promise.reject(new Error('socket gone')) }
    const r = await servePost(deps, post)
    expect([r.status, json(r).error?.code]).toEqual([500, -32603])
  })
})
