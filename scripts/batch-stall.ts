/**
 * `node --import tsx scripts/batch-stall.ts [--tools N] [--pinning off|audit|enforce] [--batches B]
 * [--batch K] [--vary] [--no-build] [--cpu-prof DIR]`: how long one POST that makes the edge grade a large
 * origin answer holds another client (docs/reliability.md "One POST does not hold the others").
 *
 * Builds and starts the real `mcp-edge serve` (`--from-source`, a child process on 127.0.0.1,
 * file store in a fresh temporary folder) in front of an origin on 127.0.0.1 whose `tools/list`
 * holds N tools (default 700, about 195 bytes each: 300 tools are a 58 KB list). A second client,
 * in a worker thread of its own (so the timing is not disturbed by this thread reading the big
 * answers), sends `GET /healthz` one after the other on a kept-alive connection and records each
 * answer's latency. First the baseline: 1.5 s of probes with nothing else. Then B (default 5)
 * POSTs, one after the other, each a 2025-03-26 batch of K (default 100, `MAX_BATCH`) `tools/list`
 * requests, while the probes go on. Prints the body size of one batch and of its answer, each
 * batch's time, and the probes' median, p99 and maximum, baseline and during the batches, with the
 * difference of the maxima (the bound: under 100 ms). Prints the machine's load (`os.loadavg`)
 * before and after. Bounded: a fixed number of batches, every child stopped before exit, loopback
 * only. `--vary` makes every list answer differ in a few bytes: the origin writes the request id
 * and a running count into tool 0's description (an origin defeating a memo of whole lists). `--cpu-prof DIR` starts the edge with `--cpu-prof --cpu-prof-dir DIR` (a profile is
 * written when the edge stops).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { Pool } from 'undici'

/**
 * The prober, run as a worker thread of plain JavaScript (a loop of its own, no loader): GET
 * /healthz over one kept-alive connection, one after the other 5 ms apart, until told to stop;
 * the latencies so far are posted back on each `mark`.
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads')
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
let stop = false
let lat = []
// A reset connection (the edge closed an idle keep-alive one as it was reused) counts, with its time, and the next probe reconnects.
let errors = 0
parentPort.on('message', (m) => {
  if (m === 'mark') { parentPort.postMessage({ lat, errors }); lat = []; errors = 0 }
  else if (m === 'stop') stop = true
})
const once = () => new Promise((ok, fail) => {
  const t = performance.now()
  http.get(workerData + '/healthz', { agent }, (res) => {
    res.resume()
    res.on('end', () => ok(performance.now() - t))
  }).on('error', () => { errors++; ok(performance.now() - t) })
})
;(async () => {
  while (!stop) {
    lat.push(await once())
    await new Promise((ok) => setTimeout(ok, 5))
  }
  agent.destroy()
})()
`

await main()

async function main(): Promise<void> {
  const USAGE = `usage: node --import tsx scripts/batch-stall.ts [--tools N] [--pinning off|audit|enforce] [--batches B] [--batch K] [--vary] [--no-build] [--cpu-prof DIR]
  --tools N       tools in the origin's tools/list (default 700; 300 tools are a 58 KB list)
  --pinning MODE  TOOL_PINNING of the edge: off, audit or enforce (default off)
  --batches B     batches sent one after the other (default 5)
  --batch K       tools/list requests per batch (default 100, MAX_BATCH)
  --vary          the origin writes the request id (and a running count) into tool 0's description, so no two lists are equal
  --no-build      reuse the edge build of an earlier run
  --cpu-prof DIR  write a CPU profile of the edge into DIR
Exit status: 0 when every probe stayed within 100 ms of the baseline maximum, 1 when one did not, 2 for a usage error.`
  let values: { tools: string; pinning: string; batches: string; batch: string; vary: boolean; 'no-build': boolean; 'cpu-prof'?: string; help: boolean }
  try {
    values = parseArgs({
      options: {
        tools: { type: 'string', default: '700' },
        pinning: { type: 'string', default: 'off' },
        batches: { type: 'string', default: '5' },
        batch: { type: 'string', default: '100' },
        vary: { type: 'boolean', default: false },
        'no-build': { type: 'boolean', default: false },
        'cpu-prof': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values as typeof values
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`)
    process.exit(2)
  }
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const N = Number(values.tools)
  const B = Number(values.batches)
  const K = Number(values.batch)
  const pinning = values.pinning
  if (![N, B, K].every((n) => Number.isInteger(n) && n >= 1) || !['off', 'audit', 'enforce'].includes(pinning)) {
    console.error(USAGE)
    process.exit(2)
  }
  const ROOT = resolve(import.meta.dirname, '..')
  // About 195 bytes per tool: a 300-tool list is 58 KB, as in the report this script measures.
  const tools = Array.from({ length: N }, (_, i) => ({
    name: `tool_${String(i).padStart(4, '0')}`,
    description: `Tool ${i}: answers with a short text.`,
    inputSchema: { type: 'object', properties: { city: { type: 'string', maxLength: 64 }, units: { enum: ['c', 'f'] } }, required: ['city'] },
  }))
  const resultText = JSON.stringify({ tools })
  // With --vary: tool 0's description ends with the request id and a count of lists answered, so
  // each list differs from every other in a few bytes (also across batches, whose ids repeat).
  let answered = 0
  const listText = (id: unknown): string => {
    if (!values.vary) return resultText
    answered++
    const t0 = { ...tools[0]!, description: `${tools[0]!.description} (request ${JSON.stringify(id)}, answer ${answered})` }
    return JSON.stringify({ tools: [t0, ...tools.slice(1)] })
  }
  const origin = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('end', () => {
      let m: unknown
      try {
        m = JSON.parse(Buffer.concat(chunks).toString())
      } catch {
        res.writeHead(400).end()
        return
      }
      const one = (x: { id?: unknown; method?: string }): string | null => {
        if (x.id === undefined) return null
        const result =
          x.method === 'initialize'
            ? JSON.stringify({ protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'stall-origin', version: '1' } })
            : x.method === 'tools/list'
              ? listText(x.id)
              : JSON.stringify({ content: [{ type: 'text', text: 'ok' }] })
        return `{"jsonrpc":"2.0","id":${JSON.stringify(x.id)},"result":${result}}`
      }
      const texts = (Array.isArray(m) ? m : [m]).map((x) => one(x as { id?: unknown; method?: string })).filter((t): t is string => t !== null)
      if (texts.length === 0) res.writeHead(202).end()
      else res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(m) ? `[${texts.join(',')}]` : texts[0])
    })
  })
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r))
  const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/mcp`

  const outdir = join(ROOT, 'dist', 'batch-stall')
  if (!values['no-build']) {
    const built = spawnSync(process.execPath, ['scripts/build-node.mjs', '--from-source', '--outdir', outdir], { cwd: ROOT, stdio: 'inherit' })
    if (built.status !== 0) process.exit(1)
  }
  const dir = mkdtempSync(join(tmpdir(), 'mcp-edge-batch-stall-'))
  const prof = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof'])] : []
  const child = spawn(process.execPath, [...prof, join(outdir, 'cli.js'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ORIGIN_URL: originUrl, STORE_FILE: join(dir, 'kv.json'), PORT: '0', HOST: '127.0.0.1', TOOL_PINNING: pinning, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const base = await new Promise<string>((ok, fail) => {
    let err = ''
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString()
      const m = /mcp-edge-validator: (http:\/\/[^/]+)\/mcp/.exec(err)
      if (m) ok(m[1]!)
    })
    child.on('exit', (code) => fail(new Error(`edge exited (${code}): ${err.slice(0, 500)}`)))
  })

  const worker = new Worker(PROBER, { eval: true, workerData: base })
  let resets = 0
  const collect = () =>
    new Promise<number[]>((ok) => {
      worker.once('message', (m: { lat: number[]; errors: number }) => {
        resets += m.errors
        ok(m.lat)
      })
      worker.postMessage('mark')
    })
  const pool = new Pool(base, { connections: 1 })
  const body = JSON.stringify(Array.from({ length: K }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })))
  const post = async (): Promise<{ ms: number; bytes: number }> => {
    const t = performance.now()
    const r = await pool.request({ method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body })
    const bytes = (await r.body.arrayBuffer()).byteLength
    if (r.statusCode !== 200) throw new Error(`batch answered ${r.statusCode}`)
    return { ms: performance.now() - t, bytes }
  }
  const load0 = loadavg()
  try {
    // One batch first, so the edge has learned the list and (audit) its digests and pins.
    await post()
    await new Promise((r) => setTimeout(r, 1000))
    await collect()
    await new Promise((r) => setTimeout(r, 1500))
    const baseline = await collect()
    const runs: { ms: number; bytes: number }[] = []
    for (let i = 0; i < B; i++) runs.push(await post())
    // Work the edge deferred past the answers (learning, audit decisions) still counts.
    await new Promise((r) => setTimeout(r, 300))
    const during = await collect()
    const q = (xs: number[], p: number) => {
      const s = [...xs].sort((a, b) => a - b)
      return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!
    }
    const f = (x: number) => x.toFixed(1).padStart(7)
    const load1 = loadavg()
    console.log(
      `tools ${N} (list ${(resultText.length / 1024).toFixed(0)} KB), pinning ${pinning}${values.vary ? ' (lists vary)' : ''}, batch of ${K} tools/list: body ${(body.length / 1024).toFixed(1)} KB, answer ${(runs[0]!.bytes / 1024 / 1024).toFixed(1)} MB`
    )
    console.log(`batch POST ms: ${runs.map((r) => r.ms.toFixed(0)).join(' ')}`)
    console.log(`/healthz ms      n   median     p99     max`)
    console.log(`baseline   ${String(baseline.length).padStart(6)} ${f(q(baseline, 0.5))} ${f(q(baseline, 0.99))} ${f(Math.max(...baseline))}`)
    console.log(`during     ${String(during.length).padStart(6)} ${f(q(during, 0.5))} ${f(q(during, 0.99))} ${f(Math.max(...during))}`)
    if (resets > 0) console.log(`${resets} probe(s) saw the connection reset (counted with their time)`)
    const above = Math.max(...during) - Math.max(...baseline)
    console.log(`max above baseline max: ${above.toFixed(1)} ms (bound: 100 ms): ${above < 100 ? 'met' : 'missed'}`)
    if (above >= 100) process.exitCode = 1
    console.log(`load average (1, 5, 15 min): before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`)
  } finally {
    worker.postMessage('stop')
    await new Promise((r) => setTimeout(r, 100))
    await worker.terminate()
    await pool.close()
    child.kill('SIGINT')
    await new Promise((r) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL')
        r(null)
      }, 5000)
      child.once('exit', () => {
        clearTimeout(t)
        r(null)
      })
    })
    origin.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
