/**
 * FileKv in this process (the kill -9 and two-process cases are in file-kv-process.test.ts): a
 * resolved put is in the file on disk; concurrent puts share file writes; temporary files of a cut
 * write are removed at start; corrupt files are reported in one line and kept aside; the lock;
 * close; a failed write rejects, is undone, and the next one recovers (more in file-kv-rollback.test.ts).
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FileKv, StoreFileError } from '../../src/stores/file-kv'
import { StoreLockedError } from '../../src/stores/store-lock'
import { toolKey } from '../../src/core/validation/tool-store'

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
    await kv.put(toolKey('default', 'public', 'a'), '{"name":"a"}')
    expect(onDisk(file)[toolKey('default', 'public', 'a')]!.value).toBe('{"name":"a"}')
    await kv.delete(toolKey('default', 'public', 'a'))
    expect(onDisk(file)[toolKey('default', 'public', 'a')]).toBeUndefined()
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
    writeFileSync(file, JSON.stringify({ [toolKey('default', 'public', 'old')]: { value: '{"name":"old"}', expiresAt: null } }))
    const kv = new FileKv(file, { warn: () => undefined })
    expect(await kv.get(toolKey('default', 'public', 'old'))).toBe('{"name":"old"}')
    await kv.put('new', '1')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'mcp-edge-kv', version: 1 })
    await kv.close()
  })

  it("removes only its own temporary files holding a whole edge store of a gone pid; anything else at those names, numbered user files and the earlier versions' temporary names are left byte for byte", async () => {
    const { dir, file } = fresh()
    writeFileSync(file, JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: { a: { value: '1', expiresAt: null } } }))
    // 99999999 is above Linux's pid_max (4194304): never a live process.
    const whole = JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: { b: { value: '2', expiresAt: null } } })
    const ours = { 'kv.json.mcp-edge-99999999-1.tmp': whole, [`kv.json.mcp-edge-${process.pid}-7.tmp`]: whole }
    const users: Record<string, string> = {
      'kv.json.3598483948': '{"half',
      'kv.json.1': 'rotated log 1\n',
      'kv.json.20261201': 'rotated log\n',
      'kv.json.1.tmp': 'an editor swap\n',
      'kv.json.4242.tmp': '{"half',
      'kv.json.backup': '{"half',
      'kv.json.mcp-edge-1-1.tmp': 'not edge content\n',
      'kv.json.mcp-edge-7-1.tmp': '',
      'kv.json.mcp-edge-99999999-2.tmp': '{"format":"mcp-edge-kv","version":1,"entr',
      'kv.json.mcp-edge-99999999-3.tmp': '{"format":"mcp-edge-kv", "my":"notes"}',
      'kv.json.mcp-edge-99999999-4.tmp': '{"format":"mcp-edge-kv","my":"notes"}',
      // A whole store, but its pid (the test runner's parent) is alive: it may be another edge writing it.
      [`kv.json.mcp-edge-${process.ppid}-1.tmp`]: whole,
      'other.json.123': '{"half',
    }
    for (const [n, text] of Object.entries({ ...ours, ...users })) writeFileSync(join(dir, n), text)
    const lines: string[] = []
    const kv = new FileKv(file, { warn: (l) => lines.push(l) })
    expect(readdirSync(dir).sort()).toEqual(['kv.json', 'kv.json.mcp-edge.lock', ...Object.keys(users)].sort())
    for (const [n, text] of Object.entries(users)) expect(readFileSync(join(dir, n), 'utf8'), n).toBe(text)
    expect(lines).toEqual([expect.stringContaining(`removed 2 temporary file(s) of ${file}`), expect.stringContaining('store: left 6 file(s) named like temporary files of')])
    expect(await kv.get('a')).toBe('1')
    expect(await kv.get('b')).toBeNull()
    await kv.put('b', '2')
    await kv.close()
    expect(readdirSync(dir).sort()).toEqual(['kv.json', ...Object.keys(users)].sort())
    for (const [n, text] of Object.entries(users)) expect(readFileSync(join(dir, n), 'utf8'), n).toBe(text)
  })

  it("an empty or cut temporary file named with the pid of the edge whose stale lock this start took over is that edge's cut write, and removed; the same at another pid is left", async () => {
    const { dir, file } = fresh()
    writeFileSync(file, JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: {} }))
    writeFileSync(`${file}.mcp-edge.lock`, JSON.stringify({ pid: 99999999, host: hostname(), since: '2026-12-01T00:00:00.000Z' }))
    writeFileSync(join(dir, 'kv.json.mcp-edge-99999999-2.tmp'), '')
    writeFileSync(join(dir, 'kv.json.mcp-edge-99999999-3.tmp'), '{"format":"mcp-edge-kv","version":1,"entr')
    writeFileSync(join(dir, 'kv.json.mcp-edge-99999999-4.tmp'), 'my notes\n')
    writeFileSync(join(dir, 'kv.json.mcp-edge-7-1.tmp'), '')
    const lines: string[] = []
    const kv = new FileKv(file, { warn: (l) => lines.push(l) })
    expect(readdirSync(dir).sort()).toEqual(['kv.json', 'kv.json.mcp-edge-7-1.tmp', 'kv.json.mcp-edge-99999999-4.tmp', 'kv.json.mcp-edge.lock'])
    expect(readFileSync(join(dir, 'kv.json.mcp-edge-99999999-4.tmp'), 'utf8')).toBe('my notes\n')
    expect(lines).toEqual([expect.stringContaining('removed 2 temporary file(s)'), expect.stringContaining('left 2 file(s)')])
    await kv.close()
  })

  it('a symlink (to /dev/zero, to a store) or a FIFO at a temporary name is neither followed nor opened, and left', async () => {
    const { dir, file } = fresh()
    const whole = JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: {} })
    writeFileSync(join(dir, 'elsewhere.json'), whole)
    symlinkSync('/dev/zero', join(dir, 'kv.json.mcp-edge-99999999-1.tmp'))
    symlinkSync(join(dir, 'elsewhere.json'), join(dir, 'kv.json.mcp-edge-99999999-2.tmp'))
    execFileSync('mkfifo', [join(dir, 'kv.json.mcp-edge-99999999-3.tmp')])
    const lines: string[] = []
    const kv = new FileKv(file, { warn: (l) => lines.push(l) })
    expect(lines).toEqual([expect.stringContaining('store: left 3 file(s)')])
    expect(lstatSync(join(dir, 'kv.json.mcp-edge-99999999-1.tmp')).isSymbolicLink()).toBe(true)
    expect(lstatSync(join(dir, 'kv.json.mcp-edge-99999999-2.tmp')).isSymbolicLink()).toBe(true)
    expect(lstatSync(join(dir, 'kv.json.mcp-edge-99999999-3.tmp')).isFIFO()).toBe(true)
    expect(readFileSync(join(dir, 'elsewhere.json'), 'utf8')).toBe(whole)
    await kv.close()
  })

  it('a write that fails rejects with the file named; the next write that works holds only what succeeded (the failed put is undone)', async () => {
    const { dir } = fresh()
    mkdirSync(join(dir, 'sub'))
    const file = join(dir, 'sub', 'kv.json')
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('a', '1')
    rmSync(join(dir, 'sub'), { recursive: true })
    const failed = await kv.put('b', '2').catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(StoreFileError)
    expect((failed as Error).message).toBe(`store file ${file} could not be written (ENOENT)`)
    mkdirSync(join(dir, 'sub'))
    await kv.put('c', '3')
    expect(Object.keys(onDisk(file)).sort()).toEqual(['a', 'c'])
    await kv.close()
  })

  it('close flushes, releases the lock, and later writes reject', async () => {
    const { file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    const pending = kv.put('a', '1')
    await kv.close()
    await pending
    expect(onDisk(file).a!.value).toBe('1')
    expect(existsSync(`${file}.mcp-edge.lock`)).toBe(false)
    await expect(kv.put('b', '2')).rejects.toThrow(`store file ${file} is closed`)
    await kv.close() // idempotent
  })
})

describe('FileKv corrupt file at start', () => {
  const cases: [string, string, RegExp][] = [
    ['truncated JSON', '{"format":"mcp-edge-kv","version":1,"entries":{"a":{"val', /truncated \(.+; 56 bytes\)/],
    ['a truncated store of the first FileKv', '{"tools:default:public:a":{"value":"{\\"na', /truncated/],
    ['an entry without its value', '{"format":"mcp-edge-kv","version":1,"entries":{"a":{"expiresAt":null}}}', /entry "a" is not \{ value, expiresAt \}/],
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

  const foreign: [string, string, RegExp][] = [
    ['an empty file', '', /empty \(0 bytes\)/],
    ['JSON with comments', '{ "compilerOptions": { "strict": true }, // keep\n}\n', /not JSON/],
    ['JSON with a leading comment', '// settings\n{"a": 1}\n', /not JSON/],
    ['not an object', '[1,2,3]', /not a JSON object/],
    ["another program's JSON", '{"name":"app","version":"1.0.0"}', /entry "name" is not/],
    ['another format', '{"format":"something-else","version":3,"entries":{}}', /format "something-else" is not mcp-edge-kv/],
    ['a store of a later format version', '{"format":"mcp-edge-kv","version":2,"entries":{}}', /version 2 \(this edge reads version 1/],
    ['binary garbage', '\u0000\u00ff\u00fe garbage', /not JSON/],
  ]
  for (const [label, content, why] of foreign) {
    it(`${label}: refused with one message naming the file and the variable, left byte for byte, nothing created beside it`, () => {
      const { dir, file } = fresh()
      writeFileSync(file, content)
      const lines: string[] = []
      let err: unknown
      try {
        new FileKv(file, { warn: (l) => lines.push(l), variable: 'STORE_FILE' })
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(StoreFileError)
      const message = (err as Error).message
      expect(message).not.toContain('\n')
      expect(message).toContain(`STORE_FILE=${file} is not an edge store file of this version: `)
      expect(message).toMatch(why)
      expect(message).toContain('it was left as it is')
      expect(lines).toEqual([])
      expect(readdirSync(dir)).toEqual(['kv.json'])
      expect(readFileSync(file, 'utf8')).toBe(content)
    })
  }

  it("a user's {} (with or without a newline) outside a .edge-data folder is refused naming what to do, left byte for byte with its mode", () => {
    for (const content of ['{}\n', '{}', '{ }']) {
      const { dir } = fresh()
      const file = join(dir, '.prettierrc.json')
      writeFileSync(file, content)
      chmodSync(file, 0o644)
      let err: unknown
      try {
        new FileKv(file, { warn: () => undefined, variable: 'STORE_FILE' })
      } catch (e) {
        err = e
      }
      expect(err, content).toBeInstanceOf(StoreFileError)
      expect((err as Error).message).toContain(`STORE_FILE=${file} is not an edge store file of this version: it holds an empty JSON object`)
      expect((err as Error).message).toContain('if it is an empty store of an earlier version, delete it')
      expect(readdirSync(dir)).toEqual(['.prettierrc.json'])
      expect(readFileSync(file, 'utf8')).toBe(content)
      expect(lstatSync(file).mode & 0o777).toBe(0o644)
    }
  })

  it('an empty store of the first FileKv ({} exactly) in a .edge-data folder opens; its mode is kept by the writes', async () => {
    const { dir } = fresh()
    mkdirSync(join(dir, '.edge-data'))
    const file = join(dir, '.edge-data', 'kv.json')
    writeFileSync(file, '{}')
    chmodSync(file, 0o644)
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('a', '1')
    await kv.close()
    expect(onDisk(file).a!.value).toBe('1')
    expect(lstatSync(file).mode & 0o777).toBe(0o644)
    // {} with a newline is not what the first FileKv wrote: refused even there.
    writeFileSync(join(dir, '.edge-data', 'other.json'), '{}\n')
    expect(() => new FileKv(join(dir, '.edge-data', 'other.json'), { warn: () => undefined })).toThrow(/holds an empty JSON object/)
  })

  it("JSON shaped like the first FileKv's entries but not as it wrote them (white space, another field) is refused and left byte for byte", () => {
    for (const content of ['{ "a": { "value": "x", "expiresAt": null } }\n', '{"a":{"value":"x","expiresAt":null,"note":"mine"}}', '{"a":{"expiresAt":null,"value":"x"}}']) {
      const { dir, file } = fresh()
      writeFileSync(file, content)
      expect(() => new FileKv(file, { warn: () => undefined }), content).toThrow(/is not an edge store file of this version/)
      expect(readdirSync(dir)).toEqual(['kv.json'])
      expect(readFileSync(file, 'utf8')).toBe(content)
    }
  })

  it('a FIFO at the store path is refused at once with one line and no lock file made beside it', () => {
    const { dir, file } = fresh()
    execFileSync('mkfifo', [file])
    expect(() => new FileKv(file, { warn: () => undefined, variable: 'STORE_FILE' })).toThrow(
      new StoreFileError(`STORE_FILE=${file} cannot be read (a FIFO, not a regular file); it was left as it is: give the path of an edge store file, or of a new one`)
    )
    expect(readdirSync(dir)).toEqual(['kv.json'])
  })

  it('two corrupt starts within one second keep both copies', async () => {
    const { dir, file } = fresh()
    const now = Date.now()
    for (const content of ['{"format":"mcp-edge-kv","first', '{"format":"mcp-edge-kv","second']) {
      writeFileSync(file, content)
      await new FileKv(file, { now: () => now, warn: () => undefined }).close()
    }
    const aside = readdirSync(dir)
      .filter((n) => n.startsWith('kv.json.corrupt-'))
      .sort()
    expect(aside.length).toBe(2)
    expect(aside.map((n) => readFileSync(join(dir, n), 'utf8')).sort()).toEqual(['{"format":"mcp-edge-kv","first', '{"format":"mcp-edge-kv","second'])
  })

  it('a store path that cannot be read as a file fails the start with the file named (no rename)', () => {
    const { file } = fresh()
    mkdirSync(file)
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(new StoreFileError(`store file ${file} cannot be read (EISDIR)`))
    expect(existsSync(`${file}.mcp-edge.lock`)).toBe(false)
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
    writeFileSync(`${file}.mcp-edge.lock`, JSON.stringify({ pid: 2 ** 30, host: hostname(), since: '2026-01-01T00:00:00.000Z' }))
    const kv = new FileKv(file, { warn: () => undefined })
    expect(JSON.parse(readFileSync(`${file}.mcp-edge.lock`, 'utf8'))).toMatchObject({ pid: process.pid })
    await kv.close()
  })

  it('a lock held by a live process (here: pid 1) is refused with its pid', () => {
    const { file } = fresh()
    writeFileSync(`${file}.mcp-edge.lock`, JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' }))
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(`store file ${file} is in use by another edge, pid 1 (since 2026-01-01T00:00:00.000Z)`)
  })

  it('a lock from another host is refused, never guessed stale', () => {
    const { file } = fresh()
    writeFileSync(`${file}.mcp-edge.lock`, JSON.stringify({ pid: 99, host: 'elsewhere', since: 'x' }))
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(
      `is in use by pid 99 on host elsewhere (since x; if that host no longer runs it, remove ${file}.mcp-edge.lock)`
    )
  })
})

describe('FileKv: the lock and the files beside the store are its own', () => {
  it('a user file named <store>.lock (yarn.lock beside STORE_FILE=proj/yarn), old enough to look stale, is left byte for byte', async () => {
    const { dir } = fresh()
    const file = join(dir, 'yarn')
    const yarnLock = '# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n'
    writeFileSync(`${file}.lock`, yarnLock)
    const past = new Date(Date.now() - 3_600_000)
    utimesSync(`${file}.lock`, past, past)
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('a', '1')
    await kv.close()
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(yarnLock)
    expect(readdirSync(dir).sort()).toEqual(['yarn', 'yarn.lock'])
  })

  it('a store of the earlier version opens: its stale lock <store>.lock is left alone; a live earlier edge (its lock with a live pid) is refused', async () => {
    const { dir, file } = fresh()
    writeFileSync(file, JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: { old: { value: 'kept', expiresAt: null } } }))
    const stale = JSON.stringify({ pid: 2 ** 30, host: hostname(), since: '2026-01-01T00:00:00.000Z' })
    writeFileSync(`${file}.lock`, stale)
    const kv = new FileKv(file, { warn: () => undefined })
    expect(await kv.get('old')).toBe('kept')
    await kv.close()
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(stale)
    const live = JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' })
    writeFileSync(`${file}.lock`, live)
    expect(() => new FileKv(file, { warn: () => undefined })).toThrow(
      new StoreLockedError(
        `store file ${file} is in use by an edge of an earlier version, pid 1 (since 2026-01-01T00:00:00.000Z; its lock file is ${file}.lock); one process per store file: give each edge its own STORE_FILE, or share one store between edges with STORE_URL=redis://... (docs/stores.md)`
      )
    )
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(live)
    expect(readdirSync(dir).sort()).toEqual(['kv.json', 'kv.json.lock'])
  })

  it('a symlink to a store file in use, or a path through a symlinked folder, is refused naming the real file; writes go to the real file and keep the link', async () => {
    const { dir, file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    symlinkSync(file, join(dir, 'link.json'))
    symlinkSync(dir, join(dir, 'folder-link'))
    for (const other of [join(dir, 'link.json'), join(dir, 'folder-link', 'kv.json')]) {
      expect(() => new FileKv(other, { warn: () => undefined }), other).toThrow(StoreLockedError)
      expect(() => new FileKv(other, { warn: () => undefined }), other).toThrow(`store file ${file} (given as ${other}) is in use by this process already`)
    }
    await kv.close()
    const viaLink = new FileKv(join(dir, 'link.json'), { warn: () => undefined })
    expect(viaLink.file).toBe(file)
    await viaLink.put('a', '1')
    await viaLink.close()
    expect(lstatSync(join(dir, 'link.json')).isSymbolicLink()).toBe(true)
    expect(onDisk(file).a!.value).toBe('1')
  })

  it("a second edge process on a symlink to the first one's store is refused (the lock of the real file)", () => {
    const { dir, file } = fresh()
    writeFileSync(`${file}.mcp-edge.lock`, JSON.stringify({ pid: 1, host: hostname(), since: '2026-01-01T00:00:00.000Z' }))
    symlinkSync(file, join(dir, 'link.json'))
    expect(() => new FileKv(join(dir, 'link.json'), { warn: () => undefined })).toThrow(`store file ${file} (given as ${join(dir, 'link.json')}) is in use by another edge, pid 1`)
  })

  it('a store file with a second hard link is refused and left as it is', () => {
    const { dir, file } = fresh()
    const text = JSON.stringify({ format: 'mcp-edge-kv', version: 1, entries: {} })
    writeFileSync(file, text)
    linkSync(file, join(dir, 'other.json'))
    expect(() => new FileKv(join(dir, 'other.json'), { warn: () => undefined })).toThrow(
      `store file ${join(dir, 'other.json')} has 2 hard links (another path names the same file); give the edge a file of its own (copy it to a new path); it was left as it is`
    )
    expect(readdirSync(dir).sort()).toEqual(['kv.json', 'other.json'])
    expect(readFileSync(file, 'utf8')).toBe(text)
  })

  it('a store file in a missing folder is refused naming the variable and the folder; nothing is created', () => {
    const { dir } = fresh()
    const file = join(dir, 'no', 'such', 'kv.json')
    expect(() => new FileKv(file, { warn: () => undefined, variable: 'STORE_FILE' })).toThrow(
      new StoreFileError(
        `STORE_FILE=${file}: the folder ${join(dir, 'no', 'such')} does not exist; create it first (mkdir -p ${join(dir, 'no', 'such')}) or choose a path in an existing folder`
      )
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it('createFolder makes one level only (the default .edge-data), never the parents', async () => {
    const { dir } = fresh()
    const kv = new FileKv(join(dir, '.edge-data', 'kv.json'), { warn: () => undefined, createFolder: true })
    await kv.close()
    expect(readdirSync(join(dir, '.edge-data'))).toEqual([])
    expect(() => new FileKv(join(dir, 'a', 'b', 'kv.json'), { warn: () => undefined, createFolder: true })).toThrow(`cannot create its folder ${join(dir, 'a', 'b')} (ENOENT)`)
    expect(readdirSync(dir)).toEqual(['.edge-data'])
  })

  it('a file under /proc is refused (the missing-folder case under /proc is in file-kv-process.test.ts: the old recursive mkdir spun forever)', () => {
    expect(() => new FileKv('/proc/self/status', { warn: () => undefined })).toThrow(StoreFileError)
  })
})

describe('FileKv: what is at the lock name', () => {
  const cases: [string, (path: string) => void, RegExp][] = [
    ['a FIFO (the read blocked the start for ever)', (p) => execFileSync('mkfifo', [p]), /is taken by a FIFO, not a lock of the edge/],
    ['a symlink to /dev/zero (memory grew without end)', (p) => symlinkSync('/dev/zero', p), /is taken by a symbolic link, not a lock of the edge/],
    ['a folder', (p) => mkdirSync(p), /is taken by a folder, not a lock of the edge/],
    ['a large file', (p) => writeFileSync(p, 'x'.repeat(100_000)), /is taken by a file of 100000 bytes/],
    ['a text that is not { pid, host }', (p) => writeFileSync(p, 'my notes\n'), /holds a file that is not a lock of the edge \(9 bytes/],
  ]
  for (const [label, make, why] of cases)
    it(`${label}: refused in one line, left as it is`, () => {
      const { dir, file } = fresh()
      const lock = `${file}.mcp-edge.lock`
      make(lock)
      const past = new Date(Date.now() - 3_600_000)
      try {
        utimesSync(lock, past, past)
      } catch {
        // a symlink's target (/dev/zero) is not ours to touch
      }
      const before = lstatSync(lock)
      let err: unknown
      try {
        new FileKv(file, { warn: () => undefined })
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(StoreLockedError)
      expect((err as Error).message).toMatch(why)
      expect((err as Error).message).toContain('it was left as it is')
      expect(readdirSync(dir)).toEqual(['kv.json.mcp-edge.lock'])
      const after = lstatSync(lock)
      expect([after.ino, after.mode, after.size]).toEqual([before.ino, before.mode, before.size])
    })

  it('an empty lock file older than its write window (a crash between create and write) is taken over', async () => {
    const { file } = fresh()
    writeFileSync(`${file}.mcp-edge.lock`, '')
    const past = new Date(Date.now() - 3_600_000)
    utimesSync(`${file}.mcp-edge.lock`, past, past)
    const kv = new FileKv(file, { warn: () => undefined })
    expect(JSON.parse(readFileSync(`${file}.mcp-edge.lock`, 'utf8'))).toMatchObject({ pid: process.pid })
    await kv.close()
  })
})

describe('FileKv putMany', () => {
  it('10,000 entries in one file write; a bad key anywhere changes nothing', async () => {
    const { file } = fresh()
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('before', '0')
    const writes = kv.stats.writes
    const entries = Array.from({ length: 10_000 }, (_, i) => ({ key: toolKey('default', 'public', `t${i}`), value: `{"name":"t${i}"}` }))
    await kv.putMany(entries)
    expect(kv.stats.writes - writes).toBe(1)
    expect(Object.keys(onDisk(file)).length).toBe(10_001)
    await expect(
      kv.putMany([
        { key: 'fine', value: '1' },
        { key: 'x'.repeat(600), value: '2' },
      ])
    ).rejects.toThrow(RangeError)
    expect(await kv.get('fine')).toBeNull()
    expect(kv.stats.writes - writes).toBe(1)
    await kv.close()
  })

  it('a failed write stores none of the batch on disk', async () => {
    const { dir } = fresh()
    mkdirSync(join(dir, 'sub'))
    const file = join(dir, 'sub', 'kv.json')
    const kv = new FileKv(file, { warn: () => undefined })
    await kv.put('a', '1')
    rmSync(join(dir, 'sub'), { recursive: true })
    await expect(
      kv.putMany([
        { key: 'b', value: '2' },
        { key: 'c', value: '3' },
      ])
    ).rejects.toThrow(`store file ${file} could not be written (ENOENT)`)
    mkdirSync(join(dir, 'sub'))
    expect(existsSync(file)).toBe(false)
    await kv.close()
  })
})
