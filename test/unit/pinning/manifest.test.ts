/**
 * The pin manifest (src/core/pinning/manifest.ts): export of every pin of an (origin, scope),
 * round trip, and the strict parser whose errors name the JSON Pointer of the problem.
 */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { buildManifest, duplicateMember, manifestPins, manifestText, parseManifest, type ExportablePin, type PinManifest } from '../../../src/core/pinning/manifest'
import { fieldDigests, toolDigest, type ToolDigest } from '../../../src/core/pinning/tool-digest'
import { catalogDigest, evaluatePins, servedTools } from '../../../src/core/pinning/pin-state'

const sha = (text: string) => ('sha256:' + createHash('sha256').update(text, 'utf8').digest('hex')) as ToolDigest
const AT = '2026-12-01T21:15:32.000Z'
const forecast = { name: 'get_forecast', title: 'Forecast', description: 'Weather forecast for a city', inputSchema: { type: 'object' } }
const alerts = { name: 'get_alerts', description: 'Weather alerts', inputSchema: { type: 'object' } }

async function exportable(tools: Record<string, unknown>[]): Promise<Map<string, ExportablePin>> {
  const m = new Map<string, ExportablePin>()
  for (const t of tools) {
    const d = await toolDigest(t)
    if (!d.ok) throw new Error('no digest')
    m.set(t.name as string, { digest: d.digest, approvedAt: AT, fields: await fieldDigests(t) })
  }
  return m
}

async function sample(): Promise<PinManifest> {
  return (await buildManifest('default', 'public', await exportable([forecast, alerts])))!
}

/** A manifest text with one change applied to the parsed sample. */
async function mutated(change: (m: Record<string, any>) => void): Promise<string> {
  const m = JSON.parse(manifestText(await sample()))
  change(m)
  return JSON.stringify(m)
}

describe('buildManifest and manifestText', () => {
  it('pins sorted by name, fields sorted, the catalog digest of the pins; text round-trips through the parser', async () => {
    const m = await sample()
    expect(m.version).toBe(1)
    expect(m.pins.map((p) => p.name)).toEqual(['get_alerts', 'get_forecast'])
    expect(Object.keys(m.pins[1]!.fields)).toEqual(['description', 'inputSchema', 'name', 'title'])
    expect(m.pins[1]!.fields.name).toBe(sha('"get_forecast"'))
    expect(m.catalogDigest).toBe(sha(`[["get_alerts","${m.pins[0]!.digest}"],["get_forecast","${m.pins[1]!.digest}"]]`))
    const text = manifestText(m)
    expect(text.endsWith('}\n')).toBe(true)
    expect(text).toContain('\n  "version": 1,\n  "origin": "default",\n  "scope": "public",\n  "pins": [\n')
    expect(await parseManifest(text)).toEqual({ ok: true, manifest: m })
  })

  it('the catalog digest equals the one clients are shown for the same pins', async () => {
    const pins = await exportable([forecast, alerts])
    const m = (await buildManifest('default', 'public', pins))!
    expect(m.catalogDigest).toBe(await catalogDigest(pins))
  })

  it('an empty pin set is a valid manifest', async () => {
    const m = (await buildManifest('default', 'u-' + 'a'.repeat(64), new Map()))!
    expect(m.catalogDigest).toBe(sha('[]'))
    expect((await parseManifest(manifestText(m))).ok).toBe(true)
  })

  it('manifestPins: source manifest, approvedAt the import time', async () => {
    const m = await sample()
    const pins = manifestPins(m, '2026-12-02T00:00:00.000Z')
    expect(pins.get('get_forecast')).toEqual({ digest: m.pins[1]!.digest, approvedAt: '2026-12-02T00:00:00.000Z', source: 'manifest' })
  })
})

describe('a manifest as the baseline', () => {
  it('export, parse, import: the same tools are approved, a changed one is changed, a new one pending, and the catalog digest is the manifest’s', async () => {
    const text = manifestText(await sample())
    const parsed = await parseManifest(text)
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors))
    const pins = manifestPins(parsed.manifest, AT)
    const e = evaluatePins({ baseline: true, pins }, await servedTools([forecast, { ...alerts, description: 'changed' }, { name: 'new_tool' }]), { complete: true, now: AT })
    expect([...e.tools.values()].map((t) => [t.name, t.state])).toEqual([
      ['get_forecast', 'approved'],
      ['get_alerts', 'changed'],
      ['new_tool', 'pending'],
    ])
    expect(await catalogDigest(e.approvedSet)).toBe(parsed.manifest.catalogDigest)
  })
})

describe('parseManifest errors name the path', () => {
  const cases: [string, (m: Record<string, any>) => void, string, RegExp][] = [
    ['wrong version', (m) => (m.version = 2), '/version', /must be 1 .*got 2/],
    ['version as a string', (m) => (m.version = '1'), '/version', /got "1"/],
    ['unknown top-level member', (m) => (m.extra = true), '/extra', /unknown member/],
    ['missing pins', (m) => delete m.pins, '', /"pins" is required/],
    ['bad scope', (m) => (m.scope = 'u-XYZ'), '/scope', /"public" or a caller scope/],
    ['empty origin', (m) => (m.origin = ''), '/origin', /an origin id/],
    ['origin with a control character', (m) => (m.origin = 'a\u001bb'), '/origin', /an origin id.*\\u\{001B\}/],
    ['pins not an array', (m) => (m.pins = {}), '/pins', /must be an array/],
    ['a pin that is not an object', (m) => (m.pins[1] = 'x'), '/pins/1', /a pin is an object/],
    ['bad digest (upper case hex)', (m) => (m.pins[0].digest = m.pins[0].digest.toUpperCase()), '/pins/0/digest', /64 lowercase hex/],
    ['bad approvedAt', (m) => (m.pins[1].approvedAt = 'yesterday'), '/pins/1/approvedAt', /RFC 3339/],
    ['impossible date', (m) => (m.pins[1].approvedAt = '2026-13-01T00:00:00Z'), '/pins/1/approvedAt', /RFC 3339/],
    ['unknown pin member', (m) => (m.pins[0].source = 'tofu'), '/pins/0/source', /unknown member/],
    ['missing fields', (m) => delete m.pins[0].fields, '/pins/0', /"fields" is required/],
    ['a field sub-digest malformed', (m) => (m.pins[0].fields.description = 'sha256:x'), '/pins/0/fields/description', /64 lowercase hex/],
    ['fields without name', (m) => delete m.pins[0].fields.name, '/pins/0/fields', /sub-digest of "name"/],
    ['fields.name of another name', (m) => (m.pins[0].fields.name = m.pins[1].fields.name), '/pins/0/fields/name', /not the sub-digest of this pin's name/],
    ['a name pinned twice', (m) => (m.pins[1].name = m.pins[0].name), '/pins/1/name', /more than one pin/],
    ['a lone surrogate in a name', (m) => (m.pins[0].name = '\ud800'), '/pins/0/name', /a tool name/],
    ['catalog digest of other pins', (m) => (m.catalogDigest = sha('[]')), '/catalogDigest', /does not match the pins: their catalog digest is sha256:[0-9a-f]{64}/],
    ['catalog digest malformed', (m) => (m.catalogDigest = 'md5:00'), '/catalogDigest', /must be "sha256:"/],
  ]
  for (const [what, change, path, message] of cases)
    it(what, async () => {
      const r = await parseManifest(await mutated(change))
      expect(r.ok).toBe(false)
      if (r.ok) return
      expect(
        r.errors.find((e) => e.path === path && message.test(e.message)),
        JSON.stringify(r.errors)
      ).toBeDefined()
    })

  it('a digest changed in a reviewed manifest is caught by the catalog digest', async () => {
    const r = await parseManifest(await mutated((m) => (m.pins[0].digest = sha('something else'))))
    expect(r).toEqual({ ok: false, errors: [{ path: '/catalogDigest', message: expect.stringMatching(/does not match the pins/) }] })
  })

  it('every error at once, in document order', async () => {
    const r = await parseManifest(
      await mutated((m) => {
        m.version = 3
        m.pins[0].digest = 'x'
        m.pins[1].fields.name = m.pins[0].fields.name
        m.pins[1].approvedAt = 'now'
      })
    )
    expect(r.ok === false && r.errors.map((e) => e.path)).toEqual(['/version', '/pins/0/digest', '/pins/1/approvedAt', '/pins/1/fields/name'])
  })

  it('text that is not JSON, or not an object, or too long', async () => {
    expect(await parseManifest('{"version":1,')).toEqual({ ok: false, errors: [{ path: '', message: 'the manifest is not JSON text (RFC 8259)' }] })
    expect(await parseManifest('[]')).toEqual({ ok: false, errors: [{ path: '', message: 'a manifest is a JSON object, got an array' }] })
    const r = await parseManifest(' '.repeat(16 * 1024 * 1024 + 1))
    expect(r.ok === false && r.errors[0]!.message).toMatch(/at most 16777216 are read/)
  })

  it('a member written twice anywhere is refused (a reviewer would read one value, JSON.parse keep the other)', async () => {
    const text = manifestText(await sample())
    const pin0 = (await sample()).pins[0]!
    const twice = text.replace(`"digest": "${pin0.digest}"`, `"digest": "${pin0.digest}", "digest": "${sha('evil')}"`)
    expect(await parseManifest(twice)).toEqual({
      ok: false,
      errors: [{ path: '/pins/0/digest', message: 'member name "digest" occurs more than once in the same object; each member must be written once' }],
    })
  })

  it('error messages show at most a bounded, escaped excerpt of a value', async () => {
    const r = await parseManifest(await mutated((m) => (m.origin = '\u202e'.repeat(5000))))
    expect(r.ok).toBe(false)
    if (r.ok) return
    for (const e of r.errors) {
      expect(e.message.length).toBeLessThan(200)
      expect(e.message).not.toContain('\u202e')
    }
  })

  it('a parsed value is accepted too (without the duplicate check)', async () => {
    const m = await sample()
    expect(await parseManifest(JSON.parse(manifestText(m)))).toEqual({ ok: true, manifest: m })
  })
})

describe('duplicateMember', () => {
  it('finds a repeated name per object, not across objects or in values; escapes count as the same name', () => {
    expect(duplicateMember('{"a":1,"b":{"a":2},"c":["a","a"]}')).toBeNull()
    expect(duplicateMember('{"a":1,"b":{"x":"\\"","x":2}}')).toEqual({ path: '/b/x', name: 'x' })
    expect(duplicateMember('{"a":1,"\\u0061":2}')).toEqual({ path: '/a', name: 'a' })
    expect(duplicateMember('[{"k":1},{"k":2},{"k":3,"k":4}]')).toEqual({ path: '/2/k', name: 'k' })
    expect(duplicateMember('{"s":"}{,\\"","s2":"\\\\","s2":1}')).toEqual({ path: '/s2', name: 's2' })
  })
})
