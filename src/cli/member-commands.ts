/**
 * `nds datasets members list|add|remove` (decision 0028): who a dataset is shared with. Each is one call of
 * the members API; the owner, maintainers and administrators add and remove, a member removes themselves to leave.
 */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { info, printJson, printTable } from './output.js';

const ROLES = ['reader', 'annotator', 'maintainer'];

async function signedIn(): Promise<ApiClient> {
  const api = await ApiClient.fromEnvironment();
  api.requireKey();
  return api;
}

const membersPath = (dataset: string, username?: string) => `/datasets/${encodeURIComponent(dataset)}/members${username ? `/${encodeURIComponent(username)}` : ''}`;

export function registerMemberCommands(program: Command): void {
  const datasets = program.commands.find((c) => c.name() === 'datasets') ?? program.command('datasets');
  const members = datasets.command('members').description('share a dataset with named people: readers, annotators, maintainers');

  members
    .command('list <id>')
    .description("a dataset's owner and members, with their roles")
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { json?: boolean }) => {
      const answer = await (await signedIn()).request<{ owner: string; members: Array<Record<string, unknown>> }>(membersPath(dataset));
      if (opts.json) return printJson(answer);
      printTable([{ username: answer.owner, role: 'owner', added_by: '', added_at: '' }, ...answer.members], ['username', 'role', 'added_by', 'added_at']);
    });

  members
    .command('add <id> <username>')
    .description('add a member, or change their role (owner, maintainers, administrators); they are told by mail')
    .option('--role <role>', 'reader (reads it), annotator (also annotates), maintainer (also uploads, pushes, edits, manages members)', 'reader')
    .option('--json', 'machine output')
    .action(async (dataset: string, username: string, opts: { role: string; json?: boolean }) => {
      if (!ROLES.includes(opts.role)) throw new CliError(`--role is one of ${ROLES.join(', ')}`);
      const member = await (await signedIn()).request<Record<string, unknown>>(membersPath(dataset, username), { method: 'PUT', body: { role: opts.role } });
      if (opts.json) return printJson(member);
      info(`${username} is now ${opts.role === 'annotator' ? 'an' : 'a'} ${opts.role} of ${dataset}.`);
    });

  members
    .command('remove <id> <username>')
    .description('remove a member (owner, maintainers, administrators), or leave (your own username); their access ends at once')
    .action(async (dataset: string, username: string) => {
      await (await signedIn()).request(membersPath(dataset, username), { method: 'DELETE' });
      info(`${username} is no longer a member of ${dataset}.`);
    });
}
