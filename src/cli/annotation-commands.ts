/**
 * `nds datasets annotations list|history|export|import|commit|labels` (decision 0028): a recording's annotations
 * from a terminal, and the labels used across the dataset. `import` reads a BIDS events.tsv (onset, duration, trial_type, optional channel and HED) and sends
 * it as one request of up to 10,000; the viewer edits single annotations in place.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ERROR_ANSWER_MAX_BYTES, LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { parseTsv, cell } from '../formats/bids/tsv-table.js';
import { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { info, printJson, printTable } from './output.js';

async function client(): Promise<ApiClient> {
  return ApiClient.fromEnvironment();
}

const at = (dataset: string, rest = '') => `/datasets/${encodeURIComponent(dataset)}/annotations${rest}`;
const pathQuery = (recording: string) => `path=${encodeURIComponent(recording)}`;

/** The annotations of an events.tsv's rows, as the API takes them; a row without a numeric onset is an error. */
export function annotationsFromTsv(text: string, recording: string): Array<Record<string, unknown>> {
  const table = parseTsv(text);
  if (!table.columns.includes('onset')) throw new CliError('the table has no onset column (a BIDS events.tsv: onset, duration, trial_type)');
  return table.rows.map((row, i) => {
    const onset = Number(cell(row, 'onset'));
    if (!Number.isFinite(onset)) throw new CliError(`row ${i + 2}: onset is not a number`);
    const duration = Number(cell(row, 'duration') ?? 0);
    const channels = cell(row, 'channel');
    return {
      path: recording,
      onset,
      duration: Number.isFinite(duration) ? duration : 0,
      label: cell(row, 'trial_type') ?? cell(row, 'value') ?? 'n/a',
      ...(channels && { channels: channels.split(',').map((c) => c.trim()).filter(Boolean) }),
      ...(cell(row, 'HED') && { hed: cell(row, 'HED') }),
    };
  });
}

export function registerAnnotationCommands(program: Command): void {
  const datasets = program.commands.find((c) => c.name() === 'datasets') ?? program.command('datasets');
  const annotations = datasets.command('annotations').description("a recording's annotations: list, history, export, import, commit; the dataset's labels");

  annotations
    .command('list <id> <path>')
    .description("a recording's annotations by onset, and its revision")
    .option('--json', 'machine output')
    .action(async (dataset: string, recording: string, opts: { json?: boolean }) => {
      const answer = await (await client()).request<{ annotations: Array<Record<string, unknown>>; revision: number }>(`${at(dataset)}?${pathQuery(recording)}`);
      if (opts.json) return printJson(answer);
      printTable(answer.annotations, ['onset', 'duration', 'label', 'channels', 'author', 'id']);
      info(`revision ${answer.revision}`);
    });

  annotations
    .command('history <id> <path>')
    .description('every change of the annotations of a recording, oldest first')
    .option('--json', 'machine output')
    .action(async (dataset: string, recording: string, opts: { json?: boolean }) => {
      const answer = await (await client()).request<{ changes: Array<Record<string, unknown>>; revision: number }>(`${at(dataset, '/history')}?${pathQuery(recording)}`);
      if (opts.json) return printJson(answer);
      printTable(answer.changes, ['revision', 'action', 'annotation_id', 'author', 'changed_at']);
    });

  annotations
    .command('labels <id>')
    .description("the labels of the dataset's annotations on all its recordings, most used first")
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { json?: boolean }) => {
      const answer = await (await client()).request<{ labels: Array<Record<string, unknown>> }>(at(dataset, '/labels'));
      if (opts.json) return printJson(answer);
      printTable(answer.labels, ['label', 'count', 'recordings']);
    });

  annotations
    .command('export <id> <path>')
    .description("the annotations as a BIDS events.tsv, on stdout (the same annotations give the same bytes)")
    .action(async (dataset: string, recording: string) => {
      const api = await client();
      const res = await api.raw(`${at(dataset, '/export')}?${pathQuery(recording)}&format=tsv`);
      const text = await api.text(res, res.ok ? LISTING_ANSWER_MAX_BYTES : ERROR_ANSWER_MAX_BYTES);
      if (!res.ok) throw new CliError(`${res.status}: ${text.slice(0, 300)}`);
      process.stdout.write(text);
    });

  annotations
    .command('import <id> <path> <events-tsv>')
    .description('add the rows of a BIDS events.tsv as annotations of the recording (annotators and up; at most 10,000)')
    .action(async (dataset: string, recording: string, file: string) => {
      const items = annotationsFromTsv(await readFile(file, 'utf8'), recording);
      if (items.length === 0) throw new CliError(`${file} has no rows`);
      const api = await client();
      api.requireKey();
      const answer = await api.request<{ revision: number }>(at(dataset), { method: 'POST', body: items });
      info(`${items.length} annotation${items.length === 1 ? '' : 's'} added; revision ${answer.revision}.`);
    });

  annotations
    .command('commit <id>')
    .description("write the annotations into the recordings' _events.tsv as a new version, which converts (maintainers and the owner)")
    .requiredOption('-m, --message <text>', 'what the version brings (the top of CHANGES)')
    .option('--json', 'machine output')
    .action(async (dataset: string, opts: { message: string; json?: boolean }) => {
      const api = await client();
      api.requireKey();
      const answer = await api.request<{ version: string; files: string[]; annotations: number }>(at(dataset, '/commit'), { method: 'POST', body: { message: opts.message } });
      if (opts.json) return printJson(answer);
      info(`Version ${answer.version} of ${dataset}: ${answer.annotations} annotations in ${answer.files.length - 1} events file${answer.files.length === 2 ? '' : 's'}; it converts now.`);
    });
}
