/**
 * @module check/cases/tool-set
 * The `tools-stable` row: does the server's tool set stay the same across two `tools/list`
 * listings of one session (every page each; the second after the version's cases)? Each tool is
 * compared by the digest a pinning edge approves it by (the library's `toolDigest`: `sha256:` over
 * the RFC 8785 JCS of the whole `Tool` as served, docs/pinning.md "Digest"), so a change of any
 * member (a description, an enum in `inputSchema`, `_meta`) counts, and member order never does.
 * A set that changes under a client is what a "rug pull" looks like: a definition the client (or
 * an operator) accepted is no longer the one served.
 *
 * Async only for Web Crypto's SHA-256; no I/O. Tool names reach the row through `printable` (the
 * sanitiser every check text goes through), cut, and at most {@link MAX_NAMES} per kind.
 */
import { isObject, toolDigest, type ProtocolVersion } from '../edge-rules'
import { describeReply, printable, replyFor } from '../reply'
import type { ToolListing } from './rows'
import type { CaseRow } from './types'

/** Tool names shown per kind of change (added, removed, changed); the rest are counted. */
export const MAX_NAMES = 5

/**
 * Name -> digest of each tool of one listing, as served. A tool without a JCS form (a lone
 * surrogate, a number past double range) has no digest; it is compared by its JSON text instead
 * (exact, so only such a tool could be reported changed by member order alone). A name listed
 * twice keeps both definitions, in order.
 */
export async function digestsOf(served: readonly Record<string, unknown>[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const tool of served) {
    const name = String(tool.name)
    const d = await toolDigest(tool)
    const key = d.ok ? d.digest : `no digest: ${JSON.stringify(tool)}`
    out.set(name, out.has(name) ? `${out.get(name)} ${key}` : key)
  }
  return out
}

/** What changed from one listing's digests to the other's: names sorted, each kind apart. */
export interface ToolSetChange {
  added: string[]
  removed: string[]
  changed: string[]
}

/** Compares two {@link digestsOf} maps. Pure. */
export function compareToolSets(first: ReadonlyMap<string, string>, second: ReadonlyMap<string, string>): ToolSetChange {
  const added = [...second.keys()].filter((n) => !first.has(n)).sort()
  const removed = [...first.keys()].filter((n) => !second.has(n)).sort()
  const changed = [...first.keys()].filter((n) => second.has(n) && second.get(n) !== first.get(n)).sort()
  return { added, removed, changed }
}

/** `a, b, c` of at most {@link MAX_NAMES} names (each cut and sanitised), then `and N more`. */
function names(list: readonly string[]): string {
  const shown = list.slice(0, MAX_NAMES).map((n) => printable(n, 40))
  return list.length > MAX_NAMES ? `${shown.join(', ')} and ${list.length - MAX_NAMES} more` : shown.join(', ')
}

/** Whether a listing got a ListToolsResult on its last page. */
function listed(l: ToolListing): boolean {
  if (!l.answer) return false
  const r = replyFor(l.answer, l.id)
  return r.kind === 'result' && !r.isError && isObject(r.result)
}

/**
 * The `tools-stable` row of one version from its two listings.
 * - `pass`: the same names with the same digests;
 * - `info`: the set changed (added, removed and changed tools named), or a listing is missing
 *   (the first failed: the tools-list row says why; the second failed or was not sent).
 * A change is `info`, not a fault: MCP lets a server change its tools (announced by
 * `notifications/tools/list_changed`, which check cannot see: it opens no stream).
 */
export async function toolSetRow(version: ProtocolVersion, first: ToolListing, second: ToolListing): Promise<CaseRow> {
  const base = {
    id: `${version} * tools-stable`,
    version,
    case: 'tools-stable' as const,
    sent: 'tools/list twice (every page; the second after the cases)',
    expected: 'the same tools with the same digests',
    rule: `MCP ${version} Server Tools §List Changed Notification (a server announces a change of its tools); docs/pinning.md (the tool digest: SHA-256 over the JCS of the whole Tool)`,
  }
  if (!listed(first)) return { ...base, grade: 'info', answered: 'not compared', status: null, why: 'the first tools/list got no tool list (see the tools-list row)' }
  if (!listed(second))
    return {
      ...base,
      grade: 'info',
      answered: `not compared: second tools/list ${second.answer ? describeReply(second.answer, second.id) : 'not sent'}`,
      status: second.answer?.status ?? null,
      why: 'the second tools/list got no tool list',
    }
  const change = compareToolSets(await digestsOf(first.served), await digestsOf(second.served))
  const status = second.answer?.status ?? null
  if (change.added.length + change.removed.length + change.changed.length === 0)
    return { ...base, grade: 'pass', answered: `stable: ${second.served.length} tools, the same digests`, status, why: '' }
  const parts = [
    change.added.length ? `added ${names(change.added)}` : '',
    change.removed.length ? `removed ${names(change.removed)}` : '',
    change.changed.length ? `changed ${names(change.changed)}` : '',
  ].filter(Boolean)
  return {
    ...base,
    grade: 'info',
    answered: `changed: ${parts.join('; ')}`,
    status,
    why: 'the tool set changed between two lists of one session: a client that accepted the first list now gets other definitions (a pinning edge holds new and changed tools until an operator approves their digests, docs/pinning.md)',
  }
}
