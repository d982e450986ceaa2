/**
 * `npm run slow-clients -- [--sockets N] [--mode headers|body] [--seconds S] [--edge-fds F] [--env K=V ...]`:
 * measures what slow clients do to the Node edge (docs/reliability.md, connection bounds). Starts
 * the edge as a child process on 127.0.0.1 (its file-descriptor limit set to F, default 4096, with
 * `ulimit -n`), opens N connections that send their request a byte at a time (mode `headers`: the
 * header block never ends; mode `body`: full headers, then a 1,000-byte body a byte a second), then,
 * while they hang on, sends 20 normal requests (`GET /healthz`) and counts how many are served.
 * It then waits up to S seconds (default 120) for the edge to close the slow connections and
 * prints how long it held them (median, max) and how many it still held at the end.
 * Bounded: every socket is destroyed and the child killed before exit.
 */
import { spawn } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { parseArgs } from 'node:util'
import { request } from 'undici'

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '1000' },
    mode: { type: 'string', default: 'headers' },
    seconds: { type: 'string', default: '120' },
    'edge-fds': { type: 'string', default: '4096' },
    env: { type: 'string', multiple: true, default: [] },
  },
})
const N = Number(values.sockets)
const mode = values.mode
const maxS = Number(values.seconds)
const edgeFds = Number(values['edge-fds'])
if (!Number.isInteger(N) || N < 1 || (mode !== 'headers' && mode !== 'body') || !(maxS > 0) || !Number.isInteger(edgeFds)) {
  console.error('usage: npm run slow-clients -- [--sockets N] [--mode headers|body] [--seconds S] [--edge-fds F] [--env K=V ...]')
  process.exit(2)
}
const extra: Record<string, string> = {}
for (const kv of values.env as string[]) {
  const i = kv.indexOf('=')
  if (i < 1) {
    console.error(`--env takes K=V, got ${JSON.stringify(kv)}`)
    process.exit(2)
  }
  extra[kv.slice(0, i)] = kv.slice(i + 1)
}

/** Starts the edge in a child with its own fd limit; resolves its base URL. */
function startChild(): Promise<{ base: string; kill(): void }> {
  const env = { ...process.env, ORIGIN_URL: 'http://127.0.0.1:9/mcp', STORE_FILE: 'memory', PORT: '0', HOST: '127.0.0.1', ...extra }
  const child = spawn('sh', ['-c', `ulimit -n ${edgeFds} && exec node --import tsx packages/cli/src/cli/main.ts serve`], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  return new Promise((resolve, reject) => {
    let err = ''
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString()
      const m = /mcp-edge-validator: (http:\/\/[^/]+)\/mcp/.exec(err)
      if (m) resolve({ base: m[1]!, kill: () => child.kill('SIGKILL') })
    })
    child.on('exit', (code) => reject(new Error(`edge exited (${code}): ${err.slice(0, 500)}`)))
  })
}

const edge = await startChild()
const { hostname, port } = new URL(edge.base)
const sockets: { s: Socket; opened: number; closed?: number }[] = []
let refused = 0
const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n`
for (let i = 0; i < N; i++) {
  const s = connect(Number(port), hostname)
  const entry: { s: Socket; opened: number; closed?: number } = { s, opened: Date.now() }
  s.on('error', () => undefined)
  s.on('close', () => {
    entry.closed ??= Date.now()
  })
  s.on('connect', () => {
    s.write(mode === 'headers' ? head : `${head}Content-Length: 1000\r\n\r\n`)
  })
  sockets.push(entry)
  // Open at a pace the accept queue takes (about 2,000/s), so the count is what the edge holds.
  if (i % 200 === 199) await new Promise((r) => setTimeout(r, 100))
}
// One byte a second on every slow connection: a header line that never ends, or the body.
const drip = setInterval(() => {
  for (const e of sockets) if (e.closed === undefined && !e.s.destroyed) e.s.write(mode === 'headers' ? 'x' : '{')
}, 1000)
await new Promise((r) => setTimeout(r, 2000))
const held0 = sockets.filter((e) => e.closed === undefined).length
refused = N - held0

let served = 0
let failed = 0
await Promise.all(
  Array.from({ length: 20 }, async () => {
    try {
      const r = await request(`${edge.base}/healthz`, { headersTimeout: 5000, bodyTimeout: 5000 })
      await r.body.text()
      if (r.statusCode === 200) served++
      else failed++
    } catch {
      failed++
    }
  })
)
console.log(`${N} slow ${mode} connections: ${held0} held after 2 s (${refused} closed at once); normal clients served ${served}/20 (${failed} failed)`)

const t0 = Date.now()
while (Date.now() - t0 < maxS * 1000 && sockets.some((e) => e.closed === undefined)) await new Promise((r) => setTimeout(r, 250))
clearInterval(drip)
const held = sockets
  .filter((e) => e.closed !== undefined)
  .map((e) => (e.closed! - e.opened) / 1000)
  .sort((a, b) => a - b)
const still = sockets.filter((e) => e.closed === undefined).length
const med = held.length ? held[Math.floor(held.length / 2)]! : NaN
const max = held.length ? held[held.length - 1]! : NaN
console.log(`closed by the edge: ${held.length} (held median ${med.toFixed(1)} s, max ${max.toFixed(1)} s); still open after ${maxS} s: ${still}`)
for (const e of sockets) e.s.destroy()
edge.kill()
process.exit(0)
