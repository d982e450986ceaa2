/**
 * @module cli/main
 * The `mcp-edge` command: a commander program with one subcommand per file in ./commands.
 * Adding a subcommand is one line in {@link SUBCOMMANDS}. Runs when executed directly
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
import { addCheckCommand } from './commands/check'
import { addServeCommand } from './commands/serve'
import { addSchemasCommand } from './commands/schemas'

/** Status for a bad command line. */
export const USAGE_EXIT = 2

/** Each adds one subcommand to the program (`program.command(...)`, so settings are inherited). */
export const SUBCOMMANDS: readonly ((program: Command) => void)[] = [addServeCommand, addCheckCommand, addSchemasCommand]

/** Builds the `mcp-edge` program with `--help`, `--version` and every subcommand. */
export function buildProgram(): Command {
  const program = new Command('mcp-edge')
    .description('MCP edge: run the validating gateway in front of MCP servers, manage its tool schemas, and grade any MCP server the way an agent would be fooled.')
    .version(pkg.version, '-V, --version', 'print the mcp-edge version')
    .enablePositionalOptions()
    .showHelpAfterError()
    .exitOverride()
  for (const add of SUBCOMMANDS) add(program)
  return program
}

/**
 * Parses `argv` (process.argv form) and runs the subcommand.
 * @returns the exit status
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram()
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
