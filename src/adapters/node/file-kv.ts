/**
 * @module adapters/node/file-kv
 * The Node entry's embedded default store: a {@link KvStore} kept in one JSON file on disk, so a
 * restart keeps what the edge learned and no server is needed. Writes go to a temporary file that
 * is renamed over the old one (no partial write is ever visible). One process per file; for several
 * Node instances use a shared store.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { MemoryKv } from '../../stores/memory-kv'

/** File-backed KV namespace. Writes are coalesced: at most one file write per `flushMs`. */
export class FileKv extends MemoryKv {
  private timer: NodeJS.Timeout | null = null

  constructor(private readonly file: string, private readonly flushMs = 200) {
    super()
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { value: string; expiresAt: number | null }>
      for (const [k, v] of Object.entries(saved)) this.data.set(k, v)
    } catch {
      // no file yet, or unreadable: start empty (the edge re-learns from the origin)
    }
  }

  override async put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void> {
    await super.put(key, value, options)
    this.schedule()
  }

  override async delete(key: string): Promise<void> {
    await super.delete(key)
    this.schedule()
  }

  private schedule(): void {
    if (this.timer) return
    this.timer = setTimeout(() => this.flush(), this.flushMs)
    this.timer.unref()
  }

  /** Writes the file now (temp file + rename). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    mkdirSync(dirname(this.file), { recursive: true })
    const tmp = `${this.file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.data)))
    renameSync(tmp, this.file)
  }
}
