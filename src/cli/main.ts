/**
 * The `nds` command: server commands (serve, gateway, worker, migrate, admin bootstrap) and client commands
 * (auth, datasets, admin ...). Command groups register themselves; this file only wires them and owns the
 * exit code: a command throws, and only here is an error turned into a message and a status.
 */
import { Command, CommanderError } from 'commander';
import { registerServerCommands } from './server-commands.js';
import { registerGatewayCommand } from './gateway-command.js';
import { registerAdminZarrCommands } from './admin-zarr-commands.js';
import { registerConvertCommand } from './convert.js';
import { registerInspectCommand } from './inspect.js';
import { registerAuthCommands } from './auth-commands.js';
import { registerAdminUserCommands } from './admin-user-commands.js';
import { registerDatasetsCommands } from './datasets-commands.js';
import { registerSearchCommand } from './search-commands.js';
import { registerSandboxCommands } from './sandbox-commands.js';
import { registerPublicationCommands } from './publication-commands.js';
import { CliError } from './cli-error.js';

const program = new Command();
program
  .name('nds')
  .description('Neuro Dataset Service: host BIDS EEG/EMG/iEEG datasets and stream them as Zarr')
  .version('0.1.0')
  // `nds --version` only before a subcommand: `nds datasets upload ... --version 1.0.0` is the command's own.
  .enablePositionalOptions()
  .showHelpAfterError()
  .exitOverride();

const admin = program.command('admin').description('administration: users, keys, datasets, publication, DOIs, the Zarr copy');

registerServerCommands(program, admin);
registerGatewayCommand(program);
registerAdminZarrCommands(admin);
registerConvertCommand(program);
registerInspectCommand(program);
registerAuthCommands(program);
registerAdminUserCommands(admin);
registerDatasetsCommands(program, admin);
// After the datasets group exists, so search joins it rather than making a second one.
registerSearchCommand(program);
registerSandboxCommands(program);
registerPublicationCommands(admin);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else if (err instanceof CliError) {
    process.stderr.write(`nds: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`nds: ${(err as Error)?.message ?? String(err)}\n`);
    // Server-side commands throw the service's own errors: their details say what to fix.
    const details = (err as { details?: unknown }).details;
    if (Array.isArray(details)) for (const d of details) process.stderr.write(`  ${String(d)}\n`);
    if (process.env.NDS_DEBUG) process.stderr.write(`${(err as Error)?.stack}\n`);
    process.exitCode = 1;
  }
}
