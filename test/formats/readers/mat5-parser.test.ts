/**
 * MAT v5 `.set` files are read in bounded memory: only the `EEG` variable (or, without one, the fields of EEG
 * saved as variables) is inflated, the compressed variables of a file inflate to at most 512 MiB together, and
 * a double array that MATLAB stored as bytes stays bytes (8 bytes a stored byte, widened).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';
import { parseMat5 } from '../../../src/formats/readers/mat5-parser.js';
import { EeglabReader } from '../../../src/formats/readers/eeglab-reader.js';
import { isConversionError } from '../../../src/formats/conversion-errors.js';
import { writeMat5, type MatIn } from '../support/mat5-writer.js';
import { convertInChild, finished } from '../support/convert-in-child.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-mat5-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** Bytes that do not compress (so a compressed variable is longer than the part inflated to learn its name). */
function noise(n: number): Uint8Array {
  let x = 12345;
  return Uint8Array.from({ length: n }, () => (x = (x * 1103515245 + 12345) >>> 0) >>> 24);
}

/** An EEGLAB EEG struct of one channel whose samples are `data`. */
function eeg(pnts: number, data: MatIn): MatIn {
  return { struct: [{ nbchan: { double: [1] }, pnts: { double: [pnts] }, trials: { double: [1] }, srate: { double: [250] }, data }] };
}

/**
 * miCOMPRESSED(miMATRIX double [n x 1] whose data are n miUINT8 zeros), deflated as a stream so that the test
 * never holds the n bytes.
 */
async function compressedZeros(name: string, n: number): Promise<Buffer> {
  const element = (type: number, size: number, data = Buffer.alloc(0)) => {
    const tag = Buffer.alloc(8);
    tag.writeUInt32LE(type, 0);
    tag.writeUInt32LE(size, 4);
    return Buffer.concat([tag, data, Buffer.alloc((8 - (data.length % 8)) % 8)]);
  };
  const flags = element(6, 8, Buffer.from([6, 0, 0, 0, 0, 0, 0, 0])); // mxDOUBLE_CLASS
  const dims = element(5, 8, Buffer.from(new Int32Array([n, 1]).buffer));
  const nameElement = element(1, name.length, Buffer.from(name));
  const head = Buffer.concat([flags, dims, nameElement, element(2, n)]);
  const deflate = createDeflate();
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  deflate.write(element(14, head.length + n, head));
  const zeros = Buffer.alloc(1 << 20);
  for (let left = n; left > 0; left -= zeros.length) deflate.write(zeros.subarray(0, Math.min(left, zeros.length)));
  deflate.end();
  await once(deflate, 'end');
  const z = Buffer.concat(chunks);
  return Buffer.concat([element(15, z.length), z]);
}

/** A MAT file's variables after its 128-byte header, to append to another file. */
const variablesOf = (file: Uint8Array) => file.subarray(128);

describe('MAT v5 .set files', () => {
  it('refuses a .set of two 128 MiB compressed zero arrays and no EEG (261 KB) without inflating them', async () => {
    // Every variable was inflated and widened to float64: the process grew by 2.2 GB.
    const root = join(dir, 'bids');
    await mkdir(join(root, 'sub-01', 'eeg'), { recursive: true });
    await writeFile(join(root, 'dataset_description.json'), '{"Name": "t", "BIDSVersion": "1.9.0"}');
    const file = Buffer.concat([writeMat5({}), await compressedZeros('junk0', 128 << 20), await compressedZeros('junk1', 128 << 20)]);
    await writeFile(join(root, 'sub-01', 'eeg', 'sub-01_task-x_eeg.set'), file);
    const result = finished(await convertInChild(root, join(dir, 'out'), { heapMb: 512, timeoutMs: 20_000 }));
    assert.deepEqual(result.failures.map((f) => f.code), ['corrupt_or_truncated']);
    assert.match(result.failures[0]!.reason, /is not an EEGLAB dataset: it lacks nbchan, pnts or srate/);
    assert.ok(result.maxRssMb < 512, `the converter's peak RSS was ${result.maxRssMb} MB`);
  });

  it('reads only the EEG variable when there is one: another is not inflated', async () => {
    // A damaged variable beside EEG: its stream's checksum is wrong, which only inflating it whole finds out.
    const junk = writeMat5({ junk: { doubleAsBytes: noise(4096), dims: [4096, 1] } });
    junk[junk.length - 1] ^= 0xff;
    const path = join(dir, 'beside.set');
    await writeFile(path, Buffer.concat([writeMat5({ EEG: eeg(3, { double: [1, 2, 3], dims: [1, 3] }) }), variablesOf(junk)]));
    const reader = await EeglabReader.open(path);
    assert.equal(reader.nSamples, 3);
    await reader.close();
    assert.throws(() => parseMat5(junk, 'junk.set'), (err) => isConversionError(err, 'corrupt_or_truncated') && /does not decompress/.test(err.message));
  });

  it('reads the fields of EEG saved as variables of their own, and only those', async () => {
    const junk = writeMat5({ junk: { doubleAsBytes: noise(4096), dims: [4096, 1] } });
    junk[junk.length - 1] ^= 0xff;
    const fields = writeMat5({ nbchan: { double: [1] }, pnts: { double: [2] }, trials: { double: [1] }, srate: { double: [100] }, data: { single: new Float32Array([5, 6]), dims: [1, 2] } });
    const path = join(dir, 'fields.set');
    await writeFile(path, Buffer.concat([fields, variablesOf(junk)]));
    const reader = await EeglabReader.open(path);
    assert.deepEqual([reader.nSamples, reader.rate, reader.sampleType], [2, 100, 'float32']);
    await reader.close();
  });

  it('caps the bytes the compressed variables of a file inflate to together, not each', () => {
    const file = writeMat5({ a: { doubleAsBytes: new Uint8Array(600 << 10), dims: [600 << 10, 1] }, b: { doubleAsBytes: new Uint8Array(600 << 10), dims: [600 << 10, 1] } });
    assert.equal(parseMat5(file, 'x.set', { maxInflatedBytes: 1 << 20, only: new Set(['a']) }).size, 1);
    assert.throws(
      () => parseMat5(file, 'x.set', { maxInflatedBytes: 1 << 20 }),
      (err) => isConversionError(err, 'corrupt_or_truncated') && err.message === 'x.set holds more than 1 MiB of compressed variables once inflated; save the data in a separate .fdt file.',
    );
  });

  it('keeps a double array stored as bytes as bytes, and reads its samples as float64', async () => {
    const stored = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) % 256);
    const file = writeMat5({ EEG: eeg(1000, { doubleAsBytes: stored, dims: [1, 1000] }) });
    const value = parseMat5(file, 'x.set').get('EEG');
    const data = value?.kind === 'struct' ? value.items[0]!.get('data') : undefined;
    assert.ok(data?.kind === 'numeric' && data.className === 'double' && data.data instanceof Uint8Array && data.data.length === 1000);
    const path = join(dir, 'bytes.set');
    await writeFile(path, file);
    const reader = await EeglabReader.open(path);
    assert.equal(reader.sampleType, 'float64');
    const samples: number[] = [];
    for await (const block of reader.blocks()) {
      assert.ok(block[0] instanceof Float64Array);
      samples.push(...block[0]);
    }
    assert.deepEqual(samples, Array.from(stored));
    await reader.close();
  });

  it('refuses a file of more than 10,000 variables', () => {
    const many = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`v${i}`, { double: [i] } as MatIn]));
    assert.throws(() => parseMat5(writeMat5(many, false), 'many.set'), (err) => isConversionError(err, 'corrupt_or_truncated') && err.message === 'many.set is corrupt or truncated: it holds more than 10,000 variables.');
  });
});
