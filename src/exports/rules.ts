/**
 * @module exports/rules
 * `mcp-edge-validator/rules`: the edge's own rules and tool-store helpers for tools built on it,
 * chiefly the `mcp-edge` command (its `check` grades a server by these rules, its `schemas`
 * manages the tool store, its `tools` parses `<tool>@<digest>` approvals). Runtime-neutral; not covered by the stability of the main import.
 */
export { hidesFailure } from '../core/grading/grade-reply'
export { portabilityProblem } from '../core/validation/schema-portability'
export {
  dialectOf,
  allowsBatches,
  hasVersionHeader,
  invalidArgsAsToolError,
  isModern,
  isKnownVersion,
  DEFAULT_VERSION,
  META_VERSION_KEY,
  type Dialect,
  type ProtocolVersion,
} from '../core/jsonrpc/versions'
export { publicIssues, type PublicIssue } from '../core/validation/error-message'
export { errorText, isObject, requestMessage, toRawId } from '../core/jsonrpc/jsonrpc'
export { SchemaUnusableError, type KvStore, type ValidatorEngine, type CompiledValidator, type ValidationIssue } from '../core/ports'
export { ConfigError, loadConfig, showValue } from '../core/config'
export { CALLER_SCOPE_EXPECTED, isCallerScope, isOriginName, ORIGIN_NAME_EXPECTED } from '../core/config-rules'
export { governanceOf, governanceText, unknownVariables, unknownVariableText, type Governance, type UnknownVariable } from '../core/startup-report'
export { SETTINGS, flagHelp, flagOf, type Setting } from '../core/settings'
export { redactUrl } from '../core/redact-url'
export { EdgeError, type EdgeErrorCode } from '../core/errors'
export { createToolRegistry, type ToolRecord } from '../core/validation/tool-registry'
export { deleteStoredTool, getStoredTool, listStoredTools, portable, StoreCannotListError, type PortableTool } from '../core/validation/tool-store'
export { createCfworkerEngine } from '../validators/cfworker'
export { readiness, unreadyOrigins, unreadySources } from '../observe/readiness'
export { parseApprovalArgument, type ApprovalArgument } from '../core/pinning/approval'
export { isToolDigest, toolDigest, type ToolDigest, type ToolDigestResult, type JcsProblem } from '../core/pinning/tool-digest'
