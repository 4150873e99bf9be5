/**
 * What a dataset's owner does besides uploading: `nds datasets edit` (metadata; visibility for admins),
 * `nds datasets publish request|status`, and `nds auth request-access` (asking an administrator for upload
 * access). Each is one call of the API; the answers are shown as the other commands show theirs.
 */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { info, printJson, printTable } from './output.js';
import { printFailedRecordings, type PublicationRequest } from './publication-commands.js';

async function signedIn(): Promise<ApiClient> {
  const api = await ApiClient.fromEnvironment();
  api.requireKey();
  return api;
}

interface EditOptions {
  name?: string;
  description?: string;
  license?: string;
  keyword?: string[];
  author?: string[];
  externalId?: string[];
  sourceRepo?: string;
  visibility?: string;
  reason?: string;
  json?: boolean;
}

export function registerDatasetEditCommands(program: Command): void {
  const datasets = program.commands.find((c) => c.name() === 'datasets') ?? program.command('datasets');
  datasets
    .command('edit <id>')
    .description("change a dataset's metadata (owner or admin); --visibility needs an admin")
    .option('--name <text>', 'the name')
    .option('--description <text>', 'what the dataset holds')
    .option('--license <id>', 'licence, e.g. CC0-1.0 (`none` to clear it)')
    .option('--keyword <word...>', 'keywords (replace the current ones)')
    .option('--author <name...>', 'authors, in order (replace the current ones)')
    .option('--external-id <id...>', 'external ids, e.g. openneuro:ds004504 (replace the current ones)')
    .option('--source-repo <url>', 'git URL of the BIDS repository (`none` to clear it)')
    .option('--visibility <public|private>', 'administrators: make the dataset public or private (owners ask with `nds datasets publish request`)')
    .option('--reason <text>', 'with --visibility private: why, mailed to the owner (up to 2000 characters)')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: EditOptions) => {
      const body: Record<string, unknown> = {
        name: opts.name,
        description: opts.description,
        license: opts.license === 'none' ? null : opts.license,
        keywords: opts.keyword,
        authors: opts.author,
        external_ids: opts.externalId,
        source_repo: opts.sourceRepo === 'none' ? null : opts.sourceRepo,
        visibility: opts.visibility,
        visibility_reason: opts.reason,
      };
      // The server refuses it too (400); said here, in the CLI's words, before anything is sent.
      if (opts.reason !== undefined && opts.visibility !== 'private') throw new CliError('--reason says why a dataset is made private: give it with --visibility private (nothing was changed)');
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      if (Object.keys(body).length === 0) throw new CliError('nothing to change: give at least one of --name, --description, --license, --keyword, --author, --external-id, --source-repo, --visibility');
      if (opts.visibility && opts.visibility !== 'public' && opts.visibility !== 'private') throw new CliError('--visibility is public or private');
      const d = await (await signedIn()).request<Record<string, unknown>>(`/datasets/${encodeURIComponent(dataset)}`, { method: 'PATCH', body });
      if (opts.json) return printJson(d);
      info(`${dataset} updated: ${Object.keys(body).join(', ')}`);
    });

  datasets
    .command('resolve <source_id>')
    .description('the id of the dataset known by a source id (owner/name, a repository URL, or an external id such as openneuro:ds004504)')
    .option('--json', 'machine output')
    .action(async (source: string, opts: { json?: boolean }) => {
      const r = await (await ApiClient.fromEnvironment()).request<{ id: string }>(`/datasets/resolve/${source.split('/').map(encodeURIComponent).join('/')}`);
      if (opts.json) return printJson(r);
      process.stdout.write(`${r.id}\n`);
    });

  const publish = datasets.command('publish').description('publication: ask for a dataset to be published, see where it stands');
  publish
    .command('request <id>')
    .description('ask the administrators to publish the latest version (needs a name, authors, a licence and a description)')
    .option('--message <text>', 'a note for the administrators')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { message?: string; json?: boolean }) => {
      const api = await signedIn();
      const r = await api.request<PublicationRequest>(`/datasets/${encodeURIComponent(dataset)}/publish/request`, { method: 'POST', body: opts.message ? { message: opts.message } : {} });
      if (opts.json) return printJson(r);
      process.stdout.write(`request ${r.id} for ${dataset} v${r.version}: ${r.status}\n`);
      printFailedRecordings(r);
      info(`an administrator reviews it (they are told by mail); follow it with \`${api.command} datasets publish status ${dataset}\``);
    });

  publish
    .command('status <id>')
    .description("a dataset's publication status, DOIs and requests")
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { json?: boolean }) => {
      const s = await (await signedIn()).request<{ visibility: string; publication_status: string | null; doi: string | null; concept_doi: string | null; requests: PublicationRequest[] }>(
        `/datasets/${encodeURIComponent(dataset)}/publish/status`,
      );
      if (opts.json) return printJson(s);
      process.stdout.write(`visibility   ${s.visibility}\npublication  ${s.publication_status ?? 'not requested'}\nDOI          ${s.doi ?? '-'}\nconcept DOI  ${s.concept_doi ?? '-'}\n`);
      for (const r of s.requests) process.stdout.write(`request ${r.id}  v${r.version}  ${r.status}  ${r.requested_at}${r.reason ? `  (${r.reason})` : ''}\n`);
      for (const r of s.requests) printFailedRecordings(r, (line) => process.stdout.write(`${line}\n`));
    });
}

export function registerAuditCommand(admin: Command): void {
  admin
    .command('audit')
    .description('the audit log of administrative actions, newest first')
    .option('--limit <n>', 'how many entries (1-500)', '100')
    .option('--before <id>', 'entries older than this entry id')
    .option('--json', 'machine output')
    .action(async (opts: { limit: string; before?: string; json?: boolean }) => {
      const q = new URLSearchParams({ limit: opts.limit });
      if (opts.before) q.set('before', opts.before);
      const r = await (await signedIn()).request<{ entries: Array<Record<string, unknown>> }>(`/admin/audit?${q}`);
      if (opts.json) return printJson(r);
      printTable(r.entries, ['id', 'created_at', 'actor_username', 'action', 'target', 'details']);
    });
}

export function registerRequestAccessCommand(program: Command): void {
  const auth = program.commands.find((c) => c.name() === 'auth') ?? program.command('auth');
  auth
    .command('request-access')
    .description('ask an administrator for upload access (real datasets, beyond the sandbox)')
    .option('--json', 'machine output')
    .action(async (opts: { json?: boolean }) => {
      const api = await signedIn();
      const user = await api.request<Record<string, unknown>>('/users/me/upload-access', { method: 'POST' });
      if (opts.json) return printJson(user);
      process.stdout.write(`upload access requested for ${String(user.username)}; the administrators are told by mail, and you get one when they decide (\`${api.command} auth status\` shows your tier)\n`);
    });
}
