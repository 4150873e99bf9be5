/** `nds inspect <store.zarr>`: a store's groups, channels, duration and events, read back through zarrita. */
import type { Command } from 'commander';
import { CliError } from './cli-error.js';
import { printJson } from './output.js';

export function registerInspectCommand(program: Command): void {
  program
    .command('inspect')
    .description('describe a converted Zarr store: groups, channels, duration, events')
    .argument('<store>', 'a store folder (<name>.zarr)')
    .option('--json', 'print the description as JSON')
    .option('--events <n>', 'how many events to list', '20')
    .action(async (location: string, options: { json?: boolean; events: string }) => {
      // Loaded on use: zarrita and its codecs would slow every other command's start.
      const { inspectStore } = await import('../formats/zarr/inspect-store.js');
      const description = await inspectStore(location).catch((err: Error) => {
        throw new CliError(`${location} is not a readable nds-zarr store: ${err.message}`);
      });
      if (options.json) {
        printJson(description);
        return;
      }
      const r = description.recording as { start_time?: string | null; duration_s?: number };
      const s = description.source as { path?: string; format?: string };
      const lines = [`${location}`, `  source     ${s.path} (${s.format})`, `  start      ${r.start_time ?? 'unknown'}`, `  duration   ${r.duration_s} s`];
      for (const g of description.groups) {
        lines.push(`  group ${g.name}: ${g.modality}, ${g.rate} Hz, ${g.n_channels} channels x ${g.n_samples} samples (${g.dtype}), chunks of ${g.chunk_samples}, view levels ${g.view_levels.length}`);
        for (const c of g.channels) lines.push(`    ${c.label.padEnd(16)} ${c.type.padEnd(6)} ${c.unit.padEnd(8)} ${c.status}`);
      }
      const shown = description.events.slice(0, Number(options.events) || 0);
      lines.push(`  events     ${description.n_events}`);
      for (const e of shown) lines.push(`    ${e.onset.toFixed(4).padStart(12)} s  ${e.duration.toFixed(3).padStart(8)} s  ${e.label}`);
      if (description.n_events > shown.length) lines.push(`    ... ${description.n_events - shown.length} more`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
