/** `nds convert` on the fixture BIDS trees: stores, sidecars applied, index.json, and the failure of the 0-byte file. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertBidsTreeToFolder, convertFileToFolder } from '../../src/formats/convert-to-folder.js';
import { convertRecording } from '../../src/formats/convert-recording.js';
import { FolderSink } from '../../src/formats/zarr/folder-sink.js';
import { syntheticBidsDataset } from '../../src/formats/synthetic/synthetic-bids.js';
import { DIRECT_OBJECT_MIN, DirectObjectWriter } from '../../src/objects/direct-object-writer.js';
import { openStore, readEvents, readGroup } from './support/read-store.js';
import { fixturesDir } from './support/fixtures.js';

let out: string;
before(async () => {
  out = await mkdtemp(join(tmpdir(), 'nds-convert-'));
});
after(async () => rm(out, { recursive: true, force: true }));

describe('convertBidsTreeToFolder', () => {
  it('reports the 0-byte .eeg of eeg_matchingpennies as a failure, not a crash', async () => {
    const dest = join(out, 'mp');
    const result = await convertBidsTreeToFolder(join(fixturesDir, 'bids/eeg_matchingpennies'), dest);
    assert.equal(result.stores.length, 0);
    assert.deepEqual(result.failures.map((f) => [f.path, f.zarr, f.code]), [
      ['sub-05/eeg/sub-05_task-matchingpennies_eeg.vhdr', 'sub-05/eeg/sub-05_task-matchingpennies_eeg.zarr', 'empty_recording'],
    ]);
    const index = JSON.parse(await readFile(join(dest, 'index.json'), 'utf8'));
    assert.equal(index.format, 'nds-zarr-index');
    assert.equal(index.discovered_count, index.store_count + index.failure_count);
    assert.equal(index.failure_count, 1);
    await assert.rejects(stat(join(dest, 'sub-05/eeg/sub-05_task-matchingpennies_eeg.zarr')));
  });

  it('converts both devices of emg_ConcurrentIndependentUnits with their own channels.tsv and the shared events.tsv', async () => {
    const dest = join(out, 'ciu');
    const result = await convertBidsTreeToFolder(join(fixturesDir, 'bids/emg_ConcurrentIndependentUnits'), dest);
    assert.equal(result.failures.length, 0);
    assert.deepEqual(result.stores.map((s) => s.zarr), [
      'sub-01/emg/sub-01_task-jumping_recording-bipolar_emg.zarr',
      'sub-01/emg/sub-01_task-jumping_recording-highDensity_emg.zarr',
    ]);
    const store = join(dest, 'sub-01/emg/sub-01_task-jumping_recording-highDensity_emg.zarr');
    const { attrs } = await openStore(store);
    assert.equal(attrs.recording.start_time, '2025-09-29T21:28:13');
    assert.equal(attrs.recording.power_line_frequency, attrs.sidecar.PowerLineFrequency);
    assert.ok(attrs.source.files.some((f: { path: string }) => f.path.endsWith('_recording-highDensity_channels.tsv')));
    const group = await readGroup(store, 'emg_2000hz');
    assert.equal(group.shape[0], 128);
    const first = group.attrs.channels[0];
    // channels.tsv says V where the EDF header says uV: the samples keep the header's unit, the TSV's is recorded.
    assert.deepEqual([first.label, first.type, first.unit, first.bids_unit, first.reference, first.target_muscle], ['EMG1', 'EMG', 'uV', 'V', 'R1', 'vastus medialis']);
    const tsv = (await readFile(join(fixturesDir, 'bids/emg_ConcurrentIndependentUnits/sub-01/emg/sub-01_task-jumping_events.tsv'), 'utf8')).trim().split('\n').slice(1).map((l) => l.split('\t'));
    const events = await readEvents(store);
    assert.deepEqual(events.onset, tsv.map((r) => Number(r[0])));
    assert.deepEqual(events.duration, tsv.map((r) => Number(r[1])));
    assert.deepEqual(events.code.map((c) => events.attrs.label_map[String(c)]), tsv.map((r) => r[2]));
    assert.ok(Array.isArray(attrs.electrodes) && attrs.electrodes.length > 0);
  });

  it('takes status from channels.tsv and PowerLineFrequency from the inherited JSON (emg_CustomBipolar)', async () => {
    const dest = join(out, 'cb');
    const result = await convertBidsTreeToFolder(join(fixturesDir, 'bids/emg_CustomBipolar'), dest);
    assert.equal(result.stores.length, 1);
    const { attrs } = await openStore(join(dest, 'sub-01/emg/sub-01_task-holdWeight_emg.zarr'));
    assert.equal(attrs.recording.power_line_frequency, 60);
    assert.equal(attrs.recording.duration_s, 1);
    assert.equal(attrs.sidecar.TaskName, 'holdWeight');
  });
});

describe('convertFileToFolder', () => {
  it('writes <out>/<stem>.zarr for one data file', async () => {
    const result = await convertFileToFolder(join(fixturesDir, 'mne-python/edf/test_uneven_samp.edf'), join(out, 'one'));
    assert.deepEqual(result.stores.map((s) => s.summary.groups.map((g) => g.name)), [['eeg_100hz', 'eeg_12p8hz']]);
    assert.ok((await stat(join(out, 'one/test_uneven_samp.zarr/zarr.json'))).isFile());
  });
});

/** Every file under `root`, by relative path, with its bytes. */
async function filesUnder(root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    files.set(file.slice(root.length + 1), await readFile(file));
  }
  return files;
}

describe('chunks written past the page cache', () => {
  it('writes the same store, file for file, as the ordinary writes, and leaves no temporary file', async () => {
    const edf = syntheticBidsDataset({ eegSeconds: 120, emgSeconds: 1 }).find((f) => f.path.endsWith('_eeg.edf'))!;
    const source = join(out, 'direct-source.edf');
    await writeFile(source, edf.bytes);
    await convertFileToFolder(source, join(out, 'direct'));
    const plain = join(out, 'plain.zarr');
    await convertRecording({ dataPath: source, sink: new FolderSink(plain) });
    const direct = await filesUnder(join(out, 'direct/direct-source.zarr'));
    const ordinary = await filesUnder(plain);
    assert.deepEqual([...direct.keys()].sort(), [...ordinary.keys()].sort());
    // The root's attributes name the time of each conversion; everything else is the same bytes.
    const withoutTime = (bytes: Buffer) => {
      const root = JSON.parse(bytes.toString('utf8'));
      delete root.attributes.created_utc;
      return root;
    };
    assert.deepEqual(withoutTime(direct.get('zarr.json')!), withoutTime(ordinary.get('zarr.json')!));
    for (const [key, bytes] of ordinary) if (key !== 'zarr.json') assert.ok(direct.get(key)!.equals(bytes), `${key} differs`);
    // Chunks large enough for the writer's threads are there, or this test would prove nothing.
    assert.ok([...direct.values()].filter((b) => b.length >= DIRECT_OBJECT_MIN).length >= 4);
  });

  it('gives the writer the chunks it takes and writes the rest itself, making folders as needed', async () => {
    const root = join(out, 'sink');
    const writer = new DirectObjectWriter();
    const taken: string[] = [];
    const write = writer.write.bind(writer);
    writer.write = async (bytes, tmp, file) => {
      taken.push(file.slice(root.length + 1));
      return write(bytes, tmp, file);
    };
    try {
      const sink = new FolderSink(root, writer);
      const objects = new Map<string, Uint8Array>([
        ['zarr.json', new TextEncoder().encode('{}')],
        ['g/c/0/0', new Uint8Array(DIRECT_OBJECT_MIN).fill(7)],
        ['g/c/0/1', new Uint8Array(DIRECT_OBJECT_MIN + 4097).fill(9)],
        ['h/c/1/0', new Uint8Array(DIRECT_OBJECT_MIN - 1).fill(3)],
      ]);
      await Promise.all([...objects].map(([key, bytes]) => sink.put(key, bytes)));
      const files = await filesUnder(root);
      assert.deepEqual([...files.keys()].sort(), [...objects.keys()].sort());
      for (const [key, bytes] of objects) assert.ok(files.get(key)!.equals(bytes), `${key} differs`);
      assert.deepEqual(taken.sort(), ['g/c/0/0', 'g/c/0/1']);
      await assert.rejects(sink.put('g/../x', new Uint8Array(1)), /invalid store key/);
    } finally {
      await writer.close();
    }
  });
});
