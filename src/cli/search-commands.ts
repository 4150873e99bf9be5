/** `nds datasets search <q>`: ranked search with facet filters; a table for people, `--json` for scripts. */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { info, printJson, printTable } from './output.js';

interface SearchAnswer {
  mode_used: string;
  fallback_reason: string | null;
  total: number;
  results: Array<{ id: string; name: string; modalities: string[]; sampling_rates: number[]; n_subjects: number | null; visibility: string; score: number }>;
  facets: Record<string, Array<{ value: string; count: number }>>;
}

function positive(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new CliError(`${name} must be a non-negative number, got "${v}"`);
    return n;
  };
}

/** Adds `search` to the `datasets` group, creating the group when no other module has yet. */
export function registerSearchCommand(program: Command): void {
  const datasets = program.commands.find((c) => c.name() === 'datasets') ?? program.command('datasets').description('datasets');
  datasets
    .command('search [query...]')
    .description('search datasets by words, authors, tasks, "500 Hz", "64 channels"...')
    .option('--modality <m>', 'only datasets with this modality (eeg, emg, ieeg...)')
    .option('--min-subjects <n>', 'only datasets with at least n subjects', positive('--min-subjects'))
    .option('--sampling-rate <hz>', 'only datasets with a recording at this rate', positive('--sampling-rate'))
    .option('--semantic', 'rank by meaning (embeddings) when the server offers it')
    .option('--limit <n>', 'results to show (at most 100)', positive('--limit'), 25)
    .option('--json', 'machine output')
    .action(async (words: string[], opts: { modality?: string; minSubjects?: number; samplingRate?: number; semantic?: boolean; limit: number; json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      const params = new URLSearchParams({ q: words.join(' '), limit: String(opts.limit) });
      if (opts.modality) params.set('modality', opts.modality);
      if (opts.minSubjects !== undefined) params.set('min_subjects', String(opts.minSubjects));
      if (opts.samplingRate !== undefined) params.set('sampling_rate', String(opts.samplingRate));
      if (opts.semantic) params.set('mode', 'semantic');
      const answer = await api.request<SearchAnswer>(`/datasets/search?${params}`);
      if (opts.json) return printJson(answer);
      if (answer.fallback_reason) info(`semantic search not used: ${answer.fallback_reason}`);
      printTable(
        answer.results.map((r) => ({ ...r, rates: r.sampling_rates.map((x) => `${x}Hz`), subjects: r.n_subjects, score: r.score.toFixed(3) })),
        ['id', 'name', 'modalities', 'rates', 'subjects', 'visibility', 'score'],
      );
      const facet = (name: string) => (answer.facets[name] ?? []).map((f) => `${f.value} (${f.count})`).join(', ') || '-';
      info(`${answer.total} found (${answer.mode_used}); modality: ${facet('modality')}; sampling rate: ${facet('sampling_rate')}`);
    });
}
