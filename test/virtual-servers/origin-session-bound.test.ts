/**
 * The bound on the edge's own origin sessions (core/virtual/origin-sessions.ts `sharedConnection`,
 * one per origin and caller for requests without a virtual session id): a flood of distinct callers
 * holds at most {@link MAX_SHARED_SESSIONS}; past it the least recently used is dropped and ended at
 * its origin (`DELETE`), while one in use stays. The Node build's ports with its real origin
 * client, against the real stateful SDK origin of backends.ts.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mcpEdge } from '../../src/adapters/node/node-edge'
import type { EdgeDeps, OriginTarget } from '../../src/core/exchange'
import { MAX_SHARED_SESSIONS, sharedConnection, virtualState } from '../../src/core/virtual/origin-sessions'
import { MemoryKv } from '../../src/stores/memory-kv'
import { startStatefulOrigin, type TestOrigin } from './backends'

/** Whether the origin still knows session `sid`: a `tools/list` in it is not 404. */
async function known(origin: TestOrigin, sid: string): Promise<boolean> {
  const res = await fetch(origin.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  await res.arrayBuffer()
  return res.status !== 404
}

describe("the edge's own origin sessions", () => {
  let files: TestOrigin
  let deps: EdgeDeps
  let target: OriginTarget

  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'])
    deps = mcpEdge({
      env: { ORIGINS: JSON.stringify({ files: files.url }), VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files'] } }), VIRTUAL_SESSION_KEY: 'k'.repeat(40) },
      store: new MemoryKv(),
      logger: () => undefined,
    }).deps!
    target = { id: 'files', url: files.url }
  })
  afterAll(async () => {
    await files?.close()
  })

  it('are at most MAX_SHARED_SESSIONS (1024): past it the least recently used is dropped and DELETEd at its origin, one in use stays', async () => {
    expect(MAX_SHARED_SESSIONS).toBe(1024)
    expect(virtualState(deps).sharedBound).toBe(MAX_SHARED_SESSIONS)
    // The bound's rule with 40 sessions, not 1,024: each is a real initialize at the SDK origin,
    // and a thousand of them took 4-12 s depending on the machine's load.
    const BOUND = 40
    virtualState(deps).sharedBound = BOUND
    const open = (caller: string) => sharedConnection(deps, target, null, caller)
    const first = (await open('c-first')).sessionId!
    const second = (await open('c-second')).sessionId!
    expect(second).not.toBe(first)
    // Distinct callers until the bound is full, 8 at a time; `first` is used between batches (it stays recent).
    for (let i = 0; i < BOUND - 2; i += 8) {
      await Promise.all(Array.from({ length: Math.min(8, BOUND - 2 - i) }, (_, j) => open(`c-${i + j}`)))
      expect((await open('c-first')).sessionId).toBe(first)
    }
    const st = virtualState(deps)
    expect(st.shared.size).toBe(BOUND)
    expect(await known(files, second)).toBe(true)

    // One caller more: the least recently used (`second`) is dropped, and ended at the origin.
    await open('c-one-more')
    expect(st.shared.size).toBe(BOUND)
    await vi.waitFor(async () => expect(await known(files, second)).toBe(false), { timeout: 10_000, interval: 20 })
    expect((await open('c-first')).sessionId).toBe(first)
    expect(await known(files, first)).toBe(true)
    // The dropped caller's next request opens a new session.
    const again = (await open('c-second')).sessionId!
    expect(again).not.toBe(second)
    expect(await known(files, again)).toBe(true)
  })
})
