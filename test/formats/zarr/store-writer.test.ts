/**
 * Every data file in the shared fixtures, converted and read back with zarrita: digital samples are
 * bit-exact, physical values equal the reader's float64 formula exactly, and the metadata matches.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';
import { openRecording } from '../../../src/formats/readers/open-recording.js';
import { writeStore } from '../../../src/formats/zarr/store-writer.js';
import { FolderSink } from '../../../src/formats/zarr/folder-sink.js';
import { groupName } from '../../../src/formats/zarr/zarr-metadata.js';
import { readAll, physical } from '../support/read-all.js';
import { openStore, readEvents, readGroup, readView } from '../support/read-store.js';
import { fixturesDir } from '../support/fixtures.js';
import { writeEdf } from '../support/edf-writer.js';

const fixtures = fixturesDir;
const files = [
  'mne-python/edf/test.edf',
  'mne-python/edf/duplicate_channel_labels.edf',
  'mne-python/edf/test_uneven_samp.edf',
  'mne-python/edf/test.bdf',
  'mne-python/brainvision/test.vhdr',
  'mne-python/brainvision/testv2.vhdr',
  'bids/emg_CustomBipolar/sub-01/emg/sub-01_task-holdWeight_emg.edf',
  'bids/emg_ConcurrentIndependentUnits/sub-01/emg/sub-01_task-jumping_recording-bipolar_emg.edf',
  'bids/emg_ConcurrentIndependentUnits/sub-01/emg/sub-01_task-jumping_recording-highDensity_emg.edf',
];

let out: string;
before(async () => {
  out = await mkdtemp(join(tmpdir(), 'nds-store-'));
});
after(async () => rm(out, { recursive: true, force: true }));

describe('store round trip on every fixture', () => {
  for (const file of files) {
    it(`reads back ${basename(file)} exactly with zarrita`, async () => {
      const path = join(fixtures, file);
      const first = await openRecording(path);
      const expected = await readAll(first);
      await first.close();
      const reader = await openRecording(path);
      const dir = join(out, `${basename(file)}.zarr`);
      const summary = await writeStore(reader, new FolderSink(dir), { sourcePath: basename(file), files: [] });
      await reader.close();

      const { attrs } = await openStore(dir);
      assert.equal(attrs.format, 'nds-zarr');
      assert.equal(attrs.source.format, reader.format);
      assert.equal(attrs.recording.start_time, reader.startTime);
      let checked = 0;
      for (const g of summary.groups) {
        const group = await readGroup(dir, g.name);
        assert.equal(group.dtype, reader.sampleType);
        const indices = reader.channels.map((c, i) => (c.rate === g.rate ? i : -1)).filter((i) => i >= 0);
        assert.deepEqual(group.shape, [indices.length, reader.channels[indices[0]!]!.nSamples]);
        assert.equal(group.attrs.rate, g.rate);
        assert.ok(group.chunks[1]! >= 64 && Number.isInteger(Math.log2(group.chunks[1]!)), 'chunk length is a power of two');
        const n = group.shape[1]!;
        indices.forEach((ci, row) => {
          const channel = reader.channels[ci]!;
          const entry = group.attrs.channels[row];
          assert.equal(entry.label, channel.label);
          assert.equal(entry.unit, channel.unit);
          assert.equal(group.scale[row], channel.scale);
          assert.equal(group.offset[row], channel.offset);
          const want = expected[ci]!;
          assert.equal(want.length, n);
          for (let t = 0; t < n; t++) {
            const d = group.digital[row * n + t]!;
            if (d !== want[t]) assert.fail(`${channel.label}[${t}]: digital ${d} != ${want[t]}`);
            const p = physical(d, group.scale[row]!, group.offset[row]!);
            if (!Object.is(p, physical(want[t]!, channel.scale, channel.offset))) assert.fail(`${channel.label}[${t}]: physical differs`);
          }
          checked++;
        });
        if (n > 512) {
          // The first view level is the min/max over each 4 samples of level 0.
          const view = await readView(dir, g.name, 1);
          const cols = view.shape[2]!;
          assert.equal(cols, Math.ceil(n / 4));
          for (let row = 0; row < indices.length; row++) {
            const want = expected[indices[row]!]!;
            for (const col of [0, cols - 1]) {
              const slice = want.slice(col * 4, col * 4 + 4);
              assert.equal(view.data[row * cols + col], Math.min(...slice));
              assert.equal(view.data[indices.length * cols + row * cols + col], Math.max(...slice));
            }
          }
        }
      }
      assert.equal(checked, reader.channels.length);
      const events = await readEvents(dir);
      const annotations = [...reader.annotations()].sort((a, b) => a.onset - b.onset);
      assert.equal(events.attrs.n_events, annotations.length);
      assert.deepEqual(events.onset, annotations.map((a) => a.onset));
      assert.deepEqual(events.code.map((c) => events.attrs.label_map[String(c)]), annotations.map((a) => a.description));
    });
  }
});

describe('store round trip across read batches', () => {
  // The fixtures fit in one 4 MiB read batch; these files take three (42, 42 and 16 records), so chunks,
  // view columns and the reader's reused block arrays all cross batch boundaries.
  for (const bdf of [false, true]) {
    it(`reads back a ${bdf ? 'BDF' : 'EDF'} of three read batches exactly with zarrita`, async () => {
      const nCh = 8;
      const rate = 4096;
      const records = 100;
      const n = rate * records;
      const range = bdf ? 1 << 23 : 1 << 15;
      const value = (c: number, t: number) => (((t * 2654435761 + c * 40503) >>> 7) % (2 * range)) - range;
      const signals = Array.from({ length: nCh }, (_, c) => ({
        label: `C${c}`,
        samplesPerRecord: rate,
        digitalMin: -range,
        digitalMax: range - 1,
        samples: Int32Array.from({ length: n }, (_, t) => value(c, t)),
      }));
      const path = join(out, `batches.${bdf ? 'bdf' : 'edf'}`);
      await writeFile(path, writeEdf({ bdf, recordDuration: 1, records, signals }));
      const reader = await openRecording(path);
      const dir = join(out, `batches-${bdf ? 'bdf' : 'edf'}.zarr`);
      await writeStore(reader, new FolderSink(dir), { sourcePath: basename(path), files: [] });
      await reader.close();

      const group = await readGroup(dir, `eeg_${rate}hz`);
      assert.deepEqual(group.shape, [nCh, n]);
      for (let c = 0; c < nCh; c++) {
        for (let t = 0; t < n; t++) if (group.digital[c * n + t] !== value(c, t)) assert.fail(`C${c}[${t}]: ${group.digital[c * n + t]} != ${value(c, t)}`);
      }
      const view = await readView(dir, `eeg_${rate}hz`, 1);
      const cols = n / 4;
      for (let c = 0; c < nCh; c++) {
        for (let col = 0; col < cols; col++) {
          const four = [0, 1, 2, 3].map((k) => value(c, col * 4 + k));
          if (view.data[c * cols + col] !== Math.min(...four) || view.data[nCh * cols + c * cols + col] !== Math.max(...four)) assert.fail(`view 1, C${c}, column ${col}`);
        }
      }
    });
  }
});

describe('group names', () => {
  it('writes a fractional rate with p for the point', () => {
    assert.equal(groupName('eeg', 12.8), 'eeg_12p8hz');
    assert.equal(groupName('EMG', 2000), 'emg_2000hz');
    assert.equal(groupName('eeg', 487.5), 'eeg_487p5hz');
  });
});
