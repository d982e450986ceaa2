/**
 * The one runtime type the generated Env (worker-configuration.d.ts, `npm run types:worker`)
 * names as a global: `KVNamespace`. It is taken from @cloudflare/workers-types' module form,
 * since that package's global declarations clash with the DOM and Node types this repository
 * type-checks with (one tsconfig for src, tests and scripts).
 */
type KVNamespace = import('@cloudflare/workers-types/index').KVNamespace
