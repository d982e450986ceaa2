/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, every server
 * scenario, through scripts/run-conformance.sh) against the demo origin with its conformance
 * fixtures directly, and through a virtual server (`VIRTUAL_SERVERS`) that holds the demo origin
 * alone, on the Node edge and on the Worker bundle in workerd under Miniflare. `prefix:
 * conditional` keeps the origin's own names (one origin has no collisions), so the scenarios call
 * the tools, prompts and resources they know. The three runs go at once; a target with failures
 * runs once more alone (timing tolerances of a few scenarios on a loaded 2-core machine). Every
 * scenario must get the same verdict through the virtual server as direct.
 *
 * The runner installs the suite from the npm registry into /tmp on its first run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startNodeEdge, startWorkerEdge, type EdgeUnderTest } from '../helpers/runtimes'
import { runConformanceTargets, type ConformanceRun } from '../helpers/peers-procs'

const TARGETS = ['direct', 'virtual-node', 'virtual-workerd'] as const
type Target = (typeof TARGETS)[number]

const VARS = {
  ORIGINS: JSON.stringify({ demo: '' }),
  VIRTUAL_SERVERS: JSON.stringify({ one: { origins: ['demo'], prefix: 'conditional' } }),
  VIRTUAL_SESSION_KEY: 'c'.repeat(40),
}

describe('official conformance suite: the demo origin direct and through a virtual server holding it (Node and workerd)', () => {
  let origin: RunningOrigin
  let nodeEdge: EdgeUnderTest
  let worker: EdgeUnderTest
  const runs = {} as Record<Target, ConformanceRun>

  beforeAll(async () => {
    origin = await startDemoOrigin({ fixtures: true })
    const vars = { ...VARS, ORIGINS: JSON.stringify({ demo: origin.url }) }
    ;[nodeEdge, worker] = await Promise.all([startNodeEdge(vars), startWorkerEdge(vars)])
    const virtual = (e: EdgeUnderTest) => e.url.replace(/\/mcp$/, '/mcp/one')
    const urls: Record<Target, string> = { direct: origin.url, 'virtual-node': virtual(nodeEdge), 'virtual-workerd': virtual(worker) }
    Object.assign(runs, await runConformanceTargets(urls, origin.url))
  }, 900_000)

  afterAll(async () => {
    await Promise.all([nodeEdge?.close(), worker?.close()])
    await origin?.close()
  })

  it('every server scenario passes direct', () => {
    expect(Object.keys(runs.direct.scenarios)).toHaveLength(32)
    expect(runs.direct.failed, runs.direct.output.slice(-3000)).toBe(0)
  })

  it.each(['virtual-node', 'virtual-workerd'] as const)('every scenario gets the same verdict through the virtual server (%s) as direct', (t) => {
    const differ = Object.keys(runs.direct.scenarios).filter((s) => runs[t].scenarios[s] !== runs.direct.scenarios[s])
    expect(differ, runs[t].output.slice(-4000)).toEqual([])
    expect(runs[t].passed).toBe(runs.direct.passed)
  })
})
