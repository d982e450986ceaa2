/**
 * @module check/cases/types
 * The vocabulary of `mcp-edge check`'s cases: grades, case names, a verdict, a report row, one
 * planned request and the table entries ({@link VersionCase}, {@link ToolCase}) that plan them.
 * Types and one constant only.
 *
 * Grades, worst first:
 * - `misleads`: an agent would be fooled: a failure reported as a success (a result without
 *   `isError`, or one hiding `success: false`), an internal error (-32603, HTTP 5xx) or a stack
 *   trace answering a client mistake, a rejected value echoed back, a result beside an error;
 * - `fails`: the answer breaks a MUST/SHOULD of JSON-RPC 2.0 or of the MCP revision, without
 *   fooling an agent (a wrong error code, an `isError` result where a protocol error is required);
 * - `pass`: what the specs require;
 * - `info`: a fact worth showing that is no fault (a version the server does not speak, a schema
 *   the edge cannot validate, a case not run).
 */
import type { Generated } from '../arguments'
import type { ProtocolVersion } from '../edge-rules'
import type { HttpAnswer } from '../reply'
import type { ListedTool, SchemaReport } from '../schemas'

/** Grades of a case, worst first. */
export type CheckGrade = 'misleads' | 'fails' | 'pass' | 'info'

/** The order rows are shown in: misleading rows first. */
export const GRADE_ORDER: readonly CheckGrade[] = ['misleads', 'fails', 'pass', 'info']

/** Case names (docs/check.md has one section per name). */
export type CaseName =
  | 'handshake'
  | 'tools-list'
  | 'tools-stable'
  | 'schema'
  | 'parse-error'
  | 'invalid-request'
  | 'notification'
  | 'unknown-tool'
  | 'batch'
  | 'origin-header'
  | 'version-header'
  | 'content-type'
  | 'header-mismatch'
  | 'envelope-missing'
  | 'missing-required'
  | 'wrong-type'
  | 'arguments-not-object'
  | 'valid-call'

/** The judgement of one case. */
export interface Verdict {
  grade: CheckGrade
  /** What the specs require, in a few words. */
  expected: string
  /** The rule's source: spec and section, e.g. "JSON-RPC 2.0 §5.1". */
  rule: string
  /** Why this grade (empty for a plain pass). */
  why: string
}

/** A verdict and the one-line description of the answer it judged. */
export interface Judged {
  verdict: Verdict
  answered: string
}

/** One row of the report. */
export interface CaseRow extends Verdict {
  /** Stable across runs and targets: `<version> <tool or *> <case>` (rows of --through are paired by it). */
  id: string
  version: ProtocolVersion
  case: CaseName
  tool?: string
  /** What was sent, in a few words. */
  sent: string
  /** What the server answered, one line (server text cut and stripped of control characters). */
  answered: string
  /** HTTP status of the answer, when there was one. */
  status?: number | null
}

/** One request to send and how to judge its answer. */
export interface PlannedCase {
  case: CaseName
  tool?: string
  sent: string
  /** The exact body text to POST. */
  body: string
  /** Extra request headers (lower-case names; they replace the defaults of the same name). */
  headers?: Record<string, string>
  /** Request ids whose responses end the wait (empty for a notification). */
  ids: (string | number)[]
  judge(answer: HttpAnswer): Judged
}

/** A tool together with the edge's reading of it and the valid arguments check built. */
export interface ToolUnderCheck {
  tool: ListedTool
  schema: SchemaReport
  valid: Generated
}

/** Inputs of `planCases` (./index): what every case definition plans from. */
export interface PlanContext {
  version: ProtocolVersion
  tools: ToolUnderCheck[]
  /** Tools marked safe to call with valid arguments (`--call`, `--call-all`). */
  callable: ReadonlySet<string>
  /** A unique string placed in rejected argument values, to find echoes. */
  canary: string
  /** First request id to use (ids are numbers counting up). */
  firstId: number
}

/** Hands out the next request id (numbers counting up from {@link PlanContext.firstId}). */
export type NextId = () => number

/**
 * A case sent once per protocol version. `plan` takes ids from `nextId` only for the request it
 * returns, so ids stay in sending order.
 */
export interface VersionCase {
  name: CaseName
  /** The versions the case exists in (default: every version). */
  versions?: (v: ProtocolVersion) => boolean
  plan(ctx: PlanContext, nextId: NextId): PlannedCase
}

/** A case sent once per tool under check; `plan` returns undefined when the tool gives the case nothing to send. */
export interface ToolCase {
  name: CaseName
  plan(ctx: PlanContext, t: ToolUnderCheck, nextId: NextId): PlannedCase | undefined
}

/** A run of the table: version cases once, or tool cases for each tool in turn (every case of the group for one tool, then the next tool). */
export type CaseGroup = { each: 'version'; cases: readonly VersionCase[] } | { each: 'tool'; cases: readonly ToolCase[] }
