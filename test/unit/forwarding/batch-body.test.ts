/**
 * What the origin receives for a 2025-03-26 batch: the client's own body when every element is
 * forwarded (its spacing and id tokens as sent), and the forwarded elements' texts joined into an
 * array when the edge answers some itself. Either way the client's answer is the same.
 */
import { describe, expect, it } from 'vitest'
import { handlePost, originTarget } from '../../../src/core/pipeline'
import type { OriginRequest } from '../../../src/core/ports'
import { gradingDeps, jsonReply } from '../grading/fake-deps'

const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' })

/** Posts `body`; the origin answers every id token it finds in what it receives with an empty result. */
async function post(body: string) {
  const { deps } = gradingDeps()
  const sent: OriginRequest[] = []
  deps.origin = async (req) => {
    sent.push(req)
    const ids = [...req.body!.matchAll(/"id"\s*:\s*("[^"]*"|-?\d+)/g)].map((m) => m[1])
    return jsonReply(`[${ids.map((id) => `{"jsonrpc":"2.0","id":${id},"result":{}}`).join(',')}]`)
  }
  const res = await handlePost(body, headers, originTarget(deps.config, undefined)!, deps)
  const answer = res.body === null ? '' : typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body as Uint8Array)
  return { sent, status: res.status, answer }
}

describe('the forwarded sub-batch', () => {
  it('is the client body as sent when every element is forwarded', async () => {
    const body =
      ' [ {"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"} ,\n {"jsonrpc": "2.0", "id": "b", "method": "ping"}, {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}} ]\n'
    const { sent, status, answer } = await post(body)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.body).toBe(body.trim())
    expect(status).toBe(200)
    expect(answer).toBe('[{"jsonrpc":"2.0","id":12345678901234567890,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]')
  })

  it('is the forwarded elements joined when the edge answers one itself', async () => {
    const body = '[ {"jsonrpc":"2.0","id":1,"method":"ping"}, {"jsonrpc":"2.0","id":1,"method":"ping"} , {"jsonrpc":"2.0","id":2,"method":"ping"} ]'
    const { sent, answer } = await post(body)
    expect(sent[0]!.body).toBe('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]')
    const replies = JSON.parse(answer) as { id: number; error?: { code: number } }[]
    expect(replies.map((r) => [r.id, r.error?.code ?? null])).toEqual([
      [1, -32600],
      [1, null],
      [2, null],
    ])
  })
})
