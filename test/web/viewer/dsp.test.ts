/** The viewer's display filters and spectra against computed references. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { filterMarginSamples, filterSections, filterWork, filtfilt, filtfiltInPlace, filtfiltSteps, highPass, lowPass, magnitude, notch, NOTCH_TOP_HZ } from '../../../src/signals/iir-filter.js';
import { peakFrequency, segmentLength, spectrogram, welch } from '../../../src/signals/welch-psd.js';

const rate = 256;
const seconds = 20;
const n = rate * seconds;
const sine = (hz: number, amplitude: number, phase = 0) => Float64Array.from({ length: n }, (_, i) => amplitude * Math.sin(2 * Math.PI * hz * (i / rate) + phase));
const add = (...xs: Float64Array[]) => Float64Array.from({ length: n }, (_, i) => xs.reduce((s, x) => s + x[i]!, 0));
/** Root mean square of x[from, to). */
const rms = (x: ArrayLike<number>, from = 0, to = x.length) => {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i]! ** 2;
  return Math.sqrt(s / (to - from));
};
const maxError = (a: ArrayLike<number>, b: ArrayLike<number>, from: number, to: number) => {
  let e = 0;
  for (let i = from; i < to; i++) e = Math.max(e, Math.abs(a[i]! - b[i]!));
  return e;
};

describe('RBJ biquads', () => {
  it('have the gains their design promises', () => {
    const hp = highPass(1, rate);
    assert.ok(Math.abs(magnitude([hp], 1, rate) - Math.SQRT1_2) < 1e-9, 'Butterworth: −3 dB at the corner');
    assert.ok(magnitude([hp], 0.01, rate) < 1e-3);
    assert.ok(Math.abs(magnitude([hp], 40, rate) - 1) < 1e-3);
    const lp = lowPass(30, rate);
    assert.ok(Math.abs(magnitude([lp], 30, rate) - Math.SQRT1_2) < 1e-9);
    assert.ok(Math.abs(magnitude([lp], 1, rate) - 1) < 1e-3);
    const n50 = notch(50, rate);
    assert.ok(magnitude([n50], 50, rate) < 1e-9, 'a notch is a zero at its centre');
    assert.ok(Math.abs(magnitude([n50], 40, rate) - 1) < 0.01, '10 Hz away passes');
  });

  it('notch sections cover the harmonics below Nyquist; corners at or past Nyquist are dropped', () => {
    assert.equal(filterSections({ notch: 50 }, 256).length, 2, '50 and 100 Hz at 256 Hz');
    assert.equal(filterSections({ notch: 60 }, 1000).length, 7);
    assert.equal(filterSections({ lp: 200 }, 256).length, 0);
    assert.equal(filterSections({}, 256).length, 0);
  });

  it(`notch sections stop at ${NOTCH_TOP_HZ} Hz, however high the rate`, () => {
    assert.equal(NOTCH_TOP_HZ, 500);
    assert.equal(filterSections({ notch: 50 }, 65_536).length, 10, '50, 100, … 500 Hz; not 622 harmonics up to Nyquist');
    assert.equal(filterSections({ notch: 60 }, 65_536).length, 8, '60, 120, … 480 Hz');
    assert.equal(filterSections({ hp: 1, lp: 1000, notch: 50 }, 2048).length, 12);
    const sections = filterSections({ notch: 50 }, 65_536);
    assert.ok(magnitude(sections, 500, 65_536) < 1e-9, 'the 10th harmonic is removed');
    assert.ok(magnitude(sections, 550, 65_536) > 0.95, 'the 11th passes (within the 500 Hz notch\'s skirt)');
  });
});

describe('filtfilt', () => {
  it('removes a 50 Hz sine with the notch and leaves a 10 Hz one in place (zero phase)', () => {
    const alpha = sine(10, 20);
    const signal = add(alpha, sine(50, 30));
    const out = filtfilt(signal, filterSections({ notch: 50 }, rate), 3 * rate);
    const inner = [rate * 2, n - rate * 2] as const;
    assert.ok(maxError(out, alpha, ...inner) < 0.2, `within 1 % of the 10 Hz amplitude (max error ${maxError(out, alpha, ...inner)})`);
  });

  it('removes a 0.2 Hz drift with a 1 Hz high-pass', () => {
    const alpha = sine(10, 20);
    const signal = add(alpha, sine(0.2, 200));
    const out = filtfilt(signal, filterSections({ hp: 1 }, rate), filterMarginSamples({ hp: 1 }, rate));
    const residual = Float64Array.from(out, (v, i) => v - alpha[i]!);
    // |H(0.2 Hz)|² of two passes of a 1 Hz Butterworth section: 0.2^4 / (1 + 0.2^4) ≈ 0.0016 → 0.3 µV of 200.
    assert.ok(rms(residual, 3 * rate, n - 3 * rate) < 1, `drift removed (rms residual ${rms(residual, 3 * rate, n - 3 * rate)})`);
    assert.ok(Math.abs(rms(out, 3 * rate, n - 3 * rate) - rms(alpha)) < 0.2, 'the 10 Hz sine keeps its amplitude');
  });

  it('is zero phase: a low-passed sine keeps its peaks where they were', () => {
    const x = sine(5, 1);
    const out = filtfilt(x, filterSections({ lp: 30 }, rate), rate);
    let corr = 0;
    for (let i = rate; i < n - rate; i++) corr += x[i]! * out[i]!;
    assert.ok(maxError(out, x, rate, n - rate) < 0.01, 'a 5 Hz sine passes a 30 Hz low-pass unchanged, with no lag');
    assert.ok(corr > 0);
  });

  it('in steps, gives the same samples as in one piece, and its work is what filterWork counts', () => {
    const x = add(sine(10, 20), sine(50, 30), sine(0.2, 200));
    const sections = filterSections({ hp: 0.5, lp: 40, notch: 50 }, rate);
    const whole = Float64Array.from(x);
    filtfiltInPlace(whole, sections, 3 * rate);
    const stepped = Float64Array.from(x);
    const other = Float64Array.from(x);
    const steps = filtfiltSteps(stepped, sections, 3 * rate, 1000);
    const others = filtfiltSteps(other, filterSections({ lp: 30 }, rate), 3 * rate, 777);
    // Two filterings in steps, interleaved (two plots at once): each keeps its own padded copy.
    let done = 0;
    let count = 0;
    for (let a = steps.next(), b = others.next(); !a.done || !b.done; a = a.done ? a : steps.next(), b = b.done ? b : others.next()) {
      if (!a.done) {
        assert.ok(a.value <= 1000);
        done += a.value;
        count++;
      }
    }
    assert.deepEqual([...stepped], [...whole], 'bit for bit');
    assert.equal(done, filterWork(n, sections.length, 3 * rate));
    assert.equal(done, (n + 2 * 3 * rate) * sections.length * 2);
    assert.ok(count >= done / 1000);
    assert.deepEqual([...other], [...filtfilt(x, filterSections({ lp: 30 }, rate), 3 * rate)]);
    assert.equal(filterWork(3, 4, 100), (3 + 2 * 2) * 4 * 2, 'the pad is cut to the row less one sample, as filtfilt does');
    assert.equal(filterWork(0, 4, 100), 0);
    assert.equal(filterWork(100, 0, 100), 0);
  });

  it('returns a copy when there is nothing to do and copes with short input', () => {
    const x = Float64Array.of(1, 2, 3);
    assert.deepEqual([...filtfilt(x, [])], [1, 2, 3]);
    assert.equal(filtfilt(Float64Array.of(5), filterSections({ hp: 1 }, rate), 100).length, 1);
  });
});

describe('welch', () => {
  it('peaks at 10 Hz for a 10 Hz sine, and integrates to the sine\'s power', () => {
    const x = sine(10, 10);
    const s = welch(x, rate, 256);
    assert.equal(peakFrequency(s), 10);
    let total = 0;
    for (let k = 0; k < s.power.length; k++) total += s.power[k]! * (rate / 256);
    assert.ok(Math.abs(total - 50) < 2, `Parseval: A²/2 = 50 (got ${total})`);
  });

  it('shows the notch\'s effect: 50 Hz power falls by orders of magnitude', () => {
    const x = add(sine(10, 10), sine(50, 10));
    const filtered = filtfilt(x, filterSections({ notch: 50 }, rate), 3 * rate);
    const bin = (s: ReturnType<typeof welch>) => s.power[Math.round((50 * 256) / rate)]!;
    assert.ok(bin(welch(filtered, rate, 256)) < bin(welch(x, rate, 256)) / 1000);
  });

  it('spectrogram segments follow a chirp from 5 to 40 Hz', () => {
    const chirp = Float64Array.from({ length: n }, (_, i) => {
      const t = i / rate;
      return Math.sin(2 * Math.PI * (5 * t + (35 / (2 * seconds)) * t * t));
    });
    const sg = spectrogram(chirp, rate, 256);
    const peak = (p: Float64Array) => sg.freqs[p.indexOf(Math.max(...p))]!;
    assert.ok(peak(sg.power[0]!) < 10);
    assert.ok(peak(sg.power.at(-1)!) > 35);
    assert.equal(segmentLength(1000, 512), 512);
    assert.equal(segmentLength(300, 512), 256);
  });
});
