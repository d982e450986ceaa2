/**
 * `mcp-edge serve` refuses each misconfiguration with one line on stderr naming the variable or
 * flag, the value and what is expected, exit status 1, no stack trace, no secret (the built
 * command as a real process). Also: usage errors exit 2, `--help` lists a flag for every setting
 * of the table (core/settings.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, startServe } from '../helpers/cli-process'
import { SERVE_VARIABLES, flagOf } from '../../packages/cli/src/cli/commands/serve'
import { SETTINGS } from '../../src/core/settings'

const ORIGIN = 'http://127.0.0.1:9/mcp'
let held: Server
let heldPort = 0

beforeAll(async () => {
  held = createServer()
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', () => r()))
  heldPort = (held.address() as { port: number }).port
})
afterAll(() => new Promise<void>((r) => held.close(() => r())))

interface Case {
  name: string
  args?: string[]
  env?: Record<string, string>
  /** Substrings the one line must hold. */
  says: string[]
  /** Substrings it must not hold (secrets). */
  never?: string[]
  /** Run as this uid (EACCES as root). */
  uid?: number
}

const CASES: Case[] = [
  { name: 'no origin at all', says: ['no origin', 'ORIGIN_URL', '--origin', '--demo'] },
  { name: 'ORIGIN_URL=http:// (no host)', env: { ORIGIN_URL: 'http://' }, says: ['ORIGIN_URL=http://:', 'expected an http:// or https:// URL with a host'] },
  { name: 'ORIGIN_URL not a URL', env: { ORIGIN_URL: 'localhost:3000/mcp' }, says: ['ORIGIN_URL=localhost:3000/mcp:', 'expected an http:// or https:// URL'] },
  { name: '--origin ftp://', args: ['--origin', 'ftp://files.example/mcp'], says: ['--origin ftp://files.example/mcp:', 'expected an http:// or https:// URL'] },
  { name: 'password in a bad URL is redacted', env: { ORIGIN_URL: 'http://alice:hunter2pw@' }, says: ['ORIGIN_URL=http://alice:***@:'], never: ['hunter2pw'] },
  { name: 'ORIGINS not JSON', env: { ORIGINS: '{weather:' }, says: ['ORIGINS={weather::', 'expected a JSON object of name -> URL'] },
  {
    name: 'ORIGINS with a trailing comma: shown as typed (no added backslashes), said to be not valid JSON',
    env: { ORIGINS: '{"weather":"http://127.0.0.1:9/mcp",}' },
    says: ['ORIGINS={"weather":"http://127.0.0.1:9/mcp",}: expected a JSON object', 'this is not valid JSON'],
    never: ['\\'],
  },
  {
    name: 'passwords inside ORIGINS are redacted (not JSON)',
    env: { ORIGINS: '{"a":"http://alice:hunter2pw@127.0.0.1:1/mcp",' },
    says: ['ORIGINS=', 'alice:***@127.0.0.1', 'expected a JSON object'],
    never: ['hunter2pw'],
  },
  {
    name: 'passwords inside ORIGINS are redacted (bad name)',
    env: { ORIGINS: '{"a b":"https://bob:s3cretpw@h.example/mcp"}' },
    says: ['bob:***@h.example', 'expected origin names'],
    never: ['s3cretpw'],
  },
  { name: 'ORIGINS with a bad URL', env: { ORIGINS: '{"weather":"http://"}' }, says: ['ORIGINS.weather=http://:', 'expected an http:// or https:// URL'] },
  { name: 'PORT=abc', env: { ORIGIN_URL: ORIGIN, PORT: 'abc' }, says: ['PORT=abc:', 'expected a TCP port number from 0 to 65535'] },
  { name: '--port 70000', args: ['--origin', ORIGIN, '--port', '70000'], says: ['--port 70000:', 'expected a TCP port number'] },
  { name: 'HOST with a space', env: { ORIGIN_URL: ORIGIN, HOST: 'my host' }, says: ['HOST=my host:', 'expected an interface address or host name'] },
  { name: 'MAX_BATCH=0', env: { ORIGIN_URL: ORIGIN, MAX_BATCH: '0' }, says: ['MAX_BATCH=0:', 'expected an integer >= 1'] },
  { name: '--max-body-bytes 4MB', args: ['--origin', ORIGIN, '--max-body-bytes', '4MB'], says: ['--max-body-bytes 4MB:', 'expected an integer >= 1'] },
  { name: 'ORIGIN_TIMEOUT_MS=1.5', env: { ORIGIN_URL: ORIGIN, ORIGIN_TIMEOUT_MS: '1.5' }, says: ['ORIGIN_TIMEOUT_MS=1.5:', 'expected an integer >= 1'] },
  { name: 'INVALID_ARGS=maybe', env: { ORIGIN_URL: ORIGIN, INVALID_ARGS: 'maybe' }, says: ['INVALID_ARGS=maybe:', 'expected one of auto, rpc-error, tool-error'] },
  { name: '--hidden-failures yes', args: ['--origin', ORIGIN, '--hidden-failures', 'yes'], says: ['--hidden-failures yes:', 'expected one of on, off'] },
  {
    name: 'SUPPORTED_VERSIONS unknown',
    env: { ORIGIN_URL: ORIGIN, SUPPORTED_VERSIONS: '2025-06-18,2024-01-01' },
    says: ['SUPPORTED_VERSIONS=2025-06-18,2024-01-01:', 'expected a comma-separated list of', '2025-03-26'],
  },
  { name: 'SHUTDOWN_GRACE_MS=-5', env: { ORIGIN_URL: ORIGIN, SHUTDOWN_GRACE_MS: '-5' }, says: ['SHUTDOWN_GRACE_MS=-5:', 'expected an integer >= 0 (milliseconds)'] },
  {
    name: 'ADMIN_TOKEN outside the bearer-token characters (every admin request would fail)',
    env: { ORIGIN_URL: ORIGIN, ADMIN_TOKEN: 'my secret!' },
    says: ['ADMIN_TOKEN (value not shown):', 'A-Z a-z 0-9 - . _ ~ + / and trailing =', 'RFC 6750'],
    never: ['my secret!'],
  },
  {
    name: '--admin-token with a space',
    args: ['--origin', ORIGIN, '--admin-token', 'my secret!'],
    says: ['--admin-token (value not shown):', 'RFC 6750'],
    never: ['my secret!'],
  },
  { name: 'METRICS_TOKEN with a quote', env: { ORIGIN_URL: ORIGIN, METRICS_TOKEN: 'tok"en' }, says: ['METRICS_TOKEN (value not shown):', 'RFC 6750'], never: ['tok"en'] },
  { name: 'ADMIN_TOKEN is never echoed', env: { ORIGIN_URL: ORIGIN, ADMIN_TOKEN: 'tok-very-secret-42', MAX_BATCH: 'x' }, says: ['MAX_BATCH=x:'], never: ['tok-very-secret-42'] },
  {
    name: 'AUTH_ISSUER without AUTH_AUDIENCE',
    env: { ORIGIN_URL: ORIGIN, AUTH_ISSUER: 'https://auth.example.com', AUTH_JWKS_URL: 'https://auth.example.com/jwks' },
    says: ['AUTH_AUDIENCE is unset: with AUTH_ISSUER=https://auth.example.com set (auth on)', 'such as https://mcp.example.com/mcp'],
  },
  {
    name: 'AUTH_JWKS holding a private key (never shown)',
    env: { ORIGIN_URL: ORIGIN, AUTH_ISSUER: 'https://auth.example.com', AUTH_AUDIENCE: 'https://mcp.example.com/mcp', AUTH_JWKS: '{"keys":[{"kty":"EC","d":"priv-d-secret"}]}' },
    says: ['AUTH_JWKS: a key holds private or secret material', '(value not shown)'],
    never: ['priv-d-secret'],
  },
  {
    name: 'ORIGIN_AUTHORIZATION without auth (never shown)',
    env: { ORIGIN_URL: ORIGIN, ORIGIN_AUTHORIZATION: 'Bearer origin-secret-9' },
    says: ['ORIGIN_AUTHORIZATION (value not shown) is set but AUTH_ISSUER is not'],
    never: ['origin-secret-9'],
  },
  {
    name: 'port in use (EADDRINUSE)',
    env: { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory' },
    args: ['--port', 'HELD'],
    says: ['is already in use (EADDRINUSE)', 'choose another PORT'],
  },
  {
    name: 'port 80 without privileges (EACCES)',
    env: { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory', PORT: '80' },
    uid: 65534,
    says: ['PORT=80:', 'no permission to listen on 127.0.0.1:80 (EACCES)'],
  },
  {
    name: 'HOST not an address of this machine (EADDRNOTAVAIL)',
    env: { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory', HOST: '203.0.113.7', PORT: '0' },
    says: ['HOST=203.0.113.7:', 'EADDRNOTAVAIL'],
  },
]

describe('mcp-edge serve: each misconfiguration is one clear line and exit 1', () => {
  it.each(CASES)('$name', async (c) => {
    const args = (c.args ?? []).map((a) => (a === 'HELD' ? String(heldPort) : a))
    const asOther = c.uid !== undefined && process.getuid?.() === 0
    const run = await runCli(['serve', ...args], c.env, asOther ? { spawn: { uid: c.uid, gid: c.uid } } : {})
    expect(run.code, run.stderr).toBe(1)
    const lines = run.stderr.split('\n').filter((l) => l !== '')
    expect(lines, run.stderr).toHaveLength(1)
    const line = lines[0]!
    expect(line.startsWith('mcp-edge serve: ')).toBe(true)
    for (const s of c.says) expect(line).toContain(s)
    for (const s of c.never ?? []) expect(run.stderr + run.stdout).not.toContain(s)
    expect(line).not.toMatch(/\n\s+at |Error:|node:internal/)
    expect(run.stdout).toBe('')
  })
})

describe('mcp-edge serve: command line', () => {
  it('a flag wins over its variable; the start line never shows a URL password', async () => {
    const edge = await startServe(['--origin', 'http://alice:pw-in-url-77@127.0.0.1:9/mcp', '--port', '0', '--max-batch', '5'], {
      ORIGIN_URL: 'http://127.0.0.1:1/mcp',
      PORT: 'abc',
      MAX_BATCH: '0',
      STORE_FILE: 'memory',
    })
    try {
      expect(edge.stderr()).toContain('-> http://alice:***@127.0.0.1:9/mcp')
      expect(edge.stderr() + edge.stdout()).not.toContain('pw-in-url-77')
      // --max-batch 5 is in force, not MAX_BATCH=0 (which would have refused to start).
      const batch = Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'ping' }))
      const r = await fetch(edge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' },
        body: JSON.stringify(batch),
      })
      expect(((await r.json()) as { error: { message: string } }).error.message).toContain('at most 5 messages')
    } finally {
      edge.kill()
    }
  })

  it('an ADMIN_TOKEN or METRICS_TOKEN shorter than 16 characters starts with one warning naming the variable, never the value; 16 or more: no warning', async () => {
    const short = await startServe(['--port', '0'], { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory', ADMIN_TOKEN: 'a', METRICS_TOKEN: 'm3tr1cs-x' })
    try {
      // Written right after the start line: wait (bounded) for the second one to arrive.
      for (let i = 0; i < 100 && !short.stderr().includes('METRICS_TOKEN is shorter'); i++) await new Promise((r) => setTimeout(r, 50))
      const warnings = short
        .stderr()
        .split('\n')
        .filter((l) => l.includes('warning') && l.includes('TOKEN'))
      expect(warnings).toEqual([
        'mcp-edge serve: warning: ADMIN_TOKEN is shorter than 16 characters (value not shown), so it can be guessed: use a random one, e.g. openssl rand -hex 32',
        'mcp-edge serve: warning: METRICS_TOKEN is shorter than 16 characters (value not shown), so it can be guessed: use a random one, e.g. openssl rand -hex 32',
      ])
      expect(short.stderr() + short.stdout()).not.toContain('m3tr1cs-x')
      // It still serves: a warning, not an error (a deployment with a short token keeps starting after an upgrade).
      const r = await fetch(short.url.replace(/\/mcp$/, '/healthz'))
      expect(r.status).toBe(200)
    } finally {
      short.kill()
    }
    const long = await startServe(['--port', '0'], { ORIGIN_URL: ORIGIN, STORE_FILE: 'memory', ADMIN_TOKEN: 'a'.repeat(16), METRICS_TOKEN: 'b'.repeat(40) })
    try {
      // Written synchronously before the edge serves: after an answer, all of it has come.
      expect((await fetch(long.url.replace(/\/mcp$/, '/healthz'))).status).toBe(200)
      await new Promise((r) => setTimeout(r, 200))
      expect(long.stderr()).not.toContain('TOKEN is shorter')
    } finally {
      long.kill()
    }
  })

  it('start-up truth: one governance line, and a misspelled TOOL_PINING warned of, naming TOOL_PINNING (the edge stays in audit)', async () => {
    const edge = await startServe(['--port', '0', '--tools-deny', 'delete_*'], {
      ORIGIN_URL: ORIGIN,
      STORE_FILE: 'memory',
      TOOL_PINING: 'enforce',
      RATE_LIMIT: '60/min,search=10/min',
      ADMIN_TOKEN: 'an-admin-token-of-32-characters0',
    })
    try {
      for (let i = 0; i < 100 && !edge.stderr().includes('TOOL_PINING'); i++) await new Promise((r) => setTimeout(r, 50))
      const lines = edge.stderr().split('\n')
      expect(lines.filter((l) => l.includes('governance:'))).toEqual([
        'mcp-edge serve: governance: TOOL_PINNING=audit (store: memory); auth off; TOOLS_ALLOW=all; TOOLS_DENY=delete_*; TOOL_SCOPES=none; RATE_LIMIT=60/min,search=10/min; UNKNOWN_TOOL=reject; RESULT_SECRETS=audit; RESULT_CONTROL=audit; MAX_RESULT_TEXT_BYTES=none (OVERSIZE_RESULT=error)',
      ])
      expect(lines.filter((l) => l.includes('TOOL_PINING'))).toEqual([
        'mcp-edge serve: warning: TOOL_PINING is not a setting of the edge and is ignored (did you mean TOOL_PINNING?)',
      ])
      expect(edge.stderr() + edge.stdout()).not.toContain('an-admin-token-of-32-characters0')
    } finally {
      edge.kill()
    }
  })

  it('a bad command line exits 2', async () => {
    const run = await runCli(['serve', '--no-such-flag'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("unknown option '--no-such-flag'")
  })

  it('--help exits 0 and names a flag for every setting of the table (core/settings.ts)', async () => {
    const run = await runCli(['serve', '--help'])
    expect(run.code).toBe(0)
    expect(SETTINGS.length).toBeGreaterThanOrEqual(35)
    const listed = new Set(SERVE_VARIABLES.map((v) => v.name))
    for (const { variable } of SETTINGS) {
      expect(listed.has(variable), variable).toBe(true)
      expect(run.stdout).toContain(`${flagOf(variable)} <`)
      expect(run.stdout).toContain(`[${variable}]`)
    }
    expect(run.stdout).toContain('Exit statuses: 0')
  })

  it('a STORE_FILE that exists and is not a store is refused and left as it is (it was read as empty and written over)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serve-store-'))
    try {
      const notes = join(dir, 'notes.txt')
      writeFileSync(notes, 'root:x:0:0:root:/root:/bin/bash\n')
      const config = join(dir, 'tsconfig.json')
      writeFileSync(config, '{"compilerOptions":{"strict":true}}')
      for (const [file, via] of [
        [notes, 'env'],
        [config, 'flag'],
      ] as const) {
        const run = await runCli(
          via === 'env' ? ['serve', '--origin', ORIGIN, '--port', '0'] : ['serve', '--origin', ORIGIN, '--port', '0', '--store-file', file],
          via === 'env' ? { STORE_FILE: file } : {}
        )
        expect(run.code, run.stderr).toBe(1)
        const name = via === 'env' ? 'STORE_FILE=' : '--store-file '
        expect(run.stderr).toBe(
          `mcp-edge serve: ${name}${file}: expected the path of an edge store file, or of a new one (this file exists and is not an edge store; it was left as it is)\n`
        )
      }
      expect(readFileSync(notes, 'utf8')).toBe('root:x:0:0:root:/root:/bin/bash\n')
      expect(readFileSync(config, 'utf8')).toBe('{"compilerOptions":{"strict":true}}')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('mcp-edge --help lists serve', async () => {
    const run = await runCli(['--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/serve \[options\]/)
  })
})
