/**
 * The result checks (docs/result-checks.md) on both runtimes, against a real SDK origin
 * (test/helpers/result-origin.ts), for each mode of RESULT_SECRETS, RESULT_CONTROL and
 * MAX_RESULT_TEXT_BYTES / OVERSIZE_RESULT, in JSON answers, SSE answers and 2025-03-26 batches:
 * clean results, look-alikes and images relayed byte for byte; findings logged and counted; the
 * credentials never in the edge's own outputs (log records, /metrics) in any mode, nor in the
 * answer once redacted or blocked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { mcpHeaders } from '../helpers/mcp'
import { CONTROL_STRIPPED, CONTROL_TEXT, GITHUB_PAT, IMAGE, LOOK_ALIKES, SECRETS, startResultOrigin, type ResultOrigin } from '../helpers/result-origin'
import type { LogRecord } from '../../src/core/ports'

type Msg = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }
type Via = 'json' | 'sse' | 'batch'

const ALL_SECRETS = [...Object.values(SECRETS), GITHUB_PAT]
/** Parts of each credential that no redaction marker or edge text holds (a whole PEM block is too long to look for alone). */
const SECRET_NEEDLES = ALL_SECRETS.map((s) => (s.startsWith('-----') ? s.split('\n')[1]! : s))
const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

/** The raw texts of the elements of a JSON array text (strings and nesting respected). */
function elements(text: string): string[] {
  const out: string[] = []
  let depth = 0
  let from = -1
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === '{' || c === '[') {
      if (depth === 1 && c === '{') from = i
      depth++
    } else if (c === '}' || c === ']') {
      depth--
      if (depth === 1 && c === '}') out.push(text.slice(from, i + 1))
    }
  }
  return out
}

/** The JSON-RPC response texts of an answer (a JSON object, each element of a batch array, or an SSE stream's data lines), as sent. */
async function messages(res: Response): Promise<string[]> {
  const text = await res.text()
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream'))
    return text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.replace(/^data: ?/, ''))
      .filter((d) => {
        const m = JSON.parse(d) as Record<string, unknown>
        return 'id' in m && !('method' in m)
      })
  if (text.trimStart().startsWith('[')) return elements(text)
  return [text]
}

/** One tools/call sent `via` a transport, to `url` (the edge, or the origin directly); the answer's message text. */
async function ask(url: string, via: Via, name: string, args: Record<string, unknown> = {}, rid?: string): Promise<string> {
  const headers = mcpHeaders(via === 'batch' ? '2025-03-26' : '2025-06-18', rid ? { 'x-request-id': rid } : {})
  const body = via === 'batch' ? [call(1, name, args), { jsonrpc: '2.0', id: 2, method: 'tools/list' }] : call(1, name, args)
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
  const all = await messages(res)
  if (via === 'batch') {
    // The tools/list element is there too; the call's answer is the element with id 1.
    const mine = all.find((m) => (JSON.parse(m) as Msg).id === 1)
    expect(all.length).toBe(2)
    return mine!
  }
  expect(all.length).toBe(1)
  return all[0]!
}

const CONFIGS = [
  { name: 'defaults (audit, audit, no bound)', env: {}, secrets: 'audit', control: 'audit', oversize: null },
  {
    name: 'redact, strip, truncate',
    env: { RESULT_SECRETS: 'redact', RESULT_CONTROL: 'strip', MAX_RESULT_TEXT_BYTES: '2000', OVERSIZE_RESULT: 'truncate' },
    secrets: 'redact',
    control: 'strip',
    oversize: 'truncate',
  },
  {
    name: 'block, control off, error',
    env: { RESULT_SECRETS: 'block', RESULT_CONTROL: 'off', MAX_RESULT_TEXT_BYTES: '2000', OVERSIZE_RESULT: 'error' },
    secrets: 'block',
    control: 'off',
    oversize: 'error',
  },
  { name: 'off, off', env: { RESULT_SECRETS: 'off', RESULT_CONTROL: 'off' }, secrets: 'off', control: 'off', oversize: null },
] as const

const VIAS: Via[] = ['json', 'sse', 'batch']

describe.each(RUNTIMES)('result checks on $name', ({ start }) => {
  let jsonOrigin: ResultOrigin
  let sseOrigin: ResultOrigin
  beforeAll(async () => {
    jsonOrigin = await startResultOrigin({ json: true })
    sseOrigin = await startResultOrigin({ json: false })
  })
  afterAll(async () => {
    await jsonOrigin?.close()
    await sseOrigin?.close()
  })

  describe.each(CONFIGS)('$name', (cfg) => {
    let edge: EdgeUnderTest
    /** The edge URL and the origin URL each transport goes through (SSE: the named origin `sse`). */
    const urls = (via: Via) => (via === 'sse' ? { edge: edge.url + '/sse', origin: sseOrigin.url } : { edge: edge.url, origin: jsonOrigin.url })
    const findings = async (rid: string, atLeast = 0): Promise<LogRecord[]> =>
      (await edge.logs(atLeast ? { msg: 'mcp.result_finding', where: (r) => r.rid === rid, atLeast } : undefined)).filter((r) => r.msg === 'mcp.result_finding' && r.rid === rid)

    beforeAll(async () => {
      edge = await start({ ORIGIN_URL: jsonOrigin.url, ORIGINS: JSON.stringify({ sse: sseOrigin.url }), ...cfg.env })
    })
    afterAll(async () => {
      await edge?.close()
    })

    it.each(VIAS)('a clean result (look-alikes, an image, a resource) is relayed byte for byte (%s)', async (via) => {
      const { edge: e, origin: o } = urls(via)
      const rid = `clean-${via}`
      const viaEdge = await ask(e, via, 'clean', {}, rid)
      expect(viaEdge).toBe(await ask(o, via, 'clean'))
      expect(viaEdge).toContain(JSON.stringify(LOOK_ALIKES).slice(1, -1))
      await edge.logs({ msg: 'mcp.post', where: (r) => r.rid === rid })
      expect(await findings(rid)).toEqual([])
    })

    it.each(VIAS)('credentials in text, resource text and structuredContent (%s)', async (via) => {
      const { edge: e, origin: o } = urls(via)
      const rid = `leak-${via}`
      const viaEdge = await ask(e, via, 'leak', {}, rid)
      const direct = await ask(o, via, 'leak')
      const msg = JSON.parse(viaEdge) as Msg
      if (cfg.secrets === 'off' || cfg.secrets === 'audit') expect(viaEdge).toBe(direct)
      // The image's data holds a key-id-shaped run on purpose: images are relayed untouched.
      const exceptImage = viaEdge.replace(JSON.stringify(IMAGE.data), '')
      if (cfg.secrets === 'redact') {
        for (const n of SECRET_NEEDLES) expect(exceptImage).not.toContain(n)
        const content = msg.result!.content as { type: string; text?: string; resource?: { text: string } }[]
        expect(content[0]!.text).toBe(
          'found:\n' +
            Object.keys(SECRETS)
              .map((c) => `[REDACTED:${c}]`)
              .join('\n') +
            '\n[REDACTED:github_token]\n' +
            LOOK_ALIKES
        )
        expect(content[1]).toEqual(IMAGE)
        expect(content[2]!.resource!.text).toBe('GITHUB_TOKEN=[REDACTED:github_token]')
        expect(msg.result!.structuredContent).toEqual({ file: '.env', lines: ['STRIPE=[REDACTED:stripe_live_key]', 'DEBUG=1'] })
        expect(msg.result!.isError).toBeUndefined()
      }
      if (cfg.secrets === 'block') {
        for (const n of SECRET_NEEDLES) expect(exceptImage).not.toContain(n)
        expect(viaEdge).not.toContain(IMAGE.data)
        expect(msg.result!.isError).toBe(true)
        expect(msg.result!._meta).toEqual({
          'io.mcp-edge/failure': { class: 'governance', code: 'secret_in_result', correlationId: rid, agentGuidance: expect.any(String) },
        })
        expect(msg.result!.structuredContent).toBeUndefined()
        expect((msg.result!.content as { text: string }[])[0]!.text).toMatch(/RESULT_SECRETS=block/)
      }
      const found = await findings(rid, cfg.secrets === 'off' ? 0 : 1)
      const secretFindings = found.filter((r) => r.check === 'result_secrets')
      if (cfg.secrets === 'off') expect(secretFindings).toEqual([])
      else {
        const byCategory: Record<string, number> = {}
        for (const r of secretFindings) {
          expect(r).toMatchObject({ level: 'warn', origin: via === 'sse' ? 'sse' : 'default', tool: 'leak', action: cfg.secrets })
          byCategory[r.category as string] = (byCategory[r.category as string] ?? 0) + (r.count as number)
        }
        expect(byCategory).toEqual({ ...Object.fromEntries(Object.keys(SECRETS).map((c) => [c, 1])), github_token: 3, stripe_live_key: 2 })
      }
    })

    it('a redaction that breaks the outputSchema is refused; audit and off relay the origin bytes', async () => {
      const rid = 'leak-structured'
      const viaEdge = await ask(edge.url, 'json', 'leak_structured', {}, rid)
      const msg = JSON.parse(viaEdge) as Msg
      if (cfg.secrets === 'off' || cfg.secrets === 'audit') expect(viaEdge).toBe(await ask(jsonOrigin.url, 'json', 'leak_structured'))
      else {
        expect(viaEdge).not.toContain(SECRETS.github_token)
        expect(msg.result!.isError).toBe(true)
        const code = cfg.secrets === 'redact' ? 'result_check_broke_schema' : 'secret_in_result'
        expect(msg.result!._meta).toMatchObject({ 'io.mcp-edge/failure': { class: 'governance', code, correlationId: rid } })
      }
    })

    it.each(VIAS)('escape sequences, bidi and zero-width characters (%s)', async (via) => {
      const { edge: e, origin: o } = urls(via)
      const rid = `control-${via}`
      const viaEdge = await ask(e, via, 'control', {}, rid)
      const text = ((JSON.parse(viaEdge) as Msg).result!.content as { text: string }[])[0]!.text
      if (cfg.control === 'strip') expect(text).toBe(CONTROL_STRIPPED)
      else {
        expect(viaEdge).toBe(await ask(o, via, 'control'))
        expect(text).toBe(CONTROL_TEXT)
      }
      const found = (await findings(rid, cfg.control === 'off' ? 0 : 1)).filter((r) => r.check === 'result_control')
      if (cfg.control === 'off') expect(found).toEqual([])
      else expect(Object.fromEntries(found.map((r) => [r.category, r.count]))).toEqual({ terminal_escape: 3, bidi_control: 2, zero_width: 2, c0_control: 1 })
    })

    it.each(VIAS)('a text item above MAX_RESULT_TEXT_BYTES (%s)', async (via) => {
      const { edge: e, origin: o } = urls(via)
      const rid = `big-${via}`
      const viaEdge = await ask(e, via, 'big', { bytes: 5000 }, rid)
      const msg = JSON.parse(viaEdge) as Msg
      if (cfg.oversize === null) expect(viaEdge).toBe(await ask(o, via, 'big', { bytes: 5000 }))
      if (cfg.oversize === 'truncate') {
        const content = msg.result!.content as { text: string }[]
        expect(new TextEncoder().encode(content[0]!.text).length).toBeLessThanOrEqual(2000)
        expect(content[0]!.text).toMatch(/^HEADx+\n\[\.\.\. \d+ bytes dropped by the edge \(MAX_RESULT_TEXT_BYTES=2000\); narrow the call to see them \.\.\.\]\nx+TAIL$/)
        expect(content[1]).toEqual({ type: 'text', text: 'short' })
        expect(msg.result!.structuredContent).toEqual({ size: 5000 })
        expect(msg.result!.isError).toBeUndefined()
        expect(msg.result!._meta).toEqual({ 'io.mcp-edge/truncated': { limitBytes: 2000, items: [{ index: 0, originalBytes: 5000 }] } })
      }
      if (cfg.oversize === 'error') {
        expect(msg.result).toBeUndefined()
        expect(msg.error).toEqual({
          code: -31001,
          message:
            'Origin reply too large: a text item of the tool result is 5000 bytes, above MAX_RESULT_TEXT_BYTES=2000. Narrow the call (ask for less), or ask the operator to set OVERSIZE_RESULT=truncate.',
          data: { source: 'edge', reason: 'result_too_large', limitBytes: 2000 },
        })
        const post = (await edge.logs({ msg: 'mcp.post', where: (r) => r.rid === rid })).find((r) => r.msg === 'mcp.post' && r.rid === rid)!
        expect(JSON.stringify(post)).toMatch(/"grade":"origin_error"/)
      }
    })

    it('the credentials appear in no log record and not in /metrics; findings are counted by origin, category and action', async () => {
      // Every call above has logged its POST line by now (each test waited for its own).
      const logs = JSON.stringify(await edge.logs())
      for (const n of SECRET_NEEDLES) expect(logs).not.toContain(n)
      const metrics = await (await fetch(new URL('/metrics', edge.url))).text()
      for (const n of SECRET_NEEDLES) expect(metrics).not.toContain(n)
      const line = (category: string, action: string, origin = 'default') =>
        new RegExp(`mcp_edge_result_findings_total\\{origin="${origin}",category="${category}",action="${action}"\\} (\\d+)`).exec(metrics)?.[1]
      if (cfg.secrets !== 'off') {
        expect(line('aws_access_key_id', cfg.secrets)).toBeDefined()
        expect(line('github_token', cfg.secrets, 'sse')).toBeDefined()
      } else expect(metrics).not.toMatch(/category="github_token"/)
      if (cfg.control !== 'off') expect(line('bidi_control', cfg.control)).toBeDefined()
      if (cfg.oversize !== null) expect(line('oversize_text', cfg.oversize)).toBeDefined()
    })
  })
})
