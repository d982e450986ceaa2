/**
 * `npm run load -- [--clients N] [--seconds S] [--fail-rate F] [--seed X]`: N clients (default 200)
 * for S seconds (default 60) against the Node edge (`mcp-edge serve`, a child process on
 * 127.0.0.1) in front of an origin that fails a fraction F of the calls (default 0.05) at random:
 * connection resets, HTTP 500, hangs (the edge answers -31002 at ORIGIN_TIMEOUT_MS=1000) and
 * garbage under 200. Traffic: valid tools/call (answered by the origin as JSON or SSE), calls with
 * invalid arguments (answered -32602 by the edge), malformed bodies, and 2025-03-26 batches mixing
 * both (docs/reliability.md).
 *
 * Every id is checked: lost (sent, never answered), duplicated (answered twice), wrong (an answer
 * under an id never sent, a result the origin made for another id, or an answer of the wrong
 * kind: a valid call must get the origin's result or a D9 gateway error -31001/-31002/-31003, an
 * invalid one -32602). Prints the edge's RSS after warm-up and at the end, and a summary; exits 1
 * on any lost, duplicated or wrong id, 2 on bad arguments. The edge and the origin are stopped
 * before exit.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'

function usage(msg: string): never {
  console.error(`${msg}\nusage: npm run load -- [--clients N] [--seconds S] [--fail-rate F] [--seed X]`)
  process.exit(2)
}

let args: Record<string, string | undefined>
try {
  args = parseArgs({
    options: {
      clients: { type: 'string', default: '200' },
      seconds: { type: 'string', default: '60' },
      'fail-rate': { type: 'string', default: '0.05' },
      seed: { type: 'string', default: '1' },
    },
  }).values as Record<string, string | undefined>
} catch (e) {
  usage(e instanceof Error ? e.message : String(e))
}
const CLIENTS = Number(args.clients)
const SECONDS = Number(args.seconds)
const FAIL_RATE = Number(args['fail-rate'])
const SEED = Number(args.seed)
if (!Number.isInteger(CLIENTS) || CLIENTS < 1) usage(`--clients must be a positive integer, got ${JSON.stringify(args.clients)}`)
if (!(SECONDS > 0)) usage(`--seconds must be a positive number, got ${JSON.stringify(args.seconds)}`)
if (!(FAIL_RATE >= 0 && FAIL_RATE <= 1)) usage(`--fail-rate must be between 0 and 1, got ${JSON.stringify(args['fail-rate'])}`)
if (!Number.isInteger(SEED)) usage(`--seed must be an integer, got ${JSON.stringify(args.seed)}`)

/** mulberry32: a seeded PRNG in four lines, so a run's traffic and faults can be replayed (Math.random cannot be seeded). */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const rand = prng(SEED)

// ---------------------------------------------------------------- the origin

const TOOLS = [{ name: 'calc', inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'], additionalProperties: false } }]
const originFaults = { reset: 0, status500: 0, hang: 0, garbage: 0, json: 0, sse: 0 }
const hanging = new Set<ServerResponse>()

function answerFor(m: { id: unknown; method: string; params?: { arguments?: { a?: number; b?: number } } }): unknown {
  if (m.method === 'initialize')
    return { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'load-origin', version: '1.0.0' } } }
  if (m.method === 'tools/list') return { jsonrpc: '2.0', id: m.id, result: { tools: TOOLS } }
  // The result names its id, so a result relayed under another id is seen as wrong.
  return { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `for:${JSON.stringify(m.id)}` }] } }
}

const origin = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = []
  req.on('data', (d: Buffer) => chunks.push(d))
  req.on('error', () => undefined)
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(405).end()
    let json: unknown
    try {
      json = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      return void res.writeHead(400).end()
    }
    const list = (Array.isArray(json) ? json : [json]) as { id?: unknown; method: string }[]
    const requests = list.filter((m) => m && 'id' in m) as { id: unknown; method: string }[]
    if (requests.length === 0) return void res.writeHead(202).end()
    const isCall = requests.some((m) => m.method === 'tools/call')
    if (isCall && rand() < FAIL_RATE) {
      const f = rand()
      if (f < 0.25) {
        originFaults.reset++
        return void req.socket.destroy()
      }
      if (f < 0.5) {
        originFaults.status500++
        return void res.writeHead(500).end()
      }
      if (f < 0.75) {
        originFaults.hang++
        hanging.add(res)
        res.once('close', () => hanging.delete(res))
        return
      }
      originFaults.garbage++
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":')
    }
    const answers = requests.map(answerFor)
    if (isCall && rand() < 0.2) {
      originFaults.sse++
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      return void res.end(answers.map((a) => `event: message\ndata: ${JSON.stringify(a)}\n\n`).join(''))
    }
    originFaults.json++
    res.writeHead(200, { 'content-type': 'application/json', ...(requests[0]!.method === 'initialize' ? { 'mcp-session-id': 'load' } : {}) })
    res.end(JSON.stringify(Array.isArray(json) ? answers : answers[0]))
  })
})
origin.keepAliveTimeout = 10_000
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp`

// ---------------------------------------------------------------- the edge

const child = spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/cli/main.ts', 'serve'], {
  env: { ...process.env, ORIGIN_URL: originUrl, PORT: '0', HOST: '127.0.0.1', STORE_FILE: 'memory', ORIGIN_TIMEOUT_MS: '1000' },
  stdio: ['ignore', 'ignore', 'pipe'],
})
const edgeUrl = await new Promise<string>((resolve, reject) => {
  let err = ''
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString()
    const m = /mcp-edge-validator: (http:\/\/\S+\/mcp)/.exec(err)
    if (m) resolve(m[1]!)
  })
  child.once('exit', (code) => reject(new Error(`the edge exited (${code}): ${err.slice(0, 400)}`)))
})

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

// ---------------------------------------------------------------- the clients

const pool = new Pool(new URL(edgeUrl).origin, { connections: CLIENTS, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 })
const path = new URL(edgeUrl).pathname
const counts = { requests: 0, failedRequests: 0, ids: 0, answered: 0, lost: 0, duplicated: 0, wrong: 0, byAnswer: {} as Record<string, number> }
const wrongSamples: string[] = []

/** What an id must get: the origin's result or a D9 error (`valid`), -32602 from the edge (`invalid`), -32600 (`malformed`). */
type Want = 'valid' | 'invalid' | 'malformed'
const WANT_CODE = { invalid: -32602, malformed: -32600 } as const

function note(kind: string): void {
  counts.byAnswer[kind] = (counts.byAnswer[kind] ?? 0) + 1
}

function wrong(why: string): void {
  counts.wrong++
  if (wrongSamples.length < 10) wrongSamples.push(why)
}

function messagesOf(text: string, ct: string): unknown[] {
  if (ct.includes('text/event-stream')) {
    return text
      .split(/\r?\n\r?\n/)
      .map((b) =>
        b
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n')
      )
      .filter((d) => d !== '')
      .map((d) => JSON.parse(d) as unknown)
  }
  if (text === '') return []
  const j = JSON.parse(text) as unknown
  return Array.isArray(j) ? j : [j]
}

async function send(body: string, version: string, wants: Map<string, Want>): Promise<void> {
  counts.requests++
  counts.ids += wants.size
  let msgs: unknown[]
  try {
    const r = await pool.request({
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version },
      body,
    })
    const text = await r.body.text()
    msgs = messagesOf(text, String(r.headers['content-type'] ?? ''))
  } catch {
    counts.failedRequests++
    counts.lost += wants.size
    return
  }
  const seen = new Set<string>()
  for (const m of msgs as { id?: unknown; result?: { content?: { text?: string }[] }; error?: { code?: number } }[]) {
    if (!m || typeof m !== 'object' || !('id' in m)) continue
    if (m.id === null) {
      note(`null id ${m.error?.code ?? 'result'}`)
      continue
    }
    const key = JSON.stringify(m.id)
    const want = wants.get(key)
    if (!want) {
      wrong(`an answer under an id never sent: ${key}`)
      continue
    }
    if (seen.has(key)) {
      counts.duplicated++
      continue
    }
    seen.add(key)
    counts.answered++
    if (m.error) {
      const code = m.error.code ?? 0
      note(String(code))
      if (want === 'valid' ? !(code <= -31001 && code >= -31003) : code !== WANT_CODE[want]) wrong(`id ${key} (${want}) got error ${code}`)
    } else {
      note('result')
      const text = m.result?.content?.[0]?.text
      if (want !== 'valid') wrong(`id ${key} (${want}) got a result`)
      else if (text !== `for:${key}`) wrong(`id ${key} got the result made for ${text}`)
    }
  }
  for (const k of wants.keys()) if (!seen.has(k)) counts.lost++
}

const call = (id: string, valid: boolean) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'calc', arguments: valid ? { a: 1, b: 2 } : { a: 'one', b: 2 } } })

async function client(n: number, until: number): Promise<void> {
  let seq = 0
  while (Date.now() < until) {
    const r = rand()
    const id = () => `c${n}-${seq++}`
    if (r < 0.55) {
      const i = id()
      await send(JSON.stringify(call(i, true)), '2025-06-18', new Map([[JSON.stringify(i), 'valid']]))
    } else if (r < 0.7) {
      const i = id()
      await send(JSON.stringify(call(i, false)), '2025-06-18', new Map([[JSON.stringify(i), 'invalid']]))
    } else if (r < 0.8) {
      // Malformed: unreadable bodies are answered -32700 / -32600 with id null (nothing to track);
      // a message with a usable id but no string method gets -32600 under that id.
      const i = id()
      const bad = ['{"jsonrpc":"2.0","id":', '[]', '\u0000\u0001', `{"jsonrpc":"2.0","method":7,"id":"${i}"}`]
      const k = Math.floor(rand() * bad.length)
      await send(bad[k]!, '2025-06-18', k === 3 ? new Map([[JSON.stringify(i), 'malformed']]) : new Map())
    } else {
      const wants = new Map<string, Want>()
      const items = Array.from({ length: 2 + Math.floor(rand() * 4) }, () => {
        const i = id()
        const valid = rand() < 0.7
        wants.set(JSON.stringify(i), valid ? 'valid' : 'invalid')
        return call(i, valid)
      })
      await send(JSON.stringify(items), '2025-03-26', wants)
    }
  }
}

// Warm-up: the edge learns the tool list and compiles the validator before RSS is read.
await client(-1, Date.now() + 1_000)
const rssBefore = rssMiB(child.pid!)
console.log(`load: ${CLIENTS} clients for ${SECONDS} s against ${edgeUrl}, origin failing ${FAIL_RATE * 100}% of calls; edge RSS after warm-up ${rssBefore.toFixed(1)} MiB`)
const t0 = Date.now()
const stop = t0 + SECONDS * 1000
const ticker = setInterval(
  () =>
    console.log(
      `  ${((Date.now() - t0) / 1000).toFixed(0)} s: ${counts.requests} requests, ${counts.ids} ids, lost ${counts.lost}, duplicated ${counts.duplicated}, wrong ${counts.wrong}, RSS ${rssMiB(child.pid!).toFixed(1)} MiB`
    ),
  10_000
)
await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n, stop)))
clearInterval(ticker)
const secs = (Date.now() - t0) / 1000
const rssAfter = rssMiB(child.pid!)

console.log(
  `summary: ${counts.requests} requests (${Math.round(counts.requests / secs)}/s) in ${secs.toFixed(1)} s, ${counts.failedRequests} failed; ${counts.ids} ids: answered ${counts.answered}, lost ${counts.lost}, duplicated ${counts.duplicated}, wrong ${counts.wrong}`
)
console.log(
  `  answers: ${Object.entries(counts.byAnswer)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`
)
console.log(
  `  origin: ${Object.entries(originFaults)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`
)
console.log(`  edge RSS: ${rssBefore.toFixed(1)} MiB after warm-up, ${rssAfter.toFixed(1)} MiB at the end`)
for (const w of wrongSamples) console.log(`  WRONG ${w}`)

await pool.close()
for (const r of hanging) r.destroy()
child.kill('SIGTERM')
await new Promise((r) => child.once('exit', r))
origin.closeAllConnections()
await new Promise<void>((r) => origin.close(() => r()))
process.exit(counts.lost + counts.duplicated + counts.wrong > 0 ? 1 : 0)
