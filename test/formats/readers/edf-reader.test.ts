/** EDF/EDF+/BDF/BDF+ reading, checked against header fields and bytes decoded by hand in the test. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EdfReader, MAX_SEGMENTS } from '../../../src/formats/readers/edf-reader.js';
import { isConversionError } from '../../../src/formats/conversion-errors.js';
import { readAll } from '../support/read-all.js';
import { writeEdf } from '../support/edf-writer.js';
import { fixturesDir } from '../support/fixtures.js';

const edf = (name: string) => join(fixturesDir, 'mne-python/edf', name);
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-edf-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

async function open(name: string, bytes: Uint8Array) {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return EdfReader.open(path);
}

describe('EdfReader on the mne fixtures', () => {
  it('reads test.edf as SOURCES.md describes it: 139 signals at 512 Hz, 6 records, EDF+C', async () => {
    const reader = await EdfReader.open(edf('test.edf'));
    assert.equal(reader.format, 'edf+');
    assert.equal(reader.channels.length, 139);
    assert.ok(reader.channels.every((c) => c.rate === 512 && c.nSamples === 6 * 512));
    assert.equal(reader.channels.at(-1)!.label, 'Status');
    assert.equal(reader.channels.at(-1)!.type, 'TRIG');
    assert.equal(reader.startTime, '2014-04-29T22:19:44');
    const data = await readAll(reader);
    // Hand decoding: the header is 256*(140+1) bytes; record 0 starts with signal 1's 512 int16 samples.
    const bytes = await readFile(edf('test.edf'));
    assert.equal(data[0]![0], bytes.readInt16LE(36096));
    assert.equal(data[1]![0], bytes.readInt16LE(36096 + 1024));
    const recordBytes = (bytes.length - 36096) / 6;
    assert.equal(data[0]![512], bytes.readInt16LE(36096 + recordBytes));
    assert.deepEqual(reader.annotations()[0], { onset: 0, duration: 0, description: 'start' });
    await reader.close();
  });

  it('reads test_uneven_samp.edf with two rates (100 Hz, 12.8 Hz) and its units', async () => {
    const reader = await EdfReader.open(edf('test_uneven_samp.edf'));
    assert.equal(reader.format, 'edf');
    assert.deepEqual(reader.channels.map((c) => [c.rate, c.unit, c.nSamples]), [[100, 'V', 11000], [12.8, 'uV', 1408]]);
    assert.equal(reader.startTime, '2000-07-13T12:05:48');
    await reader.close();
  });

  it('decodes test.bdf 24-bit samples to int32 as the bytes say', async () => {
    const reader = await EdfReader.open(edf('test.bdf'));
    assert.equal(reader.format, 'bdf');
    assert.equal(reader.sampleType, 'int32');
    assert.equal(reader.channels.length, 73);
    assert.equal(reader.channels[0]!.rate, 2048);
    const data = await readAll(reader);
    const bytes = await readFile(edf('test.bdf'));
    for (const [ch, t] of [[0, 0], [0, 1], [5, 100], [72, 7]] as const) {
      const at = 18944 + (ch * 2048 + t) * 3;
      let v = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
      if (v & 0x800000) v -= 0x1000000;
      assert.equal(data[ch]![t], v);
    }
    await reader.close();
  });

  it('keeps repeated labels and the -32767..32767 digital range of duplicate_channel_labels.edf', async () => {
    const reader = await EdfReader.open(edf('duplicate_channel_labels.edf'));
    assert.deepEqual(reader.channels.map((c) => c.label), ['EEG F1-Ref', 'EEG F2-Ref', 'EEG F1-Ref']);
    assert.equal(reader.channels[0]!.digitalMin, -32767);
    await reader.close();
  });
});

describe('EdfReader on synthetic files', () => {
  it('reports the gaps of an EDF+D file as segments and reads UTF-8 annotations', async () => {
    const reader = await open('gaps.edf', writeEdf({
      plus: 'D', recordDuration: 1, records: 3, recordStarts: [0, 1, 5],
      signals: [{ label: 'Cz', samplesPerRecord: 4, samples: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] }],
      annotations: ['', '+1.5\x150.25\x14Ünïcödé 漢字\x14\x00', '+5.5\x14late\x14\x00'],
    }));
    const data = await readAll(reader);
    assert.deepEqual(data[0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.deepEqual(reader.segments(), [
      { storedStart: 0, onset: 0, duration: 2 },
      { storedStart: 2, onset: 5, duration: 1 },
    ]);
    assert.deepEqual(reader.annotations(), [
      { onset: 1.5, duration: 0.25, description: 'Ünïcödé 漢字' },
      { onset: 5.5, duration: 0, description: 'late' },
    ]);
    await reader.close();
  });

  it('refuses an EDF+D file of more than 10,000 contiguous stretches (not_continuous), and reads one of 10,000', async () => {
    // One sample a record, each record 1 s after the previous one ended: every record a stretch of its own.
    const gappy = (records: number) =>
      writeEdf({ plus: 'D', recordDuration: 0.5, records, signals: [{ label: 'C3', samplesPerRecord: 1 }], recordStarts: Array.from({ length: records }, (_, r) => r * 1.5), annotationBytes: 14 });
    const most = await open('most-gaps.edf', gappy(MAX_SEGMENTS));
    await readAll(most);
    assert.equal(most.segments().length, MAX_SEGMENTS);
    assert.deepEqual(most.segments().at(-1), { storedStart: (MAX_SEGMENTS - 1) * 0.5, onset: (MAX_SEGMENTS - 1) * 1.5, duration: 0.5 });
    await most.close();
    const more = await open('more-gaps.edf', gappy(MAX_SEGMENTS + 1));
    await assert.rejects(readAll(more), (err: unknown) => {
      assert.ok(isConversionError(err));
      assert.equal(err.code, 'not_continuous');
      assert.equal(err.message, 'more-gaps.edf has more than 10,000 contiguous stretches (records with gaps between them); nds serves EDF+D recordings of up to 10,000.');
      return true;
    });
    await more.close();
  });

  it('applies the sub-second start of record 0 to the start time and the annotations', async () => {
    const reader = await open('subsecond.edf', writeEdf({
      plus: 'C', recordDuration: 0.5, records: 2, recordStarts: [0.25, 0.75],
      signals: [{ label: 'Cz', samplesPerRecord: 50 }],
      annotations: ['+1\x14one\x14\x00'],
    }));
    assert.equal(reader.startTime, '2021-03-02T10:11:12.250000');
    assert.equal(reader.channels[0]!.rate, 100);
    await readAll(reader);
    assert.deepEqual(reader.annotations(), [{ onset: 0.75, duration: 0, description: 'one' }]);
    await reader.close();
  });

  it('keeps an inverted physical range: physical max at digital max', async () => {
    const reader = await open('inverted.edf', writeEdf({
      recordDuration: 1, records: 1,
      signals: [{ label: 'X', samplesPerRecord: 2, physicalMin: 8711, physicalMax: -8711, digitalMin: -32768, digitalMax: 32767, samples: [32767, -32768] }],
    }));
    const c = reader.channels[0]!;
    assert.ok(c.scale < 0);
    assert.equal(32767 * c.scale + c.offset, -8711);
    assert.ok(Math.abs(-32768 * c.scale + c.offset - 8711) < 1e-9);
    await reader.close();
  });

  it('computes the record count from the file size when the header says -1', async () => {
    const reader = await open('minus1.edf', writeEdf({ recordDuration: 1, records: 3, declaredRecords: -1, signals: [{ label: 'A', samplesPerRecord: 10 }] }));
    assert.equal(reader.channels[0]!.nSamples, 30);
    assert.ok(reader.flags.includes('record_count_from_file_size'));
    await reader.close();
  });

  it('drops and flags a truncated last record', async () => {
    const bytes = writeEdf({ recordDuration: 1, records: 3, signals: [{ label: 'A', samplesPerRecord: 10 }] });
    const reader = await open('cut.edf', bytes.subarray(0, bytes.length - 6));
    assert.equal(reader.channels[0]!.nSamples, 20);
    assert.ok(reader.flags.includes('truncated_last_record'));
    assert.equal((await readAll(reader))[0]!.length, 20);
    await reader.close();
  });

  it('reads BDF+ extremes of the 24-bit range and its annotations', async () => {
    const samples = [-8388608, -1, 0, 8388607, 12345, -12345];
    const reader = await open('extremes.bdf', writeEdf({
      bdf: true, plus: 'C', recordDuration: 1, records: 1, annotationBytes: 60,
      signals: [{ label: 'A', samplesPerRecord: 6, samples }],
      annotations: ['+0.5\x14trigger\x14\x00'],
    }));
    assert.equal(reader.format, 'bdf+');
    assert.deepEqual((await readAll(reader))[0], samples);
    assert.deepEqual(reader.annotations(), [{ onset: 0.5, duration: 0, description: 'trigger' }]);
    await reader.close();
  });

  it('fails a file that lost whole records with corrupt_or_truncated', async () => {
    const bytes = writeEdf({ recordDuration: 1, records: 5, signals: [{ label: 'A', samplesPerRecord: 10 }] });
    await assert.rejects(open('short.edf', bytes.subarray(0, bytes.length - 50)), (err) => isConversionError(err, 'corrupt_or_truncated') && /announces 5 data records/.test(err.message));
  });

  it('reads records larger than 16 MiB in slices with the same samples', async () => {
    const nr = 4_300_000;
    const samples = Int16Array.from({ length: nr * 2 }, (_, i) => (i * 7) % 30000);
    // Records of 10 s: 430 kHz, within the 1 MHz a recording may have.
    const reader = await open('huge-record.edf', writeEdf({ recordDuration: 10, records: 1, signals: [{ label: 'A', samplesPerRecord: nr, samples }, { label: 'B', samplesPerRecord: nr, samples: samples.subarray(nr) }] }));
    let count = 0;
    let ok = true;
    for await (const block of reader.blocks()) {
      for (let i = 0; i < block[0]!.length; i++) if (block[0]![i] !== samples[count + i] || block[1]![i] !== samples[nr + count + i]) ok = false;
      count += block[0]!.length;
    }
    assert.ok(ok);
    assert.equal(count, nr);
    await reader.close();
  });
});
