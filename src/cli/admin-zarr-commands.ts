/** `nds admin zarr regenerate|status|backfill`: operating the Zarr serving copy (docs/operating-zarr.md). */
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { ApiClient, ApiError } from './api-client.js';
import { CliError } from './cli-error.js';
import { formatFailures, type FailureLine } from './conversion-report.js';
import { info, printJson, printTable } from './output.js';

interface ZarrStatus {
  dataset_id: string;
  zarr_status: string | null;
  zarr_store_count: number | null;
  zarr_source_commit: string | null;
  zarr_converted_at: string | null;
  zarr_failure_count?: number | null;
  failures?: FailureLine[];
  jobs: Array<{ id: number; state: string; full: boolean; reason: string; requested_at: string; finished_at: string | null; error: string | null }>;
}

export function registerAdminZarrCommands(admin: Command): void {
  const zarr = admin.command('zarr').description('the Zarr serving copy: reconversion, status, backfill');

  zarr
    .command('regenerate <dataset_id>')
    .description('dispatch a reconversion (--full converts every recording and reconciles)')
    .option('--full', 'convert everything, not only what changed')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { full?: boolean; json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      api.requireKey();
      const answer = await api.request(`/admin/datasets/${encodeURIComponent(id)}/zarr/regenerate`, { method: 'POST', body: { full: Boolean(opts.full) } });
      if (opts.json) return printJson(answer);
      process.stdout.write(`dispatched ${opts.full ? 'a full' : 'a'} conversion of ${id}${answer.coalesced ? ' (merged into the one already waiting)' : ''}\n`);
    });

  zarr
    .command('status <dataset_id>')
    .description('show zarr_status, store count, source commit and recent jobs')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      api.requireKey();
      const s = await api.request<ZarrStatus>(`/admin/datasets/${encodeURIComponent(id)}/zarr`);
      if (opts.json) return printJson(s);
      process.stdout.write(
        `dataset        ${s.dataset_id}\nzarr_status    ${s.zarr_status ?? 'never converted'}\nstores         ${s.zarr_store_count ?? '-'}\nfailed         ${s.zarr_failure_count ?? '-'}\nsource commit  ${s.zarr_source_commit ?? '-'}\nconverted at   ${s.zarr_converted_at ?? '-'}\n`,
      );
      if (s.failures?.length) process.stdout.write(`\n${formatFailures(s.failures)}`);
      if (s.jobs.length) {
        process.stdout.write('\n');
        printTable(s.jobs.map((j) => ({ ...j, full: j.full ? 'yes' : 'no' })), ['id', 'state', 'full', 'reason', 'requested_at', 'finished_at', 'error']);
      }
    });

  zarr
    .command('backfill')
    .description('one sweep over public datasets: dispatch a conversion for each')
    .requiredOption('--all', 'every public dataset (required, so a sweep is never started by accident)')
    .option('--full', 'full reconversions')
    .option('--json', 'machine output')
    .action(async (opts: { all: boolean; full?: boolean; json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      api.requireKey();
      const { datasets } = await api.request<{ datasets: Array<{ id: string }> }>('/admin/zarr/datasets?visibility=public');
      const bar = new SingleBar({ format: 'backfill [{bar}] {value}/{total} {id}', stream: process.stderr, noTTYOutput: !process.stderr.isTTY, notTTYSchedule: 5000 });
      if (!opts.json) bar.start(datasets.length, 0, { id: '' });
      const dispatched: string[] = [];
      const failed: Array<{ id: string; error: string }> = [];
      for (const d of datasets) {
        try {
          await api.request(`/admin/datasets/${d.id}/zarr/regenerate`, { method: 'POST', body: { full: Boolean(opts.full) } });
          dispatched.push(d.id);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          failed.push({ id: d.id, error: err.message });
        }
        if (!opts.json) bar.increment(1, { id: d.id });
      }
      if (!opts.json) bar.stop();
      const summary = { public_datasets: datasets.length, dispatched: dispatched.length, failed };
      if (opts.json) printJson(summary);
      else {
        info(`backfill: ${dispatched.length} of ${datasets.length} public datasets dispatched${failed.length ? `, ${failed.length} failed` : ''}`);
        for (const f of failed) info(`  ${f.id}: ${f.error}`);
      }
      if (failed.length) throw new CliError(`${failed.length} dispatches failed`);
    });
}
