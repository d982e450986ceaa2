// Prints the size of the Worker bundle `wrangler deploy --dry-run --outdir <dir>` wrote (`npm run
// build:worker`): raw and gzip bytes of the entry module, the gzip figure being what Cloudflare's
// size limits count (3 MB gzip on the Free plan, 10 MB on Paid). test/production/worker-build.test.ts
// fails when the gzip size grows past WORKER_GZIP_BUDGET_BYTES (the reasoning is there).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const dir = process.argv[2] ?? 'dist/worker'
const entry = readdirSync(dir).find((f) => f.endsWith('.js'))
if (!entry) {
  console.error(`worker-size: no .js bundle in ${dir}`)
  process.exit(1)
}
const bytes = readFileSync(join(dir, entry))
const gzip = gzipSync(bytes, { level: 9 }).length
console.log(`worker bundle ${join(dir, entry)}: ${(bytes.length / 1024).toFixed(1)} KiB, gzip ${(gzip / 1024).toFixed(1)} KiB (${gzip} bytes)`)
