/**
 * BIDS sidecars are hostile input read inside `nds serve`: a file of a few hundred kilobytes must neither block
 * the conversion for long nor make it use memory out of proportion to its size. A sidecar beyond the bounds
 * (16 MiB, 1,000 columns, 1,000,000 cells) fails its recording with `unsupported_format` and a sentence naming
 * the file and the bound.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertBidsTreeToFolder } from '../../../src/formats/convert-to-folder.js';
import { MAX_SIDECAR_BYTES } from '../../../src/formats/recording-sidecars.js';
import { writeEdf } from '../support/edf-writer.js';
import { convertInChild, finished } from '../support/convert-in-child.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-sidecar-limits-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

async function tree(name: string, sidecars: Record<string, string>): Promise<string> {
  const root = join(dir, name);
  const eeg = join(root, 'sub-01', 'eeg');
  await mkdir(eeg, { recursive: true });
  await writeFile(join(root, 'dataset_description.json'), '{"Name": "t", "BIDSVersion": "1.9.0"}');
  const edf = writeEdf({ recordDuration: 1, records: 2, signals: [{ label: 'Fz', samplesPerRecord: 4, samples: [1, 2, 3, 4, 5, 6, 7, 8] }] });
  await writeFile(join(eeg, 'sub-01_task-x_eeg.edf'), edf);
  for (const [file, text] of Object.entries(sidecars)) await writeFile(join(eeg, file), text);
  return root;
}

const header = (columns: number) => ['onset', ...Array.from({ length: columns - 1 }, (_, i) => `c${i}`)].join('\t');

describe('BIDS sidecars are bounded', () => {
  it('applies a channels.tsv of 30,000 rows of one name in well under 3 s (rows are grouped by name in linear time)', async () => {
    // Copying each name's row list on every row took 5.6 s for 20,000 rows, 66 s for 60,000.
    const root = await tree('same-name', { 'sub-01_task-x_channels.tsv': 'name\ttype\n' + 'Fz\tEEG\n'.repeat(30_000) });
    const started = performance.now();
    const result = await convertBidsTreeToFolder(root, join(dir, 'out-same-name'));
    const ms = performance.now() - started;
    assert.deepEqual(result.failures, []);
    assert.equal(result.stores.length, 1);
    assert.ok(ms < 3000, `the conversion took ${Math.round(ms)} ms`);
  });

  it('refuses an events.tsv of 2,000 columns and 60,000 short rows (130 KB) within 384 MiB of heap', async () => {
    // Parsed into an object of every column for every row, these 130 KB took over 4 GB: the converter died.
    const root = await tree('wide', { 'sub-01_task-x_events.tsv': `${header(2000)}\n${'1\n'.repeat(60_000)}` });
    const result = finished(await convertInChild(root, join(dir, 'out-wide'), { heapMb: 384, timeoutMs: 20_000 }));
    assert.deepEqual(result.failures, [
      { code: 'unsupported_format', reason: 'sub-01/eeg/sub-01_task-x_events.tsv has more than 1,000 columns, more than nds applies from a sidecar table.' },
    ]);
  });

  it('refuses an events.tsv of more than 1,000,000 cells (rows x columns), however short its rows', async () => {
    const root = await tree('cells', { 'sub-01_task-x_events.tsv': `${header(1000)}\n${'1\n'.repeat(1001)}` });
    const result = await convertBidsTreeToFolder(root, join(dir, 'out-cells'));
    assert.equal(result.stores.length, 0);
    assert.deepEqual(
      result.failures.map((f) => [f.code, f.reason]),
      [['unsupported_format', 'sub-01/eeg/sub-01_task-x_events.tsv has 1,000 columns and more than 1,000 rows: over the 1,000,000 cells (rows x columns) nds applies from a sidecar table.']],
    );
  });

  it('applies an events.tsv of 1,000 columns and 1,000 rows (1,000,000 cells) with every column', async () => {
    const root = await tree('at-bound', { 'sub-01_task-x_events.tsv': `${header(1000)}\n${'0.5\tx\n'.repeat(1000)}` });
    const result = await convertBidsTreeToFolder(root, join(dir, 'out-at-bound'));
    assert.deepEqual(result.failures, []);
    assert.equal(result.stores[0]!.summary.n_events, 1000);
    const events = JSON.parse(await readFile(join(dir, 'out-at-bound', 'sub-01', 'eeg', 'sub-01_task-x_eeg.zarr', 'events', 'zarr.json'), 'utf8'));
    assert.equal(events.attributes.columns.length, 1000);
  });

  it('refuses a sidecar larger than 16 MiB before reading it', async () => {
    const big = `{"TaskName": "x", "Notes": "${' '.repeat(MAX_SIDECAR_BYTES)}"}`;
    const root = await tree('big', { 'sub-01_task-x_eeg.json': big });
    const result = await convertBidsTreeToFolder(root, join(dir, 'out-big'));
    assert.deepEqual(
      result.failures.map((f) => [f.code, f.reason]),
      [['unsupported_format', `sub-01/eeg/sub-01_task-x_eeg.json is ${big.length.toLocaleString('en')} bytes, more than the 16 MiB nds reads of a sidecar file.`]],
    );
  });
});
