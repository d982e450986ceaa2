/**
 * Runs `mcp-edge check` as a real process, the way a user does before the package build exists:
 * `node --import tsx packages/cli/src/cli/main.ts check …` in the repository, stdin closed, stdout not a TTY.
 */
import { spawn } from 'node:child_process'
import { REPO } from './repo'

/** What one run of the CLI printed and how it exited. */
export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

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
 * Runs `mcp-edge <args>` and waits for it to exit (killed after `killAfterMs`).
 * @param args the arguments after `mcp-edge`, e.g. `['check', url, '--json']`
 */
export function runMcpEdge(args: string[], killAfterMs = 60_000, env: Record<string, string> = {}): Promise<CliRun> {
  const started = Date.now()
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/cli/main.ts', ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    })
  })
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
