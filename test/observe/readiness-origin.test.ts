/**
 * Readiness needs the origin's MCP endpoint to answer `initialize` (src/observe/readiness.ts),
 * on both runtimes: an `ORIGIN_URL` with a typo in its path (the origin answers 404 to every
 * call, so every call got -31001 while /readyz said ready) is not ready, the check says what it
 * answered, one log line names the variable and the URL (credentials hidden), and
 * `mcp-edge serve` warns at start. The probe is cheap: a storm of /readyz reaches the origin
 * about once per READY_CACHE_MS, and the session the probe opened is ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { judgeInitializeAnswer, READY_CACHE_MS } from '../../src/observe/readiness'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { startServe } from '../helpers/cli-process'
import { eventually } from '../helpers/mcp-script'
import { freePort, ORIGIN_CREDENTIAL } from '../helpers/auth-edge'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'
import { initializeReply } from '../helpers/initialize-reply'

const readyz = async (edge: EdgeUnderTest) => {
  const res = await fetch(new URL('/readyz', edge.url))
  return { status: res.status, body: (await res.json()) as { ready: boolean; checks: Record<string, string> } }
}

describe('what counts as an MCP endpoint answering initialize', () => {
  it.each([
    [200, 'application/json', '{"jsonrpc":"2.0","id":"x","result":{"protocolVersion":"2025-06-18"}}', 'ok'],
    [400, 'application/json', '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}', 'ok'],
    [200, 'text/event-stream', null, 'ok'],
    [401, 'text/plain', null, 'ok'],
    [403, 'text/plain', null, 'ok'],
    [404, 'text/html', null, 'answered HTTP 404 (text/html) to initialize, not a JSON-RPC response: is the path of the URL right?'],
    [404, '', null, 'answered HTTP 404 to initialize, not a JSON-RPC response: is the path of the URL right?'],
    [200, 'application/json', '{"error":"not found"}', 'answered HTTP 200 (application/json) to initialize, not a JSON-RPC response: is the path of the URL right?'],
    [503, 'text/html', null, 'answered HTTP 503'],
  ] as const)('HTTP %i %s %s: %s', (status, ct, text, verdict) => {
    expect(judgeInitializeAnswer(status, ct, text)).toBe(verdict)
  })
})

describe.each(RUNTIMES)('readiness with ORIGIN_AUTHORIZATION on $name', ({ start }) => {
  let iss: TokenIssuer
  let origin: ScriptedOrigin
  /** The credential the origin accepts (it answers 401 to any other). */
  let accepted = ORIGIN_CREDENTIAL
  let edge: EdgeUnderTest
  beforeAll(async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    origin.handle((r, res) => {
      if (r.headers.authorization !== accepted) return void res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized')
      const m = r.json as { id?: string; method?: string } | undefined
      if (r.method === 'DELETE') return void res.writeHead(200).end()
      if (m?.method === 'initialize') return sendJson(res, initializeReply(m, { capabilities: {}, serverInfo: { name: 'c', version: '1' } }))
      res.writeHead(202).end()
    })
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    edge = await start({ ORIGIN_URL: origin.url, AUTH_ISSUER: iss.issuer, AUTH_AUDIENCE: url, AUTH_JWKS_URL: iss.jwksUrl, ORIGIN_AUTHORIZATION: ORIGIN_CREDENTIAL }, { port })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await iss?.stop()
  })

  it("the probe sends the edge's credential: accepted, ready; refused (401), not ready, naming ORIGIN_AUTHORIZATION and never the credential", async () => {
    const ok = await readyz(edge)
    expect(ok.body.checks['origin:default']).toBe('ok')
    expect(ok.status).toBe(200)
    const inits = origin.received.filter((r) => (r.json as { method?: string } | undefined)?.method === 'initialize')
    expect(inits.length).toBeGreaterThanOrEqual(1)
    expect(inits.every((r) => r.headers.authorization === ORIGIN_CREDENTIAL)).toBe(true)
    // The origin rotates its credential: every request of the edge would now get 401.
    accepted = 'Bearer rotated-elsewhere'
    const refused = await eventually(async () => {
      const r = await readyz(edge)
      return r.status === 503 ? r : undefined
    })
    expect(refused.body.ready).toBe(false)
    expect(refused.body.checks['origin:default']).toBe("answered HTTP 401 to initialize with ORIGIN_AUTHORIZATION: the origin refuses the edge's credential")
    expect(JSON.stringify(refused.body)).not.toContain(ORIGIN_CREDENTIAL.slice(7))
    expect(JSON.stringify(await edge.logs())).not.toContain(ORIGIN_CREDENTIAL.slice(7))
    accepted = ORIGIN_CREDENTIAL
  })
})

describe.each(RUNTIMES)('readiness against the origin endpoint on $name', ({ start }) => {
  let demo: RunningOrigin
  let counted: ScriptedOrigin
  let typo: EdgeUnderTest
  let right: EdgeUnderTest
  let probed: EdgeUnderTest
  let typoUrl: string
  beforeAll(async () => {
    demo = await startDemoOrigin({ jsonResponse: true })
    counted = await startScriptedOrigin()
    counted.handle((r, res) => {
      const m = r.json as { id?: string; method?: string } | undefined
      if (r.method === 'DELETE') return void res.writeHead(200).end()
      if (m?.method === 'initialize')
        return sendJson(res, initializeReply(m, { capabilities: {}, serverInfo: { name: 'c', version: '1' } }), 200, {
          'mcp-session-id': 'probe-session',
        })
      res.writeHead(202).end()
    })
    // The demo origin serves /mcp only: /mpc answers 404 to every request. Credentials in the URL must not be shown.
    typoUrl = demo.url.replace('//', '//alice:pw-in-url-91@').replace(/\/mcp$/, '/mpc')
    ;[typo, right, probed] = await Promise.all([start({ ORIGIN_URL: typoUrl }), start({ ORIGIN_URL: demo.url }), start({ ORIGIN_URL: counted.url })])
  })
  afterAll(async () => {
    await Promise.all([typo?.close(), right?.close(), probed?.close()])
    await Promise.all([demo?.close(), counted?.close()])
  })

  it('an ORIGIN_URL whose path the origin answers 404 is not ready; the check says what it answered, the log names ORIGIN_URL without its password', async () => {
    const r = await readyz(typo)
    expect(r.status).toBe(503)
    expect(r.body.checks['origin:default']).toBe('answered HTTP 404 to initialize, not a JSON-RPC response: is the path of the URL right?')
    expect(JSON.stringify(r.body)).not.toContain('pw-in-url-91')
    const line = await eventually(async () => (await typo.logs()).find((l) => l.msg === 'edge.origin_unready'))
    expect(line).toMatchObject({ level: 'warn', variable: 'ORIGIN_URL', url: expect.stringContaining('alice:***@127.0.0.1') as unknown })
    expect(String(line.url)).toMatch(/\/mpc$/)
    expect(String(line.answered)).toContain('HTTP 404')
    expect(JSON.stringify(await typo.logs())).not.toContain('pw-in-url-91')
  })

  it('the right path is ready', async () => {
    const r = await readyz(right)
    expect(r.body).toEqual({ ready: true, checks: { 'origin:default': 'ok', store: 'ok' } })
    expect(r.status).toBe(200)
  })

  it("a probe storm initializes at the origin about once per READY_CACHE_MS, and each probe's session is ended", async () => {
    counted.reset()
    const started = Date.now()
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(new URL('/readyz', probed.url)).then((r) => r.status)))
      expect(answers.every((s) => s === 200)).toBe(true)
    }
    const elapsed = Date.now() - started
    await eventually(
      () => counted.received.filter((r) => r.method === 'DELETE').length >= counted.received.filter((r) => (r.json as { method?: string })?.method === 'initialize').length
    )
    const inits = counted.received.filter((r) => (r.json as { method?: string } | undefined)?.method === 'initialize')
    // 200 probes: one initialize per READY_CACHE_MS of the storm (plus the one in flight at its start).
    expect(inits.length).toBeGreaterThanOrEqual(1)
    expect(inits.length).toBeLessThanOrEqual(Math.ceil(elapsed / READY_CACHE_MS) + 1)
    const deletes = counted.received.filter((r) => r.method === 'DELETE')
    expect(deletes.length).toBe(inits.length)
    expect(deletes.every((d) => d.headers['mcp-session-id'] === 'probe-session')).toBe(true)
  })
})

describe('mcp-edge serve with a typo in the path of ORIGIN_URL', () => {
  let demo: RunningOrigin
  beforeAll(async () => {
    demo = await startDemoOrigin({ jsonResponse: true })
  })
  afterAll(async () => {
    await demo?.close()
  })

  it('warns at start, naming ORIGIN_URL (password hidden) and what it answered', async () => {
    const url = demo.url.replace('//', '//bob:pw-in-url-92@').replace(/\/mcp$/, '/mpc')
    const edge = await startServe(['--port', '0'], { ORIGIN_URL: url, STORE_FILE: 'memory' })
    try {
      const warning = await eventually(
        () =>
          edge
            .stderr()
            .split('\n')
            .find((l) => l.startsWith('mcp-edge serve: warning:')),
        10_000
      )
      expect(warning).toContain('ORIGIN_URL=http://bob:***@127.0.0.1:')
      expect(warning).toContain('/mpc: answered HTTP 404 to initialize, not a JSON-RPC response')
      expect(edge.stderr() + edge.stdout()).not.toContain('pw-in-url-92')
    } finally {
      edge.kill()
      await edge.exited
    }
  })
})
