/** `nds admin publish list|approve|deny` and `nds admin doi show|concept|update`: publication and DOIs. */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { info, printJson, printTable } from './output.js';

interface FailedRecording {
  path: string;
  code: string;
  reason: string;
}

export type PublicationRequest = {
  id: number;
  dataset_id: string;
  dataset_name: string;
  version: string;
  status: string;
  requested_by: string | null;
  requested_at: string;
  reason: string | null;
  doi: string | null;
  /** While pending: the recordings the dataset's conversion could not convert; null once decided. */
  failed_recordings?: FailedRecording[] | null;
};

/** The failed recordings of a pending request, one a line, for the person who decides or asks. */
export function printFailedRecordings(r: PublicationRequest, write: (line: string) => void = info): void {
  const failed = r.failed_recordings ?? [];
  if (!failed.length) return;
  write(`warning: request ${r.id} (${r.dataset_id}): ${failed.length} recording${failed.length === 1 ? '' : 's'} could not be converted:`);
  for (const f of failed) write(`  ${f.path}: ${f.code}: ${f.reason}`);
}

interface DoiInfo {
  dataset_id: string;
  doi: string | null;
  concept_doi: string | null;
  provider: string;
  test: boolean;
  records: Array<{ doi: string; kind: string; version: string | null; url: string; updated_at: string }>;
  created?: boolean;
  updated?: string[];
}

async function client(): Promise<ApiClient> {
  const api = await ApiClient.fromEnvironment();
  api.requireKey();
  return api;
}

function showRequest(r: PublicationRequest): void {
  process.stdout.write(`request ${r.id} for ${r.dataset_id} v${r.version}: ${r.status}${r.doi ? `, DOI ${r.doi}` : ''}${r.reason ? ` (${r.reason})` : ''}\n`);
}

function showDoi(d: DoiInfo): void {
  process.stdout.write(`dataset      ${d.dataset_id}\nconcept DOI  ${d.concept_doi ?? '-'}\nlatest DOI   ${d.doi ?? '-'}\nprovider     ${d.provider}${d.test ? ' (TEST DOIs: they resolve nowhere)' : ''}\n`);
  if (d.records.length) {
    process.stdout.write('\n');
    printTable(d.records, ['doi', 'kind', 'version', 'url', 'updated_at']);
  }
}

export function registerPublicationCommands(admin: Command): void {
  const publish = admin.command('publish').description('publication requests: list, approve, deny');
  publish
    .command('list')
    .description('publication requests, newest first')
    .option('--status <status>', 'pending, approved or denied')
    .option('--json', 'machine output')
    .action(async (opts: { status?: string; json?: boolean }) => {
      const query = opts.status ? `?status=${encodeURIComponent(opts.status)}` : '';
      const { requests } = await (await client()).request<{ requests: PublicationRequest[] }>(`/admin/publish/requests${query}`);
      if (opts.json) return printJson({ requests });
      printTable(
        requests.map((r) => ({ ...r, failed: r.failed_recordings ? r.failed_recordings.length : null })),
        ['id', 'dataset_id', 'dataset_name', 'version', 'status', 'requested_by', 'requested_at', 'failed', 'doi'],
      );
      for (const r of requests) printFailedRecordings(r, (line) => process.stdout.write(`${line}\n`));
    });
  publish
    .command('approve <request_id>')
    .description('approve: mint or update the DOIs and make the dataset public')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { json?: boolean }) => {
      const r = await (await client()).request<PublicationRequest>(`/admin/publish/${encodeURIComponent(id)}/approve`, { method: 'POST' });
      if (opts.json) printJson(r);
      else showRequest(r);
    });
  publish
    .command('deny <request_id>')
    .description('deny with a reason the owner will read')
    .requiredOption('--reason <text>', 'why the request is denied')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { reason: string; json?: boolean }) => {
      const r = await (await client()).request<PublicationRequest>(`/admin/publish/${encodeURIComponent(id)}/deny`, { method: 'POST', body: { reason: opts.reason } });
      if (opts.json) printJson(r);
      else showRequest(r);
    });

  const doi = admin.command('doi').description("a dataset's DOIs: show, mint the concept DOI, update metadata");
  const doiAction = (method: 'GET' | 'POST', suffix: string) => async (id: string, opts: { json?: boolean }) => {
    const d = await (await client()).request<DoiInfo>(`/admin/datasets/${encodeURIComponent(id)}/doi${suffix}`, { method });
    if (opts.json) return printJson(d);
    if (d.created !== undefined) process.stdout.write(d.created ? 'concept DOI minted\n' : 'concept DOI already existed; metadata refreshed\n');
    if (d.updated) process.stdout.write(`updated ${d.updated.length} DOI(s)\n`);
    showDoi(d);
  };
  doi.command('show <dataset_id>').description('DOIs of a dataset and their provider').option('--json', 'machine output').action(doiAction('GET', ''));
  doi.command('concept <dataset_id>').description('mint the concept DOI (or refresh it)').option('--json', 'machine output').action(doiAction('POST', '/concept'));
  doi.command('update <dataset_id>').description("send the dataset's current metadata for each of its DOIs").option('--json', 'machine output').action(doiAction('POST', '/update'));
}
