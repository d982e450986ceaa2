/**
 * @module demo/fixtures
 * The fixtures the official MCP conformance suite's server scenarios expect
 * (@modelcontextprotocol/conformance 0.1.16; scenario table in docs/conformance.md), written
 * against the low-level SDK v1 `Server` so they live on the same session as the demo tools of
 * demo/origin.ts.
 *
 * What is here:
 * - tools `test_*` (text, image, audio, embedded resource, mixed content, logging, progress,
 *   error, sampling, elicitation, SEP-1034 defaults, SEP-1330 enums, reconnection) and
 *   `json_schema_2020_12_tool` (SEP-1613: `$schema`, `$defs`, `additionalProperties` kept as is);
 * - resources `test://static-text`, `test://static-binary`, `test://watched-resource`, the
 *   template `test://template/{id}/data`, subscribe/unsubscribe;
 * - prompts `test_simple_prompt`, `test_prompt_with_arguments`, `test_prompt_with_embedded_resource`,
 *   `test_prompt_with_image`; `completion/complete` for the prompt argument `arg1`.
 *
 * Server-to-client requests (sampling, elicitation) and the progress/log notifications are sent
 * with the request handler's `extra`, so they ride the SSE stream of the POST that carried the
 * `tools/call` (MCP 2025-11-25, Transports, "Sending Messages to the Server", item 5): the client's
 * answer comes back in a second POST while the first stream is still open, which tests the edge's
 * streaming both ways. One extra tool, `test_sampling_standalone` (not a suite fixture), sends its
 * sampling request unrelated to the call, so it travels on the client's standalone GET stream, as
 * the suite's upstream reference server does for all of them.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'

/** A 1x1 PNG, base64. */
export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
/** A WAV header with two bytes of samples, base64. */
export const WAV_TINY = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA='

const NO_ARGS = { type: 'object', properties: {} } as const

/** The conformance tools as published in tools/list (JSON Schema; the edge validates against these). */
export const FIXTURE_TOOLS = [
  { name: 'test_simple_text', description: 'Returns one text content item.', inputSchema: NO_ARGS },
  { name: 'test_image_content', description: 'Returns one image content item (PNG).', inputSchema: NO_ARGS },
  { name: 'test_audio_content', description: 'Returns one audio content item (WAV).', inputSchema: NO_ARGS },
  { name: 'test_embedded_resource', description: 'Returns one embedded text resource.', inputSchema: NO_ARGS },
  { name: 'test_multiple_content_types', description: 'Returns text, image and an embedded resource.', inputSchema: NO_ARGS },
  { name: 'test_tool_with_logging', description: 'Sends three notifications/message while it runs.', inputSchema: NO_ARGS },
  { name: 'test_tool_with_progress', description: 'Sends three notifications/progress (0, 50, 100 of 100) when the call has a progressToken.', inputSchema: NO_ARGS },
  { name: 'test_error_handling', description: 'Always fails: an isError result with a message.', inputSchema: NO_ARGS },
  { name: 'test_reconnection', description: 'Answers after a short pause (SEP-1699 polling scenario).', inputSchema: NO_ARGS },
  {
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion (sampling/createMessage) and returns its text.',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string', description: 'Prompt sent to the LLM' } }, required: ['prompt'] },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for input (elicitation/create) and returns the answer.',
    inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'Message shown to the user' } }, required: ['message'] },
  },
  {
    name: 'test_sampling_standalone',
    description: 'Like test_sampling, but the request travels on the standalone GET stream (not related to the call).',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  { name: 'test_elicitation_sep1034_defaults', description: 'Elicitation whose form has defaults for every primitive type (SEP-1034).', inputSchema: NO_ARGS },
  { name: 'test_elicitation_sep1330_enums', description: 'Elicitation with the five enum shapes of SEP-1330.', inputSchema: NO_ARGS },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool whose inputSchema uses JSON Schema 2020-12 features (SEP-1613).',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
] as const

/** Names of {@link FIXTURE_TOOLS}. */
export const FIXTURE_TOOL_NAMES: ReadonlySet<string> = new Set(FIXTURE_TOOLS.map((t) => t.name))

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] })
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

// The suite checks these exact default values (elicitation-sep1034-defaults).
const SEP1034_FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Your name', default: 'John Doe' },
    age: { type: 'integer', description: 'Your age', default: 30 },
    score: { type: 'number', description: 'A score', default: 95.5 },
    status: { type: 'string', description: 'Account status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verified account', default: true },
  },
  required: [],
} as const

const SEP1330_FORM = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Pick one', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Pick one (titled)',
      oneOf: [
        { const: 'value1', title: 'First' },
        { const: 'value2', title: 'Second' },
        { const: 'value3', title: 'Third' },
      ],
    },
    legacyEnum: { type: 'string', description: 'Pick one (legacy enumNames)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['One', 'Two', 'Three'] },
    untitledMulti: { type: 'array', description: 'Pick several', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      description: 'Pick several (titled)',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First' },
          { const: 'value2', title: 'Second' },
          { const: 'value3', title: 'Third' },
        ],
      },
    },
  },
  required: [],
} as const

async function elicit(extra: Extra, message: string, requestedSchema: object): Promise<CallToolResult> {
  const res = await extra.sendRequest({ method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } } as ServerRequest, ElicitResultSchema)
  return text(`Elicitation answered: action=${res.action}, content=${JSON.stringify(res.content ?? {})}`)
}

/**
 * The answer of a fixture tool that needs no server-to-client request (the same in the 2025 and the
 * 2026-07-28 fixtures), or undefined for any other name.
 */
export function carriedFixtureResult(name: string): CallToolResult | undefined {
  switch (name) {
    case 'test_simple_text':
      return text('This is a simple text response for testing.')
    case 'test_image_content':
      return { content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }
    case 'test_audio_content':
      return { content: [{ type: 'audio', data: WAV_TINY, mimeType: 'audio/wav' }] }
    case 'test_embedded_resource':
      return { content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'Embedded resource text.' } }] }
    case 'test_multiple_content_types':
      return {
        content: [
          { type: 'text', text: 'Three content types follow.' },
          { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ kind: 'mixed', n: 3 }) } },
        ],
      }
    case 'test_error_handling':
      return { content: [{ type: 'text', text: 'This tool always fails: the failure is reported as an isError result.' }], isError: true }
    default:
      return undefined
  }
}

/**
 * Runs one fixture tool. A failed sampling/elicitation round trip on the call's own stream
 * rejects (the SDK answers the call with an error).
 * @param name a name from {@link FIXTURE_TOOL_NAMES}
 * @param args the call's arguments (already an object)
 * @param extra the SDK request context: notifications and server-to-client requests go through it
 * @param server the session's server, for the one request sent outside the call (standalone stream)
 * @returns the tool result
 */
export async function callFixtureTool(name: string, args: Record<string, unknown>, extra: Extra, server: Server): Promise<CallToolResult> {
  const carried = carriedFixtureResult(name)
  if (carried) return carried
  switch (name) {
    case 'test_tool_with_logging':
      for (const [i, step] of ['started', 'working', 'finished'].entries()) {
        if (i > 0) await pause(20)
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'demo-origin', data: `test_tool_with_logging ${step}` } })
      }
      return text('Logged three messages.')
    case 'test_tool_with_progress': {
      const token = extra._meta?.progressToken
      if (token !== undefined) {
        for (const progress of [0, 50, 100]) {
          if (progress > 0) await pause(20)
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message: `step ${progress} of 100` } })
        }
      }
      return text(`Progress reported for token ${token === undefined ? '(none)' : String(token)}.`)
    }
    case 'test_reconnection':
      await pause(50)
      return text('Reconnection test completed.')
    case 'test_sampling': {
      const res = await extra.sendRequest(
        { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }], maxTokens: 100 } } as ServerRequest,
        CreateMessageResultSchema
      )
      const answer = !Array.isArray(res.content) && res.content.type === 'text' ? res.content.text : '(no text)'
      return text(`LLM response: ${answer}`)
    }
    case 'test_sampling_standalone': {
      try {
        const res = await server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }], maxTokens: 100 }, { timeout: 10_000 })
        const answer = !Array.isArray(res.content) && res.content.type === 'text' ? res.content.text : '(no text)'
        return text(`LLM response (standalone stream): ${answer}`)
      } catch {
        return { content: [{ type: 'text', text: 'The sampling request on the standalone stream got no answer.' }], isError: true }
      }
    }
    case 'test_elicitation':
      return elicit(extra, String(args.message), { type: 'object', properties: { response: { type: 'string', description: 'Your answer' } }, required: ['response'] })
    case 'test_elicitation_sep1034_defaults':
      return elicit(extra, 'Review these fields; each has a default.', SEP1034_FORM)
    case 'test_elicitation_sep1330_enums':
      return elicit(extra, 'Pick from these enum fields.', SEP1330_FORM)
    case 'json_schema_2020_12_tool':
      return text(`json_schema_2020_12_tool called with ${JSON.stringify(args)}`)
    default:
      return { content: [{ type: 'text', text: `Unknown tool ${name}` }], isError: true }
  }
}

/** The fixture resources as listed in resources/list. */
export const FIXTURE_RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static text', description: 'A fixed text resource.', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static binary', description: 'A fixed PNG resource.', mimeType: 'image/png' },
  { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched resource', description: 'A resource clients can subscribe to.', mimeType: 'text/plain' },
]

const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/

/** The fixture prompts as listed in prompts/list. */
export const FIXTURE_PROMPTS = [
  { name: 'test_simple_prompt', title: 'Simple prompt', description: 'A prompt without arguments.' },
  {
    name: 'test_prompt_with_arguments',
    title: 'Prompt with arguments',
    description: 'A prompt with two required arguments.',
    arguments: [
      { name: 'arg1', description: 'First argument', required: true },
      { name: 'arg2', description: 'Second argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt with an embedded resource',
    description: 'A prompt that embeds the resource named by resourceUri.',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', title: 'Prompt with an image', description: 'A prompt holding an image.' },
]

const ARG1_COMPLETIONS = ['alpha', 'beta', 'gamma', 'delta']

/** The fixture resource templates as listed in resources/templates/list. */
export const FIXTURE_RESOURCE_TEMPLATES = [
  { uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Template', description: 'Data for one id.', mimeType: 'application/json' },
]

/**
 * The `resources/read` result of one fixture resource (text, PNG blob, or the template's JSON), or
 * null when `uri` names none: each caller answers that in its own revision's error shape.
 */
export function readFixtureResource(uri: string): { contents: ({ uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string })[] } | null {
  switch (uri) {
    case 'test://static-text':
      return { contents: [{ uri, mimeType: 'text/plain', text: 'Static text resource content.' }] }
    case 'test://static-binary':
      return { contents: [{ uri, mimeType: 'image/png', blob: PNG_1X1 }] }
    case 'test://watched-resource':
      return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content.' }] }
  }
  const m = TEMPLATE.exec(uri)
  if (m) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: m[1], data: `Data for id ${m[1]}` }) }] }
  return null
}

type PromptContent =
  { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string } | { type: 'resource'; resource: { uri: string; mimeType: string; text: string } }

/** The `prompts/get` result of one fixture prompt, or null when `name` names none. */
export function getFixturePrompt(name: string, a: Record<string, string>): { messages: { role: 'user'; content: PromptContent }[] } | null {
  switch (name) {
    case 'test_simple_prompt':
      return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] }
    case 'test_prompt_with_arguments':
      return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${a.arg1 ?? ''}', arg2='${a.arg2 ?? ''}'` } }] }
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri ?? 'test://static-text', mimeType: 'text/plain', text: 'Embedded resource content.' } } },
          { role: 'user', content: { type: 'text', text: 'Please read the resource above.' } },
        ],
      }
    case 'test_prompt_with_image':
      return {
        messages: [
          { role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } },
          { role: 'user', content: { type: 'text', text: 'Please describe the image above.' } },
        ],
      }
  }
  return null
}

/** The `completion/complete` result: `arg1` of a prompt completes from a fixed list by prefix. */
export function completeFixtureArgument(refType: string, argument: string, prefix: string): { completion: { values: string[]; total: number; hasMore: false } } {
  const values = refType === 'ref/prompt' && argument === 'arg1' ? ARG1_COMPLETIONS.filter((v) => v.startsWith(prefix)) : []
  return { completion: { values, total: values.length, hasMore: false } }
}

/**
 * Installs the resource, prompt, subscription and completion handlers on a low-level SDK v1
 * `Server` whose capabilities include `resources` (with `subscribe`), `prompts` and `completions`.
 * Unknown resources and prompts are JSON-RPC errors -32602 (MCP 2025-11-25, Resources "Error
 * Handling" uses -32002 for resources; the SDK v1 client accepts either).
 * @param subscriptions the session's subscribed URIs (kept by the caller, one set per session)
 */
export function installFixtureHandlers(server: Server, subscriptions: Set<string>): void {
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: FIXTURE_RESOURCES }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: FIXTURE_RESOURCE_TEMPLATES }))
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const found = readFixtureResource(req.params.uri)
    if (!found) throw new McpError(-32002, 'Resource not found', { uri: req.params.uri })
    return found
  })
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    subscriptions.add(req.params.uri)
    return {}
  })
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    subscriptions.delete(req.params.uri)
    return {}
  })
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: FIXTURE_PROMPTS }))
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const found = getFixturePrompt(req.params.name, req.params.arguments ?? {})
    if (!found) throw new McpError(ErrorCode.InvalidParams, 'Unknown prompt')
    return found
  })
  server.setRequestHandler(CompleteRequestSchema, async (req) => completeFixtureArgument(req.params.ref.type, req.params.argument.name, req.params.argument.value))
}
