/** The `nds` command's tree: every command group registers itself here. Built by `main.ts` and the tests. */
import { Command } from 'commander';
import { registerServerCommands } from './server-commands.js';
import { registerAuditCommand, registerDatasetEditCommands, registerRequestAccessCommand } from './dataset-edit-commands.js';
import { registerGatewayCommand } from './gateway-command.js';
import { registerAdminZarrCommands } from './admin-zarr-commands.js';
import { registerConvertCommand } from './convert.js';
import { registerInspectCommand } from './inspect.js';
import { registerAuthCommands } from './auth-commands.js';
import { registerAdminUserCommands } from './admin-user-commands.js';
import { registerDatasetsCommands } from './datasets-commands.js';
import { registerMemberCommands } from './member-commands.js';
import { registerAnnotationCommands } from './annotation-commands.js';
import { registerSearchCommand } from './search-commands.js';
import { registerSandboxCommands } from './sandbox-commands.js';
import { registerPublicationCommands } from './publication-commands.js';
import { registerRecordingsCommands } from './recordings-commands.js';
import { registerMcpCommand } from './mcp-command.js';
import { NDS_VERSION } from '../core/release.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('nds')
    .description('Neuro Dataset Service: host BIDS EEG/EMG/iEEG datasets and stream them as Zarr')
    .version(NDS_VERSION)
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
  registerDatasetEditCommands(program);
  registerMemberCommands(program);
  registerAnnotationCommands(program);
  registerRequestAccessCommand(program);
  registerAuditCommand(admin);
  registerSandboxCommands(program);
  registerPublicationCommands(admin);
  registerRecordingsCommands(program);
  registerMcpCommand(program);
  return program;
}
