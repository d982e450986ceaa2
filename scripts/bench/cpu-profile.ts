/**
 * V8 CPU profiles for the benchmark (`npm run bench -- --profile`, scripts/bench/worker-profile.ts):
 * the Chrome DevTools Protocol client of workerd's inspector and the self time per function of a
 * profile (the Node edge's profiles come from `node:inspector` in scripts/bench/edge.ts, in the
 * same format).
 */
import { WebSocket } from 'undici'

export interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  hitCount?: number
  children?: number[]
}

/** A `Profiler.stop` result's profile (times in µs). */
export interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

/** One inspector session on a workerd worker: `send` a CDP method, resolve with its result. */
export async function inspector(port: number, workerName: string): Promise<{ send(method: string, params?: object): Promise<unknown>; close(): void }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/core:user:${workerName}`)
  await new Promise<void>((res, rej) => {
    ws.addEventListener('open', () => res())
    ws.addEventListener('error', (e) => rej(new Error(`inspector ${workerName}: ${String((e as { message?: string }).message ?? e.type)}`)))
  })
  let next = 1
  const pending = new Map<number, { res(v: unknown): void; rej(e: Error): void }>()
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } }
    if (m.id === undefined) return
    const p = pending.get(m.id)
    pending.delete(m.id)
    if (m.error) p?.rej(new Error(m.error.message))
    else p?.res(m.result)
  })
  return {
    send: (method, params = {}) =>
      new Promise((res, rej) => {
        const id = next++
        pending.set(id, { res, rej })
        ws.send(JSON.stringify({ id, method, params }))
      }),
    close: () => ws.close(),
  }
}

/** Frames that are not the process's work: waiting, or the VM's own bookkeeping outside JavaScript. */
const IDLE = new Set(['(idle)', '(program)'])

/**
 * Self time per function of `p` (name and `file:line`), largest first: `us` the sampled time,
 * `share` its part of every sample outside (idle) and (program) (0-1); `busyUs` that total.
 */
export function selfTimes(p: Profile): { busyUs: number; frames: { frame: string; us: number; share: number }[] } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const perNode = new Map<number, number>()
  for (let i = 0; i < p.samples.length; i++) perNode.set(p.samples[i]!, (perNode.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i + 1] ?? 0))
  const perFrame = new Map<string, number>()
  let busyUs = 0
  for (const [id, us] of perNode) {
    const n = byId.get(id)!
    const name = n.callFrame.functionName || '(anonymous)'
    if (IDLE.has(name)) continue
    busyUs += us
    const file = n.callFrame.url ? `${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}` : ''
    const key = file ? `${name} ${file}` : name
    perFrame.set(key, (perFrame.get(key) ?? 0) + us)
  }
  const frames = [...perFrame].map(([frame, us]) => ({ frame, us, share: busyUs > 0 ? us / busyUs : 0 })).sort((a, b) => b.us - a.us)
  return { busyUs, frames }
}

/** One profile and the 2xx calls answered while it was taken. */
export interface ProfiledRun {
  profile: Profile
  calls: number
}

/**
 * Where `edge` spends more CPU per call than `floor`: the self time of each function per call in
 * each profile, matched by name, largest excess first (µs of samples per call). The benchmark's own
 * bundles (dist/bench/*.js: the edge and the floors) are matched by function name alone, since each
 * has its own file; Node's internals, the garbage collector and the system calls keep their
 * `file:line` and so match the same work in both. A function of one side only (the edge's
 * `parseBody`, the floor's request handler) counts whole on its side: read the list with the
 * floor's own frames (`floorOwn`), which do the floor's share of the same work.
 */
export function excessOver(
  edge: ProfiledRun,
  floor: ProfiledRun
): { edgeUs: number; floorUs: number; frames: { frame: string; us: number }[]; floorOwn: { frame: string; us: number }[] } {
  const perCall = (r: ProfiledRun) => {
    const byId = new Map(r.profile.nodes.map((n) => [n.id, n]))
    const out = new Map<string, number>()
    let busy = 0
    const calls = Math.max(1, r.calls)
    for (let i = 0; i < r.profile.samples.length; i++) {
      const n = byId.get(r.profile.samples[i]!)!
      const name = n.callFrame.functionName || '(anonymous)'
      if (IDLE.has(name)) continue
      const us = (r.profile.timeDeltas[i + 1] ?? 0) / calls
      const url = n.callFrame.url
      const own = url.includes('/dist/bench/')
      const key = url && !own ? `${name} ${url.split('/').pop()}:${n.callFrame.lineNumber + 1}` : own ? `${name} (own)` : name
      out.set(key, (out.get(key) ?? 0) + us)
      busy += us
    }
    return { busy, out }
  }
  const e = perCall(edge)
  const f = perCall(floor)
  const frames = [...e.out].map(([frame, us]) => ({ frame, us: us - (f.out.get(frame) ?? 0) })).sort((a, b) => b.us - a.us)
  const floorOwn = [...f.out]
    .filter(([frame]) => frame.endsWith(' (own)') && !e.out.has(frame))
    .map(([frame, us]) => ({ frame, us }))
    .sort((a, b) => b.us - a.us)
  return { edgeUs: e.busy, floorUs: f.busy, frames, floorOwn }
}
