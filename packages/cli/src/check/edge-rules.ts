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
 * - {@link toolDigest}: the digest a pinning edge approves a tool by (SHA-256 over the JCS of the whole Tool, docs/pinning.md).
 * - the two engines (ajv on Node, @cfworker/json-schema on Workers).
 */
export { hidesFailure } from 'mcp-edge-validator/rules'
export { portabilityProblem } from 'mcp-edge-validator/rules'
export { dialectOf, allowsBatches, hasVersionHeader, invalidArgsAsToolError, isModern, META_VERSION_KEY, type Dialect, type ProtocolVersion } from 'mcp-edge-validator/rules'
export { publicIssues, type PublicIssue } from 'mcp-edge-validator/rules'
export { errorText, isObject, requestMessage, toRawId } from 'mcp-edge-validator/rules'
export { SchemaUnusableError, type ValidatorEngine, type CompiledValidator, type ValidationIssue } from 'mcp-edge-validator/rules'
export { toolDigest, type ToolDigest } from 'mcp-edge-validator/rules'
export { createAjvEngine } from 'mcp-edge-validator/engines/ajv'
export { createCfworkerEngine } from 'mcp-edge-validator/rules'
