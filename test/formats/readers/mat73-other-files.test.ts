/**
 * A MAT v7.3 `.set` is HDF5, and HDF5 reads other files by name when a file asks: external storage, virtual
 * datasets, external links. An uploaded `.set` naming a server file must not have that file's bytes converted
 * into its recording: the read is refused as a file that keeps data elsewhere, and the other file is never
 * opened.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EeglabReader } from '../../../src/formats/readers/eeglab-reader.js';
import { isConversionError } from '../../../src/formats/conversion-errors.js';
import { readAll } from '../support/read-all.js';
import { writeMat73 } from '../support/mat73-writer.js';

const FIXTURE = new URL('../../fixtures/hostile/mat73-external-storage.set', import.meta.url);
/** The fixture's external file name: a placeholder of 200 bytes, replaced by a path of the test's own. */
const PLACEHOLDER = Buffer.from('/' + 'P'.repeat(199));

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-mat73-other-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** The fixture, its external storage naming `target`. */
async function setNaming(target: string): Promise<Buffer> {
  const bytes = await readFile(FIXTURE);
  const at = bytes.indexOf(PLACEHOLDER);
  assert.ok(at > 0, 'the fixture holds the placeholder');
  const name = Buffer.alloc(PLACEHOLDER.length);
  name.write(target);
  name.copy(bytes, at);
  return bytes;
}

describe('MAT v7.3 files that name other files', () => {
  it('refuses a dataset kept in external storage, without reading the file it names', async () => {
    const secret = join(dir, 'server-secret.txt');
    await writeFile(secret, 'DATABASE_URL=postgres://nds:hunter2@db/nds'.padEnd(256, '#'));
    const path = join(dir, 'sub-01_task-x_eeg.set');
    await writeFile(path, await setNaming(secret));

    const reader = await EeglabReader.open(path);
    try {
      await assert.rejects(readAll(reader), (err: Error) => {
        assert.ok(isConversionError(err, 'unsupported_format'), `${err.name}: ${err.message}`);
        assert.match(err.message, /sub-01_task-x_eeg\.set keeps data in other files/);
        return true;
      });
    } finally {
      await reader.close();
    }
  });

  it('still reads MAT v7.3 files whose data is inside them, before and after such a refusal', async () => {
    const path = join(dir, 'plain.set');
    // Sample-major: channel 0 holds 0, 2, 4, 6, 8 and channel 1 holds 1, 3, 5, 7, 9.
    await writeMat73(path, { nbchan: 2, pnts: 5, srate: 100, data: Float32Array.from({ length: 10 }, (_, i) => i), labels: ['A', 'B'] });
    const reader = await EeglabReader.open(path);
    try {
      const channels = await readAll(reader);
      assert.deepEqual(channels[1], [1, 3, 5, 7, 9]);
    } finally {
      await reader.close();
    }
  });
});

describe('MAT v7.3 reads that HDF5 fails', () => {
  it('refuses a data matrix whose compressed chunk is damaged, instead of answering uninitialized memory', async () => {
    const h5wasm = (await import('h5wasm/node')).default;
    await h5wasm.ready;
    const path = join(dir, 'damaged.h5');
    const rows = 4096;
    const file = new h5wasm.File(path, 'w');
    const eeg = file.create_group('EEG');
    eeg.create_attribute('MATLAB_class', 'struct');
    const data = eeg.create_dataset({ name: 'data', data: Float32Array.from({ length: rows * 2 }, (_, i) => i % 7), shape: [rows, 2], chunks: [rows, 2], compression: 'gzip', compression_opts: 6 });
    data.create_attribute('MATLAB_class', 'single');
    file.close();
    // The chunk is the only zlib stream in the file (78 9c: deflate, default window): damage its body.
    const bytes = await readFile(path);
    const at = bytes.indexOf(Buffer.from([0x78, 0x9c]));
    assert.ok(at > 0, 'the compressed chunk is in the file');
    for (let i = at + 2; i < at + 40; i++) bytes[i] = 0xff;
    await writeFile(path, bytes);

    const { Mat73File } = await import('../../../src/formats/readers/mat73-file.js');
    const mat = await Mat73File.open(path, 'damaged.set');
    try {
      const matrix = mat.fields('EEG', new Set(['data'])).get('data');
      assert.ok(mat.isDataset(matrix));
      assert.throws(() => mat.slice(matrix, 0, rows), (err: Error) => isConversionError(err, 'corrupt_or_truncated'));
    } finally {
      mat.close();
    }
  });
});
