/**
 * @module check/edge-rules
 * The one place where `mcp-edge check` reaches into the edge: the rules and engines it grades
 * with are the edge's own, so a server is judged exactly as the edge would judge it. Everything
 * in src/check imports these names from here (one file to update when the core moves).
 *
 * - {@link hidesFailure}: D11, a `tools/call` result hiding `success: false` and the like (docs/grading.md).
 * - {@link portabilityProblem}: why a schema is unusable at the edge (docs/validation.md, D8).
 * - {@link dialectOf}: a schema's JSON Schema dialect for a protocol version (MCP 2025-11-25 basic "JSON Schema Usage").
 * - {@link publicIssues}: validation issues as paths and expectations, never values (docs/validation.md).
 * - {@link requestMessage} and {@link errorText}: the one writer of JSON-RPC envelopes (src/core/jsonrpc/jsonrpc.ts).
 * - the two engines (ajv on Node, @cfworker/json-schema on Workers).
 */
export { hidesFailure } from '../core/grading/grade-reply'
export { portabilityProblem } from '../core/validation/schema-portability'
export { dialectOf, allowsBatches, invalidArgsAsToolError, isModern, META_VERSION_KEY, type Dialect, type ProtocolVersion } from '../core/jsonrpc/versions'
export { publicIssues, type PublicIssue } from '../core/validation/error-message'
export { errorText, isObject, requestMessage, toRawId } from '../core/jsonrpc/jsonrpc'
export { SchemaUnusableError, type ValidatorEngine, type CompiledValidator, type ValidationIssue } from '../core/ports'
export { createAjvEngine } from '../validators/ajv'
export { createCfworkerEngine } from '../validators/cfworker'
