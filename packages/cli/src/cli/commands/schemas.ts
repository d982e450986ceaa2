/**
 * @module cli/commands/schemas
 * `mcp-edge schemas list|get|push|pull|delete`: the tool schemas the edge validates with, either
 * through a running edge's admin API (`--edge <url> --token <token>`, bearer `ADMIN_TOKEN`) or
 * directly in a store (`--store-file <path>`, whose edge must be stopped: one process per file;
 * or `--store-url redis://...` with `--store-prefix`, shared with running edges, which see the
 * change at once: stores/node-store.ts). Records are keyed per origin name (`--origin`, default `default`, the
 * origin of `ORIGIN_URL`), public scope (docs/cli.md).
 *
 * The file `pull` writes and `push` reads is the admin API's body: `{ "tools": [ { "name",
 * "inputSchema", "outputSchema"? } ] }`.
 *
 * Exit statuses: 0 done, 1 a runtime error (edge unreachable, token refused, no such tool, store
 * unreadable; one line on stderr), 2 a bad command line (also: neither or both of --edge and
 * --store-file).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import type { Command } from 'commander'
import { loadNodeConfig, openNodeStore } from 'mcp-edge-validator/node'
import { ConfigError, isOriginName, loadConfig, ORIGIN_NAME_EXPECTED, showValue } from 'mcp-edge-validator/rules'
import type { KvStore } from 'mcp-edge-validator/rules'
import { DEFAULT_VERSION, isKnownVersion } from 'mcp-edge-validator/rules'
import { createToolRegistry, type ToolRecord } from 'mcp-edge-validator/rules'
import { deleteStoredTool, getStoredTool, listStoredTools, portable, StoreCannotListError, type PortableTool } from 'mcp-edge-validator/rules'
import { createCfworkerEngine } from 'mcp-edge-validator/rules'
import { storeFileState } from '../store-file-check'
import { EdgeError } from 'mcp-edge-validator/rules'

/** Options shared by every `schemas` action. */
interface Target {
  edge?: string
  token?: string
  storeFile?: string
  storeUrl?: string
  storePrefix?: string
  origin: string
}

/** A failure to report as one line with exit status 1. */
class SchemasError extends EdgeError {
  override readonly name = 'SchemasError'
  override readonly code = 'EDGE_ERR_CLI_FAILED'
}
/** A bad command line (exit status 2). */
class UsageError extends EdgeError {
  override readonly name = 'UsageError'
  override readonly code = 'EDGE_ERR_CLI_USAGE'
}

/** A tool record as list/get show it: the portable form plus its hash and when it was fetched. */
type ShownTool = PortableTool & { hash?: string; fetchedAt?: number }

/** What an action needs from its target (the admin API or a store). */
interface SchemaBackend {
  list(): Promise<ShownTool[]>
  get(name: string): Promise<ShownTool | null>
  push(tools: unknown[], protocolVersion?: string): Promise<string[]>
  delete(name: string): Promise<boolean>
  close(): Promise<void>
}

/** Registers `schemas` and its actions on the program. */
export function addSchemasCommand(program: Command): void {
  const schemas = program
    .command('schemas')
    .description("Manage the edge's tool schemas: through a running edge's admin API (--edge, --token) or directly in a store (--store-file).")
  schemas.addHelpText(
    'after',
    `
Exit statuses: 0 done, 1 runtime error (one line on stderr), 2 bad command line.

Examples:
  ADMIN_TOKEN=s3cret mcp-edge schemas list --edge http://127.0.0.1:8787
  mcp-edge schemas pull tools.json --edge http://127.0.0.1:8787 --token s3cret
  mcp-edge schemas push tools.json --store-file .edge-data/kv.json   # edge stopped
  mcp-edge schemas get get_forecast --edge https://edge.example.com --origin weather`
  )
  const common = (cmd: Command) =>
    cmd
      .option('--edge <url>', 'base URL of a running edge (its admin API), e.g. http://127.0.0.1:8787')
      .option('--token <token>', "the edge's ADMIN_TOKEN (default: the ADMIN_TOKEN variable)")
      .option('--store-file <path>', 'work on this store file directly (the edge using it must be stopped)')
      .option('--store-url <url>', 'work on this Redis store directly: redis://[user:password@]host[:port][/db] (edges on it see changes at once)')
      .option('--store-prefix <prefix>', 'prefix of the Redis keys (default mcp-edge:, as STORE_PREFIX)')
      .option('--origin <name>', 'origin name: "default" for ORIGIN_URL, else a name of ORIGINS', 'default')
  // commander calls an action with its arguments, then the options, then the command.
  const run =
    (action: (b: SchemaBackend, args: (string | undefined)[], opts: Record<string, unknown>) => Promise<void>) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command
      const positional = args.slice(0, -2) as (string | undefined)[]
      process.exitCode = await runAction(cmd.name(), cmd.opts() as Target, (b) => action(b, positional, cmd.opts()))
    }

  common(schemas.command('list').description('list the stored tools of an origin: name, schema hash, when it was fetched (or "pushed")'))
    .option('--json', 'print { "tools": [...] } instead of one line per tool')
    .action(
      run(async (b, _args, opts) => {
        const tools = await b.list()
        if (opts.json) return void process.stdout.write(`${JSON.stringify({ tools }, null, 2)}\n`)
        for (const t of tools) process.stdout.write(`${t.name}\t${t.hash ?? '-'}\t${t.fetchedAt !== undefined ? new Date(t.fetchedAt).toISOString() : 'pushed'}\n`)
      })
    )
  common(schemas.command('get').argument('<tool>', 'tool name').description("print one tool's stored record as JSON")).action(
    run(async (b, [name]) => {
      const t = await b.get(name!)
      if (!t) throw new SchemasError(`no stored schema for tool ${showValue(name!)}`)
      process.stdout.write(`${JSON.stringify(t, null, 2)}\n`)
    })
  )
  common(
    schemas.command('push').argument('<file>', 'JSON file { "tools": [ { "name", "inputSchema" } ] }, or - for stdin').description('store the tools of a file (what pull writes)')
  ).action(
    run(async (b, [file]) => {
      const body = readToolsFile(file!)
      const stored = await b.push(body.tools, body.protocolVersion)
      process.stdout.write(`stored ${stored.length} tool${stored.length === 1 ? '' : 's'}: ${stored.join(', ')}\n`)
    })
  )
  common(
    schemas.command('pull').argument('[file]', 'file to write (default: stdout)').description('write every stored tool of an origin as { "tools": [...] } (what push reads)')
  ).action(
    run(async (b, [file]) => {
      const tools = (await b.list()).map(({ name, inputSchema, outputSchema }) => ({ name, inputSchema, ...(outputSchema !== undefined ? { outputSchema } : {}) }))
      const text = `${JSON.stringify({ tools }, null, 2)}\n`
      if (file && file !== '-') {
        writeFileSync(file, text)
        process.stderr.write(`pulled ${tools.length} tool${tools.length === 1 ? '' : 's'} into ${file}\n`)
      } else process.stdout.write(text)
    })
  )
  common(schemas.command('delete').argument('<tool>', 'tool name').description("delete one tool's stored record (the edge pulls the origin's list again on the next call)")).action(
    run(async (b, [name]) => {
      if (!(await b.delete(name!))) throw new SchemasError(`no stored schema for tool ${showValue(name!)}`)
      process.stdout.write(`deleted ${name}\n`)
    })
  )
}

/** Reads and checks a tools file (`-`: stdin). */
function readToolsFile(file: string): { tools: unknown[]; protocolVersion?: string } {
  let text: string
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8')
  } catch (e) {
    throw new SchemasError(`cannot read ${showValue(file)}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new SchemasError(`${showValue(file)} is not JSON: expected { "tools": [ { "name", "inputSchema" } ] }`)
  }
  const o = body as { tools?: unknown; protocolVersion?: unknown }
  if (!o || typeof o !== 'object' || !Array.isArray(o.tools)) throw new SchemasError(`${showValue(file)}: expected { "tools": [ { "name", "inputSchema" } ] }`)
  const bad = o.tools.findIndex(
    (t) => !t || typeof t !== 'object' || typeof (t as { name?: unknown }).name !== 'string' || (t as { name: string }).name === '' || !('inputSchema' in t)
  )
  if (bad >= 0) throw new SchemasError(`${showValue(file)}: tools[${bad}] needs a non-empty "name" and an "inputSchema"`)
  return { tools: o.tools, ...(typeof o.protocolVersion === 'string' ? { protocolVersion: o.protocolVersion } : {}) }
}

/** Runs one action against the target the options name; returns the exit status. */
async function runAction(action: string, opts: Target, body: (b: SchemaBackend) => Promise<void>): Promise<number> {
  let backend: SchemaBackend | null = null
  try {
    backend = await openBackend(action, opts)
    await body(backend)
    await backend.close()
    return 0
  } catch (e) {
    await backend?.close().catch(() => undefined)
    process.stderr.write(`mcp-edge schemas ${action}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`)
    return e instanceof UsageError ? 2 : 1
  }
}

async function openBackend(action: string, opts: Target): Promise<SchemaBackend> {
  if (!isOriginName(opts.origin)) throw new UsageError(`--origin ${showValue(opts.origin)}: expected ${ORIGIN_NAME_EXPECTED}`)
  const targets = [opts.edge, opts.storeFile, opts.storeUrl].filter((t) => t !== undefined).length
  if (targets !== 1) throw new UsageError('give exactly one of --edge <url> (a running edge), --store-file <path> or --store-url <redis url> (a store)')
  if (opts.edge !== undefined) return adminBackend(opts.edge, opts.token ?? process.env.ADMIN_TOKEN, opts.origin)
  if (opts.storeFile !== undefined) checkStoreFile(opts.storeFile, action === 'push')
  const env =
    opts.storeUrl !== undefined ? { STORE_URL: opts.storeUrl, ...(opts.storePrefix !== undefined ? { STORE_PREFIX: opts.storePrefix } : {}) } : { STORE_FILE: opts.storeFile }
  return storeBackend(env, opts.storeUrl !== undefined ? 'STORE_URL' : opts.storeFile!, opts.origin)
}

/** The admin API of a running edge. */
function adminBackend(edge: string, token: string | undefined, origin: string): SchemaBackend {
  let base: URL
  try {
    base = new URL(edge)
  } catch {
    throw new UsageError(`--edge ${showValue(edge)}: expected the edge's http:// or https:// base URL, such as http://127.0.0.1:8787`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new UsageError(`--edge ${showValue(edge)}: expected the edge's http:// or https:// base URL, such as http://127.0.0.1:8787`)
  if (!token) throw new UsageError('no admin token: give --token <token> or set ADMIN_TOKEN')
  const root = `${base.origin}${base.pathname.replace(/\/(mcp)?\/?$/, '')}/admin/tools/${encodeURIComponent(origin)}`
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    let r: Response
    try {
      r = await fetch(root + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      })
    } catch (e) {
      const c = (e as { cause?: { code?: string; message?: string } }).cause
      const cause = c?.code ?? c?.message ?? (e as Error).name
      throw new SchemasError(`cannot reach the edge at ${base.origin}: ${cause}`)
    }
    let json: unknown = null
    try {
      json = await r.json()
    } catch {
      // not JSON: judged by the status alone
    }
    if (r.status === 401) throw new SchemasError(`the edge at ${base.origin} refused the token (401): check --token or ADMIN_TOKEN`)
    if (r.status === 404 && (json as { error?: string } | null)?.error?.includes('admin API is off'))
      throw new SchemasError(`the admin API is off on the edge at ${base.origin} (its ADMIN_TOKEN is unset)`)
    if (r.status === 501) throw new SchemasError(`the edge at ${base.origin} runs on a store that cannot list its keys`)
    if (r.status >= 500) throw new SchemasError(`the edge at ${base.origin} answered ${r.status}: ${(json as { error?: string } | null)?.error ?? 'no detail'}`)
    return { status: r.status, json }
  }
  return {
    list: async () => {
      const r = await call('GET', '')
      const tools = (r.json as { tools?: ShownTool[] } | null)?.tools
      if (r.status !== 200 || !Array.isArray(tools)) throw new SchemasError(`unexpected answer from the edge (${r.status}); is ${base.origin} an mcp-edge?`)
      return tools
    },
    get: async (name) => {
      const r = await call('GET', `/${encodeURIComponent(name)}`)
      if (r.status === 404) return null
      if (r.status !== 200) throw new SchemasError(`unexpected answer from the edge (${r.status})`)
      return r.json as ShownTool
    },
    push: async (tools, protocolVersion) => {
      const r = await call('PUT', '', { tools, ...(protocolVersion ? { protocolVersion } : {}) })
      const stored = (r.json as { stored?: string[] } | null)?.stored
      if (r.status !== 200 || !Array.isArray(stored))
        throw new SchemasError(`the edge did not store the tools (${r.status}): ${(r.json as { error?: string } | null)?.error ?? 'no detail'}`)
      return stored
    },
    delete: async (name) => {
      const r = await call('DELETE', `/${encodeURIComponent(name)}`)
      if (r.status === 404) return false
      if (r.status !== 200) throw new SchemasError(`unexpected answer from the edge (${r.status})`)
      return true
    },
    close: async () => {},
  }
}

/**
 * Refuses a `--store-file` that is not an edge's store before it is opened (cli/store-file-check.ts):
 * it would otherwise be read as an empty store and written over on close; a missing one would be
 * created by a read. Only `push` may create the file.
 * @throws SchemasError naming the file; the file is left as it is
 */
function checkStoreFile(file: string, mayCreate: boolean): void {
  const state = storeFileState(file)
  if (state.kind === 'store' || (state.kind === 'missing' && mayCreate)) return
  if (state.kind === 'missing') throw new SchemasError(`no store file at ${showValue(file)}: check --store-file (the edge keeps it at STORE_FILE, default .edge-data/kv.json)`)
  if (state.kind === 'unreadable') throw new SchemasError(`cannot read ${showValue(file)}: ${state.code}`)
  throw new SchemasError(`${showValue(file)} is not an edge store file (left as it is): check --store-file`)
}

/**
 * A store opened directly, as `mcp-edge serve` opens it (stores/node-store.ts): a file (locked
 * while open, so never beside a running edge) or Redis.
 * @throws ConfigError for a bad --store-url / --store-prefix, the store's own errors (file locked by
 *   a running edge, unreadable file, Redis unreachable): each a one-line message
 */
async function storeBackend(env: Record<string, string | undefined>, what: string, origin: string): Promise<SchemaBackend> {
  let store
  try {
    store = await openNodeStore(loadNodeConfig(env))
  } catch (e) {
    // The flag's name instead of the variable's (the value is already redacted).
    if (e instanceof ConfigError && e.variable && e.shown !== undefined && e.expected !== undefined)
      throw new SchemasError(`--${e.variable.toLowerCase().replaceAll('_', '-')} ${e.shown}: expected ${e.expected}`)
    throw e
  }
  try {
    await store.ready()
  } catch (e) {
    await store.close().catch(() => undefined)
    throw e
  }
  const kv = store.kv
  const shown = (r: ToolRecord): ShownTool => ({ ...portable(r), hash: r.hash, ...(r.fetchedAt !== undefined ? { fetchedAt: r.fetchedAt } : {}) })
  return {
    list: async () => {
      try {
        return (await listStoredTools(kv, origin)).map(shown)
      } catch (e) {
        if (e instanceof StoreCannotListError) throw new SchemasError(`the store ${showValue(what)} cannot list its keys`)
        throw e
      }
    },
    get: async (name) => {
      const r = await getStoredTool(kv, origin, name)
      return r ? shown(r) : null
    },
    push: async (tools, protocolVersion) => {
      // The same record as a tool list learned from the origin (tool-registry.ts learn); every record written or an error.
      let config
      try {
        config = loadConfig({})
      } catch (e) {
        throw e instanceof ConfigError ? new SchemasError(e.message) : e
      }
      const registry = createToolRegistry(config, kv, createCfworkerEngine())
      return registry.learn(origin, 'public', tools, isKnownVersion(protocolVersion) ? protocolVersion : DEFAULT_VERSION, undefined, { mustStore: true })
    },
    delete: (name) => deleteStoredTool(kv, origin, name),
    close: () => store.close(),
  }
}
