/**
 * @module demo/fixtures-2026
 * The fixtures the official MCP conformance suite's 2026-07-28 server scenarios expect
 * (@modelcontextprotocol/conformance 0.2.0-alpha, `conformance server --requirements 2026-07-28`),
 * on an SDK v2 `McpServer` (@modelcontextprotocol/server 2.4), which speaks the stateless
 * 2026-07-28 wire: per-request `_meta` envelope, `server/discover`, `resultType`, cache hints,
 * multi-round-trip (`input_required`) results. demo/origin.ts serves it, with `modern: true`, for
 * every POST that belongs to no 2025 session, next to the 0.1.16 fixtures of demo/fixtures.ts.
 *
 * What is here:
 * - the same `test_*` tools, `test://` resources, prompts and `arg1` completion as the 2025
 *   fixtures (their data comes from demo/fixtures.ts);
 * - the multi-round-trip tools `test_input_required_result_*` and the prompt
 *   `test_input_required_result_prompt` (SEP-2322): round 1 answers `input_required` with the
 *   embedded requests the scenario names, the retry with `inputResponses` completes; the
 *   `requestState` is HMAC-sealed by the SDK's codec, so a tampered one is refused (-32602);
 * - the diagnostic tools of `server-stateless`: `test_missing_capability` (a sampling input request,
 *   which the SDK refuses with -32021 unless the client declared `sampling`), `test_streaming_elicitation` (an `input_required` answer, never a
 *   request on the stream), `test_logging_tool` (logs only when the request set a log level);
 * - `test_header_param`, a tool with an `x-mcp-header` argument (SEP-2243 `Mcp-Param-*`).
 */
import { randomBytes } from 'node:crypto'
import {
  createRequestStateCodec,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  McpServer,
  ProtocolError,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server'
import {
  carriedFixtureResult,
  completeFixtureArgument,
  FIXTURE_PROMPTS,
  FIXTURE_RESOURCES,
  FIXTURE_RESOURCE_TEMPLATES,
  FIXTURE_TOOLS,
  getFixturePrompt,
  PNG_1X1,
  readFixtureResource,
  WAV_TINY,
} from './fixtures'

const NO_ARGS = { type: 'object', properties: {} } as const
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] })
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The 2025 fixture tools whose answer does not need a server-to-client request. */
const CARRIED = new Set(['test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource', 'test_multiple_content_types', 'test_error_handling'])

const NAME_FORM = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] }

/**
 * The 2026-07-28 `json_schema_2020_12_tool` (SEP-1613, SEP-2106): the 2025 fixture's `$schema`,
 * `$defs` and `additionalProperties`, plus composition (`allOf`/`anyOf`), conditional
 * (`if`/`then`/`else`) and `$anchor` keywords, which a server must publish unstripped.
 */
export const JSON_SCHEMA_2020_12_TOOL = {
  name: 'json_schema_2020_12_tool',
  description: 'Tool whose inputSchema uses JSON Schema 2020-12 features (SEP-1613, SEP-2106): a contact needs a phone or an email, the one its contactMethod names.',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
      contactMethod: { type: 'string', enum: ['phone', 'email'] },
      phone: { type: 'string' },
      email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
  },
} as const

/** The `x-mcp-header` tool: `region` travels as `Mcp-Param-Region` too (SEP-2243). */
export const HEADER_PARAM_TOOL = {
  name: 'test_header_param',
  description: 'Echoes its region; the region is mirrored in the Mcp-Param-Region header (x-mcp-header).',
  inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region', description: 'A region name' } }, required: ['region'] },
} as const

function carriedResult(name: string, args: Record<string, unknown>): CallToolResult {
  return (carriedFixtureResult(name) as CallToolResult | undefined) ?? text(`${name} called with ${JSON.stringify(args)}`)
}

/** The request's `_meta` envelope (the SDK types it as an open record). */
function envelope(ctx: ServerContext): { caps: Record<string, unknown>; logLevel: unknown } {
  const e = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>
  const caps = e['io.modelcontextprotocol/clientCapabilities']
  return { caps: typeof caps === 'object' && caps !== null ? (caps as Record<string, unknown>) : {}, logLevel: e['io.modelcontextprotocol/logLevel'] }
}

/** The accepted elicitation content for `key`, or undefined (missing, declined, another kind). */
function accepted(ctx: ServerContext, key: string): Record<string, unknown> | undefined {
  const v = inputResponse(ctx.mcpReq.inputResponses, key)
  return v.kind === 'elicit' && v.action === 'accept' ? (v.content ?? {}) : undefined
}

const samplingText = (ctx: ServerContext, key: string): string | undefined => {
  const v = inputResponse(ctx.mcpReq.inputResponses, key)
  if (v.kind !== 'sampling') return undefined
  const c = v.result.content
  return !Array.isArray(c) && c.type === 'text' ? c.text : '(no text)'
}

const rootsOf = (ctx: ServerContext, key: string): string[] | undefined => {
  const v = inputResponse(ctx.mcpReq.inputResponses, key)
  return v.kind === 'roots' ? v.roots.map((r) => r.uri) : undefined
}

type Handler = (ctx: ServerContext) => Promise<CallToolResult | ReturnType<typeof inputRequired>>

/** Builds the multi-round-trip tool handlers; `seal` mints an integrity-protected `requestState`. */
function mrtrTools(seal: (payload: Record<string, unknown>, ctx: ServerContext) => Promise<string>): Record<string, Handler> {
  const askName = (message = 'What is your name?') => inputRequired.elicit({ message, requestedSchema: NAME_FORM })
  return {
    test_input_required_result_elicitation: async (ctx) => {
      const a = accepted(ctx, 'user_name')
      if (typeof a?.name === 'string') return text(`Hello, ${a.name}!`)
      return inputRequired({ inputRequests: { user_name: askName() } })
    },
    test_input_required_result_sampling: async (ctx) => {
      const answer = samplingText(ctx, 'capital_question')
      if (answer !== undefined) return text(`The model answered: ${answer}`)
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 }),
        },
      })
    },
    test_input_required_result_list_roots: async (ctx) => {
      const roots = rootsOf(ctx, 'client_roots')
      if (roots) return text(`The client has ${roots.length} root(s): ${roots.join(', ')}`)
      return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } })
    },
    test_input_required_result_request_state: async (ctx) => {
      const state = ctx.mcpReq.requestState<Record<string, unknown>>()
      const ok = accepted(ctx, 'confirm')
      if (state?.step === 'confirm' && ok) return text(`state-ok: requestState validated, ok=${String(ok.ok)}`)
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }),
        },
        requestState: await seal({ step: 'confirm' }, ctx),
      })
    },
    test_input_required_result_multiple_inputs: async (ctx) => {
      const state = ctx.mcpReq.requestState<Record<string, unknown>>()
      const name = accepted(ctx, 'user_name')?.name
      const greeting = samplingText(ctx, 'greeting')
      const roots = rootsOf(ctx, 'client_roots')
      if (state?.step === 'all' && typeof name === 'string' && greeting !== undefined && roots)
        return text(`All inputs received: name=${name}, greeting=${greeting}, roots=${roots.length}`)
      return inputRequired({
        inputRequests: {
          user_name: askName(),
          greeting: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await seal({ step: 'all' }, ctx),
      })
    },
    test_input_required_result_multi_round: async (ctx) => {
      const state = ctx.mcpReq.requestState<Record<string, unknown>>()
      if (state?.round === 2) {
        const color = accepted(ctx, 'step2')?.color
        if (typeof color === 'string') return text(`Done: ${String(state.name)} likes ${color}.`)
      }
      const name = state?.round === 1 ? accepted(ctx, 'step1')?.name : undefined
      if (typeof name === 'string')
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: 'Step 2: What is your favorite color?',
              requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
            }),
          },
          requestState: await seal({ round: 2, name }, ctx),
        })
      return inputRequired({ inputRequests: { step1: askName('Step 1: What is your name?') }, requestState: await seal({ round: 1 }, ctx) })
    },
    test_input_required_result_tampered_state: async (ctx) => {
      // A tampered requestState never reaches this handler: the SDK's seam verifies the seal and
      // answers -32602 "Invalid or expired requestState".
      const state = ctx.mcpReq.requestState<Record<string, unknown>>()
      if (state?.step === 'sealed' && accepted(ctx, 'confirm')) return text('state-ok: the sealed requestState verified')
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }),
        },
        requestState: await seal({ step: 'sealed' }, ctx),
      })
    },
    test_input_required_result_capabilities: async (ctx) => {
      const { caps } = envelope(ctx)
      const requests: Record<string, ReturnType<typeof inputRequired.listRoots>> = {}
      if (caps.elicitation) requests.user_name = askName()
      if (caps.sampling) requests.greeting = inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 })
      if (caps.roots) requests.client_roots = inputRequired.listRoots()
      const answered = Object.keys(requests).filter((k) => inputResponse(ctx.mcpReq.inputResponses, k).kind !== 'missing')
      if (Object.keys(requests).length === 0 || answered.length === Object.keys(requests).length)
        return text(`Asked only for what the client declared: ${Object.keys(requests).join(', ') || 'nothing'}`)
      return inputRequired({ inputRequests: requests })
    },
    // server-stateless: the embedded request rides the result, never the response stream.
    test_streaming_elicitation: async (ctx) => {
      const a = accepted(ctx, 'answer')
      if (a) return text(`Answered: ${JSON.stringify(a)}`)
      return inputRequired({
        inputRequests: { answer: inputRequired.elicit({ message: 'Answer something', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } } } }) },
      })
    },
  }
}

/**
 * A new `McpServer` with the 2026-07-28 fixtures (one per request: the SDK's
 * `createMcpHandler` takes a factory). `key` seals `requestState` (at least 32 bytes; one key per
 * origin, so every round of a flow verifies).
 */
export function newFixtureServer2026(key: Uint8Array): McpServer {
  const codec = createRequestStateCodec<Record<string, unknown>>({ key, ttlSeconds: 600 })
  const server = new McpServer(
    { name: 'demo-origin-fixtures', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {} },
      requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
    }
  )
  for (const t of FIXTURE_TOOLS) {
    if (!CARRIED.has(t.name)) continue
    server.registerTool(t.name, { description: t.description, inputSchema: fromJsonSchema<Record<string, unknown>>(t.inputSchema) }, async (args) => carriedResult(t.name, args))
  }
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Sends three notifications/progress (0, 50, 100 of 100) when the call has a progressToken.', inputSchema: fromJsonSchema<Record<string, never>>(NO_ARGS) },
    async (_args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken
      if (token !== undefined) {
        for (const progress of [0, 50, 100]) {
          if (progress > 0) await pause(20)
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message: `step ${progress} of 100` } })
        }
      }
      return text(`Progress reported for token ${token === undefined ? '(none)' : String(token)}.`)
    }
  )
  server.registerTool(
    'test_missing_capability',
    {
      description: 'Asks the client for a sampling answer: a client that did not declare sampling gets -32021 MissingRequiredClientCapability.',
      inputSchema: fromJsonSchema<Record<string, never>>(NO_ARGS),
    },
    async (_args, ctx) => {
      const answer = samplingText(ctx, 'summary')
      if (answer !== undefined) return text(`The model answered: ${answer}`)
      // The SDK checks embedded requests against the declared capabilities and answers 400 -32021
      // with data.requiredCapabilities { sampling: {} } when the client did not declare sampling.
      return inputRequired({
        inputRequests: { summary: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Summarise.' } }], maxTokens: 50 }) },
      })
    }
  )
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs one notifications/message, only when the request set io.modelcontextprotocol/logLevel.', inputSchema: fromJsonSchema<Record<string, never>>(NO_ARGS) },
    async (_args, ctx) => {
      if (envelope(ctx).logLevel !== undefined) await ctx.mcpReq.log('info', 'test_logging_tool ran', 'demo-origin')
      return text('Done.')
    }
  )
  server.registerTool(
    JSON_SCHEMA_2020_12_TOOL.name,
    { description: JSON_SCHEMA_2020_12_TOOL.description, inputSchema: fromJsonSchema<Record<string, unknown>>(JSON_SCHEMA_2020_12_TOOL.inputSchema) },
    async (args) => text(`json_schema_2020_12_tool called with ${JSON.stringify(args)}`)
  )
  server.registerTool(
    HEADER_PARAM_TOOL.name,
    { description: HEADER_PARAM_TOOL.description, inputSchema: fromJsonSchema<{ region: string }>(HEADER_PARAM_TOOL.inputSchema) },
    async ({ region }) => text(`Region: ${region}`)
  )
  const seal = (payload: Record<string, unknown>, ctx: ServerContext) => codec.mint(payload, ctx)
  for (const [name, handler] of Object.entries(mrtrTools(seal))) {
    server.registerTool(name, { description: `Multi-round-trip fixture (SEP-2322): ${name}.`, inputSchema: fromJsonSchema<Record<string, never>>(NO_ARGS) }, async (_args, ctx) =>
      handler(ctx)
    )
  }

  const low = server.server
  low.setRequestHandler('resources/list', async () => ({ resources: FIXTURE_RESOURCES.filter((r) => r.uri !== 'test://watched-resource'), ttlMs: 60_000, cacheScope: 'public' }))
  low.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: FIXTURE_RESOURCE_TEMPLATES, ttlMs: 60_000, cacheScope: 'public' }))
  low.setRequestHandler('resources/read', async (req) => {
    const found = readFixtureResource(req.params.uri)
    // 2026-07-28 (SEP-2164): an unknown resource is -32602 with the uri in data.
    if (!found) throw new ProtocolError(-32602, 'Resource not found', { uri: req.params.uri })
    return found
  })
  low.setRequestHandler('prompts/list', async () => ({
    prompts: [...FIXTURE_PROMPTS, { name: 'test_input_required_result_prompt', description: 'A prompt that asks the client for context first (SEP-2322).' }],
    ttlMs: 60_000,
    cacheScope: 'public',
  }))
  low.setRequestHandler('prompts/get', async (req, ctx) => {
    if (req.params.name === 'test_input_required_result_prompt') {
      const c = accepted(ctx, 'user_context')?.context
      if (typeof c === 'string') return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${c}` } }] }
      return inputRequired({
        inputRequests: {
          user_context: inputRequired.elicit({
            message: 'What context should the prompt use?',
            requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
          }),
        },
      })
    }
    const found = getFixturePrompt(req.params.name, req.params.arguments ?? {})
    if (!found) throw new ProtocolError(-32602, 'Unknown prompt')
    return found
  })
  low.setRequestHandler('completion/complete', async (req) => completeFixtureArgument(req.params.ref.type, req.params.argument.name, req.params.argument.value))
  return server
}

/** A fresh 32-byte key for {@link newFixtureServer2026}. */
export function newStateKey(): Uint8Array {
  return new Uint8Array(randomBytes(32))
}
