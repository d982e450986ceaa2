/**
 * `ADMIN_TOKEN` and `METRICS_TOKEN` outside the bearer-token characters (RFC 6750 b64token) are
 * configuration errors on both runtimes: no client could ever send such a token in
 * `Authorization: Bearer <token>`, so every admin request (or scrape) would fail. The Node entry
 * refuses to start, naming the variable and the characters allowed and never the value; the
 * Worker answers every request with its configuration-fault answer (500 -32603) instead of
 * serving an admin API nobody can use. (`mcp-edge serve`'s one-line refusal is in
 * test/production/serve-config.test.ts.)
 */
import { describe, expect, it } from 'vitest'
import { startEdge } from '../../src/adapters/node/index'
import { ConfigError, loadConfig } from '../../src/core/config'
import { mcpEdge } from '../../src/adapters/node/node-edge'
import { startWorkerEdge } from '../helpers/runtimes'

const SECRET = 'my secret!'

describe('bearer tokens in the configuration', () => {
  it.each(['ADMIN_TOKEN', 'METRICS_TOKEN'])('%s with a space or ! is refused by the config rule, naming the variable, never the value', (name) => {
    let err: unknown
    try {
      loadConfig({ ORIGIN_URL: 'http://127.0.0.1:9/mcp', [name]: SECRET })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    const e = err as ConfigError
    expect(e.variable).toBe(name)
    expect(e.message).toContain(`${name} (value not shown)`)
    expect(e.message).toContain('RFC 6750')
    expect(e.message).not.toContain(SECRET)
  })

  it('every b64token is accepted: letters, digits, - . _ ~ + / and trailing =', () => {
    const token = 'aZ09-._~+/abc=='
    const c = loadConfig({ ORIGIN_URL: 'http://127.0.0.1:9/mcp', ADMIN_TOKEN: token, METRICS_TOKEN: 'a'.repeat(64) })
    expect(c.adminToken).toBe(token)
    expect(c.metricsToken).toBe('a'.repeat(64))
  })

  it('mcpEdge({ adminToken }) with an unusable token throws naming the option and the variable', () => {
    expect(() => mcpEdge({ origin: 'http://127.0.0.1:9/mcp', adminToken: SECRET })).toThrow(/adminToken.*\(ADMIN_TOKEN\).*RFC 6750/)
    expect(() => mcpEdge({ origin: 'http://127.0.0.1:9/mcp', adminToken: SECRET })).not.toThrow(/my secret/)
  })

  it('node: the edge does not start', async () => {
    await expect(startEdge({ env: { ORIGIN_URL: 'http://127.0.0.1:9/mcp', STORE_FILE: 'memory', ADMIN_TOKEN: SECRET }, port: 0 })).rejects.toThrow(ConfigError)
  })

  it('worker: every request gets the configuration-fault answer, the admin API is not served, the token is not shown', async () => {
    const edge = await startWorkerEdge({ ORIGIN_URL: 'http://127.0.0.1:9/mcp', ADMIN_TOKEN: SECRET })
    try {
      const base = new URL(edge.url).origin
      const admin = await fetch(`${base}/admin/tools/default`, { headers: { authorization: 'Bearer x' } })
      const adminText = await admin.text()
      expect(admin.status).toBe(500)
      expect(adminText).not.toContain(SECRET)
      const post = await fetch(edge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
      const body = (await post.json()) as { error?: { code?: number } }
      expect(post.status).toBe(500)
      expect(body.error?.code).toBe(-32603)
      expect(JSON.stringify(body)).not.toContain(SECRET)
    } finally {
      await edge.close()
    }
  })
})
