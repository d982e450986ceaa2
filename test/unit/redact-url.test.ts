/** src/core/redact-url.ts: passwords, bare tokens and query values hidden; everything else kept. */
import { describe, expect, it } from 'vitest'
import { redactUrl } from '../../src/core/redact-url'

describe('redactUrl', () => {
  it.each([
    ['redis://user:pw@h:1/0', 'redis://user:***@h:1/0'],
    ['rediss://:p%40ss@h', 'rediss://:***@h'],
    ['redis://token@h', 'redis://***@h'],
    ['redis://h:6379', 'redis://h:6379'],
    ['http://alice:hunter2pw@', 'http://alice:***@'],
    ['https://mcp.example.com/mcp?api_key=sk-123&team=edge', 'https://mcp.example.com/mcp?api_key=***&team=***'],
    ['https://h.example/mcp?flag&x=', 'https://h.example/mcp?flag&x='],
    ['https://bob:pw@h.example/mcp?token=abc#frag', 'https://bob:***@h.example/mcp?token=***#frag'],
    ['{"a":"http://alice:pw@127.0.0.1:9/mcp?k=v","b":"http://h/mcp"}', '{"a":"http://alice:***@127.0.0.1:9/mcp?k=***","b":"http://h/mcp"}'],
    ['redis//:pw@nowhere', 'redis//:***@nowhere'],
    ['not a url', 'not a url'],
    ['', ''],
  ])('%s -> %s', (given, shown) => {
    expect(redactUrl(given)).toBe(shown)
  })

  it('stays linear on a long run of scheme-like characters', () => {
    const text = 'a'.repeat(200_000) + '://' + 'b'.repeat(200_000) + '//'.repeat(50_000)
    const t0 = performance.now()
    expect(redactUrl(text)).toBe(text)
    // Far below what a quadratic scan takes (seconds); a generous bound for a loaded machine.
    expect(performance.now() - t0).toBeLessThan(2_000)
  })
})
