/** src/core/jsonrpc/edge-failure.ts: the edge's classification added to a result text, an origin's own _meta members kept byte for byte. */
import { describe, expect, it } from 'vitest'
import { appendEdgeFailure, edgeFailureJson, withEdgeFailure } from '../../../src/core/jsonrpc/edge-failure'

const F = { class: 'capability', code: 'hidden_failure', correlationId: 'r-1' } as const
const M = '"io.mcp-edge/failure":{"class":"capability","code":"hidden_failure","correlationId":"r-1"}'

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
  it("classes are the ToolFailure draft's; agentGuidance is written after correlationId when given", () => {
    const g = { class: 'governance', code: 'secret_in_result', correlationId: 'r-2', agentGuidance: 'Ask the user.' } as const
    expect(edgeFailureJson(g)).toBe('{"class":"governance","code":"secret_in_result","correlationId":"r-2","agentGuidance":"Ask the user."}')
  })
  it('appendEdgeFailure: the same for an own result without scanning', () => {
    expect(appendEdgeFailure('{"content":[],"isError":true}', F)).toBe(withEdgeFailure('{"content":[],"isError":true}', F))
  })
})
