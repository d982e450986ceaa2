/**
 * FileKv in this process (the kill -9 and two-process cases are in file-kv-process.test.ts): a
 * resolved put is in the file on disk; concurrent puts share file writes; temporary files of a cut
 * write are removed at start; corrupt files are reported in one line and kept aside; the lock;
 * close; a failed write rejects and the next one recovers.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FileKv, StoreFileError } from '../../src/stores/file-kv'
import { StoreLockedError } from '../../src/stores/store-lock'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function fresh(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'edge-filekv-unit-'))
  dirs.push(dir)
  return { dir, file: join(dir, 'kv.json') }
}
function onDisk(file: string): Record<string, { value: string; expiresAt: number | null }> {
  return (JSON.parse(readFileSync(file, 'utf8')) as { entries: Record<string, { value: string; expiresAt: number | null }> }).entries
}

describe('FileKv durability', () => {
  it('a put or delete that resolved is already in the file (no timer)', async () => {
    const { file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('tools:default:public:a', '{"name":"a"}')
    expect(onDisk(file)['tools:default:public:a']!.value).toBe('{"name":"a"}')
    await kv.delete('tools:default:public:a')
    expect(onDisk(file)['tools:default:public:a']).toBeUndefined()
    await kv.close()
  })

  it('500 concurrent puts share a handful of file writes, and all of them are on disk', async () => {
    const { file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    await Promise.all(Array.from({ length: 500 }, (_, i) => kv.put(`k${i}`, `v${i}`)))
    expect(kv.stats.writes).toBeLessThanOrEqual(3)
    const saved = onDisk(file)
    for (let i = 0; i < 500; i++) expect(saved[`k${i}`]?.value).toBe(`v${i}`)
    await kv.close()
    const again = new FileKv(file, { warn: () => undefined })
    expect(await again.get('k499')).toBe('v499')
    await again.close()
  })

  it('reopening keeps values (unicode, a key named __proto__) and TTLs; expired entries are dropped', async () => {
    const { file } = fresh()
    let now = Date.now()
    const kv = new FileKv(file, { now: () => now, warn: () => undefined })
    await kv.put('__proto__', 'a plain key')
    await kv.put('é🌦', 'caf\u00e9 \u{1F600}\u0000')
    await kv.put('ttl', 'x', { expirationTtl: 60 })
    await kv.close()
    now += 61_000
    const again = new FileKv(file, { now: () => now, warn: () => undefined })
    expect(await again.get('__proto__')).toBe('a plain key')
    expect(await again.get('é🌦')).toBe('caf\u00e9 \u{1F600}\u0000')
    expect(await again.get('ttl')).toBeNull()
    await again.close()
  })

  it('reads a store file of the first FileKv (entries at the top level)', async () => {
    const { file } = fresh()
    writeFileSync(file, JSON.stringify({ 'tools:default:public:old': { value: '{"name":"old"}', expiresAt: null } }))
    const kv = new FileKv(file, { warn: () => undefined })
    expect(await kv.get('tools:default:public:old')).toBe('{"name":"old"}')
    await kv.put('new', '1')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'mcp-edge-kv', version: 1 })
    await kv.close()
  })

  it('removes the temporary files a cut write left (write-file-atomic and the first FileKv), and only those', async () => {
    const { dir, file } = fresh()
    writeFileSync(file, JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: { a: { value: '1', expiresAt: null } } }))
    for (const n of ['kv.json.3598483948', 'kv.json.4242.tmp', 'kv.json.backup', 'other.json.123']) writeFileSync(join(dir, n), '{"half')
    const lines: string[] = []
    const kv = new FileKv(file, { warn: (l) => lines.push(l) })
    expect(readdirSync(dir).sort()).toEqual(['kv.json', 'kv.json.backup', 'kv.json.lock', 'other.json.123'])
    expect(lines).toEqual([expect.stringContaining(`removed 2 temporary file(s) of ${file}`)])
    expect(await kv.get('a')).toBe('1')
    await kv.close()
  })

  it('a write that fails rejects with the file named; the value is written by the next write that works', async () => {
    const { dir } = fresh()
    const file = join(dir, 'sub', 'kv.json')
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('a', '1')
    rmSync(join(dir, 'sub'), { recursive: true })
    const failed = await kv.put('b', '2').catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(StoreFileError)
    expect((failed as Error).message).toBe(`store file ${file} could not be written (ENOENT)`)
    mkdirSync(join(dir, 'sub'))
    await kv.put('c', '3')
    expect(Object.keys(onDisk(file)).sort()).toEqual(['a', 'b', 'c'])
    await kv.close()
  })

  it('close flushes, releases the lock, and later writes reject', async () => {
    const { file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    const pending = kv.put('a', '1')
    await kv.close()
    await pending
    expect(onDisk(file).a!.value).toBe('1')
    expect(existsSync(`${file}.lock`)).toBe(false)
    await expect(kv.put('b', '2')).rejects.toThrow(`store file ${file} is closed`)
    await kv.close() // idempotent
  })
})

describe('FileKv corrupt file at start', () => {
  const cases: [string, string, RegExp][] = [
    ['truncated JSON', '{"format":"mcp-edge-kv","version":1,"entries":{"a":{"val', /truncated or not JSON \(.+; 56 bytes\)/],
    ['an empty file', '', /empty \(0 bytes\)/],
    ['not an object', '[1,2,3]', /not a JSON object/],
    ['an entry without its value', '{"format":"mcp-edge-kv","version":1,"entries":{"a":{"expiresAt":null}}}', /entry "a" is not \{ value, expiresAt \}/],
    ['another format', '{"format":"something-else","version":3,"entries":{}}', /format "something-else" version 3 is not mcp-edge-kv version 1/],
    ['binary garbage', '\u0000\u00ff\u00fe garbage', /truncated or not JSON/],
  ]
  for (const [label, content, why] of cases) {
    it(`${label}: one line naming the file and the problem, kept aside byte for byte, starts empty`, async () => {
      const { dir, file } = fresh()
      writeFileSync(file, content)
      const lines: string[] = []
      const kv = new FileKv(file, { warn: (l) => lines.push(l) })
      expect(lines.length).toBe(1)
      expect(lines[0]).not.toContain('\n')
      expect(lines[0]).toContain(`store: ${file} is corrupt: `)
      expect(lines[0]).toMatch(why)
      expect(lines[0]).toContain('starting with an empty store')
      const aside = readdirSync(dir).filter((n) => n.startsWith('kv.json.corrupt-'))
      expect(aside).toEqual([expect.stringMatching(/^kv\.json\.corrupt-\d{8}T\d{6}Z$/)])
      expect(lines[0]).toContain(`kept aside as ${join(dir, aside[0]!)}`)
      expect(readFileSync(join(dir, aside[0]!), 'utf8')).toBe(content)
      expect(await kv.list()).toEqual({ keys: [], list_complete: true })
      await kv.put('a', '1')
      expect(onDisk(file).a!.value).toBe('1')
      await kv.close()
    })
  }

  it('two corrupt starts within one second keep both copies', async () => {
    const { dir, file } = fresh()
    const now = Date.now()
    for (const content of ['{"first', '{"second']) {
      writeFileSync(file, content)
      await new FileKv(file, { now: () => now, warn: () => undefined }).close()
    }
    const aside = readdirSync(dir)
      .filter((n) => n.startsWith('kv.json.corrupt-'))
      .sort()
    expect(aside.length).toBe(2)
    expect(aside.map((n) => readFileSync(join(dir, n), 'utf8')).sort()).toEqual(['{"first', '{"second'])
  })

  it('a store path that cannot be read as a file fails the start with the file named (no rename)', () => {
    const { file } = fresh()
    mkdirSync(file)
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(new StoreFileError(`store file ${file} cannot be read (EISDIR)`))
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
})

describe('FileKv lock', () => {
  it('a second store on the same file is refused, in this process too; after close it opens', async () => {
    const { file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(StoreLockedError)
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(
      `store file ${file} is in use by this process already; one process per store file: give each edge its own STORE_FILE, or share one store between edges with STORE_URL=redis://... (docs/stores.md)`
    )
    await kv.close()
    const again = new FileKv(file, { warn: () => undefined })
    await again.close()
  })

  it('a lock left by a dead process is taken over at once', async () => {
    const { file } = fresh()
    // A pid far above pid_max is never alive.
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 2 ** 30, host: hostname(), since: '2026-01-01T00:00:00.000Z' }))
    const kv = new FileKv(file, { warn: () => undefined })
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid })
    await kv.close()
  })

  it('a lock held by a live process (here: pid 1) is refused with its pid', () => {
    const { file } = fresh()
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' }))
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(`store file ${file} is in use by another edge, pid 1 (since 2026-01-01T00:00:00.000Z)`)
  })

  it('a lock from another host is refused, never guessed stale', () => {
    const { file } = fresh()
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 99, host: 'elsewhere', since: 'x' }))
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(`is in use by pid 99 on host elsewhere (since x; if that host no longer runs it, remove ${file}.lock)`)
  })
})
