/**
 * @module cli/commands/tools
 * `mcp-edge tools list|diff|approve|reject|export|import`: the operator's side of tool pinning
 * (and of the origin's server instructions, pinned like tools: a `(instructions)` row in `list`,
 * `diff --instructions`, `approve --instructions <digest>`, `reject --instructions <digest>`)
 * (docs/pinning.md "Operator flow") through a running edge's admin API (`--edge <url>` or the
 * `MCP_EDGE_URL` variable, `--token <token>` or `ADMIN_TOKEN`; routes `/admin/pins/:origin...`,
 * docs/admin-api.md), per origin name (`--origin`, default `default`) and caller scope (`--scope`,
 * default `public`). The commands it suggests (`review: ...`, `approve: ...`) run as printed in the
 * same shell: they carry the `--edge`, `--origin` and `--scope` given as flags, never the token.
 *
 * Every string the edge relays from a tool server (names, advisory excerpts, pointers, messages)
 * reaches the terminal only through the report's sanitiser (check/safe-text.ts) in text output, or
 * as JSON escapes in JSON output and in the manifest file (the same values, no raw control,
 * bidi or zero-width character).
 *
 * Exit statuses: 0 done; 1 refused (a stale or wrong digest, an invalid manifest, no such tool,
 * the token refused, a file that is not a manifest); 2 a bad command line; 3 the edge unreachable
 * or answering 5xx (its pin store unavailable included). One line on stderr for each failure
 * (an invalid manifest adds one indented line per parse error).
 */
import { open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { realpathSync } from 'node:fs'
import { dirname } from 'node:path'
import { Option, type Command } from 'commander'
import { CALLER_SCOPE_EXPECTED, EdgeError, isCallerScope, isOriginName, isToolDigest, ORIGIN_NAME_EXPECTED, parseApprovalArgument, showValue } from 'mcp-edge-validator/rules'
import { diffLines } from 'diff'
import { safeText } from '../../check/safe-text'

/** The exit status of a refusal (stale digest, invalid manifest, ...). */
export const REFUSED_EXIT = 1
/** The exit status of a bad command line (as commander's own errors: cli/main.ts USAGE_EXIT). */
export const USAGE_EXIT = 2
/** The exit status when the edge cannot be reached or answers 5xx. */
export const UNREACHABLE_EXIT = 3

/** A failure reported as one line on stderr; `exit` is the status it ends with (1, 2 or 3). */
class ToolsCommandError extends EdgeError {
  override readonly name = 'ToolsCommandError'
  override readonly code = 'EDGE_ERR_CLI_TOOLS'
  constructor(
    message: string,
    readonly exit: 1 | 2 | 3 = REFUSED_EXIT,
    /** Further lines (an invalid manifest's parse errors), each already sanitised. */
    readonly details: string[] = []
  ) {
    super(message)
  }
}

const refused = (message: string, details: string[] = []) => new ToolsCommandError(message, REFUSED_EXIT, details)
const usage = (message: string) => new ToolsCommandError(message, USAGE_EXIT)

/** Options shared by every `tools` action. */
interface Target {
  edge?: string
  token?: string
  origin: string
  scope: string
  /** Where --edge came from: `cli` (the flag, repeated in suggested commands) or `env` (MCP_EDGE_URL). */
  edgeSource?: string
  /** Where --token came from: `cli` means suggested commands need ADMIN_TOKEN set to run as printed. */
  tokenSource?: string
}

/** Longest server string shown in a text row, in characters (a 1 MiB tool name is not printed whole). */
const MAX_SHOWN = 200
/** Advisory findings shown per tool by `list` (`diff` shows them all). */
const LIST_ADVISORIES = 5

/** One tool of `GET /admin/pins/:origin` (src/core/pinning/pin-operations.ts PinStatusTool). */
interface PinStatusTool {
  name: string
  state: string
  approvedDigest: string | null
  servedDigest: string | null
  approvedAt: string | null
  effectiveFrom: string | null
  source?: string | null
  rejectedDigest?: string | null
  advisories?: Advisory[]
}
interface Advisory {
  kind: string
  pointer: string
  in: string
  reason: string
  excerpt: string
}
interface PinStatus {
  origin: string
  scope: string
  mode: string
  catalogDigest: string | null
  servedAt: string | null
  tools: PinStatusTool[]
}
interface PinDiff {
  name: string
  state: string
  approvedDigest: string | null
  servedDigest: string | null
  class: string
  changes: { field: string; change: string; class: string; approved: string | null; served: string | null; approvedValue?: unknown; servedValue?: unknown }[]
  advisories?: Advisory[]
}

/** `GET /admin/pins/:origin/instructions` (src/core/pinning/pin-operations.ts InstructionsStatus). */
interface InstructionsStatus {
  state: string
  approvedDigest: string | null
  servedDigest: string | null
  approvedAt: string | null
  effectiveFrom: string | null
  rejectedDigest?: string | null
  approved?: string | null
  served?: string | null
  advisories?: Advisory[]
}

/** The name of the instructions row in `list` (a tool name never has parentheses in 2025-11-25 and later). */
const INSTRUCTIONS_ROW = '(instructions)'

/** Server text for one cell of a text row: sanitised, cut; `-` for null or a non-string. */
function shown(v: unknown, max = MAX_SHOWN): string {
  return typeof v === 'string' && v !== '' ? safeText(v, max) : '-'
}

/**
 * Characters a JSON text never carries raw in this command's output: C1 controls and DEL, the soft
 * hyphen, the Arabic letter mark, the Mongolian vowel separator, zero-width and bidi characters,
 * line and paragraph separators, word joiners and invisible operators, the BOM, and Unicode tag
 * characters (U+E0000-E007F, a surrogate pair). JSON.stringify already escapes C0 controls and
 * lone surrogates. Outside strings a JSON text is ASCII, so each match is inside a string.
 */
const JSON_UNSAFE = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\udb40[\udc00-\udc7f]/g

/** `value` as pretty JSON whose every unsafe character ({@link JSON_UNSAFE}) is a `\uXXXX` escape: JSON.parse gives back the same value. */
export function safeJson(value: unknown): string {
  // Per UTF-16 code unit: a tag character is a surrogate pair, written as two escapes.
  const escape = (m: string) => Array.from({ length: m.length }, (_, i) => `\\u${m.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')
  return JSON.stringify(value, null, 2).replace(JSON_UNSAFE, escape) + '\n'
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/** An object with a string `name` (a tool of the status answer). */
const isNamed = (v: unknown) => isObject(v) && typeof v.name === 'string'

/** A tool name as an argument of a suggested command line: bare when plain, else single-quoted (sanitised). */
function shellWord(name: string): string {
  return /^[A-Za-z0-9_.:@/-]+$/.test(name) && name.length <= MAX_SHOWN ? name : `'${shown(name).replaceAll("'", "'\\''")}'`
}

/** Registers `tools` and its actions on the program. */
export function addToolsCommand(program: Command): void {
  const tools = program
    .command('tools')
    .description("Review and approve the edge's pinned tool definitions (TOOL_PINNING, docs/pinning.md) through a running edge's admin API (--edge, --token).")
  tools.addHelpText(
    'after',
    `
Exit statuses: 0 done, 1 refused (stale or wrong digest, invalid manifest, no such tool, token refused),
2 bad command line, 3 edge unreachable or answering 5xx.

Examples:
  export MCP_EDGE_URL=http://127.0.0.1:8787 ADMIN_TOKEN=s3cret
  mcp-edge tools list
  mcp-edge tools diff get_forecast
  mcp-edge tools approve get_forecast@sha256:<digest served now>
  mcp-edge tools approve --all-cosmetic
  mcp-edge tools export --out pins.json
  mcp-edge tools import pins.json --origin weather
  mcp-edge tools list --edge http://10.0.0.5:8080      # another edge than MCP_EDGE_URL's`
  )
  const common = (cmd: Command) =>
    cmd
      .addOption(new Option('--edge <url>', 'base URL of a running edge (its admin API), e.g. http://127.0.0.1:8787').env('MCP_EDGE_URL'))
      .option('--token <token>', "the edge's ADMIN_TOKEN (default: the ADMIN_TOKEN variable)")
      .option('--origin <name>', 'origin name: "default" for ORIGIN_URL, else a name of ORIGINS', 'default')
      .option('--scope <scope>', 'caller scope: "public" or a private scope "u-<64 hex>" (docs/scope.md)', 'public')
  // commander calls an action with its arguments, then the options, then the command.
  const run =
    (action: (api: PinsApi, args: (string | undefined)[], opts: Record<string, unknown>) => Promise<void>) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command
      const positional = args.slice(0, -2) as (string | undefined)[]
      const target = { ...(cmd.opts() as Target), edgeSource: cmd.getOptionValueSource('edge'), tokenSource: cmd.getOptionValueSource('token') }
      process.exitCode = await runAction(cmd.name(), target, (api) => action(api, positional, cmd.opts()))
    }

  common(tools.command('list').description('per tool: state, approved digest, served digest, approved at, effective from, and advisory findings'))
    .option('--json', 'print the admin API answer as JSON instead of one line per tool')
    .action(
      run(async (api, _args, opts) => {
        const s = await api.status()
        const i = await api.instructions()
        const shownInstructions = i !== null && i.state !== 'none' ? i : null
        if (opts.json) return void process.stdout.write(safeJson(shownInstructions ? { ...s, instructions: shownInstructions } : s))
        printStatus(s, api, shownInstructions)
      })
    )
  common(tools.command('diff').argument('[tool]', 'tool name').description('field by field: material or cosmetic, the approved and served sub-digests, and the advisory findings'))
    .option('--instructions', "the origin's server instructions instead of a tool: the approved and the served text, line by line")
    .action(
      run(async (api, [name], opts) => {
        if (opts.instructions) {
          if (name !== undefined) throw usage('give either <tool> or --instructions, not both')
          const i = await api.instructions()
          if (i === null) throw refused('the edge has no server instructions pinning (/admin/pins/<origin>/instructions)')
          return printInstructionsDiff(i, api)
        }
        if (name === undefined) throw usage('give <tool> (a name from `mcp-edge tools list`), or --instructions')
        printDiff(await api.diff(name), api)
      })
    )
  common(
    tools
      .command('approve')
      .argument('[tool@digest]', 'the tool and the digest it is served with now, e.g. get_forecast@sha256:<64 hex> (from `mcp-edge tools list`)')
      .description('approve the exact digest served now (a stale or wrong digest is refused, exit 1)')
  )
    .option('--all-cosmetic', 'approve every changed tool whose change is cosmetic only (title, icons), each at its served digest')
    .option('--instructions', "approve the origin's server instructions: the argument is the digest they are served with now (sha256:<64 hex>)")
    .action(
      run(async (api, [arg], opts) => {
        if (opts.instructions) {
          if (opts.allCosmetic) throw usage('give either --instructions or --all-cosmetic, not both')
          if (!isToolDigest(arg)) throw usage('give --instructions sha256:<64 hex>: the digest the instructions are served with now (from `mcp-edge tools list`)')
          const r = await api.approveInstructions(arg)
          return void process.stdout.write(
            `approved the server instructions @${r.digest}: approved at ${shown(r.approvedAt)}, effective from ${shown(r.effectiveFrom)} on every edge\n`
          )
        }
        if (opts.allCosmetic) {
          if (arg !== undefined) throw usage('give either <tool>@<digest> or --all-cosmetic, not both')
          const names = await api.approveCosmetic()
          if (names.length === 0) return void process.stdout.write('no changed tool has a cosmetic-only change: nothing approved\n')
          return void process.stdout.write(`approved ${names.length} cosmetic-only change${names.length === 1 ? '' : 's'}: ${names.map((n) => shown(n)).join(', ')}\n`)
        }
        if (arg === undefined) throw usage('give <tool>@<digest> (the digest served now, from `mcp-edge tools list`), or --all-cosmetic')
        const a = parseApprovalArgument(arg)
        if (!a.ok) throw usage(a.message)
        const r = await api.approve(a.name, a.digest)
        process.stdout.write(`approved ${shown(a.name)}@${r.digest}: approved at ${shown(r.approvedAt)}, effective from ${shown(r.effectiveFrom)} on every edge\n`)
      })
    )
  common(
    tools
      .command('reject')
      .argument('<tool@digest>', 'the tool and the served digest to reject, e.g. get_forecast@sha256:<64 hex>')
      .description('record a rejection of a served definition: the tool stays blocked, the approved pin (if any) stays in force')
  )
    .option('--instructions', "reject the origin's server instructions: the argument is the served digest (sha256:<64 hex>)")
    .action(
      run(async (api, [arg], opts) => {
        if (opts.instructions) {
          if (!isToolDigest(arg)) throw usage('give --instructions sha256:<64 hex>: the served digest of the instructions (from `mcp-edge tools list`)')
          await api.rejectInstructions(arg)
          return void process.stdout.write(`rejected the server instructions @${arg}: they stay held; the approved ones, if any, stay in force\n`)
        }
        const a = parseApprovalArgument(arg!)
        if (!a.ok) throw usage(a.message)
        await api.reject(a.name, a.digest)
        process.stdout.write(`rejected ${shown(a.name)}@${a.digest}: it stays blocked; the approved pin, if any, stays in force\n`)
      })
    )
  common(tools.command('export').description('write the manifest of every pin of the origin and scope (for review in version control)'))
    .option('--out <file>', 'file to write (default: stdout); replaced atomically, and only when it already holds a manifest')
    .option('--force', 'replace --out even when the file there is not a manifest')
    .action(
      run(async (api, _args, opts) => {
        const m = await api.manifest()
        const text = safeJson(m)
        const out = opts.out as string | undefined
        if (out === undefined || out === '-') return void process.stdout.write(text)
        await writeManifestFile(out, text, opts.force === true)
        const n = Array.isArray((m as { pins?: unknown }).pins) ? (m as { pins: unknown[] }).pins.length : 0
        process.stderr.write(`exported ${n} pin${n === 1 ? '' : 's'} into ${showValue(out)}\n`)
      })
    )
  common(
    tools
      .command('import')
      .argument('<file>', 'a manifest file (what export writes), or - for stdin')
      .description('replace the pins of the origin and scope with a manifest (its parse errors are listed, nothing is imported)')
  ).action(
    run(async (api, [file]) => {
      let text: string
      try {
        text = await readFile(file === '-' ? '/dev/stdin' : file!, 'utf8')
      } catch (e) {
        throw refused(`cannot read ${showValue(file!)}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
      }
      const names = await api.importManifest(text)
      process.stdout.write(`imported ${names.length} pin${names.length === 1 ? '' : 's'}${names.length ? ': ' + names.map((n) => shown(n)).join(', ') : ''}\n`)
    })
  )
}

/** `list` as text: a heading, one tab-separated row per tool, its advisories and what to run next; then the server instructions' row, when there is one. */
function printStatus(s: PinStatus, api: PinsApi, instructions: InstructionsStatus | null = null): void {
  const w = (line: string) => process.stdout.write(`${line}\n`)
  w(`# origin ${shown(s.origin)}, scope ${shown(s.scope)}, mode ${shown(s.mode)}, catalog ${shown(s.catalogDigest)}, last complete list seen ${shown(s.servedAt)}`)
  w('tool\tstate\tapproved digest\tserved digest\tapproved at\teffective from')
  let hinted = false
  for (const t of s.tools) {
    w([t.name, t.state, t.approvedDigest, t.servedDigest, t.approvedAt, t.effectiveFrom].map((v) => shown(v)).join('\t'))
    const adv = Array.isArray(t.advisories) ? t.advisories : []
    for (const a of adv.slice(0, LIST_ADVISORIES)) w(`  ${advisoryLine(a)}`)
    if (adv.length > LIST_ADVISORIES) w(`  advisory: ${adv.length - LIST_ADVISORIES} more (mcp-edge tools diff ${shellWord(t.name)}${api.flags})`)
    if (typeof t.rejectedDigest === 'string') w(`  rejected: ${shown(t.rejectedDigest)}`)
    if ((t.state === 'changed' || t.state === 'pending') && typeof t.servedDigest === 'string') {
      w(`  review: mcp-edge tools diff ${shellWord(t.name)}${api.flags}; approve: mcp-edge tools approve ${shellWord(t.name)}@${shown(t.servedDigest)}${api.flags}`)
      hinted = true
    }
  }
  const i = instructions
  if (i) {
    w([INSTRUCTIONS_ROW, i.state, i.approvedDigest, i.servedDigest, i.approvedAt, i.effectiveFrom].map((v) => shown(v)).join('\t'))
    const adv = Array.isArray(i.advisories) ? i.advisories : []
    for (const a of adv.slice(0, LIST_ADVISORIES)) w(`  ${advisoryLine(a)}`)
    if (adv.length > LIST_ADVISORIES) w(`  advisory: ${adv.length - LIST_ADVISORIES} more (mcp-edge tools diff --instructions${api.flags})`)
    if (typeof i.rejectedDigest === 'string') w(`  rejected: ${shown(i.rejectedDigest)}`)
    if ((i.state === 'changed' || i.state === 'pending') && typeof i.servedDigest === 'string') {
      w(`  review: mcp-edge tools diff --instructions${api.flags}; approve: mcp-edge tools approve --instructions ${shown(i.servedDigest)}${api.flags}`)
      hinted = true
    }
  }
  if (hinted && api.tokenNote) w(api.tokenNote)
}

/** `diff --instructions` as text: the state, the digests, the approved and served texts line by line, the advisories. */
function printInstructionsDiff(i: InstructionsStatus, api: PinsApi): void {
  const w = (line: string) => process.stdout.write(`${line}\n`)
  w(`server instructions: ${shown(i.state)}`)
  w(`approved digest\t${shown(i.approvedDigest)}`)
  w(`served digest\t${shown(i.servedDigest)}`)
  const approved = typeof i.approved === 'string' ? i.approved : null
  const served = typeof i.served === 'string' ? i.served : null
  if (approved === served) w('no line differs')
  else
    for (const line of fieldTextDiff({
      field: 'instructions',
      change: approved === null ? 'added' : 'modified',
      class: 'material',
      approved: null,
      served: null,
      approvedValue: approved ?? '',
      servedValue: served ?? '',
    }))
      w(line)
  const adv = Array.isArray(i.advisories) ? i.advisories : []
  if (adv.length === 0) w('advisories: none found (which does not make the instructions safe)')
  for (const a of adv) w(advisoryLine(a))
  if ((i.state === 'changed' || i.state === 'pending') && typeof i.servedDigest === 'string') {
    w(`approve: mcp-edge tools approve --instructions ${shown(i.servedDigest)}${api.flags}`)
    if (api.tokenNote) w(api.tokenNote)
  }
}

/** One advisory finding as a short line (every part sanitised; the excerpt is already bounded by the edge). */
function advisoryLine(a: Advisory): string {
  return `advisory: ${shown(a?.kind, 40)} at ${shown(a?.pointer, 120)}${a?.in === 'key' ? ' (a member name)' : ''}: ${shown(a?.reason, 120)}: ${shown(a?.excerpt, 100)}`
}

/** Longest line of a field's text diff, in characters, and most lines shown per field. */
const DIFF_LINE = 400
const DIFF_LINES = 200

/** A member's value as the text its diff compares: a string as itself, anything else as indented JSON. */
function memberText(v: unknown): string {
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2)
}

/**
 * The text diff of one changed member (jsdiff's line diff): `--- field (approved)`, `+++ field
 * (served)`, then each line with ` `, `-` or `+`, every line sanitised and cut, at most
 * {@link DIFF_LINES} lines.
 */
function fieldTextDiff(c: PinDiff['changes'][number]): string[] {
  const hasA = Object.hasOwn(c, 'approvedValue')
  const hasS = Object.hasOwn(c, 'servedValue')
  const field = shown(c.field, 80)
  if (!hasA && c.change !== 'added') return [`${field}: the approved text is not kept (a manifest pin whose definition this edge has not been served): compare the sub-digests`]
  const out = [`--- ${field} (approved)`, `+++ ${field} (served)`]
  const lines: string[] = []
  // ignoreNewlineAtEof: a text's last line without a newline equals the same line followed by one,
  // so a line appended after it is shown as one added line, not the last line removed and re-added.
  const parts = diffLines(memberText(hasA ? c.approvedValue : undefined), memberText(hasS ? c.servedValue : undefined), { ignoreNewlineAtEof: true })
  for (const part of parts) {
    const mark = part.added ? '+' : part.removed ? '-' : ' '
    for (const line of part.value.replace(/\n$/, '').split('\n')) lines.push(`${mark}${line === '' ? '' : safeText(line, DIFF_LINE)}`)
  }
  out.push(...lines.slice(0, DIFF_LINES))
  if (lines.length > DIFF_LINES) out.push(`… ${lines.length - DIFF_LINES} more lines (the admin API's diff answer has the whole values)`)
  return out
}

/** `diff` as text: the digests, one row per field that differs, each changed field's text diff, the advisories. */
function printDiff(d: PinDiff, api: PinsApi): void {
  const w = (line: string) => process.stdout.write(`${line}\n`)
  w(`tool ${shown(d.name)}: ${shown(d.state)}${d.changes.length ? `, ${shown(d.class)} change` : ''}`)
  w(`approved digest\t${shown(d.approvedDigest)}`)
  w(`served digest\t${shown(d.servedDigest)}`)
  if (d.changes.length === 0) w('no field differs')
  else {
    w('field\tchange\tclass\tapproved sub-digest\tserved sub-digest')
    for (const c of d.changes) w([c.field, c.change, c.class, c.approved, c.served].map((v) => shown(v)).join('\t'))
    for (const c of d.changes) for (const line of fieldTextDiff(c)) w(line)
  }
  const adv = Array.isArray(d.advisories) ? d.advisories : []
  if (adv.length === 0) w('advisories: none found (which does not make the definition safe)')
  for (const a of adv) w(advisoryLine(a))
  if ((d.state === 'changed' || d.state === 'pending') && typeof d.servedDigest === 'string') {
    w(`approve: mcp-edge tools approve ${shellWord(d.name)}@${shown(d.servedDigest)}${api.flags}`)
    if (api.tokenNote) w(api.tokenNote)
  }
}

/** Runs one action against the edge the options name; returns the exit status. */
async function runAction(action: string, opts: Target, body: (api: PinsApi) => Promise<void>): Promise<number> {
  try {
    await body(pinsApi(opts))
    return 0
  } catch (e) {
    const message = e instanceof Error ? e.message.split('\n')[0] : String(e)
    process.stderr.write(`mcp-edge tools ${action}: ${message}\n`)
    if (e instanceof ToolsCommandError) {
      for (const line of e.details) process.stderr.write(`  ${line}\n`)
      return e.exit
    }
    return REFUSED_EXIT
  }
}

/** What the actions ask of the edge's admin API. Each method throws a {@link ToolsCommandError} with its exit status. */
interface PinsApi {
  /** ` --origin X --scope Y` when not the defaults, and ` --edge URL` when given as a flag, for suggested command lines. */
  flags: string
  /** A line saying the suggested commands read ADMIN_TOKEN (when this run had --token), else ''. */
  tokenNote: string
  status(): Promise<PinStatus>
  diff(name: string): Promise<PinDiff>
  approve(name: string, digest: string): Promise<{ digest: string; approvedAt: string; effectiveFrom: string }>
  approveCosmetic(): Promise<string[]>
  reject(name: string, digest: string): Promise<void>
  manifest(): Promise<unknown>
  importManifest(text: string): Promise<string[]>
  /** The server instructions' status; null when the edge has no such route (an edge from before instructions were pinned). */
  instructions(): Promise<InstructionsStatus | null>
  approveInstructions(digest: string): Promise<{ digest: string; approvedAt: string; effectiveFrom: string }>
  rejectInstructions(digest: string): Promise<void>
}

/**
 * The pin routes of a running edge's admin API.
 * @throws ToolsCommandError (exit 2) for a bad --edge, --origin, --scope or no token
 */
function pinsApi(opts: Target): PinsApi {
  if (!isOriginName(opts.origin)) throw usage(`--origin ${showValue(opts.origin)}: expected ${ORIGIN_NAME_EXPECTED}`)
  if (!isCallerScope(opts.scope)) throw usage(`--scope ${showValue(opts.scope)}: expected ${CALLER_SCOPE_EXPECTED}`)
  if (opts.edge === undefined) throw usage('give --edge <url> (or set MCP_EDGE_URL), the base URL of a running edge, such as http://127.0.0.1:8787')
  let base: URL
  try {
    base = new URL(opts.edge)
  } catch {
    throw usage(`--edge ${showValue(opts.edge)}: expected the edge's http:// or https:// base URL, such as http://127.0.0.1:8787`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw usage(`--edge ${showValue(opts.edge)}: expected the edge's http:// or https:// base URL, such as http://127.0.0.1:8787`)
  const token = opts.token ?? process.env.ADMIN_TOKEN
  if (!token) throw usage('no admin token: give --token <token> or set ADMIN_TOKEN')
  const root = `${base.origin}${base.pathname.replace(/\/(mcp)?\/?$/, '')}/admin/pins/${encodeURIComponent(opts.origin)}`
  const query = opts.scope === 'public' ? '' : `?scope=${opts.scope}`
  // The edge as given when it was a flag (MCP_EDGE_URL is still set in the shell that pastes the line).
  const edgeFlag = opts.edgeSource === 'env' ? '' : ` --edge ${shellWord(opts.edge)}`
  const flags = `${edgeFlag}${opts.origin !== 'default' ? ` --origin ${opts.origin}` : ''}${opts.scope !== 'public' ? ` --scope ${opts.scope}` : ''}`
  const tokenNote = opts.tokenSource === 'cli' ? '# the commands above read the token from ADMIN_TOKEN (never printed): export ADMIN_TOKEN=<token> first' : ''
  const where = `the edge at ${base.origin}`

  /** One request; 401, the API off, a missing route and 5xx are turned into errors here. */
  const call = async (method: string, path: string, body?: string): Promise<{ status: number; json: Record<string, unknown> | null }> => {
    let r: Response
    try {
      r = await fetch(`${root}${path}${query}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(30_000),
      })
    } catch (e) {
      const c = (e as { cause?: { code?: string; message?: string } }).cause
      const cause = c?.code ?? c?.message ?? (e as Error).name
      throw new ToolsCommandError(`cannot reach ${where}: ${shown(cause, 80)}`, UNREACHABLE_EXIT)
    }
    let json: Record<string, unknown> | null = null
    try {
      const v = (await r.json()) as unknown
      if (v && typeof v === 'object' && !Array.isArray(v)) json = v as Record<string, unknown>
    } catch {
      // not JSON: judged by the status alone
    }
    const error = typeof json?.error === 'string' ? json.error : ''
    if (r.status === 401) throw refused(`${where} refused the token (401): check --token or ADMIN_TOKEN`)
    if (r.status === 404 && error.includes('admin API is off')) throw refused(`the admin API is off on ${where} (its ADMIN_TOKEN is unset)`)
    if (r.status === 404 && error.startsWith('no such admin route')) throw refused(`${where} has no tool pinning routes (/admin/pins): is it an mcp-edge with tool pinning?`)
    if (r.status === 404 && error.startsWith('unknown origin'))
      throw refused(`${where} has no origin ${showValue(opts.origin)}: use --origin default (ORIGIN_URL) or a name of its ORIGINS`)
    if (r.status === 413) throw refused(`${where} refused the body (413): ${shown(error) || 'too large'}`)
    if (r.status >= 500) throw new ToolsCommandError(`${where} answered ${r.status}: ${error ? shown(error) : 'no detail'}`, UNREACHABLE_EXIT)
    return { status: r.status, json }
  }
  const unexpected = (status: number, json: Record<string, unknown> | null) =>
    refused(`unexpected answer from ${where} (${status})${typeof json?.error === 'string' ? `: ${shown(json.error)}` : ''}`)
  const tool = (name: string) => `/${encodeURIComponent(name)}`
  const noSuchTool = (name: string) => refused(`no such tool ${shown(name)}: ${where} neither serves it (in the last tools/list relayed) nor has a pin for it`)

  return {
    flags,
    tokenNote,
    status: async () => {
      const r = await call('GET', '')
      if (r.status !== 200 || !Array.isArray(r.json?.tools) || !r.json.tools.every(isNamed)) throw unexpected(r.status, r.json)
      return r.json as unknown as PinStatus
    },
    diff: async (name) => {
      const r = await call('GET', `${tool(name)}/diff`)
      if (r.status === 404) throw noSuchTool(name)
      if (r.status !== 200 || !Array.isArray(r.json?.changes) || !r.json.changes.every(isObject)) throw unexpected(r.status, r.json)
      return r.json as unknown as PinDiff
    },
    approve: async (name, digest) => {
      const r = await call('POST', `${tool(name)}/approve`, JSON.stringify({ digest }))
      if (r.status === 404) throw noSuchTool(name)
      if (r.status === 409) {
        const served = r.json?.servedDigest
        if (isToolDigest(served))
          throw refused(
            `not approved: ${shown(name)} is served now with digest ${served}, not ${digest} (its definition changed since that digest was read). ` +
              `Review it with \`mcp-edge tools diff ${shellWord(name)}${flags}\`, then run \`mcp-edge tools approve ${shellWord(name)}@${served}${flags}\``
          )
        throw refused(`not approved: ${shown(typeof r.json?.error === 'string' ? r.json.error.replace(/^not approved: /, '') : 'the edge refused the digest')}`)
      }
      if (r.status !== 200 || !isToolDigest(r.json?.digest)) throw unexpected(r.status, r.json)
      return r.json as { digest: string; approvedAt: string; effectiveFrom: string }
    },
    approveCosmetic: async () => {
      const r = await call('POST', '/approve-cosmetic')
      if (r.status !== 200 || !Array.isArray(r.json?.approved)) throw unexpected(r.status, r.json)
      return (r.json.approved as unknown[]).filter((n): n is string => typeof n === 'string')
    },
    reject: async (name, digest) => {
      const r = await call('POST', `${tool(name)}/reject`, JSON.stringify({ digest }))
      if (r.status === 404) throw noSuchTool(name)
      if (r.status !== 200) throw unexpected(r.status, r.json)
    },
    manifest: async () => {
      const r = await call('GET', '/manifest')
      if (r.status === 409) throw refused(`no manifest: ${shown(typeof r.json?.error === 'string' ? r.json.error : 'the edge cannot write one')}`)
      if (r.status !== 200 || !Array.isArray(r.json?.pins)) throw unexpected(r.status, r.json)
      return r.json
    },
    instructions: async () => {
      let r: { status: number; json: Record<string, unknown> | null }
      try {
        r = await call('GET', '/instructions')
      } catch (e) {
        // An edge without the route answers 404 "no such admin route": it pins no instructions.
        if (e instanceof ToolsCommandError && e.message.includes('has no tool pinning routes')) return null
        throw e
      }
      if (r.status !== 200 || typeof r.json?.state !== 'string') throw unexpected(r.status, r.json)
      return r.json as unknown as InstructionsStatus
    },
    approveInstructions: async (digest) => {
      const r = await call('POST', '/approve-instructions', JSON.stringify({ digest }))
      if (r.status === 404) throw refused(`no server instructions to approve: ${where} has kept none served by the origin`)
      if (r.status === 409) {
        const served = r.json?.servedDigest
        if (isToolDigest(served))
          throw refused(
            `not approved: the server instructions are served now with digest ${served}, not ${digest}. ` +
              `Review them with \`mcp-edge tools diff --instructions${flags}\`, then run \`mcp-edge tools approve --instructions ${served}${flags}\``
          )
        throw refused(`not approved: ${shown(typeof r.json?.error === 'string' ? r.json.error.replace(/^not approved: /, '') : 'the edge refused the digest')}`)
      }
      if (r.status !== 200 || !isToolDigest(r.json?.digest)) throw unexpected(r.status, r.json)
      return r.json as { digest: string; approvedAt: string; effectiveFrom: string }
    },
    rejectInstructions: async (digest) => {
      const r = await call('POST', '/reject-instructions', JSON.stringify({ digest }))
      if (r.status === 404) throw refused(`no server instructions to reject: ${where} has kept none served by the origin, and none is pinned`)
      if (r.status !== 200) throw unexpected(r.status, r.json)
    },
    importManifest: async (text) => {
      const r = await call('PUT', '/manifest', text)
      if (r.status === 400) {
        const errors = Array.isArray(r.json?.errors) ? (r.json.errors as { path?: unknown; message?: unknown }[]) : []
        throw refused(
          `${where} refused the manifest, nothing was imported: ${shown(typeof r.json?.error === 'string' ? r.json.error : 'not valid')}`,
          errors.map((e) => `${typeof e?.path === 'string' && e.path !== '' ? shown(e.path, 120) : '(document)'}: ${shown(e?.message)}`)
        )
      }
      if (r.status !== 200 || !Array.isArray(r.json?.imported)) throw unexpected(r.status, r.json)
      return (r.json.imported as unknown[]).filter((n): n is string => typeof n === 'string')
    },
  }
}

/** Whether `text` is a tools manifest (what export writes): a JSON object with `version`, `pins` and `catalogDigest`. */
function isManifestText(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown
    return !!v && typeof v === 'object' && !Array.isArray(v) && 'version' in v && Array.isArray((v as { pins?: unknown }).pins) && 'catalogDigest' in v
  } catch {
    return false
  }
}

/**
 * Writes `text` to `file` atomically: `<file>.mcp-edge-<pid>-<n>.tmp` created exclusively (never
 * opened over another file), written, fsync'd, renamed over the file (through a symlink to its
 * target), then the folder fsync'd. An existing file is replaced only when it holds a manifest,
 * or with `force`; its mode is kept. Nothing is touched on refusal, and the temporary file is
 * removed on failure.
 *
 * Why not write-file-atomic: it is no longer a dependency of the project (src/stores/file-kv.ts
 * says why: its temporary name `<file>.<murmurhash>` is the form of a user's numbered files, and it
 * opens that name without O_EXCL); these lines are the store file's own steps.
 * @throws ToolsCommandError (exit 1) naming the file: not a manifest, a folder, unreadable, or the write failed
 */
async function writeManifestFile(file: string, text: string, force: boolean): Promise<void> {
  let target = file
  let mode: number | undefined
  try {
    target = realpathSync(file)
    const st = await stat(target)
    if (!st.isFile()) throw refused(`${showValue(file)} is not a regular file (left as it is): give another --out`)
    mode = st.mode & 0o7777
    if (!force) {
      let old: string
      try {
        old = await readFile(target, 'utf8')
      } catch (e) {
        throw refused(`cannot read ${showValue(file)} to check it is a manifest: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
      }
      if (!isManifestText(old)) throw refused(`${showValue(file)} exists and is not a tools manifest (left as it is): give another --out, or --force to replace it`)
    }
  } catch (e) {
    if (e instanceof ToolsCommandError) throw e
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw refused(`cannot use ${showValue(file)}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  let tmp = ''
  let fh: Awaited<ReturnType<typeof open>> | undefined
  for (let n = 1; fh === undefined; n++) {
    tmp = `${target}.mcp-edge-${process.pid}-${n}.tmp`
    try {
      fh = await open(tmp, 'wx', mode ?? 0o666)
      if (mode !== undefined) await fh.chmod(mode).catch(() => undefined)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 10) throw refused(`cannot write beside ${showValue(file)}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
    }
  }
  try {
    try {
      await fh.writeFile(text, 'utf8')
      await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(tmp, target)
  } catch (e) {
    await unlink(tmp).catch(() => undefined)
    throw refused(`cannot write ${showValue(file)}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  // The rename made durable; best effort (a folder that cannot be opened leaves the file written).
  const dir = await open(dirname(target), 'r').catch(() => undefined)
  if (dir) {
    await dir.sync().catch(() => undefined)
    await dir.close().catch(() => undefined)
  }
}
