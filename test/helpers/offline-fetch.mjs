// Preloaded (node --import) into a stdio MCP server under test: every fetch fails at once, as
// Node's fetch does without a network (TypeError "fetch failed"), so the server answers its own
// failure shape and the test never leaves loopback (test/helpers/stdio-session-relay.ts).
globalThis.fetch = async () => {
  throw new TypeError('fetch failed')
}
