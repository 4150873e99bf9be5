/**
 * EDF+ annotation signals are scanned in bounded memory and time: nothing is allocated for a separator or an
 * empty annotation, no more annotations are kept than asked for, and no more than 16 MiB of a record's
 * annotation signal is read, at open as in the records (a file is converted inside `nds serve`).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRecordTals } from '../../../src/formats/readers/edf-tal.js';
import { writeEdf } from '../support/edf-writer.js';
import { convertInChild, finished } from '../support/convert-in-child.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-edf-tal-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

const bytes = (text: string) => new TextEncoder().encode(text);

describe('parseRecordTals', () => {
  it('reads the timekeeping TAL and annotations with durations, as before', () => {
    const tals = parseRecordTals(bytes('+12.5\x14\x14\x00+13\x152.5\x14go\x14stop\x14\x00-1\x14x\x00+2\x15\x14y\x00junk\x14z\x00\x00\x00'));
    assert.equal(tals.recordStart, 12.5);
    assert.deepEqual(tals.annotations, [
      { onset: 13, duration: 2.5, description: 'go' },
      { onset: 13, duration: 2.5, description: 'stop' },
      { onset: -1, duration: 0, description: 'x' },
      { onset: 2, duration: 0, description: 'y' },
    ]);
  });

  it('scans 16 MiB of 0x14 separators in well under a second', () => {
    // One array view per separator took about 2 GB and 6 s here.
    const signal = new Uint8Array(16 << 20).fill(0x14);
    signal.set(bytes('+0'));
    const started = performance.now();
    const tals = parseRecordTals(signal);
    const ms = performance.now() - started;
    assert.deepEqual(tals, { recordStart: 0, annotations: [], capped: false });
    assert.ok(ms < 1000, `the scan took ${Math.round(ms)} ms`);
  });

  it('takes no more annotations than asked for, and says some were left', () => {
    const tals = parseRecordTals(bytes(`+0\x14\x14\x00+1\x14${'a\x14'.repeat(1000)}\x00`), 2);
    assert.equal(tals.recordStart, 0);
    assert.deepEqual(tals.annotations, [{ onset: 1, duration: 0, description: 'a' }, { onset: 1, duration: 0, description: 'a' }]);
    assert.equal(tals.capped, true);
    assert.deepEqual(parseRecordTals(bytes('+7\x14\x14\x00+1\x14a\x14\x00'), 0), { recordStart: 7, annotations: [], capped: true });
  });
});

describe('an EDF+ file with a 48 MiB annotation signal of separators', () => {
  it('converts within 256 MiB of heap and 20 s', async () => {
    // Read whole at open and split into one view per 0x14, it made the converter die of a 4 GiB heap.
    const edf = writeEdf({ plus: 'C', recordDuration: 1, records: 1, annotationBytes: 48 << 20, signals: [{ label: 'Fz', samplesPerRecord: 1, samples: [7] }] });
    // Record layout: Fz (2 bytes), then the annotation signal: its timekeeping TAL's '+0', then 0x14 to the end.
    edf.fill(0x14, 256 * 3 + 2 + 2);
    const root = join(dir, 'bids');
    const eeg = join(root, 'sub-01', 'eeg');
    await mkdir(eeg, { recursive: true });
    await writeFile(join(root, 'dataset_description.json'), '{"Name": "t", "BIDSVersion": "1.9.0"}');
    await writeFile(join(eeg, 'sub-01_task-x_eeg.edf'), edf);
    const result = finished(await convertInChild(root, join(dir, 'out'), { heapMb: 256, timeoutMs: 20_000 }));
    assert.deepEqual(result.failures, []);
    assert.equal(result.stores, 1);
  });
});
