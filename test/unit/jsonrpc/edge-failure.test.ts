/** src/core/jsonrpc/edge-failure.ts: the edge's classification added to a result text, an origin's own _meta members kept byte for byte. */
import { describe, expect, it } from 'vitest'
import { appendEdgeFailure, withEdgeFailure } from '../../../src/core/jsonrpc/edge-failure'

const F = { class: 'tool', code: 'hidden_failure', correlationId: 'r-1' } as const
const M = '"io.mcp-edge/failure":{"class":"tool","code":"hidden_failure","correlationId":"r-1"}'

describe('withEdgeFailure', () => {
  it('appends _meta when the result has none', () => {
    expect(withEdgeFailure('{"content":[],"isError":true}', F)).toBe(`{"content":[],"isError":true,"_meta":{${M}}}`)
    expect(withEdgeFailure('{}', F)).toBe(`{"_meta":{${M}}}`)
  })
  it("adds its key first inside the origin's _meta, every origin byte kept", () => {
    expect(withEdgeFailure('{"isError":true,"_meta":{"io.modelcontextprotocol/toolFailure":{"class":"upstream"} ,"x":1}}', F)).toBe(
      `{"isError":true,"_meta":{${M},"io.modelcontextprotocol/toolFailure":{"class":"upstream"} ,"x":1}}`
    )
    expect(withEdgeFailure('{"isError":true,"_meta":{}}', F)).toBe(`{"isError":true,"_meta":{${M}}}`)
  })
  it('leaves a _meta that is not an object alone', () => {
    expect(withEdgeFailure('{"isError":true,"_meta":"text"}', F)).toBe('{"isError":true,"_meta":"text"}')
  })
  it('appendEdgeFailure: the same for an own result without scanning', () => {
    expect(appendEdgeFailure('{"content":[],"isError":true}', F)).toBe(withEdgeFailure('{"content":[],"isError":true}', F))
  })
})
