/** `nds sandbox status|complete|reset`: the sandbox training of the signed-in account. */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { printJson, printTable } from './output.js';

interface SandboxAnswer {
  status: string;
  completed_at: string | null;
  next_step: string | null;
  datasets: Array<{ id: string; name: string; latest_version: string | null; zarr_status: string | null }>;
  deleted?: string[];
}

function show(s: SandboxAnswer): void {
  process.stdout.write(`status     ${s.status}${s.completed_at ? ` (since ${s.completed_at})` : ''}\n`);
  if (s.next_step) process.stdout.write(`next step  ${s.next_step}\n`);
  if (s.deleted?.length) process.stdout.write(`deleted    ${s.deleted.join(', ')}\n`);
  if (s.datasets.length) {
    process.stdout.write('\n');
    printTable(s.datasets, ['id', 'name', 'latest_version', 'zarr_status']);
  }
}

export function registerSandboxCommands(program: Command): void {
  const sandbox = program.command('sandbox').description('sandbox training: practise uploading before real datasets');
  const run = (method: 'GET' | 'POST', path: string) => async (opts: { json?: boolean }) => {
    const api = await ApiClient.fromEnvironment();
    api.requireKey();
    const s = await api.request<SandboxAnswer>(path, { method });
    if (opts.json) printJson(s);
    else show(s);
  };
  sandbox.command('status').description('where the training stands and what to do next').option('--json', 'machine output').action(run('GET', '/sandbox/status'));
  sandbox.command('complete').description('mark the training complete (needs a sandbox dataset with a version)').option('--json', 'machine output').action(run('POST', '/sandbox/complete'));
  sandbox.command('reset').description('start over: forget the completion and delete your sandbox datasets').option('--json', 'machine output').action(run('POST', '/sandbox/reset'));
}
