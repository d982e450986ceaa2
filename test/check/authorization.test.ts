/**
 * `mcp-edge check` against an MCP server that requires OAuth authorization (MCP Authorization:
 * 401 with `WWW-Authenticate: Bearer resource_metadata=...` until a valid access token comes):
 * without a token every version's handshake row says the server needs authorization and how to
 * give a token, not a version-negotiation failure; `--token` (the `Authorization: Bearer` header on
 * every request) grades it like any server, and the token is never printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServerResponse } from 'node:http'
import { sendJson, startScriptedOrigin, type ScriptedHandler, type ScriptedOrigin } from '../helpers/scripted-origin'
import { serveMcp } from '../helpers/mcp-script'
import { checkJson, row } from '../helpers/check-cli'

const TOKEN = 'check-access-token-0123456789'
const TOOL = { name: 'lookup', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }

let guarded: ScriptedOrigin
let metadata: string
beforeAll(async () => {
  guarded = await startScriptedOrigin()
  let inner: ScriptedHandler = () => undefined
  // The MCP server's own handler, reached only with the token.
  serveMcp({ handle: (h: ScriptedHandler) => (inner = h) } as unknown as ScriptedOrigin, {
    pages: [[TOOL]],
    call: (_name, _args, id, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'hit' }] } }))
      return undefined
    },
  })
  metadata = `${new URL(guarded.url).origin}/.well-known/oauth-protected-resource/mcp`
  guarded.handle((req, res) => {
    if (req.headers.authorization === `Bearer ${TOKEN}`) return inner(req, res)
    sendJson(res, { error: 'invalid_token', error_description: 'authorization required' }, 401, { 'www-authenticate': `Bearer resource_metadata="${metadata}"` })
  })
})
afterAll(async () => guarded?.close())

describe('mcp-edge check on an OAuth-protected server', () => {
  it('without a token: each handshake row says the server needs authorization (401) and how to pass a token; exit 3', async () => {
    const { run, report } = await checkJson(guarded.url, ['--version', '2025-06-18', '--version', '2026-07-28'])
    expect(run.code).toBe(3)
    for (const version of ['2025-06-18', '2026-07-28']) {
      const r = row(report, `${version} * handshake`)
      expect(r.grade).toBe('info')
      expect(r.answered).toBe(`HTTP 401: needs authorization (WWW-Authenticate: Bearer resource_metadata="${metadata}")`)
      expect(r.why).toBe("the server requires an OAuth access token: give one with --token <access token> (or --header 'Authorization: Bearer <access token>')")
      expect(r.rule).toMatch(/Authorization/)
      expect(report.versions.find((v) => v.version === version)?.skipped).toBe('needs authorization (HTTP 401)')
    }
    expect(run.stdout + run.stderr, run.stdout).not.toMatch(/negotiation fail/i)
  })

  it('with --token: connected and graded; the token reaches every request and is printed nowhere', async () => {
    guarded.reset()
    const { run, report } = await checkJson(guarded.url, ['--token', TOKEN, '--version', '2025-06-18'])
    // Graded like any server (this one answers every call with a success, so rows mislead: exit 1, not 3).
    expect(run.code, run.stderr).toBe(1)
    expect(row(report, '2025-06-18 * handshake').grade).toBe('pass')
    expect(row(report, '2025-06-18 lookup missing-required').grade).toBe('misleads')
    expect(report.rows.length).toBeGreaterThan(8)
    const seen = guarded.forwarded()
    expect(seen.length).toBeGreaterThan(5)
    for (const r of seen) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(run.stdout + run.stderr).not.toContain(TOKEN)
  })

  it('with a token the server refuses: the row says the token given was refused, not to give one; exit 3', async () => {
    const { run, report } = await checkJson(guarded.url, ['--token', 'not-the-token-0123456789', '--version', '2025-06-18'])
    expect(run.code).toBe(3)
    const r = row(report, '2025-06-18 * handshake')
    expect(r.grade).toBe('info')
    expect(r.answered).toBe(`HTTP 401: needs authorization (WWW-Authenticate: Bearer resource_metadata="${metadata}")`)
    expect(r.why).toBe('the server refused the access token given (expired, revoked, for another resource or lacking a scope): give a valid one with --token <access token>')
    expect(run.stdout + run.stderr).not.toContain('not-the-token-0123456789')
  })

  it('--token and an Authorization --header together are refused (exit 2)', async () => {
    const { runMcpEdge } = await import('../helpers/check-cli')
    const run = await runMcpEdge(['check', guarded.url, '--token', TOKEN, '--header', `Authorization: Bearer ${TOKEN}`])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/give --token or an Authorization --header, not both/)
    expect(run.stderr).not.toContain(TOKEN)
  })
})
