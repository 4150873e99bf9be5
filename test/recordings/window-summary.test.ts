import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarizeChannel } from '../../src/recordings/window-summary.js';

const rate = 500;
const channel = { label: 'Cz', type: 'EEG', unit: 'uV', status: 'good' };
const signal = (seconds: number, f: (t: number) => number) => Float64Array.from({ length: seconds * rate }, (_, i) => f(i / rate));

describe('summarizeChannel', () => {
  it('finds the frequency of a sine, its power A²/2 in its band, and line noise where it is', () => {
    const s = summarizeChannel(signal(8, (t) => 20 * Math.sin(2 * Math.PI * 6 * t) + 2 * Math.sin(2 * Math.PI * 50 * t)), rate, channel);
    // Within half a bin: 8 s at 500 Hz gives segments of 1024 samples, bins 0.49 Hz apart.
    assert.ok(Math.abs(s.dominant_hz! - 6) <= 500 / 1024 / 2, String(s.dominant_hz));
    assert.ok(Math.abs(s.band_power.theta! - 200) < 10, String(s.band_power.theta));
    assert.ok(Math.abs(s.line_noise.hz50! - 2) < 0.2, String(s.line_noise.hz50));
    assert.ok(s.line_noise.hz60! < 0.01, String(s.line_noise.hz60));
    assert.deepEqual(s.flags, { flat: false, clipped: false, bad: false });
  });

  it('calls a channel clipped at its physical limits, or in runs at its extremes when the limits are unknown', () => {
    const clipped = signal(4, (t) => Math.max(-100, Math.min(100, 300 * Math.sin(2 * Math.PI * 2 * t))));
    assert.equal(summarizeChannel(clipped, rate, { ...channel, range: [-100, 100] }).flags.clipped, true);
    assert.equal(summarizeChannel(clipped, rate, channel).flags.clipped, true);
    // A sine that only touches its own extremes now and then is not clipped.
    const smooth = signal(4, (t) => Math.round(80 * Math.sin(2 * Math.PI * 7 * t)));
    assert.equal(summarizeChannel(smooth, rate, { ...channel, range: [-100, 100] }).flags.clipped, false);
  });

  it('calls a constant or sub-0.1 µV channel flat and gives it no spectrum; reads bad from the status', () => {
    const flat = summarizeChannel(signal(2, () => 3), rate, { ...channel, status: 'bad' });
    assert.deepEqual(flat.flags, { flat: true, clipped: false, bad: true });
    assert.equal(flat.dominant_hz, null);
    assert.equal(flat.band_power.alpha, null);
    assert.equal(summarizeChannel(signal(2, (t) => 0.01 * Math.sin(2 * Math.PI * 10 * t)), rate, { ...channel, unit: 'uV' }).flags.flat, true);
    assert.equal(summarizeChannel(signal(2, (t) => 0.01 * Math.sin(2 * Math.PI * 10 * t)), rate, { ...channel, unit: 'mV' }).flags.flat, false);
  });
});
