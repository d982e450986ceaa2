/**
 * src/auth/jwt-verifier.ts against a real issuer on loopback (test/helpers/token-issuer.ts: keys
 * made here, JWKS served over HTTP on 127.0.0.1): each refusal has its own code and a message
 * that never holds the token; the JWKS is cached, re-read once for an unknown kid after the
 * cooldown (20 concurrent verifications make one request), and a JWKS that is down is told apart
 * from a bad token.
 */
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearerToken, type TokenFailureCode, type TokenVerifier } from '../../src/core/access/bearer'
import { ConfigError } from '../../src/core/config'
import { CLOCK_TOLERANCE_S, createJwtVerifier } from '../../src/auth/jwt-verifier'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'

const AUD = 'https://edge.example/mcp'
let iss: TokenIssuer
let verifier: TokenVerifier

beforeAll(async () => {
  iss = await startTokenIssuer()
  verifier = createJwtVerifier({ issuer: iss.issuer, audience: AUD, jwksUrl: iss.jwksUrl })
})
afterAll(() => iss.stop())

/** What the edge will do per request: read the header, then verify. */
async function check(v: TokenVerifier, authorization: string | null) {
  const b = bearerToken(authorization)
  if (!b.ok) return { ok: false as const, failure: b.failure }
  return v.verify(b.token)
}

async function refusal(token: string, v = verifier): Promise<{ code: TokenFailureCode; message: string }> {
  const r = await check(v, `Bearer ${token}`)
  if (r.ok) throw new Error('accepted')
  for (const part of token.split('.')) if (part.length > 8) expect(r.failure.message).not.toContain(part)
  return r.failure
}

const now = () => Math.floor(Date.now() / 1000)

describe('jwt verifier against a loopback issuer', () => {
  it('valid: the identity with sub, client_id and the scopes', async () => {
    const r = await check(verifier, `Bearer ${await iss.issue(AUD, { claims: { scope: 'mcp:tools  mcp:admin' } })}`)
    expect(r).toEqual({ ok: true, identity: { sub: 'user-1', clientId: 'client-1', scopes: new Set(['mcp:tools', 'mcp:admin']), validUntilMs: expect.any(Number) as number } })
    const scp = await check(verifier, `Bearer ${await iss.issue(AUD, { claims: { scp: ['a', 'b'], sub: undefined } })}`)
    expect(scp).toEqual({ ok: true, identity: { sub: 'client-1', clientId: 'client-1', scopes: new Set(['a', 'b']), validUntilMs: expect.any(Number) as number } })
  })

  it('an aud list that contains the resource is accepted', async () => {
    expect((await check(verifier, `Bearer ${await iss.issue(AUD, { claims: { aud: ['https://other.example', AUD] } })}`)).ok).toBe(true)
  })

  it('no token, and another scheme: missing', async () => {
    expect((await check(verifier, null)).ok).toBe(false)
    const r = await check(verifier, 'Basic dXNlcjpwYXNz')
    expect(!r.ok && r.failure.code).toBe('missing')
  })

  it('expired beyond the leeway: expired; within it: accepted', async () => {
    const f = await refusal(await iss.issue(AUD, { claims: { exp: now() - CLOCK_TOLERANCE_S - 60 } }))
    expect(f.code).toBe('expired')
    expect(f.message).toBe(`The access token has expired (exp is more than 30 s in the past); get a new access token from ${iss.issuer} for ${AUD}.`)
    expect((await check(verifier, `Bearer ${await iss.issue(AUD, { claims: { exp: now() - 10 } })}`)).ok).toBe(true)
  })

  it('nbf in the future beyond the leeway: not_yet_valid', async () => {
    expect((await refusal(await iss.issue(AUD, { claims: { nbf: now() + 600 } }))).code).toBe('not_yet_valid')
    expect((await check(verifier, `Bearer ${await iss.issue(AUD, { claims: { nbf: now() + 10 } })}`)).ok).toBe(true)
  })

  it('no exp: malformed (an access token must expire)', async () => {
    const f = await refusal(await iss.issue(AUD, { claims: { exp: undefined } }))
    expect(f).toEqual({ code: 'malformed', message: `The access token lacks the exp claim; get a new access token from ${iss.issuer} for ${AUD}.` })
  })

  it('wrong audience: wrong_audience, saying how to ask for the right one (RFC 8707)', async () => {
    const f = await refusal(await iss.issue('https://other.example/mcp'))
    expect(f).toEqual({
      code: 'wrong_audience',
      message: `The access token was not issued for this resource (its aud does not contain ${AUD}); request it with resource=${AUD} (RFC 8707).`,
    })
  })

  it('wrong issuer: wrong_issuer, without the token iss', async () => {
    const f = await refusal(await iss.issue(AUD, { claims: { iss: 'https://evil.example' } }))
    expect(f.code).toBe('wrong_issuer')
    expect(f.message).not.toContain('evil')
  })

  it('wrong key under a published kid: bad_signature', async () => {
    const stray = await iss.strayKey('RS256', iss.current().kid)
    expect((await refusal(await iss.issue(AUD, { key: stray }))).code).toBe('bad_signature')
  })

  it('alg none and HS256: alg_not_allowed, without reading the JWKS', async () => {
    const before = iss.jwksRequests()
    expect((await refusal(iss.unsecured(AUD))).code).toBe('alg_not_allowed')
    const hs = await new SignJWT({ iss: iss.issuer, aud: AUD, sub: 'x', exp: now() + 60 })
      .setProtectedHeader({ alg: 'HS256', kid: iss.current().kid })
      .sign(new Uint8Array(32).fill(7))
    const f = await refusal(hs)
    expect(f.code).toBe('alg_not_allowed')
    expect(f.message).toContain('allowed: RS256, ES256, PS256, EdDSA')
    expect(iss.jwksRequests()).toBe(before)
  })

  it('not a JWT: malformed', async () => {
    expect((await refusal('abc.def.ghi')).code).toBe('malformed')
    expect((await refusal('justonepart')).code).toBe('malformed')
  })
})

describe('JWKS cache, unknown kid and rotation', () => {
  it('an unknown kid inside the cooldown is refused without a request; after it, 20 concurrent verifications make one request', async () => {
    const own = await startTokenIssuer({ alg: 'ES256' })
    try {
      // Everything signed up front, so that the checks inside the cooldown run right after the read.
      const next = await own.strayKey('ES256')
      const first = await own.issue(AUD)
      const rotated = await own.issue(AUD, { key: next })
      const v = createJwtVerifier({ issuer: own.issuer, audience: AUD, jwksUrl: own.jwksUrl, cooldownMs: 1000 })
      expect((await check(v, `Bearer ${first}`)).ok).toBe(true)
      expect(own.jwksRequests()).toBe(1)
      // Cached: the same key again makes no request; an unknown kid inside the cooldown neither.
      expect((await check(v, `Bearer ${first}`)).ok).toBe(true)
      expect((await refusal(rotated, v)).code).toBe('unknown_key')
      expect(own.jwksRequests()).toBe(1)

      own.publish(next) // the rotation
      await new Promise((r) => setTimeout(r, 1100))
      const results = await Promise.all(Array.from({ length: 20 }, () => check(v, `Bearer ${rotated}`)))
      expect(results.every((r) => r.ok)).toBe(true)
      expect(own.jwksRequests()).toBe(2) // single-flight
    } finally {
      await own.stop()
    }
  })

  it('a key the issuer never published: unknown_key', async () => {
    const stray = await iss.strayKey('RS256', 'never-published')
    const f = await refusal(await iss.issue(AUD, { key: stray }))
    expect(f.code).toBe('unknown_key')
  })
})

describe('JWKS unavailable', () => {
  it('server down before the first read: jwks_unavailable, not a verdict on the token', async () => {
    const down = await startTokenIssuer()
    const token = await down.issue(AUD)
    await down.stop()
    const v = createJwtVerifier({ issuer: down.issuer, audience: AUD, jwksUrl: down.jwksUrl })
    const f = await refusal(token, v)
    expect(f).toEqual({
      code: 'jwks_unavailable',
      message: `The edge could not read the signing keys of ${down.issuer} to check the token; try again in 30 s (the token itself may be fine).`,
      retryAfterS: 30,
      keys: { url: down.jwksUrl, answered: 'unreachable (ECONNREFUSED)' },
    })
  })

  it('a 500 from the JWKS: jwks_unavailable naming the status; no read again within the cooldown; after it, accepted', async () => {
    const broken = await startTokenIssuer()
    try {
      broken.failWith(500)
      let clock = Date.now()
      const v = createJwtVerifier({ issuer: broken.issuer, audience: AUD, jwksUrl: broken.jwksUrl, now: () => clock })
      const token = await broken.issue(AUD)
      expect(await refusal(token, v)).toMatchObject({ code: 'jwks_unavailable', retryAfterS: 30, keys: { url: broken.jwksUrl, answered: 'answered HTTP 500' } })
      broken.failWith(null)
      clock += 10_000
      expect(await refusal(token, v)).toMatchObject({ code: 'jwks_unavailable', retryAfterS: 20 })
      expect(broken.jwksRequests()).toBe(1)
      clock += 20_000
      expect((await check(v, `Bearer ${token}`)).ok).toBe(true)
      expect(broken.jwksRequests()).toBe(2)
    } finally {
      await broken.stop()
    }
  })

  it('60 tokens with random kids while the JWKS answers 500: one read, not one per token', async () => {
    const broken = await startTokenIssuer({ alg: 'ES256' })
    try {
      broken.failWith(500)
      const v = createJwtVerifier({ issuer: broken.issuer, audience: AUD, jwksUrl: broken.jwksUrl })
      const tokens = await Promise.all(Array.from({ length: 60 }, (_, i) => broken.issue(AUD, { kid: `random-${i}-${Math.random().toString(36).slice(2)}` })))
      for (const t of tokens) expect((await refusal(t, v)).code).toBe('jwks_unavailable')
      expect(broken.jwksRequests()).toBe(1)
    } finally {
      await broken.stop()
    }
  })

  it('good keys held, the JWKS then answers 500: an unknown kid is 401 unknown_key (not 503), a known one still accepted', async () => {
    const own = await startTokenIssuer({ alg: 'ES256' })
    try {
      const good = await own.issue(AUD)
      const other = await own.issue(AUD, { claims: { jti: 'other' } })
      let clock = Date.now()
      const v = createJwtVerifier({ issuer: own.issuer, audience: AUD, jwksUrl: own.jwksUrl, cooldownMs: 1000, now: () => clock })
      expect((await check(v, `Bearer ${good}`)).ok).toBe(true)
      own.failWith(500)
      // Past jose's cooldown (it counts from the last good read, on the real clock).
      await new Promise((r) => setTimeout(r, 1100))
      clock = Date.now()
      const forged = await Promise.all(Array.from({ length: 60 }, (_, i) => own.issue(AUD, { kid: `random-${i}` })))
      for (const t of forged) expect(await refusal(t, v)).toMatchObject({ code: 'unknown_key', keys: { url: own.jwksUrl, answered: 'answered HTTP 500' } })
      expect(own.jwksRequests()).toBe(2)
      expect((await check(v, `Bearer ${other}`)).ok).toBe(true)
    } finally {
      await own.stop()
    }
  })

  it('a JWKS larger than maxBytes (AUTH_JWKS_MAX_BYTES) is not read past the bound: jwks_unavailable naming the bound', async () => {
    const big = await startTokenIssuer({ alg: 'ES256' })
    try {
      big.padWith(2 * 1024 * 1024)
      const token = await big.issue(AUD)
      const v = createJwtVerifier({ issuer: big.issuer, audience: AUD, jwksUrl: big.jwksUrl })
      expect(await refusal(token, v)).toMatchObject({ code: 'jwks_unavailable', keys: { answered: 'sent more than 1048576 bytes (AUTH_JWKS_MAX_BYTES)' } })
      expect(await v.keys!.check()).toBe('sent more than 1048576 bytes (AUTH_JWKS_MAX_BYTES)')
      // Sent in chunks without a Content-Length: the read stops at the bound all the same.
      big.padWith(2 * 1024 * 1024, { chunked: true })
      const fresh = createJwtVerifier({ issuer: big.issuer, audience: AUD, jwksUrl: big.jwksUrl })
      expect(await refusal(token, fresh)).toMatchObject({ code: 'jwks_unavailable', keys: { answered: 'sent more than 1048576 bytes (AUTH_JWKS_MAX_BYTES)' } })
      // Under the bound, the same key set is read.
      const roomy = createJwtVerifier({ issuer: big.issuer, audience: AUD, jwksUrl: big.jwksUrl, maxBytes: 4 * 1024 * 1024 })
      expect((await check(roomy, `Bearer ${token}`)).ok).toBe(true)
    } finally {
      await big.stop()
    }
  })

  it('keys.check(): ok for a readable JWKS, what the read got for a wrong URL; the URL named without credentials', async () => {
    const own = await startTokenIssuer({ alg: 'ES256' })
    try {
      const right = createJwtVerifier({ issuer: own.issuer, audience: AUD, jwksUrl: own.jwksUrl })
      expect(await right.keys!.check()).toBe('ok')
      const wrong = createJwtVerifier({ issuer: own.issuer, audience: AUD, jwksUrl: own.issuer + '/jwks.jsn?key=secret-in-query' })
      expect(await wrong.keys!.check()).toBe('answered HTTP 404')
      expect(wrong.keys!.url).toBe(own.issuer + '/jwks.jsn?key=***')
      expect(createJwtVerifier({ issuer: own.issuer, audience: AUD, jwks: own.jwksText() }).keys).toBeNull()
    } finally {
      await own.stop()
    }
  })
})

describe('the identity', () => {
  it('validUntilMs is exp plus the leeway, in ms', async () => {
    const exp = now() + 120
    const r = await check(verifier, `Bearer ${await iss.issue(AUD, { claims: { exp } })}`)
    expect(r.ok && r.identity.validUntilMs).toBe((exp + CLOCK_TOLERANCE_S) * 1000)
  })
})

describe('inline keys (AUTH_JWKS) and configuration errors', () => {
  it('a JWKS as JSON text verifies without any request', async () => {
    const v = createJwtVerifier({ issuer: iss.issuer, audience: AUD, jwks: iss.jwksText() })
    const before = iss.jwksRequests()
    expect((await check(v, `Bearer ${await iss.issue(AUD)}`)).ok).toBe(true)
    expect(iss.jwksRequests()).toBe(before)
  })

  it.each([
    [{ jwks: '{not json' }, 'AUTH_JWKS: not valid JSON (value not shown); expected a JSON Web Key Set {"keys":[...]}'],
    [{ jwks: '{"keys":[]}' }, 'AUTH_JWKS: not a JSON Web Key Set (value not shown); expected {"keys":[{...public key...}]} with at least one key'],
    [{ jwks: '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}' }, 'AUTH_JWKS: a key holds private or secret material ("d" or "k"); publish only public keys to the edge (value not shown)'],
    [{}, 'AUTH_JWKS_URL / AUTH_JWKS: set exactly one (the issuer JWKS URL, or the key set as JSON)'],
    [{ jwksUrl: 'ftp://x/jwks' }, 'AUTH_JWKS_URL=ftp://x/jwks: expected an http:// or https:// URL of a JSON Web Key Set'],
    [{ jwksUrl: 'http://x/jwks', algorithms: ['HS256'] }, /^AUTH_ALGORITHMS: "HS256" is not an asymmetric JWS algorithm/],
    [{ jwksUrl: 'http://x/jwks', algorithms: ['none'] }, /^AUTH_ALGORITHMS: "none" is not an asymmetric JWS algorithm/],
  ])('%j', (opts, message) => {
    expect(() => createJwtVerifier({ issuer: 'https://as', audience: AUD, ...opts })).toThrow(ConfigError)
    expect(() => createJwtVerifier({ issuer: 'https://as', audience: AUD, ...opts })).toThrow(message)
  })
})
