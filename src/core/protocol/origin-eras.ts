/**
 * @module core/protocol/origin-eras
 * What each origin is known to speak, learned from its answers (docs/design.md D17). One
 * {@link OriginEras} belongs to one edge instance (its deps object, exchange.ts
 * `EdgeDeps.eras`): per process on Node, per isolate on Workers.
 */
import { isKnownVersion, isModern, looksModern, type ProtocolVersion } from '../jsonrpc/versions'
import { ErrorCode, isObject } from '../jsonrpc/jsonrpc'

/**
 * What an origin is known to speak. `speaks(v)`: true, false, or undefined when not known.
 * `announced()`: the versions the origin itself listed (`server/discover` `supportedVersions`, or
 * `data.supported` of a -32022 it sent), or undefined when it has listed none.
 */
export interface OriginEraView {
  speaks(v: ProtocolVersion): boolean | undefined
  announced(): ReadonlySet<string> | undefined
}

/**
 * The era of each origin, learned from its answers and kept per process or isolate (D17; docs/protocol-rules.md
 * M28): a `server/discover` result (its `supportedVersions`), a -32022 with `data.supported`,
 * a `server/discover` answered with any other error (a legacy-only server: -32601 or a 2025 SDK's
 * 400 -32000, as SDK's probe classifier reads it), and `initialize` results (the legacy version
 * they negotiate). Unknown until the origin has answered once.
 */
export class OriginEras {
  private readonly known = new Map<string, { versions: Set<string>; modern: boolean | undefined; announced?: ReadonlySet<string> }>()

  /** The view of one origin. */
  view(originId: string): OriginEraView {
    return {
      speaks: (v) => {
        const k = this.known.get(originId)
        if (!k) return undefined
        if (k.versions.has(v)) return true
        if (isModern(v)) return k.modern
        return undefined
      },
      announced: () => this.known.get(originId)?.announced,
    }
  }

  /**
   * Learns from one reply message of the origin to a forwarded request.
   * @param method the method of the request it answers
   * @param msg the parsed JSON-RPC response
   * @param status the HTTP status it came with; 401, 403 and 5xx are never era evidence
   */
  observe(originId: string, method: string, msg: unknown, status = 200): void {
    if (!isObject(msg) || status === 401 || status === 403 || status >= 500) return
    const err = isObject(msg.error) ? msg.error : null
    // Most replies (every tools/call) teach nothing: leave before allocating anything.
    if (method !== 'server/discover' && method !== 'initialize' && err?.code !== ErrorCode.UnsupportedVersion) return
    const entry: { versions: Set<string>; modern: boolean | undefined; announced?: ReadonlySet<string> } = this.known.get(originId) ?? {
      versions: new Set<string>(),
      modern: undefined,
    }
    if (err && err.code === ErrorCode.UnsupportedVersion && isObject(err.data) && Array.isArray(err.data.supported)) {
      const list = err.data.supported.filter((v): v is string => typeof v === 'string')
      entry.versions = new Set(list)
      entry.modern = list.some((v) => looksModern(v))
      entry.announced = new Set(list)
    } else if (method === 'server/discover') {
      if (isObject(msg.result) && Array.isArray(msg.result.supportedVersions)) {
        const list = msg.result.supportedVersions.filter((v): v is string => typeof v === 'string')
        for (const v of list) entry.versions.add(v)
        entry.modern = list.some((v) => looksModern(v))
        entry.announced = new Set(list)
      } else if (err) {
        // Any other error to the probe means a server that does not speak 2026-07-28 (SDK probeClassifier).
        entry.modern = false
      } else return
    } else if (method === 'initialize' && isObject(msg.result) && typeof msg.result.protocolVersion === 'string') {
      if (!isKnownVersion(msg.result.protocolVersion)) return
      entry.versions.add(msg.result.protocolVersion)
    } else return
    this.known.set(originId, entry)
  }
}
