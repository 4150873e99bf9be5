/**
 * The demo's synthetic BIDS dataset: a tree the upload check accepts, EDF files the reader's header check
 * accepts, and signals with what the README promises (alpha at the back with the eyes closed, blinks at
 * the front with them open, events in _events.tsv).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkBidsFolder } from '../../../src/formats/bids/check-bids-folder.js';
import { parseEdfHeader } from '../../../src/formats/readers/edf-header.js';
import { EEG_64, syntheticBidsDataset } from '../../../src/formats/synthetic/synthetic-bids.js';

const files = syntheticBidsDataset({ eegSeconds: 60, emgSeconds: 16 });
const byPath = new Map(files.map((f) => [f.path, f.bytes]));

/** Physical samples of one channel between two times, from the EDF bytes (1-s records). */
function channel(bytes: Uint8Array, index: number, from: number, to: number): Float64Array {
  const header = parseEdfHeader(bytes, bytes.length, 'x.edf');
  const s = header.signals[index]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array((to - from) * s.samplesPerRecord);
  const gain = (s.physicalMax - s.physicalMin) / (s.digitalMax - s.digitalMin);
  for (let r = from; r < to; r++) {
    for (let i = 0; i < s.samplesPerRecord; i++) {
      const d = view.getInt16(header.headerBytes + r * header.recordBytes + s.recordOffset + i * 2, true);
      out[(r - from) * s.samplesPerRecord + i] = s.physicalMin + (d - s.digitalMin) * gain;
    }
  }
  return out;
}

/** Mean power in a band, by direct DFT at 0.5 Hz steps. */
function bandPower(x: Float64Array, rate: number, lo: number, hi: number): number {
  let total = 0;
  let n = 0;
  for (let f = lo; f <= hi; f += 0.5) {
    let re = 0;
    let im = 0;
    for (let i = 0; i < x.length; i++) {
      re += x[i]! * Math.cos((2 * Math.PI * f * i) / rate);
      im -= x[i]! * Math.sin((2 * Math.PI * f * i) / rate);
    }
    total += (re * re + im * im) / x.length;
    n++;
  }
  return total / n;
}

describe('the synthetic demo dataset', () => {
  it('is a BIDS tree the upload check accepts, with two recordings', async () => {
    const check = await checkBidsFolder({ files: files.map((f) => ({ path: f.path, size: f.bytes.length })), read: async (p, n) => byPath.get(p)!.subarray(0, n) });
    assert.deepEqual(check.errors, []);
    assert.deepEqual(check.recordings, ['sub-01/eeg/sub-01_task-rest_eeg.edf', 'sub-01/emg/sub-01_task-grip_emg.edf']);
  });

  it('has 64 EEG channels at 256 Hz and 4 EMG channels at 2000 Hz', () => {
    const eeg = parseEdfHeader(byPath.get('sub-01/eeg/sub-01_task-rest_eeg.edf')!, byPath.get('sub-01/eeg/sub-01_task-rest_eeg.edf')!.length, 'eeg.edf');
    assert.deepEqual(eeg.signals.map((s) => s.label), [...EEG_64]);
    assert.equal(eeg.recordCount, 60);
    assert.equal(eeg.signals[0]!.samplesPerRecord, 256);
    const emg = parseEdfHeader(byPath.get('sub-01/emg/sub-01_task-grip_emg.edf')!, byPath.get('sub-01/emg/sub-01_task-grip_emg.edf')!.length, 'emg.edf');
    assert.deepEqual([emg.signals.length, emg.signals[0]!.samplesPerRecord, emg.recordCount], [4, 2000, 16]);
  });

  it('has posterior alpha with the eyes closed, frontal blinks with them open, and both in the events', () => {
    const eeg = byPath.get('sub-01/eeg/sub-01_task-rest_eeg.edf')!;
    const o1 = EEG_64.indexOf('O1');
    const fp1 = EEG_64.indexOf('Fp1');
    const closedO1 = channel(eeg, o1, 34, 42);
    const openO1 = channel(eeg, o1, 4, 12);
    assert.ok(bandPower(closedO1, 256, 8, 12) > 4 * bandPower(closedO1, 256, 4, 7), 'alpha over theta at O1, eyes closed');
    assert.ok(bandPower(closedO1, 256, 8, 12) > 3 * bandPower(openO1, 256, 8, 12), 'alpha grows with the eyes closed');
    const peak = (x: Float64Array) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    assert.ok(peak(channel(eeg, fp1, 0, 30)) > 3 * peak(channel(eeg, o1, 0, 30)), 'blinks are large at Fp1 and small at O1');
    const events = new TextDecoder().decode(byPath.get('sub-01/eeg/sub-01_task-rest_events.tsv')!).trim().split('\n');
    assert.equal(events[0], 'onset\tduration\ttrial_type');
    const types = new Set(events.slice(1).map((l) => l.split('\t')[2]));
    assert.deepEqual([...types].sort(), ['blink', 'eyes_closed', 'eyes_open']);
  });

  it('is the same bytes for the same seed', () => {
    const again = syntheticBidsDataset({ eegSeconds: 60, emgSeconds: 16 });
    assert.deepEqual(again.map((f) => f.bytes), files.map((f) => f.bytes));
  });
});
