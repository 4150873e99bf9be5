/**
 * The `nds` command: server commands (serve, gateway, worker, migrate, admin bootstrap) and client commands
 * (auth, datasets, admin ...). Command groups register themselves; this file only wires them and owns the
 * exit code: a command throws, and only here is an error turned into a message and a status.
 */
import { CommanderError } from 'commander';
import { CliError } from './cli-error.js';
import { terminalSafe } from './terminal-text.js';
import { buildProgram } from './program.js';

const program = buildProgram();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else if (err instanceof CliError) {
    // A CliError often quotes the server's message.
    process.stderr.write(`nds: ${terminalSafe(err.message)}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`nds: ${terminalSafe((err as Error)?.message ?? String(err))}\n`);
    // Server-side commands throw the service's own errors: their details say what to fix.
    const details = (err as { details?: unknown }).details;
    if (Array.isArray(details)) for (const d of details) process.stderr.write(`  ${terminalSafe(String(d))}\n`);
    if (process.env.NDS_DEBUG) process.stderr.write(`${(err as Error)?.stack}\n`);
    process.exitCode = 1;
  }
}
