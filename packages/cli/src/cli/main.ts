/**
 * @module cli/main
 * The `mcp-edge` command: a commander program with one subcommand per file in ./commands.
 * Adding a subcommand is one line in {@link SUBCOMMANDS}. Each subcommand's module is imported
 * (`await import()`) only when the command line names it, or for the help that lists them all:
 * `mcp-edge --version` loads none, `mcp-edge serve` neither the MCP SDKs nor `check`
 * (the build splits them into chunks, scripts/build-node.mjs; measured in docs/cli.md). Runs when executed directly
 * (`node --import tsx src/cli/main.ts check <url>`, or a built bundle); importing it only builds
 * the program.
 *
 * Exit statuses: 0 and 1 as the subcommand decides, 2 for a bad command line (commander's own
 * errors included), others per subcommand (docs/cli.md, docs/check.md).
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError } from 'commander'
import pkg from '../../package.json' with { type: 'json' }

/** Status for a bad command line. */
export const USAGE_EXIT = 2

/** Each loads the module that adds one subcommand to the program (`program.command(...)`, so settings are inherited). */
export const SUBCOMMANDS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  serve: async () => (await import('./commands/serve')).addServeCommand,
  check: async () => (await import('./commands/check')).addCheckCommand,
  schemas: async () => (await import('./commands/schemas')).addSchemasCommand,
  tools: async () => (await import('./commands/tools')).addToolsCommand,
}

/**
 * The subcommands `args` (the arguments after the program's name) needs: the one it names, none
 * for a bare `--version`, every one otherwise (the help lists them; an unknown name is refused
 * with the list).
 */
function subcommandsFor(args: readonly string[]): string[] {
  const first = args.find((a) => !a.startsWith('-'))
  if (first !== undefined && first in SUBCOMMANDS) return [first]
  if (first === undefined && args.length > 0 && args.every((a) => a === '-V' || a === '--version')) return []
  return Object.keys(SUBCOMMANDS)
}

/** Builds the `mcp-edge` program with `--help`, `--version` and the subcommands `argv` (process.argv form) needs. */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command('mcp-edge')
    .description(
      'MCP edge: run the validating gateway in front of MCP servers, manage its tool schemas, review and approve its pinned tools, and grade any MCP server the way an agent would be fooled.'
    )
    .version(pkg.version, '-V, --version', 'print the mcp-edge version')
    .enablePositionalOptions()
    .showHelpAfterError()
    .exitOverride()
  for (const name of subcommandsFor(argv.slice(2))) (await SUBCOMMANDS[name]!())(program)
  return program
}

/**
 * Parses `argv` (process.argv form) and runs the subcommand.
 * @returns the exit status
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = await buildProgram(argv)
  try {
    await program.parseAsync([...argv])
    return typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0
      return USAGE_EXIT
    }
    process.stderr.write(`mcp-edge: ${err instanceof Error ? err.message : String(err)}\n`)
    return 70
  }
}

function isEntry(): boolean {
  const arg = process.argv[1]
  if (!arg) return false
  try {
    return realpathSync(arg) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isEntry()) {
  const status = await runCli(process.argv)
  // Exit once stdout is flushed (keep-alive sockets of fetch would otherwise hold the process).
  process.stdout.write('', () => process.exit(status))
}
