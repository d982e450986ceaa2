/**
 * @module core/redact-url
 * Credentials hidden from what the edge and its CLI print: start lines, configuration errors,
 * store errors, `mcp-edge check` reports. One rule for all of them, applied to a URL or to any
 * text holding URLs (the JSON of `ORIGINS`, a message quoting a variable's value):
 * - the password of a URL's userinfo becomes `***` (`redis://user:***@host`), and userinfo
 *   without a colon, a bare token, becomes `***` whole (`https://***@host`);
 * - the value of every query parameter becomes `***`, its name kept (`/mcp?api_key=***&team=***`):
 *   an MCP URL's query is where API keys travel when a client cannot send headers.
 * Pure; linear in the text's length.
 */

/** Userinfo after any `//` (a mistyped scheme such as `redis//:pw@h` too); the run excludes `/`, so runs never overlap. */
const USERINFO = /(\/\/)([^/?#@\s"]*)@/g
const QUERY_VALUE = /([?&][^=&#\s"]*)=([^&#\s"]*)/g

/**
 * `text` with every URL's password or token and every query value replaced by `***`.
 * @param text a URL, or text holding URLs (left as is where it holds none)
 * @returns the redacted text (the same length class: never longer than a few `***` more)
 */
export function redactUrl(text: string): string {
  return text
    .replace(USERINFO, (_m, slashes: string, cred: string) => {
      const colon = cred.indexOf(':')
      return `${slashes}${colon >= 0 ? cred.slice(0, colon) + ':***' : '***'}@`
    })
    .replace(QUERY_VALUE, (_m, name: string, value: string) => (value === '' ? `${name}=` : `${name}=***`))
}
