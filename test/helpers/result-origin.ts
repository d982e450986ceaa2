/**
 * A real SDK origin for the result checks (McpServer from @modelcontextprotocol/sdk, stateless
 * Streamable HTTP, JSON or SSE answers): tools whose results carry fake credentials, look-alikes,
 * hidden characters, images, or a text of a chosen size. The credentials are made from parts here
 * (never real ones) and exported, so a test can look for each one in every output of the edge.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { z } from 'zod'
import { createAsyncServer } from './async-listener'

/** `n` characters of `alphabet`, deterministic. */
const chars = (n: number, alphabet = 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8') => Array.from({ length: n }, (_, i) => alphabet[(i * 7) % alphabet.length]).join('')
const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ234567'

/** One fake credential of each category the issue names, by category. */
export const SECRETS: Record<string, string> = {
  private_key: ['-----BEGIN OPENSSH PRIVATE KEY-----', ...Array.from({ length: 5 }, () => chars(70, 'b3BlbnNzaC1rZXktdjEAAAAA+/0129')), '-----END OPENSSH PRIVATE KEY-----'].join(
    '\n'
  ),
  aws_access_key_id: 'AKIA' + chars(16, UPPER),
  github_token: 'ghp_' + chars(36),
  slack_token: 'xoxb-' + '2345678901-1098765432-' + chars(24),
  google_api_key: 'AIza' + chars(35, 'aB3dE5_gH7-jK9'),
  stripe_live_key: 'sk_live_' + chars(30),
}
/** A fine-grained GitHub token (category `github_token` too). */
export const GITHUB_PAT = 'github_pat_' + chars(82, 'aB3_dE5gH7')

/** Text that only looks like a secret: relayed unchanged in every mode. */
export const LOOK_ALIKES = [
  'commit 3f786850e387550fdab836ed7e6dc881de23001b',
  'request 123e4567-e89b-12d3-a456-426614174000',
  'Keep your PRIVATE KEY out of chats; a -----BEGIN PRIVATE KEY----- line alone is no key.',
  'AKIA1234 is a short id',
].join('\n')

/** A PNG-like image whose base64 data holds a key-id-shaped run: images are never scanned. */
export const IMAGE = { type: 'image' as const, data: 'iVBORw0KGgo' + SECRETS.aws_access_key_id + 'AAAA', mimeType: 'image/png' }

/** The text of the `control` tool, and what `strip` leaves of it. */
export const CONTROL_TEXT = 'status: \x1b[32mok\x1b[0m\x1b]0;pwned\x07 note\u202e\u2066 hidden\u200b\ufeff end\x00\ttab'
export const CONTROL_STRIPPED = 'status: ok note hidden end\ttab'

export interface ResultOrigin {
  url: string
  close(): Promise<void>
}

/**
 * Tools: `clean` (look-alikes, an image, a resource: nothing to find), `leak` (every fake
 * credential in a text item, a resource text and structuredContent, plus the look-alikes and an
 * image), `leak_structured` (a credential inside structuredContent of a tool with an outputSchema
 * whose `pattern` the redaction breaks), `control` ({@link CONTROL_TEXT}), `big` (`bytes` of text).
 */
export async function startResultOrigin(opts: { json: boolean }): Promise<ResultOrigin> {
  const http: HttpServer = createAsyncServer(async (req, res) => {
    const server = new McpServer({ name: 'result-origin', version: '1.0.0' })
    server.registerTool('clean', { description: 'Nothing to find.', inputSchema: {} }, () => ({
      content: [{ type: 'text', text: LOOK_ALIKES }, IMAGE, { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: LOOK_ALIKES } }],
    }))
    server.registerTool('leak', { description: 'Reads a config file.', inputSchema: {} }, () => ({
      content: [
        { type: 'text', text: `found:\n${Object.values(SECRETS).join('\n')}\n${GITHUB_PAT}\n${LOOK_ALIKES}` },
        IMAGE,
        { type: 'resource', resource: { uri: 'file:///.env', mimeType: 'text/plain', text: `GITHUB_TOKEN=${SECRETS.github_token}` } },
      ],
      structuredContent: { file: '.env', lines: [`STRIPE=${SECRETS.stripe_live_key}`, 'DEBUG=1'] },
    }))
    server.registerTool('leak_structured', { description: 'Returns a token.', inputSchema: {}, outputSchema: { token: z.string().regex(/^ghp_[A-Za-z0-9]{36}$/) } }, () => ({
      content: [{ type: 'text', text: 'one token' }],
      structuredContent: { token: SECRETS.github_token },
    }))
    server.registerTool('control', { description: 'Prints a terminal log.', inputSchema: {} }, () => ({ content: [{ type: 'text', text: CONTROL_TEXT }] }))
    server.registerTool('big', { description: 'Returns a long text.', inputSchema: { bytes: z.number().int() } }, ({ bytes }) => ({
      content: [
        { type: 'text', text: 'HEAD' + 'x'.repeat(Math.max(0, bytes - 8)) + 'TAIL' },
        { type: 'text', text: 'short' },
      ],
      structuredContent: { size: bytes },
    }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: opts.json })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((r) => http.close(() => r()))
    },
  }
}
