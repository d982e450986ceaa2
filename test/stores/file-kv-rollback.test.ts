/**
 * FileKv when a file write fails: the change is undone in memory, so what the caller was told
 * failed (the admin API answers 503) is neither read back nor written by the next write. The
 * failures are real ones of the file system, not mocks (the suite runs as root, so chmod would not
 * stop a write): a folder at the store file's path (the rename of the written temporary file over
 * it fails with EISDIR), and the store's folder removed (the temporary file cannot be created:
 * ENOENT).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { FileKv, StoreFileError } from '../../src/stores/file-kv'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A store in a fresh folder holding `keep=1` and `old=before` on disk. */
async function storeWithTwoKeys(): Promise<{ dir: string; file: string; kv: FileKv }> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-filekv-rollback-'))
  dirs.push(dir)
  const file = join(dir, 'kv.json')
  const kv = new FileKv(file, { warn: () => undefined })
  await kv.putMany([
    { key: 'keep', value: '1' },
    { key: 'old', value: 'before' },
  ])
  return { dir, file, kv }
}

function onDisk(file: string): Record<string, string> {
  const entries = (JSON.parse(readFileSync(file, 'utf8')) as { entries: Record<string, { value: string }> }).entries
  return Object.fromEntries(Object.entries(entries).map(([k, e]) => [k, e.value]))
}

/** Makes every write of the store fail at its rename: the store file's path becomes a folder (EISDIR), holding one file so it is not empty. */
function blockRename(file: string): void {
  rmSync(file)
  mkdirSync(file)
  mkdirSync(join(file, 'inside'))
}

/** Undoes {@link blockRename}: the next write creates the file again. */
function unblockRename(file: string): void {
  rmSync(file, { recursive: true })
}

async function memory(kv: FileKv): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {}
  for (const k of ['keep', 'old', 'new1', 'new2', 'later']) out[k] = await kv.get(k)
  return out
}

const BEFORE = { keep: '1', old: 'before', new1: null, new2: null, later: null }

describe('FileKv: a failed write changes nothing, in memory or in a later write', () => {
  it('a putMany whose write fails (EISDIR at the rename) is undone: the next unrelated write persists none of it', async () => {
    const { dir, file, kv } = await storeWithTwoKeys()
    blockRename(file)
    const failed = await kv
      .putMany([
        { key: 'old', value: 'overwritten' },
        { key: 'new1', value: 'a' },
        { key: 'new2', value: 'b' },
      ])
      .catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(StoreFileError)
    expect((failed as Error).message).toBe(`store file ${file} could not be written (EISDIR)`)
    expect(await memory(kv)).toEqual(BEFORE)
    expect(await kv.keys()).toEqual(['keep', 'old'])
    // The written temporary file is removed, not left beside the store.
    expect(readdirSync(dir).sort()).toEqual(['kv.json', 'kv.json.mcp-edge.lock'])
    unblockRename(file)
    await kv.put('later', 'x')
    expect(onDisk(file)).toEqual({ keep: '1', old: 'before', later: 'x' })
    await kv.close()
    const again = new FileKv(file, { warn: () => undefined })
    expect(await memory(again)).toEqual({ ...BEFORE, later: 'x' })
    await again.close()
  })

  it('a single put whose write fails (the folder removed: ENOENT) is undone, for a new key and for an overwritten one', async () => {
    const { dir, file, kv } = await storeWithTwoKeys()
    rmSync(dir, { recursive: true })
    await expect(kv.put('new1', 'a')).rejects.toThrow(`store file ${file} could not be written (ENOENT)`)
    await expect(kv.put('old', 'overwritten', { expirationTtl: 3600 })).rejects.toThrow(StoreFileError)
    expect(await memory(kv)).toEqual(BEFORE)
    mkdirSync(dir)
    await kv.put('later', 'x')
    expect(onDisk(file)).toEqual({ keep: '1', old: 'before', later: 'x' })
    await kv.close()
  })

  it('a delete whose write fails is undone: the key is back with its value and its expiry', async () => {
    const { file, kv } = await storeWithTwoKeys()
    await kv.put('old', 'with-ttl', { expirationTtl: 3600 })
    const listed = await kv.list()
    blockRename(file)
    await expect(kv.delete('old')).rejects.toThrow(`store file ${file} could not be written (EISDIR)`)
    expect(await kv.get('old')).toBe('with-ttl')
    expect(await kv.list()).toEqual(listed)
    unblockRename(file)
    await kv.put('later', 'x')
    expect(onDisk(file)).toEqual({ keep: '1', old: 'with-ttl', later: 'x' })
    await kv.close()
  })

  it('a change made while a failing write runs is kept and written by the next write; only the failed batch is undone', async () => {
    const { file, kv } = await storeWithTwoKeys()
    blockRename(file)
    // The first write takes this batch; the puts below are made while it runs, and go in the next write.
    const first = kv.putMany([
      { key: 'old', value: 'overwritten' },
      { key: 'new1', value: 'a' },
    ])
    const sameKeyLater = kv.put('old', 'after')
    const later = kv.put('later', 'x')
    // Runs as the first write's rejection is delivered, before the next write reaches its rename.
    const firstFailed = first.catch((e: unknown) => {
      unblockRename(file)
      return e
    })
    expect(await firstFailed).toBeInstanceOf(StoreFileError)
    await Promise.all([sameKeyLater, later])
    expect(await memory(kv)).toEqual({ ...BEFORE, old: 'after', later: 'x' })
    expect(onDisk(file)).toEqual({ keep: '1', old: 'after', later: 'x' })
    await kv.close()
  })

  it('a change made while a failing write runs, to a key of that write, is undone to the state before both when its own write fails too', async () => {
    const { file, kv } = await storeWithTwoKeys()
    blockRename(file)
    const first = kv.put('old', 'one').catch((e: unknown) => e)
    const second = kv.put('old', 'two').catch((e: unknown) => e)
    expect(await first).toBeInstanceOf(StoreFileError)
    expect(await second).toBeInstanceOf(StoreFileError)
    expect(await kv.get('old')).toBe('before')
    unblockRename(file)
    await kv.put('later', 'x')
    expect(onDisk(file)).toEqual({ keep: '1', old: 'before', later: 'x' })
    await kv.close()
  })
})
