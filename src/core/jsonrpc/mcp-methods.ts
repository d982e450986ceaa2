/**
 * @module core/jsonrpc/mcp-methods
 * The one list of MCP request methods, read by the classifier (a request method needs an id) and
 * by the metrics (the `method` label values). Pure.
 */

/**
 * Client-to-server request methods of MCP 2025-03-26 .. 2026-07-28 (schema.ts `ClientRequest`):
 * each needs an id. Notifications (`notifications/*`) are not in it.
 */
export const MCP_REQUEST_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'server/discover',
  'subscriptions/listen',
])
