/**
 * Helpers for official-SDK clients in tests.
 */
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

/**
 * Makes an SDK v1 transport offer `version` in its `initialize` request (the SDK always offers
 * its latest), so a test can negotiate an older protocol version with a real client.
 */
export function offerVersion(transport: StreamableHTTPClientTransport, version: string | undefined): void {
  if (!version) return
  const send = transport.send.bind(transport)
  transport.send = (msg, opts) => {
    if ('method' in msg && msg.method === 'initialize') (msg.params as { protocolVersion: string }).protocolVersion = version
    return send(msg, opts)
  }
}
