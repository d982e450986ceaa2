/**
 * `npm start`: runs the edge on Node. With ORIGIN_URL unset it first starts the bundled demo
 * origin on 127.0.0.1 (DEMO_PORT, default 3000), with the conformance-suite fixtures, and fronts it; with ORIGIN_URL set it fronts
 * that origin only. Prints the edge URL. Stops on SIGINT/SIGTERM.
 */
import { startEdge } from '../src/adapters/node/index'
import { ConfigError } from '../src/core/config'
import { startDemoOrigin } from '../demo/origin'

async function main(): Promise<void> {
  const env = { ...process.env }
  let origin: Awaited<ReturnType<typeof startDemoOrigin>> | null = null
  if (!env.ORIGIN_URL) {
    origin = await startDemoOrigin({ port: Number(env.DEMO_PORT ?? 3000), fixtures: true })
    env.ORIGIN_URL = origin.url
    console.error(`demo origin: ${origin.url}`)
  }
  const edge = await startEdge({ env })
  console.error(`mcp-edge-validator: ${edge.url} -> ${env.ORIGIN_URL}`)
  const stop = async () => {
    await edge.close()
    await origin?.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

main().catch((e: unknown) => {
  console.error(e instanceof ConfigError ? `configuration error: ${e.message}` : `failed to start: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
})
