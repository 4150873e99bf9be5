/**
 * `nds datasets list|show|create|versions|tag|manifest|upload|download` and `nds admin datasets delete`:
 * tables for people, `--json` for scripts; progress and messages on stderr.
 */
import type { Command } from 'commander';
import { LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { downloadDataset } from './dataset-download.js';
import { fetchFailures, formatFailures } from './conversion-report.js';
import { uploadFolder } from './dataset-upload.js';
import { HashCache } from './hash-cache.js';
import type { UploadSummary } from './dataset-upload.js';
import { describeOutcome, waitForConversion, type ConversionOutcome } from './conversion-wait.js';
import { loadClientConfig } from '../core/config.js';
import { closeAgents } from './http-transfer.js';
import { info, printJson, printTable } from './output.js';
import { barProgress, jsonProgress, silentProgress } from './transfer-progress.js';
import { UploadState } from './upload-state.js';
import { terminalSafe } from './terminal-text.js';
import { decimalBytesText } from '../core/byte-size.js';

interface Dataset {
  id: string;
  name: string;
  owner: string;
  visibility: string;
  latest_version: string | null;
  size_bytes: number;
  [field: string]: unknown;
}

const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new CliError(`${name} must be a whole number from 1 to 64`);
  return n;
};
const retries = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 20) throw new CliError('--retries must be a whole number from 0 to 20');
  return n;
};

async function client(needKey: boolean): Promise<ApiClient> {
  const api = await ApiClient.fromEnvironment();
  if (needKey) api.requireKey();
  return api;
}

const id = (v: string) => encodeURIComponent(v);

/** Dataset ids are `nd` or `sb` and six digits: anything else is refused here, with what a valid one looks like. */
export function checkDatasetId(value: string): void {
  if (!/^(nd|sb)\d{6}$/.test(value)) throw new CliError(`"${value}" is not a valid dataset id: ids look like nd000001 (or sb000001 for a sandbox dataset); \`nds datasets list --mine\` shows yours`);
}

interface UploadCommandOptions {
  version?: string;
  createVersion: boolean;
  git?: boolean;
  dryRun?: boolean;
  force?: boolean;
  yes?: boolean;
  wait?: boolean;
  waitTimeout: string;
  concurrency: number;
  retries: number;
  verbose?: boolean;
  json?: boolean;
}

function printUploadSummary(summary: UploadSummary): void {
  const d = summary.diff;
  if (summary.dry_run) {
    info(`dry run: nothing was sent. Against ${d?.latest_version ? `version ${d.latest_version}` : 'an empty dataset'}: ${d?.added.length ?? 0} added, ${d?.changed.length ?? 0} changed, ${d?.removed.length ?? 0} removed`);
    for (const p of d?.added ?? []) process.stdout.write(`added    ${p}\n`);
    for (const p of d?.changed ?? []) process.stdout.write(`changed  ${p}\n`);
    for (const p of d?.removed ?? []) process.stdout.write(`removed  ${p}\n`);
    return;
  }
  if (summary.unchanged) {
    info(`no change: the folder holds exactly the files of version ${summary.version}; no version was made`);
    return;
  }
  info(`${summary.files} files (${decimalBytesText(summary.bytes)}): ${summary.uploaded} uploaded (${decimalBytesText(summary.uploaded_bytes)}${summary.resumed_bytes ? `; ${decimalBytesText(summary.resumed_bytes)} of parts already there from an interrupted run` : ''}), ${summary.present} already stored${summary.version ? `; version ${summary.version} created` : ''}`);
  if (summary.commit) info(`commit ${summary.commit.slice(0, 12)}: ${summary.git_note}`);
  else if (summary.git_note) info(summary.git_note);
}

/** Asks on the terminal; off a terminal only `--yes` lets a version drop files. */
async function confirmRemoval(removed: string[], latest: string, yes: boolean): Promise<boolean> {
  const shown = removed.slice(0, 10).map((p) => `  ${p}`).join('\n') + (removed.length > 10 ? `\n  ... and ${removed.length - 10} more` : '');
  if (yes) {
    info(`--yes: the new version drops ${removed.length} ${removed.length === 1 ? 'file' : 'files'} of version ${latest}`);
    return true;
  }
  if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
  info(`This folder lacks ${removed.length} ${removed.length === 1 ? 'file' : 'files'} that version ${latest} has; the new version will not have them:\n${shown}`);
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question('Make the version without them? [y/N] ')).trim());
  } finally {
    rl.close();
  }
}

export function registerDatasetsCommands(program: Command, admin: Command): void {
  const datasets = program.command('datasets').description('datasets: list, create, upload, download, versions');
  // Every subcommand whose first argument is a dataset id has it checked before any request is made.
  datasets.hook('preAction', (_group, action) => {
    if (action.registeredArguments[0]?.name() === 'id') checkDatasetId(String(action.args[0]));
  });

  datasets
    .command('list')
    .description('public datasets and your own (--mine: only yours)')
    .option('--mine', 'only your datasets, private and sandbox ones included')
    .option('--limit <n>', 'how many at most', '100')
    .option('--json', 'machine output')
    .action(async (opts: { mine?: boolean; limit: string; json?: boolean }) => {
      const api = await client(!!opts.mine);
      const wanted = Math.max(1, Number(opts.limit) || 100);
      const found: Dataset[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ limit: String(Math.min(100, wanted - found.length)) });
        if (cursor) q.set('cursor', cursor);
        const page: { datasets: Dataset[]; next_cursor: string | null } = await api.request(`${opts.mine ? '/users/me/datasets' : '/datasets'}?${q}`);
        found.push(...page.datasets);
        cursor = page.next_cursor;
      } while (cursor && found.length < wanted);
      if (opts.json) return printJson({ datasets: found });
      printTable(found.map((d) => ({ ...d, size: decimalBytesText(d.size_bytes), latest: d.latest_version })), ['id', 'name', 'owner', 'visibility', 'latest', 'size']);
    });

  datasets
    .command('show <id>')
    .description('one dataset')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { json?: boolean }) => {
      const api = await client(false);
      const d = await api.request<Dataset>(`/datasets/${id(dataset)}`);
      if (opts.json) return printJson(d);
      for (const [k, v] of Object.entries(d)) {
        const text = Array.isArray(v) ? v.join(', ') || '-' : String(v ?? '-');
        // Only the description is meant to span lines; another field's newline would forge a line of its own.
        process.stdout.write(`${k.padEnd(20)} ${terminalSafe(text, { oneLine: k !== 'description' })}\n`);
      }
      // Failed recordings, with the reason to act on (zarr_status stays `ready` when some recordings failed).
      if (typeof d.zarr_failure_count === 'number' && d.zarr_failure_count > 0) {
        const failures = await fetchFailures(api, d.id);
        process.stdout.write(`\n${failures ? formatFailures(failures) : `${d.zarr_failure_count} recording(s) could not be converted; the dataset page lists why.\n`}`);
      }
    });

  datasets
    .command('create <name>')
    .description('create a dataset (a sandbox dataset until you complete the sandbox training)')
    .option('--description <text>', 'what the dataset holds')
    .option('--license <id>', 'licence, e.g. CC0-1.0')
    .option('--keyword <word...>', 'keywords')
    .option('--author <name...>', 'authors')
    .option('--source-repo <url>', 'git URL of the BIDS repository')
    .option('--external-id <id...>', 'external ids, e.g. openneuro:ds004504')
    .option('--sandbox', 'a sandbox dataset even when a real one is allowed')
    .option('--public', 'public at once (administrators; mirrors of public data)')
    .option('--json', 'machine output')
    .action(async (name: string, opts: Record<string, unknown>) => {
      const body = {
        name,
        description: opts.description,
        license: opts.license,
        keywords: opts.keyword,
        authors: opts.author,
        source_repo: opts.sourceRepo,
        external_ids: opts.externalId,
        sandbox: opts.sandbox ? true : undefined,
        visibility: opts.public ? 'public' : undefined,
      };
      const d = await (await client(true)).request<Dataset>('/datasets', { method: 'POST', body });
      if (opts.json) return printJson(d);
      process.stdout.write(`${d.id}\n`);
      info(`created ${d.sandbox ? 'sandbox ' : ''}dataset ${d.id} (${d.visibility})`);
    });

  datasets
    .command('versions <id>')
    .description('versions of a dataset, highest first')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { json?: boolean }) => {
      const r = await (await client(false)).request<{ versions: Array<Record<string, unknown> & { size_bytes: number }> }>(`/datasets/${id(dataset)}/versions`);
      if (opts.json) return printJson(r);
      printTable(r.versions.map((v) => ({ ...v, files: v.file_count, size: decimalBytesText(v.size_bytes) })), ['version', 'created_at', 'files', 'size', 'source_commit']);
    });

  datasets
    .command('tag <id> <version>')
    .description('create a version from a commit of the dataset\'s hosted git repository (tagged v<version>)')
    .option('--commit <ref>', 'a 40-hex commit id, or main', 'main')
    .option('--json', 'machine output')
    .action(async (dataset: string, version: string, opts: { commit: string; json?: boolean }) => {
      const api = await client(true);
      const v = await api.request<Record<string, unknown>>(`/datasets/${id(dataset)}/versions`, { method: 'POST', body: { version, commit: opts.commit } });
      if (opts.json) return printJson(v);
      info(`${dataset} version ${String(v.version)} from ${String(v.source_commit)}: ${String(v.file_count)} files`);
    });

  datasets
    .command('manifest <id>')
    .description('the files of the latest version (or --version)')
    .option('--version <v>', 'a version instead of the latest')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { version?: string; json?: boolean }) => {
      const q = opts.version ? `?version=${encodeURIComponent(opts.version)}` : '';
      const m = await (await client(false)).request<{ version: string; files: Array<{ path: string; size: number; sha256: string }> }>(`/datasets/${id(dataset)}/manifest${q}`, { maxBytes: LISTING_ANSWER_MAX_BYTES });
      if (opts.json) return printJson(m);
      info(`${dataset} version ${m.version}: ${m.files.length} files`);
      printTable(m.files.map((f) => ({ ...f, size: f.size })), ['path', 'size', 'sha256']);
    });

  datasets
    .command('upload <id> <folder>')
    .description('check a BIDS folder, upload it (only missing content is sent) and create a version')
    .option('--version <v>', 'version to create (default: the next patch, or 1.0.0)')
    .option('--no-create-version', 'upload content only')
    .option('--git', 'commit the folder to the dataset\'s hosted repository, creating it if needed')
    .option('--no-git', 'do not commit, even when the dataset has a hosted repository')
    .option('--dry-run', 'list the files that would be added, changed and removed; send nothing')
    .option('--force', 'upload even when the BIDS check finds errors')
    .option('--yes', 'make the version even when it removes files the latest version has (no question asked)')
    .option('--wait', 'wait for the conversion of the new version and print each recording\'s result; exit 1 when one failed')
    .option('--wait-timeout <seconds>', 'give up waiting after this long', '1800')
    .option('--concurrency <n>', 'uploads at a time', positive('--concurrency'), 8)
    .option('--retries <n>', 'retries of a failed upload', retries, 4)
    .option('--verbose', 'a line per file')
    .option('--json', 'machine output; progress as lines of JSON on stderr')
    .action(async (dataset: string, folder: string, opts: UploadCommandOptions) => {
      const api = await client(true);
      const git = opts.git === true ? 'always' : opts.git === false ? 'never' : 'auto';
      const hashCacheFile = loadClientConfig().uploadHashCacheFile;
      const hashCache = await HashCache.open(hashCacheFile);
      const uploadState = await UploadState.open(UploadState.besideHashCache(hashCacheFile));
      const progress = opts.json ? jsonProgress(process.stderr) : barProgress(opts.dryRun ? 'hash' : 'upload');
      try {
        const summary = await uploadFolder(api, dataset, folder, {
          version: opts.version,
          createVersion: opts.createVersion,
          git,
          hashCache,
          uploadState,
          concurrency: opts.concurrency,
          retries: opts.retries,
          progress,
          force: opts.force,
          dryRun: opts.dryRun,
          onCheck: (check) => {
            for (const e of check.errors) info(`error: ${e.path ? `${e.path}: ` : ''}${e.message}`);
            for (const w of check.warnings) info(`warning: ${w.path ? `${w.path}: ` : ''}${w.message}`);
            if (check.errors.length && opts.force) info(`--force: uploading despite ${check.errors.length} ${check.errors.length === 1 ? 'error' : 'errors'}`);
          },
          confirmRemoval: (removed, latest) => confirmRemoval(removed, latest, !!opts.yes),
          onFile: opts.verbose ? (f, outcome) => info(`${outcome} ${f.path}`) : undefined,
          onPart: opts.verbose ? (f, part, count) => info(`part ${part}/${count} of ${f}`) : undefined,
        });
        progress.stop();
        let outcome: ConversionOutcome | undefined;
        if (opts.wait && !opts.json && (summary.unchanged || summary.dry_run || !summary.version)) info('--wait: no version was made, so there is no conversion to wait for');
        if (opts.wait && summary.expected_source_commit && !summary.unchanged) {
          const seconds = Number(opts.waitTimeout);
          if (!opts.json) info(`version ${summary.version} created; waiting for its conversion`);
          outcome = await waitForConversion(api, dataset, {
            expectedCommit: summary.expected_source_commit,
            timeoutMs: (Number.isFinite(seconds) && seconds > 0 ? seconds : 1800) * 1000,
            onState: opts.json ? undefined : (status) => info(`conversion: ${status}`),
          });
        }
        if (opts.json) printJson(outcome ? { ...summary, conversion: outcome } : summary);
        else printUploadSummary(summary);
        if (outcome && !opts.json) for (const line of describeOutcome(outcome)) process.stdout.write(`${line}\n`);
        if (outcome && (outcome.status === 'failed' || outcome.failures > 0)) {
          throw new CliError(outcome.status === 'failed' ? `the conversion of ${dataset} failed` : `${outcome.failures} of ${outcome.recordings.length} recordings failed to convert; fix the files named above and upload again`);
        }
      } finally {
        progress.stop();
        closeAgents();
        await hashCache.save().catch((err: Error) => info(`could not save the hash cache: ${err.message}`));
        await uploadState.save().catch((err: Error) => info(`could not save the state of uploads in parts: ${err.message}`));
      }
    });

  datasets
    .command('download <id> <folder>')
    .description('download every file of a version (default: the latest), verifying each sha256')
    .option('--version <v>', 'a version instead of the latest')
    .option('--concurrency <n>', 'downloads at a time', positive('--concurrency'), 8)
    .option('--retries <n>', 'retries of a failed download', retries, 4)
    .option('--json', 'machine output')
    .action(async (dataset: string, folder: string, opts: { version?: string; concurrency: number; retries: number; json?: boolean }) => {
      const api = await client(false);
      const progress = opts.json ? silentProgress : barProgress('download');
      try {
        const summary = await downloadDataset(api, dataset, folder, {
          version: opts.version,
          concurrency: opts.concurrency,
          retries: opts.retries,
          progress,
        });
        if (opts.json) return printJson(summary);
        info(`${dataset} ${summary.version}: ${summary.files} files (${decimalBytesText(summary.bytes)}) verified; ${summary.downloaded} downloaded, ${summary.kept} already there`);
      } finally {
        progress.stop();
        closeAgents();
      }
    });

  const adminDatasets = admin.command('datasets').description('administration of datasets');
  adminDatasets
    .command('delete <id>')
    .description('delete a dataset with its versions, objects, Zarr copy and publication records')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { json?: boolean }) => {
      const r = await (await client(true)).request<{ id: string; deleted: boolean; objects_deleted: number }>(`/admin/datasets/${id(dataset)}`, { method: 'DELETE' });
      if (opts.json) return printJson(r);
      info(r.deleted ? `deleted ${r.id} (${r.objects_deleted} objects)` : `${r.id} did not exist (${r.objects_deleted} leftover objects removed)`);
    });
}
