/**
 * @module http/admin-api
 * The admin API (docs/admin-api.md): a Hono sub-app the edge mounts at `/admin`, off (404 on
 * every route) unless `ADMIN_TOKEN` is set. Routes, all answering JSON:
 *
 * - `GET    /admin/registry`                       the registry's figures (KV reads, compiles, refreshes, ...)
 * - `GET    /admin/tools/:origin?scope=`            the tool names and record summaries of one origin and scope
 * - `GET    /admin/tools/:origin/:name?scope=`      one tool record, as stored (name, inputSchema, outputSchema, dialect, hash, fetchedAt)
 * - `PUT    /admin/tools/:origin?scope=`            `{ "tools": [{ "name", "inputSchema", "outputSchema"? }], "protocolVersion"? }`: store them
 * - `DELETE /admin/tools/:origin/:name?scope=`      remove one tool record
 * - `POST   /admin/tools/:origin/refresh?scope=`    pull the origin's tool list now, as the edge's own pull does (ORIGIN_AUTHORIZATION, tool filters; D7's interval skipped; the per-origin budget still applies)
 * - `GET    /admin/pins/:origin?scope=`             tool pins: per tool its state, approved and served digest, approvedAt, effectiveFrom, source, advisories
 * - `GET    /admin/pins/:origin/:tool/diff?scope=`  field by field: sub-digests, material or cosmetic
 * - `POST   /admin/pins/:origin/:tool/approve?scope=` `{ "digest" }`: approve the exact served digest (409 stale or wrong, 404 unknown)
 * - `POST   /admin/pins/:origin/approve-cosmetic?scope=` approve every tool whose change is cosmetic only
 * - `POST   /admin/pins/:origin/:tool/reject?scope=` `{ "digest" }`: record a rejection (the tool stays blocked)
 * - `GET    /admin/pins/:origin/manifest?scope=`     the manifest of every pin; `PUT` imports one (400 with the parse errors)
 *
 * `:origin` is `default` (the `ORIGIN_URL` origin) or a name of `ORIGINS`; any other is 404.
 * `scope` is `public` (default) or a caller's private scope `u-<64 hex>` (docs/scope.md).
 * Authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time by hono's
 * `bearer-auth` middleware (it compares SHA-256 digests, so a token of another length takes the
 * same path). Bodies are bounded by `MAX_BODY_BYTES` (hono's `body-limit`, 413) and by
 * `MAX_JSON_DEPTH` (400, checked before any parse). A PUT is checked whole before anything is
 * written: one malformed entry answers 400 listing every malformed entry by index and name with
 * its problem, and nothing is stored; schemas the edge cannot use are stored and named in the answer. Values sent are never echoed (names are cut to 64 characters).
 */
import { Hono, type Context } from 'hono'
import { bearerAuth } from 'hono/bearer-auth'
import { bodyLimit } from 'hono/body-limit'
import { HTTPException } from 'hono/http-exception'
import { pinBook, type EdgeDeps } from '../core/exchange'
import { PinOperations } from '../core/pinning/pin-operations'
import { isToolDigest, type ToolDigest } from '../core/pinning/tool-digest'
import { originTarget } from '../core/pipeline'
import { nestsDeeperThan } from '../core/jsonrpc/json-scan'
import { isObject } from '../core/jsonrpc/jsonrpc'
import { ALL_VERSIONS, isKnownVersion, isModern, newestFirst, type ProtocolVersion } from '../core/jsonrpc/versions'
import { edgeOriginCredential, pullOriginTools } from '../core/call-context'
import { PUBLIC_SCOPE } from '../core/validation/caller-scope'
import { CALLER_SCOPE_EXPECTED, isCallerScope } from '../core/config-rules'
import type { ToolRecord } from '../core/validation/tool-record'
import {
  deleteStoredTool,
  getStoredTool,
  listStoredNames,
  MAX_TOOL_NAME,
  putStoredTools,
  readNames,
  toolListKey,
  toolNameProblem,
  toToolRecord,
} from '../core/validation/tool-store'
import { boundText } from '../core/jsonrpc/bound-text'

/** Resolves the ports for a request, as the app's `getDeps`. */
export type AdminDeps = (c: Context) => EdgeDeps

/** Most tool names one listing returns. */
export const MAX_LISTED = 10_000

/** One problem of a PUT body's entry: its position, its name when it has a usable one, and what is wrong. */
export interface EntryProblem {
  index: number
  name?: string
  problem: string
}

function shortName(v: unknown): string | undefined {
  return typeof v === 'string' ? boundText(v) : undefined
}

/** The origin id a path names, or null when nothing is configured under it. */
function originOf(deps: EdgeDeps, id: string): string | null {
  const t = id === 'default' ? originTarget(deps.config, undefined) : originTarget(deps.config, id)
  return t ? t.id : null
}

/** A JSON error answer: `{ "error": message, ...extra }`. */
function fail(c: Context, status: 400 | 401 | 404 | 409 | 413 | 429 | 502 | 503, message: string, extra: Record<string, unknown> = {}): Response {
  return c.json({ error: message, ...extra }, status)
}

/** Parses a JSON body already bounded in size: null with an answer when it is not usable. */
async function readJson(c: Context, maxDepth: number): Promise<{ body: unknown } | { refusal: Response }> {
  const text = await c.req.text()
  if (nestsDeeperThan(text, maxDepth)) return { refusal: fail(c, 400, `the body nests deeper than MAX_JSON_DEPTH (${maxDepth})`) }
  try {
    return { body: JSON.parse(text) as unknown }
  } catch {
    return { refusal: fail(c, 400, 'the body is not JSON: send { "tools": [ { "name", "inputSchema" } ] }') }
  }
}

/**
 * Checks the entries of a PUT body, as the registry would store them, and compiles each schema.
 * Malformed entries (not an object, no usable name, no inputSchema object, a repeated name) are
 * problems (with `keyScope`, also a name whose store key would be too long); a well-formed schema the edge cannot use (unsupported dialect, remote `$ref`, a
 * pattern it will not run, docs/validation.md) is not: it is stored and listed in `unusable`.
 * @returns the records to write with the unusable ones named, or every malformed entry's problem
 */
export function checkEntries(
  tools: unknown[],
  era: ProtocolVersion,
  deps: EdgeDeps,
  source: string | undefined,
  now: number,
  keyScope?: { origin: string; scope: string }
): { records: ToolRecord[]; unusable: EntryProblem[] } | { problems: EntryProblem[] } {
  const problems: EntryProblem[] = []
  const unusable: EntryProblem[] = []
  const records: ToolRecord[] = []
  const seen = new Set<string>()
  tools.forEach((t, index) => {
    const name = isObject(t) ? shortName(t.name) : undefined
    const problem = (text: string) => problems.push({ index, ...(name !== undefined ? { name } : {}), problem: text })
    if (!isObject(t)) return void problem('the entry must be an object { "name", "inputSchema" }')
    if (typeof t.name !== 'string') return void problem('name must be a string')
    if (t.name.length === 0 || t.name.length > MAX_TOOL_NAME) return void problem(`name must be 1 to ${MAX_TOOL_NAME} characters long`)
    const tooLong = keyScope === undefined ? null : toolNameProblem(t.name, keyScope.origin, keyScope.scope)
    if (tooLong !== null) return void problem(tooLong)
    if (seen.has(t.name)) return void problem('the name occurs twice in this body')
    seen.add(t.name)
    if (!('inputSchema' in t)) return void problem('inputSchema is missing')
    if (!isObject(t.inputSchema)) return void problem('inputSchema must be a JSON object (a JSON Schema)')
    if (t.outputSchema !== undefined && !isObject(t.outputSchema)) return void problem('outputSchema must be a JSON object (a JSON Schema) when present')
    // The record a tool list learned from the origin gives (tool-store.ts), without a freshness hint.
    const record = toToolRecord(t, era, now, source)
    if (!record) return void problem('inputSchema is missing')
    // The same compile the registry runs on first use. A schema it cannot use is stored all the
    // same (as from a tools/list, calls to it then follow ON_SCHEMA_ERROR) and reported.
    const resolved = deps.registry.resolve(record)
    const reason = resolved.unusable ?? resolved.outputUnusable
    if (reason !== undefined) unusable.push({ index, name: shortName(t.name)!, problem: reason })
    records.push(record)
  })
  return problems.length ? { problems } : { records, unusable }
}

/**
 * Creates the admin sub-app; the edge mounts it with `app.route('/admin', createAdminApi(getDeps))`.
 * Errors: 401 without or with a wrong token (400 for a malformed Authorization header, from
 * bearer-auth), 404 when the API is off or the origin/tool is unknown, 400 for a bad scope or body,
 * 413 past `MAX_BODY_BYTES`, 503 when the store fails, 429 when the origin's refresh budget is spent,
 * 502 when the refresh pull fails.
 */
export function createAdminApi(getDeps: AdminDeps): Hono {
  const admin = new Hono()
  // Off unless ADMIN_TOKEN is set: 404 before any other check, so an edge without it shows nothing.
  admin.use('*', async (c, next) => {
    const token = getDeps(c).config.adminToken
    if (!token) return fail(c, 404, 'the admin API is off (ADMIN_TOKEN is unset)')
    const auth = bearerAuth({
      token,
      noAuthenticationHeader: { message: { error: 'unauthorized: send Authorization: Bearer <ADMIN_TOKEN>' } },
      invalidAuthenticationHeader: { message: { error: 'bad request: the Authorization header is not a Bearer token' } },
      invalidToken: { message: { error: 'unauthorized: wrong token' } },
    })
    return auth(c, next)
  })
  admin.use('*', async (c, next) => {
    if (c.req.method !== 'PUT' && c.req.method !== 'POST') return next()
    const max = getDeps(c).config.maxBodyBytes
    // The rest of the body is not read: the connection is closed after the answer, so a client does not send its next request into it.
    return bodyLimit({ maxSize: max, onError: (c2) => c2.json({ error: `the body exceeds MAX_BODY_BYTES (${max} bytes)` }, 413, { connection: 'close' }) })(c, next)
  })

  /** The origin and scope of a tools route, or the answer refusing them. */
  const target = (c: Context): { deps: EdgeDeps; origin: string; scope: string } | Response => {
    const deps = getDeps(c)
    const origin = originOf(deps, c.req.param('origin') ?? '')
    if (origin === null) return fail(c, 404, 'unknown origin: use "default" (ORIGIN_URL) or a name of ORIGINS')
    const scope = c.req.query('scope') ?? PUBLIC_SCOPE
    if (!isCallerScope(scope)) return fail(c, 400, `scope must be ${CALLER_SCOPE_EXPECTED}`)
    return { deps, origin, scope }
  }

  admin.get('/registry', (c) => {
    const { registry } = getDeps(c)
    return c.json({ engine: registry.engineName, ...registry.stats, heldTools: registry.heldCount, compiledValidators: registry.compiledCount })
  })

  admin.get('/tools/:origin', async (c) => {
    const t = target(c)
    if (t instanceof Response) return t
    const { kv } = t.deps.registry
    try {
      const { names, listedBy } = await listStoredNames(kv, t.origin, t.scope, MAX_LISTED)
      const tools: Record<string, unknown>[] = []
      for (const name of names) {
        const rec = await getStoredTool(kv, t.origin, name, t.scope)
        if (rec)
          tools.push({
            name: rec.name,
            inputSchema: rec.inputSchema,
            ...(rec.outputSchema !== undefined ? { outputSchema: rec.outputSchema } : {}),
            hash: rec.hash,
            dialect: rec.dialect,
            ...(rec.fetchedAt !== undefined ? { fetchedAt: rec.fetchedAt } : {}),
          })
      }
      return c.json({ origin: t.origin, scope: t.scope, listedBy, tools })
    } catch {
      return fail(c, 503, 'the tool schema store is unavailable')
    }
  })

  admin.get('/tools/:origin/:name', async (c) => {
    const t = target(c)
    if (t instanceof Response) return t
    const refused = toolNameProblem(c.req.param('name'), t.origin, t.scope)
    if (refused !== null) return fail(c, 400, `${refused}: no such tool can be stored`)
    let rec: ToolRecord | null
    try {
      rec = await getStoredTool(t.deps.registry.kv, t.origin, c.req.param('name'), t.scope)
    } catch {
      return fail(c, 503, 'the tool schema store is unavailable')
    }
    if (!rec) return fail(c, 404, 'no such tool for this origin and scope')
    return c.json(rec)
  })

  admin.put('/tools/:origin', async (c) => {
    const t = target(c)
    if (t instanceof Response) return t
    const read = await readJson(c, t.deps.config.maxJsonDepth)
    if ('refusal' in read) return read.refusal
    const body = read.body
    if (!isObject(body) || !Array.isArray(body.tools)) return fail(c, 400, 'the body must be { "tools": [ { "name", "inputSchema" } ] }')
    if (body.protocolVersion !== undefined && !isKnownVersion(body.protocolVersion)) return fail(c, 400, `protocolVersion must be one of ${ALL_VERSIONS.join(', ')} when present`)
    const era: ProtocolVersion = isKnownVersion(body.protocolVersion) ? body.protocolVersion : '2025-11-25'
    const { registry } = t.deps
    const source = registry.sourceOf(t.origin)
    const checked = checkEntries(body.tools, era, t.deps, source, Date.now(), { origin: t.origin, scope: t.scope })
    if ('problems' in checked)
      return fail(c, 400, `${checked.problems.length} of ${body.tools.length} tool entries are malformed; nothing was stored`, { entries: checked.problems })
    try {
      // One read first (a store that is down answers 503 before anything is written), then one
      // write of the store, whole or not at all, the pushed names last (docs/admin-api.md).
      await putStoredTools(registry.kv, t.origin, t.scope, checked.records)
      for (const r of checked.records) registry.forget(t.origin, t.scope, r.name)
    } catch {
      return fail(c, 503, 'the tool schema store could not be written: the push is not (or not wholly) stored, send it again')
    }
    return c.json({ origin: t.origin, scope: t.scope, stored: checked.records.map((r) => r.name), ...(checked.unusable.length ? { unusable: checked.unusable } : {}) })
  })

  admin.delete('/tools/:origin/:name', async (c) => {
    const t = target(c)
    if (t instanceof Response) return t
    const name = c.req.param('name')
    const refused = toolNameProblem(name, t.origin, t.scope)
    if (refused !== null) return fail(c, 400, `${refused}: no such tool can be stored`)
    try {
      // The record and its name in the pulled and pushed name lists.
      if (!(await deleteStoredTool(t.deps.registry.kv, t.origin, name, t.scope))) return fail(c, 404, 'no such tool for this origin and scope')
      t.deps.registry.forget(t.origin, t.scope, name)
    } catch {
      return fail(c, 503, 'the tool schema store is unavailable')
    }
    return c.json({ deleted: shortName(name) })
  })

  admin.post('/tools/:origin/refresh', async (c) => {
    const t = target(c)
    if (t instanceof Response) return t
    const { deps } = t
    const url = t.origin === 'default' ? deps.config.originUrl : deps.config.origins[t.origin]!.url
    // The edge's own pull (core/call-context.ts): the edge's credential with auth on (never the admin
    // token, and no caller's), and the tools TOOLS_ALLOW / TOOLS_DENY hide left out.
    const authorization = edgeOriginCredential(deps)
    // The newest version the edge supports that has an initialize handshake (the origin may answer with another).
    const era = newestFirst(deps.config.supportedVersions).find((v) => !isModern(v)) ?? deps.config.supportedVersions[0]!
    const refused = deps.registry.stats.refreshesRefused
    // "Now": this scope's rate-limit interval is skipped (the origin's budget is not).
    deps.registry.invalidate(t.origin, t.scope)
    const ok = await deps.registry.refresh(t.origin, t.scope, () => pullOriginTools(deps, { id: t.origin, url }, era, authorization))
    if (!ok && deps.registry.stats.refreshesRefused > refused)
      return fail(c, 429, `the refresh budget of this origin is spent (REFRESH_BUDGET_PER_MIN ${deps.config.refreshBudgetPerMin}); try again within a minute`)
    if (!ok) return fail(c, 502, 'the origin did not give its tool list (see the edge log for the cause)')
    let names: string[] = []
    try {
      names = await readNames(deps.registry.kv, toolListKey(t.origin, t.scope))
    } catch {
      // listed below as empty; the refresh itself succeeded
    }
    return c.json({ origin: t.origin, scope: t.scope, refreshed: true, tools: names })
  })

  // ---------------------------------------------------------- tool pins (docs/pinning.md)

  /** The operator's actions over this instance's pin book (pinning/pin-operations.ts). */
  const pinOperations = (deps: EdgeDeps) => new PinOperations(pinBook(deps))
  /** A pins route's target, with the pin book; a store failure answers 503. */
  const pins = async (c: Context, run: (t: { deps: EdgeDeps; origin: string; scope: string }) => Promise<Response>): Promise<Response> => {
    const t = target(c)
    if (t instanceof Response) return t
    try {
      return await run(t)
    } catch {
      return fail(c, 503, 'the pin store is unavailable')
    }
  }
  /** The `{ "digest": "sha256:..." }` body of approve and reject. */
  const digestBody = async (c: Context, deps: EdgeDeps): Promise<{ digest: ToolDigest } | { refusal: Response }> => {
    const read = await readJson(c, deps.config.maxJsonDepth)
    if ('refusal' in read) return read
    const b = read.body
    if (!isObject(b) || !isToolDigest(b.digest))
      return { refusal: fail(c, 400, 'the body must be { "digest": "sha256:<64 lower-case hex digits>" }, the served digest from GET /admin/pins/<origin>') }
    return { digest: b.digest }
  }

  admin.get('/pins/:origin', (c) => pins(c, async (t) => c.json(await pinOperations(t.deps).status(t.origin, t.scope))))

  admin.get('/pins/:origin/manifest', (c) =>
    pins(c, async (t) => {
      const m = await pinOperations(t.deps).manifest(t.origin, t.scope)
      if (!m) return fail(c, 409, 'the stored pins hold a name that has no canonical JSON form; no manifest can be written')
      return c.json(m)
    })
  )

  admin.put('/pins/:origin/manifest', (c) =>
    pins(c, async (t) => {
      const text = await c.req.text()
      if (nestsDeeperThan(text, t.deps.config.maxJsonDepth)) return fail(c, 400, `the body nests deeper than MAX_JSON_DEPTH (${t.deps.config.maxJsonDepth})`)
      const r = await pinOperations(t.deps).importManifest(t.origin, t.scope, text)
      if (!r.ok) return fail(c, 400, 'the manifest is not valid; nothing was imported', { errors: r.errors })
      return c.json({ imported: r.imported })
    })
  )

  admin.post('/pins/:origin/approve-cosmetic', (c) => pins(c, async (t) => c.json({ approved: await pinOperations(t.deps).approveCosmetic(t.origin, t.scope) })))

  // The origin's server instructions (pinning/instructions-pin.ts): one pin per origin, whatever scope.
  admin.get('/pins/:origin/instructions', (c) => pins(c, async (t) => c.json(await pinOperations(t.deps).instructions(t.origin))))

  admin.post('/pins/:origin/approve-instructions', (c) =>
    pins(c, async (t) => {
      const b = await digestBody(c, t.deps)
      if ('refusal' in b) return b.refusal
      const r = await pinOperations(t.deps).approveInstructions(t.origin, b.digest)
      if (r.ok) return c.json({ digest: r.digest, approvedAt: r.approvedAt, effectiveFrom: r.effectiveFrom })
      if (r.reason === 'unknown') return fail(c, 404, `no instructions: ${r.message}`)
      return fail(c, 409, `not approved: ${r.message}`, { servedDigest: r.servedDigest })
    })
  )

  admin.post('/pins/:origin/reject-instructions', (c) =>
    pins(c, async (t) => {
      const b = await digestBody(c, t.deps)
      if ('refusal' in b) return b.refusal
      if (!(await pinOperations(t.deps).rejectInstructions(t.origin, b.digest)))
        return fail(c, 404, 'no instructions: the origin has served none this edge kept, and none is pinned')
      return c.json({ rejectedDigest: b.digest })
    })
  )

  admin.get('/pins/:origin/:tool/diff', (c) =>
    pins(c, async (t) => {
      const d = await pinOperations(t.deps).diff(t.origin, t.scope, c.req.param('tool'))
      if (!d) return fail(c, 404, 'no such tool: it is neither served (in the last tools/list relayed) nor pinned for this origin and scope')
      return c.json(d)
    })
  )

  admin.post('/pins/:origin/:tool/approve', (c) =>
    pins(c, async (t) => {
      const b = await digestBody(c, t.deps)
      if ('refusal' in b) return b.refusal
      const name = c.req.param('tool')
      const r = await pinOperations(t.deps).approve(t.origin, t.scope, name, b.digest)
      if (r.ok) return c.json({ name: shortName(r.name), digest: r.digest, approvedAt: r.approvedAt, effectiveFrom: r.effectiveFrom })
      if (r.reason === 'unknown') return fail(c, 404, `no such tool: ${r.message}`)
      return fail(c, 409, `not approved: ${r.message}`, { servedDigest: r.servedDigest })
    })
  )

  admin.post('/pins/:origin/:tool/reject', (c) =>
    pins(c, async (t) => {
      const b = await digestBody(c, t.deps)
      if ('refusal' in b) return b.refusal
      const name = c.req.param('tool')
      if (!(await pinOperations(t.deps).reject(t.origin, t.scope, name, b.digest))) return fail(c, 404, 'no such tool: it is neither served nor pinned for this origin and scope')
      return c.json({ name: shortName(name), rejectedDigest: b.digest })
    })
  )

  admin.all('*', (c) => fail(c, 404, 'no such admin route (docs/admin-api.md)'))
  admin.onError((err, c) => {
    if (err instanceof HTTPException) return err.getResponse()
    return c.json({ error: 'internal error in the admin API' }, 500)
  })
  return admin
}
