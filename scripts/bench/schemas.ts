/**
 * The three tool schemas of the benchmark (3, 10 and 20 properties, each with `$defs`, enums and
 * patterns) and, per schema, arguments that pass and arguments that fail.
 */

/** Events per SSE reply of the benchmark origin (scenario 6): progress notifications, then the result. */
export const SSE_EVENTS = 100

/** One benchmark tool: its MCP tool entry and two argument sets. */
export interface BenchTool {
  name: string
  /** Number of top-level properties. */
  size: number
  inputSchema: Record<string, unknown>
  valid: Record<string, unknown>
  invalid: Record<string, unknown>
}

const DEFS = {
  units: { type: 'string', enum: ['c', 'f', 'k'] },
  code: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{4}$' },
  address: {
    type: 'object',
    properties: {
      street: { type: 'string', minLength: 1, maxLength: 200 },
      zip: { type: 'string', pattern: '^[0-9]{5}$' },
      country: { type: 'string', enum: ['FR', 'DE', 'US', 'JP'] },
    },
    required: ['street', 'zip'],
    additionalProperties: false,
  },
}

/** Property `i` of a schema: cycles through the kinds a real tool uses. */
function property(i: number): [string, unknown, unknown] {
  switch (i % 6) {
    case 0:
      return [`city${i}`, { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z ]+$', description: 'City name' }, 'Paris']
    case 1:
      return [`units${i}`, { $ref: '#/$defs/units' }, 'c']
    case 2:
      return [`days${i}`, { type: 'integer', minimum: 1, maximum: 16 }, 3]
    case 3:
      return [`code${i}`, { $ref: '#/$defs/code' }, 'ABC-1234']
    case 4:
      return [`address${i}`, { $ref: '#/$defs/address' }, { street: '1 rue de Rivoli', zip: '75001', country: 'FR' }]
    default:
      return [`tags${i}`, { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c', 'd'] }, maxItems: 8, uniqueItems: true }, ['a', 'c']]
  }
}

/**
 * A schema with `size` properties (all required but the last), `$defs` shared, no extra members.
 * @param variant text mixed into a description, so schemas of one size can differ (cold-path runs)
 */
export function makeTool(size: number, name = `tool_${size}`, variant = ''): BenchTool {
  const properties: Record<string, unknown> = {}
  const valid: Record<string, unknown> = {}
  const required: string[] = []
  for (let i = 0; i < size; i++) {
    const [k, s, v] = property(i)
    properties[k] = i === 0 && variant ? { ...(s as object), description: `City name ${variant}` } : s
    valid[k] = v
    if (i < size - 1) required.push(k)
  }
  // Invalid: a wrong enum value and a missing required property.
  const invalid: Record<string, unknown> = { ...valid, units1: 'kelvin' }
  delete invalid.city0
  return { name, size, inputSchema: { type: 'object', $defs: DEFS, properties, required, additionalProperties: false }, valid, invalid }
}

/** The benchmark's three tools. */
export const TOOLS: BenchTool[] = [makeTool(3), makeTool(10), makeTool(20)]

/**
 * A deeply nested schema (the schema-size axis): `depth` levels of objects, each with a
 * patterned string, an integer and the next level under `child` (all required, no extra
 * members). The invalid arguments break the innermost level (an empty name, a string integer).
 */
export function makeDeepTool(depth: number, name = `deep_${depth}`): BenchTool {
  let schema: Record<string, unknown> = {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1, pattern: '^[a-z ]+$' }, n: { type: 'integer', minimum: 0 } },
    required: ['name', 'n'],
    additionalProperties: false,
  }
  let valid: Record<string, unknown> = { name: 'leaf', n: depth }
  let invalid: Record<string, unknown> = { name: '', n: 'x' }
  for (let i = depth - 1; i >= 1; i--) {
    schema = {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, pattern: '^[a-z ]+$' }, n: { type: 'integer', minimum: 0 }, child: schema },
      required: ['name', 'n', 'child'],
      additionalProperties: false,
    }
    valid = { name: 'level', n: i, child: valid }
    invalid = { name: 'level', n: i, child: invalid }
  }
  return { name, size: depth, inputSchema: schema, valid, invalid }
}
