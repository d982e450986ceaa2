/**
 * A real token issuer on loopback for the verifier tests: signing keys made in the test with
 * jose's generateKeyPair, the public half served as a JWKS over HTTP on 127.0.0.1 (a node:http
 * server), tokens signed with jose's SignJWT, and key rotation. It counts the JWKS requests (to
 * show single-flight and the cooldown) and can stop and start its HTTP server (a JWKS that is down)
 * or answer 500.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'

/** One signing key. */
export interface IssuerKey {
  kid: string
  alg: string
  privateKey: CryptoKey
  publicJwk: JWK
}

/** What {@link TokenIssuer.issue} may change. */
export interface IssueOptions {
  /** Claims to add or override (`iss`, `aud`, `sub`, `scope`, `exp`, `nbf`, ...); `undefined` removes one. */
  claims?: Record<string, unknown>
  /** Sign with this key instead of the current one (e.g. one the JWKS does not publish). */
  key?: IssuerKey
  /** Header `kid` to write (default the key's; null: none). */
  kid?: string | null
}

/** A running issuer. */
export interface TokenIssuer {
  /** `http://127.0.0.1:<port>` (also the default `iss`). */
  issuer: string
  /** `<issuer>/jwks.json` */
  jwksUrl: string
  /** The key tokens are signed with now (the newest). */
  current(): IssuerKey
  /** The JWKS served now, as text (for AUTH_JWKS). */
  jwksText(): string
  /** JWKS requests answered so far. */
  jwksRequests(): number
  /** Makes a new key, publishes it and signs with it; `dropOld` unpublishes the others. */
  rotate(opts?: { alg?: string; dropOld?: boolean }): Promise<IssuerKey>
  /** Publishes a key made with {@link strayKey} (it becomes the signing key). */
  publish(key: IssuerKey): void
  /** A key that is not published (until {@link publish}). */
  strayKey(alg?: string, kid?: string): Promise<IssuerKey>
  /** A signed access token: `iss` this issuer, `aud` the given audience, `sub` `user-1`, `exp` in 5 min, `iat` now, then `opts.claims`. */
  issue(audience: string, opts?: IssueOptions): Promise<string>
  /** An unsecured token (`alg: none`, empty signature) with the same default claims. */
  unsecured(audience: string, claims?: Record<string, unknown>): string
  /** Answer every JWKS request with this status (500: a broken server); null: serve normally. */
  failWith(status: number | null): void
  /**
   * Pads the served JWKS with an extra member of about `bytes` bytes (still a valid key set); 0:
   * none. `chunked`: sent in 64 KiB writes without a Content-Length.
   */
  padWith(bytes: number, opts?: { chunked?: boolean }): void
  /** Stops the HTTP server (connections refused: the JWKS is down); idempotent. */
  stop(): Promise<void>
}

let serial = 0

async function makeKey(alg: string, kid?: string): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const k = kid ?? `k${++serial}-${alg.toLowerCase()}`
  const publicJwk = { ...(await exportJWK(publicKey)), kid: k, alg, use: 'sig' }
  return { kid: k, alg, privateKey, publicJwk }
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')

/** Starts an issuer on 127.0.0.1 with one RS256 key. */
export async function startTokenIssuer(opts: { alg?: string } = {}): Promise<TokenIssuer> {
  let keys: IssuerKey[] = [await makeKey(opts.alg ?? 'RS256')]
  let requests = 0
  let failStatus: number | null = null
  let pad = 0
  let chunked = false
  const jwks = () => JSON.stringify({ keys: keys.map((k) => k.publicJwk), ...(pad > 0 ? { padding: 'x'.repeat(pad) } : {}) })
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks.json') return void res.writeHead(404).end()
    requests++
    if (failStatus !== null) return void res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('broken')
    if (!chunked) return void res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(jwks())
    const body = Buffer.from(jwks())
    res.writeHead(200, { 'content-type': 'application/jwk-set+json', 'transfer-encoding': 'chunked' })
    let at = 0
    const next = () => {
      while (at < body.length && !res.destroyed) {
        const piece = body.subarray(at, (at += 65_536))
        if (!res.write(piece)) return void res.once('drain', next)
      }
      if (!res.destroyed) res.end()
    }
    next()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const defaults = (audience: string): Record<string, unknown> => {
    const now = Math.floor(Date.now() / 1000)
    return { iss: issuer, aud: audience, sub: 'user-1', client_id: 'client-1', iat: now, exp: now + 300 }
  }
  const merge = (audience: string, claims: Record<string, unknown> = {}) => {
    const c = { ...defaults(audience), ...claims }
    for (const k of Object.keys(c)) if (c[k] === undefined) delete c[k]
    return c
  }
  let stopped = false
  return {
    issuer,
    jwksUrl: `${issuer}/jwks.json`,
    current: () => keys[keys.length - 1]!,
    jwksText: jwks,
    jwksRequests: () => requests,
    async rotate(o = {}) {
      const k = await makeKey(o.alg ?? keys[keys.length - 1]!.alg)
      keys = o.dropOld ? [k] : [...keys, k]
      return k
    },
    strayKey: (alg = 'RS256', kid) => makeKey(alg, kid),
    publish(key) {
      keys = [...keys, key]
    },
    async issue(audience, o = {}) {
      const key = o.key ?? keys[keys.length - 1]!
      const header: { alg: string; typ: string; kid?: string } = { alg: key.alg, typ: 'at+jwt' }
      const kid = o.kid === undefined ? key.kid : o.kid
      if (kid !== null) header.kid = kid
      return new SignJWT(merge(audience, o.claims) as JWTPayload).setProtectedHeader(header).sign(key.privateKey)
    },
    unsecured(audience, claims) {
      return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(merge(audience, claims))}.`
    },
    failWith(status) {
      failStatus = status
    },
    padWith(bytes, o = {}) {
      pad = bytes
      chunked = o.chunked ?? false
    },
    async stop() {
      if (stopped) return
      stopped = true
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
