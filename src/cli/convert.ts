/**
 * `nds convert <bids-file-or-folder> <out-folder>`: converts one data file to `<out>/<stem>.zarr`, or every
 * recording of a BIDS tree to `<out>/<bids path without extension>.zarr` plus `<out>/index.json`.
 * Progress goes to stderr (a bar on a terminal, one line per recording otherwise); the summary to stdout.
 */
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import type { ConvertEvents, FolderConversion } from '../formats/convert-to-folder.js';
import { CliError } from './cli-error.js';
import { printJson } from './output.js';

export function registerConvertCommand(program: Command): void {
  program
    .command('convert')
    .description('convert a BIDS recording (EDF, BDF, BrainVision, EEGLAB) or a whole BIDS tree into Zarr v3 stores')
    .argument('<input>', 'a data file (.edf .bdf .vhdr .set) or a BIDS dataset folder')
    .argument('<out>', 'the folder to write the stores (and index.json) into')
    .option('--json', 'print the result as JSON')
    .action(async (input: string, out: string, options: { json?: boolean }) => {
      const kind = await stat(input).then((s) => (s.isDirectory() ? 'folder' : 'file'), () => undefined);
      if (!kind) throw new CliError(`${input} does not exist`);
      const progress = progressReporter();
      const started = performance.now();
      const { convertBidsTreeToFolder, convertFileToFolder } = await import('../formats/convert-to-folder.js');
      const result = kind === 'folder' ? await convertBidsTreeToFolder(input, out, progress.events) : await convertFileToFolder(input, out, progress.events);
      progress.stop();
      const seconds = (performance.now() - started) / 1000;
      if (options.json) printJson({ converted: result.stores.map((s) => ({ path: s.path, zarr: s.zarr, ...s.summary })), failed: result.failures, seconds });
      else printSummary(result, out, seconds);
      if (result.stores.length === 0) {
        throw new CliError(result.failures.length === 0 ? `no recordings found in ${input}` : 'nothing was converted', 1);
      }
    });
}

function progressReporter(): { events: ConvertEvents; stop: () => void } {
  if (!process.stderr.isTTY) {
    return {
      events: {
        onDone: (path, result) =>
          process.stderr.write(result.ok ? `converted ${path} -> ${result.store.zarr}\n` : `failed    ${path}: ${result.failure.code}\n`),
      },
      stop: () => undefined,
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: '{bar} {percentage}% | {index}/{total} {path}', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let total = 1;
  let index = 0;
  let path = '';
  return {
    events: {
      onStart: (p, i, n) => {
        [path, index, total] = [p, i, n];
        if (i === 0) bar.start(n * 1000, 0, { index: 1, total: n, path });
        else bar.update(i * 1000, { index: i + 1, path });
      },
      onProgress: (_p, fraction) => bar.update(Math.round((index + fraction) * 1000), { index: index + 1, total, path }),
    },
    stop: () => bar.stop(),
  };
}

function printSummary(result: FolderConversion, out: string, seconds: number): void {
  const lines = [`Converted ${result.stores.length}, failed ${result.failures.length} (${seconds.toFixed(1)} s), into ${out}`];
  for (const s of result.stores) {
    const groups = s.summary.groups.map((g) => `${g.name} ${g.n_channels}ch x ${g.n_samples}`).join(', ');
    lines.push(`  ok      ${s.zarr}  ${groups}, ${s.summary.duration_s.toFixed(1)} s, ${s.summary.n_events} events`);
  }
  for (const f of result.failures) lines.push(`  FAILED  ${f.path}  ${f.code}: ${f.reason}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
