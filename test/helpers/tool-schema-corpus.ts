/**
 * The corpus of real tool schemas and the input generator of the differential test
 * (test/validation/differential.test.ts), shared with the validator-engine evaluation
 * (scripts/validators/evaluate.ts): the demo origin's schemas, the official server-everything's
 * input and output schemas, and schemas written in the shapes MCP servers publish (pydantic,
 * zod-to-json-schema, hand-written 2020-12 and draft-07); `arb` generates values shaped by a
 * schema, often valid and often just off.
 */
import fc from 'fast-check'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
// @ts-expect-error: the package ships JavaScript without type declarations
import { createServer as createEverything } from '@modelcontextprotocol/server-everything/dist/server/index.js'
import { DEMO_TOOLS } from '../../packages/cli/demo/origin'

export type Schema = Record<string, any>

/** Schemas in the shapes real MCP servers publish. */
export const WRITTEN: { name: string; schema: Schema }[] = [
  {
    name: 'pydantic_search', // pydantic v2: anyOf-with-null, $defs, titles, defaults
    schema: {
      $defs: {
        SortOrder: { enum: ['asc', 'desc'], title: 'SortOrder', type: 'string' },
        Filter: {
          properties: { field: { title: 'Field', type: 'string' }, value: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }], default: null } },
          required: ['field'],
          title: 'Filter',
          type: 'object',
        },
      },
      properties: {
        query: { title: 'Query', type: 'string', minLength: 1 },
        limit: { anyOf: [{ type: 'integer', minimum: 1, maximum: 100 }, { type: 'null' }], default: 20 },
        order: { $ref: '#/$defs/SortOrder', default: 'asc' },
        filters: { items: { $ref: '#/$defs/Filter' }, type: 'array', maxItems: 5 },
      },
      required: ['query'],
      title: 'searchArguments',
      type: 'object',
    },
  },
  {
    name: 'zod_create_issue', // zod-to-json-schema (draft-07, additionalProperties false)
    schema: {
      type: 'object',
      properties: {
        owner: { type: 'string' },
        repo: { type: 'string' },
        title: { type: 'string', maxLength: 256 },
        body: { type: 'string' },
        labels: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        assignee: { type: 'string', format: 'email' },
      },
      required: ['owner', 'repo', 'title'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    },
  },
  { name: 'no_params', schema: { type: 'object', additionalProperties: false } },
  { name: 'any_object', schema: { type: 'object' } },
  {
    name: 'schedule', // formats shared by both engines
    schema: {
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time' },
        day: { type: 'string', format: 'date' },
        id: { type: 'string', format: 'uuid' },
        callback: { type: 'string', format: 'uri' },
        host: { type: 'string', format: 'hostname' },
        ip: { type: 'string', format: 'ipv4' },
        every: { type: 'string', format: 'duration' },
      },
      required: ['when'],
    },
  },
  {
    name: 'plot_point',
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
      required: ['point'],
    },
  },
  {
    name: 'pair_draft07',
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false } },
    },
  },
  {
    name: 'legacy_dep',
    schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, dependencies: { a: ['b'] } },
  },
  {
    name: 'dependent_required',
    schema: { type: 'object', properties: { card: { type: 'string' }, cvv: { type: 'string', pattern: '^[0-9]{3,4}$' } }, dependentRequired: { card: ['cvv'] } },
  },
  {
    name: 'find_resource',
    schema: {
      type: 'object',
      oneOf: [
        { properties: { id: { type: 'string' } }, required: ['id'] },
        { properties: { name: { type: 'string' } }, required: ['name'] },
      ],
    },
  },
  {
    name: 'shipping', // if/then/else
    schema: {
      type: 'object',
      properties: { country: { enum: ['US', 'CA', 'NL'] }, postal: { type: 'string' } },
      required: ['country'],
      if: { properties: { country: { const: 'US' } } },
      then: { properties: { postal: { pattern: '^[0-9]{5}$' } } },
      else: { properties: { postal: { pattern: '^[A-Z0-9 ]{3,8}$' } } },
    },
  },
  {
    name: 'headers_map',
    schema: {
      type: 'object',
      properties: { headers: { type: 'object', patternProperties: { '^[A-Za-z-]+$': { type: 'string', maxLength: 64 } }, additionalProperties: false, maxProperties: 4 } },
    },
  },
  {
    name: 'numbers',
    schema: {
      type: 'object',
      properties: { price: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.01 }, qty: { type: 'integer', minimum: 1 }, ratio: { type: 'number', minimum: 0, maximum: 1 } },
      required: ['price'],
    },
  },
  {
    name: 'tagged_union',
    schema: {
      type: 'object',
      properties: {
        shape: {
          anyOf: [
            { type: 'object', properties: { kind: { const: 'circle' }, r: { type: 'number' } }, required: ['kind', 'r'], additionalProperties: false },
            { type: 'object', properties: { kind: { const: 'rect' }, w: { type: 'number' }, h: { type: 'number' } }, required: ['kind', 'w', 'h'], additionalProperties: false },
          ],
        },
      },
      required: ['shape'],
    },
  },
  {
    name: 'not_and_contains',
    schema: { type: 'object', properties: { tags: { type: 'array', contains: { const: 'primary' }, minItems: 1 }, mode: { not: { enum: ['legacy'] } } } },
  },
  { name: 'recursive_tree', schema: { type: 'object', properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } }, required: ['label'] } },
  { name: 'closed_2020', schema: { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }], unevaluatedProperties: false } },
  {
    name: 'declared_2019_09',
    schema: {
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, nights: { type: 'integer', minimum: 1 } },
      dependentRequired: { from: ['to'] },
      required: ['nights'],
    },
  },
  {
    name: 'declared_draft_06',
    schema: {
      $schema: 'http://json-schema.org/draft-06/schema#',
      type: 'object',
      properties: { level: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 10 }, mode: { const: 'fast' } },
    },
  },
  { name: 'unusable_remote_ref', schema: { type: 'object', properties: { loc: { $ref: 'https://schemas.example/location.json' } } } },
  { name: 'unusable_dynamic_ref', schema: { $dynamicAnchor: 'n', type: 'object', properties: { kids: { type: 'array', items: { $dynamicRef: '#n' } } } } },
  { name: 'unusable_bad_pattern', schema: { type: 'object', properties: { s: { type: 'string', pattern: '(' } } } },
]

export interface CorpusEntry {
  source: string
  name: string
  schema: unknown
}

export async function everythingSchemas(): Promise<CorpusEntry[]> {
  const { server, cleanup } = createEverything() as { server: { connect(t: unknown): Promise<void> }; cleanup?: () => void }
  const [a, b] = InMemoryTransport.createLinkedPair()
  await server.connect(b)
  const client = new Client({ name: 'corpus', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {}, roots: {} } })
  await client.connect(a)
  const { tools } = await client.listTools()
  await client.close()
  cleanup?.()
  return tools.flatMap((t) => [
    { source: 'server-everything', name: t.name, schema: t.inputSchema },
    ...(t.outputSchema ? [{ source: 'server-everything output', name: t.name, schema: t.outputSchema }] : []),
  ])
}

// ---------------------------------------------------------------- generators

const SAMPLES = [
  '',
  'a',
  'Oslo',
  'US',
  'asc',
  'c',
  'primary',
  'legacy',
  'circle',
  'rect',
  '12345',
  'AB1 2CD',
  '123',
  'not an email',
  'dev@example.com',
  'a@b',
  '2026-11-30T08:00:00Z',
  '2026-02-30',
  '2026-11-30',
  '12:00:00',
  '550e8400-e29b-41d4-a716-446655440000',
  'urn:uuid:550e8400-e29b-41d4-a716-446655440000',
  'https://example.com/x?y=1',
  'relative/path',
  'example.com',
  '-bad-.host',
  '192.168.0.1',
  '999.1.1.1',
  'P1D',
  'PT',
  'Content-Type',
  'x'.repeat(300),
]

function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let cur: any = root
  for (const seg of ref.slice(2).split('/')) cur = cur?.[decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~')]
  return typeof cur === 'object' && cur !== null ? cur : undefined
}

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e21, 'x', [], {}),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true })
)

/** Values shaped by the schema (often valid, often just off). */
export function arb(schema: unknown, root: Schema, depth: number): fc.Arbitrary<unknown> {
  if (depth > 4 || typeof schema !== 'object' || schema === null) return anyJson
  const s = schema as Schema
  const options: fc.Arbitrary<unknown>[] = [anyJson]
  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref)
    if (target) options.push(arb(target, root, depth + 1))
  }
  for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const)
    if (Array.isArray(s[k]) && k !== 'prefixItems') for (const sub of s[k]) options.push(arb({ ...s, [k]: undefined, ...sub }, root, depth + 1))
  if (Array.isArray(s.enum)) options.push(fc.constantFrom(...s.enum, 'other'))
  if ('const' in s) options.push(fc.constant(s.const))
  const types: string[] = Array.isArray(s.type) ? s.type : typeof s.type === 'string' ? [s.type] : s.properties ? ['object'] : []
  for (const t of types) {
    if (t === 'string') options.push(fc.oneof(fc.constantFrom(...SAMPLES), fc.string({ maxLength: 12 })))
    if (t === 'integer') options.push(fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(0, 1, 5, 16, 17, 100, 101, 3.5)))
    if (t === 'number') options.push(fc.oneof(fc.double({ min: -10, max: 200, noNaN: true }), fc.constantFrom(0, 0.01, 0.015, 1, 10, 19.99, -1)))
    if (t === 'boolean') options.push(fc.boolean())
    if (t === 'null') options.push(fc.constant(null))
    if (t === 'array') {
      const items = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : null
      if (items)
        options.push(fc.tuple(...items.map((i: unknown) => arb(i, root, depth + 1))).chain((head) => fc.array(anyJson, { maxLength: 2 }).map((tail) => [...head, ...tail])))
      options.push(fc.array(arb(Array.isArray(s.items) || s.items === false ? {} : (s.items ?? s.contains ?? {}), root, depth + 1), { maxLength: 4 }))
    }
    if (t === 'object') {
      const props = (s.properties ?? {}) as Record<string, unknown>
      const keys = Object.keys(props)
      const required: string[] = Array.isArray(s.required) ? s.required : []
      const shape: Record<string, fc.Arbitrary<unknown>> = {}
      for (const k of keys) shape[k] = arb(props[k], root, depth + 1)
      const base = keys.length ? fc.record(shape, { requiredKeys: keys.filter((k, i) => required.includes(k) || i % 3 === 0) }) : fc.constant({})
      options.push(
        fc
          .tuple(base, fc.option(fc.dictionary(fc.constantFrom('extra', 'Content-Type', 'b', 'cvv', 'card', '__x'), anyJson, { maxKeys: 2 }), { nil: undefined }))
          .map(([o, extra]) => ({ ...(o as object), ...(extra ?? {}) }))
      )
    }
  }
  return fc.oneof(...options)
}

/** The whole corpus: demo origin, server-everything (input and output schemas), written. */
export async function toolSchemaCorpus(): Promise<CorpusEntry[]> {
  return [
    ...DEMO_TOOLS.map((t) => ({ source: 'demo origin', name: t.name, schema: t.inputSchema as unknown })),
    ...(await everythingSchemas()),
    ...WRITTEN.map((w) => ({ source: 'written', name: w.name, schema: w.schema as unknown })),
  ]
}
