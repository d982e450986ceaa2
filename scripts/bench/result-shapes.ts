/**
 * The tool results the result-check benchmarks send (`npm run bench:result-checks` through the
 * edge, `npm run bench:result-checks:chain` through the reply chain alone): prose text and a
 * `structuredContent` of 1,000 small objects, either clean or holding one fake credential and one
 * terminal escape (so redact, block and strip have something to act on).
 */

/** A fake credential made from parts (never a real one). */
export const TOKEN = 'ghp_' + 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8aB3dE5gH7j'.slice(0, 36)

/** What a dirty result carries: the credential and a red-text escape. */
const DIRT = `token ${TOKEN} \x1b[31mred\x1b[0m`

/** Prose of `bytes` characters (UTF-16 units, ASCII here), starting with {@link DIRT} and a newline when `dirty`. */
export function prose(bytes: number, dirty = false): string {
  let t = dirty ? `${DIRT}\n` : ''
  for (let i = 0; t.length < bytes; i++) t += `${i}: the "quick" brown fox jumps over the lazy dog, commit 3f786850e387550fdab836ed7e6dc881de23001b, line ${i}\n`
  return t.slice(0, bytes)
}

/**
 * A `tools/call` result whose `structuredContent` holds 1,000 objects of a few string and number
 * fields (about 100 KB as JSON), its text item short; when `dirty`, object 500's note holds
 * {@link DIRT}.
 */
export function records(dirty = false): Record<string, unknown> {
  const items = Array.from({ length: 1000 }, (_, i) => ({
    id: i,
    name: `item-${i}`,
    status: i % 3 === 0 ? 'active' : 'archived',
    owner: `user${i % 17}@example.com`,
    note: dirty && i === 500 ? DIRT : `created by the nightly import, batch ${i >> 4}`,
    score: i * 1.5,
    ok: true,
  }))
  return { content: [{ type: 'text', text: 'see structuredContent' }], structuredContent: { items, total: 1000 } }
}
