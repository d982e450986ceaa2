/** src/core/startup-report.ts: unknown variables in the edge's namespaces with "did you mean", and the governance line. */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/core/config'
import { governanceOf, governanceText, startupRecords, unknownVariables } from '../../src/core/startup-report'

describe('unknownVariables', () => {
  it('names each variable of the namespaces that is no setting, with the setting it looks like', () => {
    const env = {
      TOOL_PINING: 'enforce',
      TOOLS_DENIE: 'delete_*',
      AUTH_ISSUR: 'https://auth.example.com',
      RATE_LIMT: '60/min',
      ORIGIN_TIMEOUT: '5000',
      STORE_PATH: '/tmp/x',
      TOOL_ZZZZZZZZZZZZZZZZZZZZZZZZZ: 'x',
      // The tokens' and the stop's names: a typo would turn the admin API off or leave metrics open.
      ADMIN_TOKNE: 's3cret',
      METRICS_TOKN: 's3cret',
      SHUTDOWN_GRACE: '1000',
      // Settings, bindings, and names outside the namespaces are left alone.
      TOOL_PINNING: 'audit',
      TOOL_SCHEMAS: 'x',
      RATE_LIMITER_60_PER_60S: 'x',
      PATH: '/usr/bin',
      TOOLS_BINDING: { get: () => null },
    }
    expect(unknownVariables(env)).toEqual([
      { variable: 'ADMIN_TOKNE', didYouMean: 'ADMIN_TOKEN' },
      { variable: 'AUTH_ISSUR', didYouMean: 'AUTH_ISSUER' },
      { variable: 'METRICS_TOKN', didYouMean: 'METRICS_TOKEN' },
      { variable: 'ORIGIN_TIMEOUT', didYouMean: 'ORIGIN_TIMEOUT_MS' },
      { variable: 'RATE_LIMT', didYouMean: 'RATE_LIMIT' },
      { variable: 'SHUTDOWN_GRACE', didYouMean: 'SHUTDOWN_GRACE_MS' },
      { variable: 'STORE_PATH' },
      { variable: 'TOOLS_DENIE', didYouMean: 'TOOLS_DENY' },
      { variable: 'TOOL_PINING', didYouMean: 'TOOL_PINNING' },
      { variable: 'TOOL_ZZZZZZZZZZZZZZZZZZZZZZZZZ' },
    ])
  })

  it('names a setting written in the wrong case, inside the namespaces or not (variables are case-sensitive)', () => {
    const env = {
      tool_pinning: 'enforce',
      Auth_Issuer: 'https://auth.example.com',
      admin_token: 'x',
      unknown_tool: 'reject',
      origin_urls: 'http://x',
      path: '/usr/bin',
      home: '/root',
    }
    expect(unknownVariables(env)).toEqual([
      { variable: 'Auth_Issuer', didYouMean: 'AUTH_ISSUER' },
      { variable: 'admin_token', didYouMean: 'ADMIN_TOKEN' },
      { variable: 'origin_urls', didYouMean: 'ORIGIN_URL' },
      { variable: 'tool_pinning', didYouMean: 'TOOL_PINNING' },
      { variable: 'unknown_tool', didYouMean: 'UNKNOWN_TOOL' },
    ])
  })
})

describe('the governance line', () => {
  it('states every mode of the result checks, and a RESULT_* typo is warned of', () => {
    const env = {
      ORIGIN_URL: 'http://127.0.0.1:1/mcp',
      RESULT_SECRETS: 'redact',
      RESULT_CONTROL: 'strip',
      MAX_RESULT_TEXT_BYTES: '65536',
      OVERSIZE_RESULT: 'truncate',
      RESULT_SECRET: 'block',
    }
    const config = loadConfig(env)
    const text = governanceText(governanceOf(config, 'memory'))
    expect(text).toMatch(/; RESULT_SECRETS=redact; RESULT_CONTROL=strip; MAX_RESULT_TEXT_BYTES=65536 \(OVERSIZE_RESULT=truncate\)$/)
    const off = governanceText(governanceOf(loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', RESULT_SECRETS: 'off', RESULT_CONTROL: 'off', OVERSIZE_RESULT: 'error' }), 'memory'))
    expect(off).toMatch(/; RESULT_SECRETS=off; RESULT_CONTROL=off; MAX_RESULT_TEXT_BYTES=none \(OVERSIZE_RESULT=error\)$/)
    expect(unknownVariables(env)).toEqual([{ variable: 'RESULT_SECRET', didYouMean: 'RESULT_SECRETS' }])
  })

  it('states pinning, store, auth, lists, scopes, budgets and UNKNOWN_TOOL, never a secret', () => {
    const env = {
      ORIGIN_URL: 'http://127.0.0.1:1/mcp',
      ORIGINS: JSON.stringify({ hr: { url: 'http://127.0.0.1:2/mcp', toolsAllow: 'get_*' } }),
      TOOL_PINNING: 'enforce',
      TOOLS_DENY: 'delete_*,drop',
      RATE_LIMIT: '60/min,search=10/min',
      AUTH_ISSUER: 'https://auth.example.com',
      AUTH_AUDIENCE: 'https://mcp.example.com/mcp',
      AUTH_JWKS: '{"keys":[]}',
      ORIGIN_AUTHORIZATION: 'Bearer origin-secret-value',
      TOOL_SCOPES: '{"admin_*":["mcp:tools","mcp:admin"]}',
      ADMIN_TOKEN: 'admin-secret-value-0123456789',
    }
    const config = loadConfig(env)
    const g = governanceOf(config, 'file .edge-data/kv.json')
    expect(governanceText(g)).toBe(
      'TOOL_PINNING=enforce (store: file .edge-data/kv.json); auth on (AUTH_ISSUER=https://auth.example.com); TOOLS_ALLOW=all; TOOLS_DENY=delete_*,drop; ' +
        'ORIGINS.hr: toolsAllow=get_* toolsDeny=none; TOOL_SCOPES={"admin_*":["mcp:tools","mcp:admin"]}; RATE_LIMIT=60/min,search=10/min; UNKNOWN_TOOL=reject; ' +
        'RESULT_SECRETS=audit; RESULT_CONTROL=audit; MAX_RESULT_TEXT_BYTES=none (OVERSIZE_RESULT=error)'
    )
    const records = startupRecords(config, { ...env, TOOL_PINING: 'off' }, 'memory')
    expect(records.map((r) => r.msg)).toEqual(['config.unknown_variable', 'edge.governance'])
    expect(JSON.stringify(records)).not.toMatch(/origin-secret-value|admin-secret-value|keys/)
  })
})
