/**
 * @module check/cases/arguments
 * The argument cases, per tool under check: a call missing the first required property
 * (`missing-required`), one with a typed property of another JSON type carrying the canary
 * (`wrong-type`), and one whose `arguments` is the canary string (`arguments-not-object`). Pure.
 */
import { requiredNames, wrongTypeArguments } from '../arguments'
import { invalidArgsAsToolError, isObject, type ProtocolVersion } from '../edge-rules'
import { judgeMistake, type MistakeSpec } from './mistakes'
import { buildRequest, judged, toolsSection } from './requests'
import type { ToolCase, ToolUnderCheck, Verdict } from './types'

/** The valid arguments built for `t`, or `{}` when none could be built. */
const validOf = (t: ToolUnderCheck): Record<string, unknown> => (t.valid.ok && isObject(t.valid.value) ? t.valid.value : {})

/** The two argument cases' rule for a version (SEP-1303 moved them to `isError` in 2025-11-25). */
function argumentSpec(v: ProtocolVersion, canary?: string): MistakeSpec {
  if (invalidArgsAsToolError(v)) {
    return {
      expected: 'an isError result naming the problem',
      rule: `${toolsSection(v, 'Error Handling')} (input validation errors are tool execution errors; SEP-1303)`,
      codes: [],
      isErrorOk: true,
      ...(canary !== undefined ? { canary } : {}),
    }
  }
  return {
    expected: 'JSON-RPC error -32602, or an isError result',
    rule: `${toolsSection(v, 'Error Handling')} (invalid arguments: a protocol error; invalid input data: an isError result)`,
    codes: [-32602],
    isErrorOk: true,
    ...(canary !== undefined ? { canary } : {}),
  }
}

/** Adds the tool-input duty to the rule of a misleading argument verdict. */
function withSecurityRule(v: Verdict, version: ProtocolVersion): Verdict {
  return v.grade === 'misleads' ? { ...v, rule: `${v.rule}; ${toolsSection(version, 'Security Considerations')} (servers MUST validate all tool inputs)` } : v
}

/** Valid arguments minus the first required property (tools with a required property only). */
export const missingRequired: ToolCase = {
  name: 'missing-required',
  plan({ version: v }, t, nextId) {
    const missing = requiredNames(t.tool.inputSchema)[0]
    if (missing === undefined) return undefined
    const { [missing]: _left, ...args } = validOf(t)
    const id = nextId()
    return {
      case: 'missing-required',
      tool: t.tool.name,
      sent: `tools/call without required "${missing}"`,
      ...buildRequest(v, id, 'tools/call', { name: t.tool.name, arguments: args }),
      ids: [id],
      judge: (a) => judged(a, id, withSecurityRule(judgeMistake(a, id, argumentSpec(v)), v)),
    }
  },
}

/** Valid arguments with one typed property (required first) of another JSON type carrying the canary (tools with a typed property only). */
export const wrongType: ToolCase = {
  name: 'wrong-type',
  plan({ version: v, canary }, t, nextId) {
    const wrong = wrongTypeArguments(t.tool.inputSchema, validOf(t), canary)
    if (!wrong) return undefined
    const id = nextId()
    return {
      case: 'wrong-type',
      tool: t.tool.name,
      sent: `tools/call with "${wrong.property}" of a wrong type`,
      ...buildRequest(v, id, 'tools/call', { name: t.tool.name, arguments: wrong.args }),
      ids: [id],
      judge: (a) => judged(a, id, withSecurityRule(judgeMistake(a, id, argumentSpec(v, canary)), v)),
    }
  },
}

/** `arguments` the canary string (MCP schema CallToolRequest: arguments is an object): -32602. */
export const argumentsNotObject: ToolCase = {
  name: 'arguments-not-object',
  plan({ version: v, canary }, t, nextId) {
    const id = nextId()
    return {
      case: 'arguments-not-object',
      tool: t.tool.name,
      sent: 'tools/call with arguments a string',
      ...buildRequest(v, id, 'tools/call', { name: t.tool.name, arguments: canary }),
      ids: [id],
      judge: (a) =>
        judged(
          a,
          id,
          judgeMistake(a, id, {
            expected: 'JSON-RPC error -32602',
            rule: `MCP ${v} schema CallToolRequest (arguments is an object); JSON-RPC 2.0 §5.1 (-32602 Invalid params)`,
            codes: [-32602],
            isErrorOk: false,
            isErrorRule: `${toolsSection(v, 'Error Handling')} (a request that fails the CallToolRequest schema is a protocol error)`,
            canary,
          })
        ),
    }
  },
}
