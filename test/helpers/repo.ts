/** The repository's root folder (where package.json is), for tests that read or build its files. */
import { resolve } from 'node:path'

/** Absolute path of the repository root. */
export const REPO = resolve(import.meta.dirname, '../..')
