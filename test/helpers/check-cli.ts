/**
 * `mcp-edge check` as a real process (the built command, ./cli-process.ts's {@link CLI}) and its
 * `--json` document: run it, parse it, find a row.
 */
import { runCli, type CliRun } from './cli-process'

export type { CliRun }

/** A row of `--json` output (see packages/cli/src/check/cases/types.ts CaseRow), with its counterpart through the edge. */
export interface JsonRow {
  id: string
  version: string
  case: string
  tool?: string
  grade: 'misleads' | 'fails' | 'pass' | 'info'
  answered: string
  expected: string
  rule: string
  why: string
  status?: number | null
  through?: JsonRow
}

/** The `--json` document. */
export interface JsonReport {
  url: string
  through?: string
  exitCode: number
  versions: { version: string; negotiated?: string; skipped?: string }[]
  counts: Record<string, number>
  requests: number
  budgetReached: boolean
  rows: JsonRow[]
}

/**
 * Runs `mcp-edge <args>` (the built command, `NO_COLOR=1`) and waits for it to exit (killed after `killAfterMs`).
 * @param args the arguments after `mcp-edge`, e.g. `['check', url, '--json']`
 */
export function runMcpEdge(args: string[], killAfterMs = 60_000, env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { NO_COLOR: '1', ...env }, { timeoutMs: killAfterMs })
}

/** Runs `mcp-edge check <url> --json …` and parses its document. */
export async function checkJson(url: string, extra: string[] = []): Promise<{ run: CliRun; report: JsonReport }> {
  const run = await runMcpEdge(['check', url, '--json', ...extra])
  let report: JsonReport
  try {
    report = JSON.parse(run.stdout) as JsonReport
  } catch {
    throw new Error(`check printed no JSON (exit ${run.code}): ${run.stdout.slice(0, 500)} ${run.stderr.slice(0, 500)}`)
  }
  return { run, report }
}

/** The row with this id (`<version> <tool or *> <case>`); throws naming the id when absent. */
export function row(report: JsonReport, id: string): JsonRow {
  const r = report.rows.find((x) => x.id === id)
  if (!r) throw new Error(`no row ${id}; rows: ${report.rows.map((x) => x.id).join(', ')}`)
  return r
}
