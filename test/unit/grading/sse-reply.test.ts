/**
 * Grading an SSE reply event by event (src/core/grading/sse-reply.ts over reply-grader.ts and
 * core/sse/sse-transform.ts; docs/design.md §6, D9-D11), one row per case: the ids forwarded, the
 * events the origin sent, the grade each id got and the exact bytes of the stream the client got.
 */
import { describe, expect, it } from 'vitest'
import { streamReply } from '../../../src/core/grading/sse-reply'
import { ReplyGrader } from '../../../src/core/grading/reply-grader'
import type { DroppedReply } from '../../../src/core/exchange'
import type { ProtocolVersion } from '../../../src/core/jsonrpc/versions'
import { answerText, exchangeWith, gradesOf, gradingDeps, sseReply, type Forwarded } from './fake-deps'

const call = (id: number): Forwarded => ({ id, method: 'tools/call', tool: 't' })
const ok = (id: number, result = '{"content":[]}') => `{"jsonrpc":"2.0","id":${id},"result":${result}}`
const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}'
/** One event as the edge relays it: the origin's `event:` line kept, or none for the edge's own. */
const relayed = (data: string) => `event: message\ndata: ${data}\n\n`
const own = (data: string) => `data: ${data}\n\n`
const noAnswer = (id: number) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-31003,"message":"Origin never answered this request","data":{"source":"edge"}}}`
const unavailable = (id: number) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-31001,"message":"Origin unavailable or sent an invalid response","data":{"source":"edge"}}}`
const flagged = '{"content":[{"type":"text","text":"{\\"success\\":false}"}],"isError":true}'
const hiding = '{"content":[{"type":"text","text":"{\\"success\\":false}"}]}'

interface Row {
  name: string
  forwarded: Forwarded[]
  /** The data of each `message` event the origin sent. */
  events: string[]
  local?: string[]
  era?: ProtocolVersion
  grades: string[]
  stream: string
  dropped?: DroppedReply[]
  /** Drops after every id was graded: `mcp.post.dropped` lines. */
  late?: DroppedReply[]
}

const ROWS: Row[] = [
  { name: 'one result event: ok, relayed as sent', forwarded: [call(1)], events: [ok(1)], grades: ['1 ok'], stream: relayed(ok(1)) },
  {
    name: 'two events answering two ids, a notification between: each graded as it passes',
    forwarded: [call(1), call(2)],
    events: [ok(2), progress, ok(1, '{"content":[],"isError":true}')],
    grades: ['2 ok', '1 tool_error'],
    stream: relayed(ok(2)) + relayed(progress) + relayed(ok(1, '{"content":[],"isError":true}')),
  },
  {
    name: 'D11 in a stream: the event is rewritten with isError',
    forwarded: [call(1)],
    events: [ok(1, hiding)],
    grades: ['1 tool_error'],
    stream: relayed(ok(1, flagged)),
  },
  {
    name: 'D10 in a stream: the error wins',
    forwarded: [call(1)],
    events: ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32000,"message":"x"}}'],
    grades: ['1 rpc_error -32000'],
    stream: relayed('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}'),
  },
  {
    name: 'the stream ends with an id open: -31003 as a last event',
    forwarded: [call(1), call(2)],
    events: [ok(1)],
    grades: ['1 ok', '2 missing -31003'],
    stream: relayed(ok(1)) + own(noAnswer(2)),
  },
  {
    name: 'a repeated id: the second event is not relayed (logged on a line of its own, the table was written)',
    forwarded: [call(1)],
    events: [ok(1), ok(1, '{"content":[],"x":1}')],
    grades: ['1 ok'],
    stream: relayed(ok(1)),
    late: [{ id: '1', reason: 'repeated' }],
  },
  {
    name: 'a repeated id while another is open: dropped, in the table',
    forwarded: [call(1), call(2)],
    events: [ok(1), ok(1, '{"content":[],"x":1}'), ok(2)],
    grades: ['1 ok', '2 ok'],
    stream: relayed(ok(1)) + relayed(ok(2)),
    dropped: [{ id: '1', reason: 'repeated' }],
  },
  {
    name: 'an event that starts like JSON and does not parse: dropped, the open id gets -31001',
    forwarded: [call(1)],
    events: ['{"jsonrpc":"2.0","id":1,"result":{"cont'],
    grades: ['1 origin_error -31001'],
    stream: own(unavailable(1)),
    dropped: [{ id: '-', reason: 'invalid' }],
  },
  {
    name: 'a batch in one event: graded element by element, an unknown id left out',
    forwarded: [call(1), call(2)],
    events: [`[${ok(2, hiding)},${ok(7)},${ok(1)}]`],
    grades: ['2 tool_error', '1 ok'],
    stream: relayed(`[${ok(2, flagged)},${ok(1)}]`),
    dropped: [{ id: '7', reason: 'unknown_id' }],
  },
  {
    name: 'local answers go first, as events of their own',
    forwarded: [call(2)],
    local: ['{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}'],
    events: [ok(2)],
    grades: ['2 ok'],
    stream: own('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}') + relayed(ok(2)),
  },
  {
    name: '2026-07-28: a server request on a response stream is dropped',
    forwarded: [call(1)],
    era: '2026-07-28',
    events: ['{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}', ok(1)],
    grades: ['1 ok'],
    stream: relayed(ok(1)),
    dropped: [{ id: '5', reason: 'server_request' }],
  },
]

describe('grading an SSE reply, one row per case', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_, row) => {
    const { deps, logs } = gradingDeps()
    const ex = exchangeWith(deps, row.forwarded, row.era)
    const res = streamReply(sseReply(row.events), row.local ?? [], ex, new ReplyGrader(ex), row.forwarded.length > 1)
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/event-stream')
    expect(await answerText(res)).toBe(row.stream)
    expect(gradesOf(ex.rows)).toEqual(row.grades)
    const line = logs.filter((l) => l.msg === 'mcp.post')
    expect(line).toHaveLength(1)
    expect(line[0]!.dropped).toEqual(row.dropped)
    expect(logs.filter((l) => l.msg === 'mcp.post.dropped').map((l) => ({ id: l.id, reason: l.reason }))).toEqual(row.late ?? [])
  })

  it('a tools/list_changed notification invalidates the origin tools and is relayed', async () => {
    const { deps } = gradingDeps()
    await deps.registry.learn('default', 'public', [{ name: 't', inputSchema: { type: 'object' } }], '2025-06-18')
    expect(deps.registry.peek('default', 'public', 't')).not.toBeNull()
    const ex = exchangeWith(deps, [call(1)])
    const changed = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    const res = streamReply(sseReply([changed, ok(1)]), [], ex, new ReplyGrader(ex), false)
    expect(await answerText(res)).toBe(relayed(changed) + relayed(ok(1)))
    expect(deps.registry.peek('default', 'public', 't')).toBeNull()
  })
})
