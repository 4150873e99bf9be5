/** The viewer's pure rules: montages, scales per type, the view in the address, time formats, event placement. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnEnvelope, columnSpans, sampleEnvelope } from '../../../src/signals/column-envelope.js';
import { windowMean, type RowSamples } from '../../../src/web/viewer/row-samples.js';
import { samePlotPixels, type FrameInput } from '../../../src/signals/plot-pixels.js';
import { traceLayout } from '../../../src/signals/trace-layout.js';
import { formatScales, microvoltFactor, parseScales, pixelsPerUnit, scaleOf, stepScale, typeKey, unitSymbol } from '../../../src/signals/channel-scale.js';
import { eventColours, placeEvents, stepEvent } from '../../../src/signals/event-marks.js';
import { applyMontage, chainAvailable, chainPairs, derivationBound, derivations, electrodeName, formatReference, linkedReferences, longitudinalChain, parseReference, splitPair, type SourceChannel } from '../../../src/signals/montage.js';
import { filterChoices } from '../../../src/signals/filter-choices.js';
import { formatTime, parseTime, recordingEpoch } from '../../../src/signals/time-format.js';
import { parseViewQuery, writeViewQuery } from '../../../src/signals/view-settings.js';

const ch = (label: string, type = 'EEG', bad = false): SourceChannel => ({ label, type, unit: 'uV', bad });
const channels = [ch('Fp1'), ch('F7'), ch('T3'), ch('EEG T5-REF'), ch('O1'), ch('Cz', 'EEG', true), ch('A1'), ch('A2'), ch('HEOG', 'EOG'), ch('EKG', 'ECG')];

describe('montage', () => {
  it('matches old and new 10-20 names and labels with prefixes and reference suffixes', () => {
    assert.equal(electrodeName('EEG T5-REF'), 'p7');
    assert.equal(electrodeName('T3'), 't7');
    assert.deepEqual(splitPair(channels, 'Fp1-F7'), ['Fp1', 'F7']);
    assert.deepEqual(splitPair(channels, 'T7-P7'), ['T7', 'P7']);
    assert.equal(splitPair(channels, 'Fp1-X9'), undefined);
    assert.deepEqual(chainPairs(channels, longitudinalChain).map((p) => p.join('-')), ['Fp1-F7', 'F7-T7', 'T7-P7', 'P7-O1']);
    assert.equal(chainAvailable(channels, longitudinalChain), false, 'four of eighteen pairs is no chain');
  });

  it('parses and formats each reference kind', () => {
    assert.deepEqual(parseReference('avg', channels), { kind: 'avg' });
    assert.deepEqual(parseReference('A1+A2', channels), { kind: 'channel', labels: ['A1', 'A2'] });
    assert.deepEqual(parseReference('bipolar:Fp1-F7,nonsense,F7-T3', channels), { kind: 'bipolar', pairs: [['Fp1', 'F7'], ['F7', 'T3']] });
    assert.deepEqual(parseReference('X9', channels), { kind: 'own' });
    assert.equal(formatReference({ kind: 'bipolar', pairs: [['Fp1', 'F7']] }), 'bipolar:Fp1-F7');
    assert.equal(formatReference({ kind: 'own' }), undefined);
  });

  it('derives rows: average over good channels of the type, a reference channel, bipolar pairs', () => {
    const shown = channels.map((_, i) => i);
    const avg = derivations(channels, shown, { kind: 'avg' });
    assert.deepEqual(avg[0]!.minus, [0, 1, 2, 3, 4, 6, 7], 'bad Cz is not in the average');
    assert.deepEqual(avg[8]!.minus, [], 'EOG keeps its own reference');
    const linked = derivations(channels, shown, { kind: 'channel', labels: ['A1', 'A2'] });
    assert.equal(linked[0]!.label, 'Fp1-A1+A2');
    assert.deepEqual(linked[6]!.minus, [], 'a reference channel is not referenced to itself');
    const bipolar = derivations(channels, [0], { kind: 'bipolar', pairs: [['Fp1', 'F7'], ['O1', 'Cz']] });
    assert.deepEqual(bipolar.map((r) => [r.label, r.plus, r.minus, r.bad]), [['Fp1-F7', 0, [1], false], ['O1-Cz', 4, [5], true]]);
  });

  it('applies a montage as arithmetic on the source samples, computing a shared mean once', () => {
    const source = new Map([[0, Float64Array.of(1, 2, 3)], [1, Float64Array.of(3, 2, 1)], [2, Float64Array.of(5, 5, 5)]]);
    const rows = applyMontage([{ ...ch('a'), plus: 0, minus: [0, 1, 2] }, { ...ch('b'), plus: 1, minus: [0, 1, 2] }, { ...ch('c'), plus: 0, minus: [1] }, { ...ch('d'), plus: 2, minus: [] }], source, 3);
    assert.deepEqual([...rows[0]!], [1 - 3, 2 - 3, 3 - 3]);
    assert.deepEqual([...rows[1]!], [0, -1, -2]);
    assert.deepEqual([...rows[2]!], [-2, 0, 2]);
    assert.deepEqual([...rows[3]!], [5, 5, 5]);
    assert.equal(rows[0]!.buffer, rows[3]!.buffer, 'rows share one buffer');
  });
});

describe('issue 26: montage rows, ears, filter corners, units', () => {
  const tenTwenty = ['Fp1', 'Fp2', 'F7', 'F3', 'Fz', 'F4', 'F8', 'T3', 'C3', 'Cz', 'C4', 'T4', 'T5', 'P3', 'Pz', 'P4', 'T6', 'O1', 'O2'].map((l) => ch(l));
  it('a bipolar montage keeps the EOG and ECG rows picked, on their own reference, after its pairs', () => {
    const rows = derivations(channels, channels.map((_, i) => i), { kind: 'bipolar', pairs: [['Fp1', 'F7']] });
    assert.deepEqual(rows.map((r) => [r.label, r.minus]), [['Fp1-F7', [1]], ['HEOG', []], ['EKG', []]]);
  });
  it('bounds a derivation over a column from its sources ranges', () => {
    assert.deepEqual(derivationBound([-10, 20], [[-5, 5]]), [-15, 25]);
    assert.deepEqual(derivationBound([0, 10], [[0, 2], [4, 6]]), [-4, 8]);
    assert.deepEqual(derivationBound([1, 2], []), [1, 2]);
  });
  it('offers A1+A2 as ears in a 10-20 layout or when typed REF, never on a BioSemi cap', () => {
    assert.deepEqual(linkedReferences([...tenTwenty, ch('A1'), ch('A2')]), [['A1', 'A2']]);
    const biosemi = ['A1', 'A2', 'A3', 'A4', 'B1', 'B2', 'C1', 'D1'].map((l) => ch(l));
    assert.deepEqual(linkedReferences(biosemi), []);
    assert.deepEqual(linkedReferences([...tenTwenty, ...biosemi]), [], 'A3… present: a lettered bank');
    assert.deepEqual(linkedReferences([ch('Cz'), ch('A1', 'REF'), ch('A2', 'REF')]), [['A1', 'A2']], 'channels.tsv says REF');
    assert.deepEqual(linkedReferences([ch('Cz'), ch('A1'), ch('A2')]), [], 'three channels say nothing');
    assert.deepEqual(linkedReferences([ch('Cz'), ch('M1'), ch('M2'), ch('TP9'), ch('TP10')]), [['M1', 'M2'], ['TP9', 'TP10']]);
  });
  it('offers filter corners per type, below 0.45 × the rate', () => {
    assert.deepEqual(filterChoices(['EEG'], 256), { hp: [0.1, 0.3, 0.5, 1, 2, 5], lp: [15, 30, 35, 40, 70, 100] });
    const emg = filterChoices(['EMG'], 2048);
    assert.ok(emg.hp.includes(30) && emg.lp.includes(500) && !emg.lp.includes(1000), JSON.stringify(emg));
    assert.ok(filterChoices(['EMG'], 4096).lp.includes(1000));
    assert.ok(!filterChoices(['EMG'], 1000).lp.includes(500), 'no 500 Hz low-pass at 1 kHz');
    assert.deepEqual(filterChoices(['EEG', 'EMG'], 512).lp, [15, 30, 35, 40, 70, 100, 200]);
    assert.deepEqual(filterChoices(['MISC'], 256), filterChoices(['EEG'], 256), 'EEG corners when no type has its own');
  });
  it('puts channels in other units than volts on their own scale, printed as their unit', () => {
    assert.equal(scaleOf({}, 'EEG', 'ARU'), 'auto');
    assert.equal(scaleOf({ eeg: 50 }, 'EEG', 'uV'), 50);
    assert.equal(scaleOf({}, 'EEG', ''), 100, 'no unit given: read as µV');
    assert.equal(unitSymbol('degC'), '°C');
    assert.equal(unitSymbol('uS'), 'µS');
  });
});

describe('scales', () => {
  it('reads types, units and the scale parameter', () => {
    assert.equal(typeKey('VEOG'), 'eog');
    assert.equal(typeKey('SEEG'), 'ieeg');
    assert.equal(typeKey('TRIG'), 'stim');
    assert.equal(unitSymbol('uV'), 'µV');
    assert.equal(microvoltFactor('mV'), 1000);
    assert.equal(microvoltFactor('K'), undefined);
    const { scales, auto } = parseScales('eeg:50,EOG:200,junk,ecg:-1');
    assert.equal(auto, false);
    assert.deepEqual(scales, { eeg: 50, eog: 200 });
    assert.equal(parseScales('auto').auto, true);
    assert.equal(scaleOf(scales, 'EEG'), 50);
    assert.equal(scaleOf(scales, 'ECG'), 2000, 'defaults fill the rest');
    assert.equal(scaleOf(scales, 'TRIG'), 'auto');
    assert.equal(formatScales({ eeg: 100, eog: 200 }), 'eog:200', 'defaults are not written');
    assert.equal(stepScale(100, -1), 50);
    assert.equal(stepScale(100, 1), 200);
    assert.equal(stepScale(70, 1), 100);
    // 100 µV per 40 px row: a mV channel moves 400 px per mV.
    assert.equal(pixelsPerUnit(100, 40, 'uV'), 0.4);
    assert.equal(pixelsPerUnit(100, 40, 'mV'), 400);
  });
});

describe('view in the address', () => {
  it('round-trips every setting and keeps other parameters', () => {
    const params = new URLSearchParams('recording=r.zarr&t=12.5&span=20&ch=O1,Fp1&scale=eeg:50&hp=0.5&lp=40&notch=60&ref=bipolar:Fp1-F7&level=2&rows=8&time=clock&bad=hide');
    const view = parseViewQuery(params, channels);
    assert.equal(view.startSeconds, 12.5);
    assert.equal(view.spanSeconds, 20);
    assert.deepEqual(view.settings.shown, [4, 0]);
    assert.deepEqual(view.settings.filter, { hp: 0.5, lp: 40, notch: 60 });
    assert.deepEqual(view.settings.reference, { kind: 'bipolar', pairs: [['Fp1', 'F7']] });
    assert.equal(view.settings.level, 2);
    assert.equal(view.settings.rowsPerPage, 8);
    assert.equal(view.settings.timeFormat, 'clock');
    assert.equal(view.settings.hideBad, true);
    const out = new URLSearchParams('recording=r.zarr&group=g');
    writeViewQuery(out, { settings: view.settings, startSeconds: 12.5, spanSeconds: 20 }, channels);
    assert.equal(out.get('recording'), 'r.zarr');
    assert.equal(out.get('group'), 'g');
    assert.deepEqual(parseViewQuery(out, channels), view);
  });

  it('ignores bad values and writes nothing for defaults', () => {
    const view = parseViewQuery(new URLSearchParams('hp=-1&notch=55&rows=13&time=x&t=-4&ch=Nope'), channels);
    assert.deepEqual(view.settings.filter, { hp: undefined, lp: undefined, notch: undefined });
    assert.equal(view.settings.rowsPerPage, 24);
    assert.equal(view.settings.shown.length, channels.length);
    assert.equal(view.startSeconds, undefined);
    const out = new URLSearchParams();
    writeViewQuery(out, { settings: view.settings, startSeconds: 0, spanSeconds: 10 }, channels);
    assert.equal(out.toString(), 't=0&span=10');
  });
});

describe('time formats', () => {
  const epoch = recordingEpoch('2021-03-02T10:11:12');
  it('formats one time three ways and parses what it prints', () => {
    assert.equal(formatTime(3725.5, 's', 0.1), '3725.5 s');
    assert.equal(formatTime(3725.5, 'hms', 0.1), '1:02:05.5');
    assert.equal(formatTime(3725.5, 'clock', 0.1, epoch), '11:13:17.5');
    assert.equal(formatTime(59.999, 'hms', 1), '0:01:00');
    assert.equal(formatTime(5, 'clock', 1, undefined), '0:00:05', 'no start time: from the start');
    assert.equal(parseTime('3725.5', 'hms'), 3725.5);
    assert.equal(parseTime('1:02:05.5', 'hms'), 3725.5);
    assert.equal(parseTime('11:13:17.5', 'clock', epoch), 3725.5);
    assert.equal(parseTime('2:05', 's'), 125);
    assert.equal(parseTime('soon', 's'), undefined);
  });
});

describe('event placement', () => {
  const events = Array.from({ length: 100 }, (_, i) => ({ onset: i, duration: i % 10 === 0 ? 5 : 0, label: i % 2 ? 'b' : 'a' }));
  const colours = eventColours(events);
  it('draws few events as lines and many as a strip, hidden types left out', () => {
    const view = { startSeconds: 0, secondsPerPixel: 0.1, plotLeft: 100, plotWidth: 1000 };
    const many = placeEvents(events, colours, view);
    assert.equal(many.mode, 'strip');
    assert.equal(many.events.length, 100);
    const few = placeEvents(events, colours, { ...view, secondsPerPixel: 0.01 });
    assert.equal(few.mode, 'lines', '10 events on 1000 px');
    assert.deepEqual(few.events.slice(0, 2).map((e) => [e.x, e.x1, e.colour]), [[100, 600, colours.get('a')], [200, 200, colours.get('b')]]);
    assert.equal(placeEvents(events, colours, view, new Set(['a'])).events.length, 50);
  });
  it('steps to the next and previous event of a shown type', () => {
    assert.equal(stepEvent(events, 10, 1), 11);
    assert.equal(stepEvent(events, 10, -1), 9);
    assert.equal(stepEvent(events, 10, 1, new Set(['b'])), 12);
    assert.equal(stepEvent(events, 99, 1), undefined);
  });
});

describe('sampleEnvelope', () => {
  it('draws the same columns as columnEnvelope at level 0, zoomed in and out', () => {
    const n = 5000;
    const values = Float64Array.from({ length: 3000 }, (_, i) => Math.sin(i / 7) * 50 + ((i * 7919) % 13));
    const from = 1000;
    // `reused`: each frame refills the previous frame's arrays; the columns must not depend on what they held.
    let reused = sampleEnvelope(values, from, 0, 1, 600, n);
    for (const [start, spp] of [[1500.3, 2.37], [1100, 0.25], [3800, 1.9], [900, 3]] as const) {
      const expected = columnEnvelope({ start, samplesPerPixel: spp, pixelWidth: 600, factor: 1, levelColumns: n, scale: 1, offset: 0, read: (i) => (i >= from && i < from + values.length ? [values[i - from]!, values[i - from]!] : undefined) });
      const got = sampleEnvelope(values, from, start, spp, 600, n);
      const same = (a: Float64Array, b: Float64Array) => a.every((v, i) => (Number.isNaN(v) ? Number.isNaN(b[i]!) : v === b[i]));
      assert.ok(same(got.lo, expected.lo) && same(got.hi, expected.hi), `start ${start}, ${spp} samples a pixel`);
      const before = reused.lo;
      reused = sampleEnvelope(values, from, start, spp, 600, n, reused);
      assert.equal(reused.lo, before, 'the arrays are reused');
      assert.ok(same(reused.lo, expected.lo) && same(reused.hi, expected.hi), `reused arrays: start ${start}, ${spp} samples a pixel`);
      // A frame places the columns once for all its rows: the same columns from spans worked out beforehand.
      const spans = columnSpans(from, from + values.length, start, spp, 600, n);
      const shared = sampleEnvelope(values, from, start, spp, 600, n, undefined, spans);
      assert.ok(same(shared.lo, expected.lo) && same(shared.hi, expected.hi), `shared spans: start ${start}, ${spp} samples a pixel`);
    }
  });

  it('leaves a column empty where a sample in it is not loaded (NaN)', () => {
    const values = Float64Array.from({ length: 100 }, (_, i) => (i >= 40 && i < 45 ? NaN : i));
    const got = sampleEnvelope(values, 0, 0, 2, 50, 100);
    // Two samples a column: columns 20-22 hold samples 40-45.
    assert.deepEqual([...got.hi.subarray(19, 24)].map((v) => (Number.isNaN(v) ? 'empty' : 'drawn')), ['drawn', 'empty', 'empty', 'empty', 'drawn']);
  });
});

describe('windowMean', () => {
  const values = Float64Array.from({ length: 5000 }, (_, i) => Math.sin(i / 9) * 300 + 1e4 + ((i * 7919) % 17));
  const loopMean = (v: Float64Array) => v.reduce((a, b) => a + b, 0) / v.length;

  it("is the window's mean, from running sums kept with a complete span", () => {
    const samples: RowSamples = { from: 2000, to: 7000, rows: [values], complete: true };
    for (const [first, last] of [[2000, 4560], [3333, 5893], [4440, 7000], [2001, 2002]] as const) {
      const expected = loopMean(values.subarray(first - 2000, last - 2000));
      assert.ok(Math.abs(windowMean(samples, 0, first, last) - expected) < 1e-9, `[${first}, ${last})`);
    }
    assert.equal(samples.sums?.[0]?.length, values.length + 1, 'the running sums are kept for the next pan');
  });

  it('leaves out the samples not loaded while the span is incomplete', () => {
    const partial = Float64Array.from(values, (v, i) => (i < 1000 ? NaN : v));
    const samples: RowSamples = { from: 0, to: 5000, rows: [partial], complete: false };
    assert.ok(Math.abs(windowMean(samples, 0, 500, 3000) - loopMean(values.subarray(1000, 3000))) < 1e-9);
    assert.equal(windowMean(samples, 0, 0, 1000), 0);
    assert.equal(samples.sums, undefined);
  });
});

describe('samePlotPixels', () => {
  const frame = (change: (f: FrameInput) => void = () => undefined): FrameInput => {
    const lo = Float64Array.from({ length: 300 }, (_, x) => (x < 5 ? NaN : Math.sin(x / 10) * 50));
    const f: FrameInput = {
      layout: traceLayout(420, 300, 2),
      startSeconds: 12,
      secondsPerPixel: 0.01,
      rows: [0, 1].map((r) => ({ label: `R${r}`, detail: '', colour: '#1f4e9c', envelope: { lo: lo.slice(), hi: lo.map((v) => v + 3) }, scale: { baseline: r, pixelsPerUnit: 0.5 }, clipToRow: false })),
      events: { mode: 'lines', events: [{ onset: 13.5, duration: 0.2, x: 150, x1: 170, label: 'a', colour: '#aa0000' }] },
      formatTime: String,
    };
    change(f);
    return f;
  };

  it('holds for frames painting the same pixels, columns not drawn (NaN) included, whatever their labels', () => {
    assert.ok(samePlotPixels(frame(), frame((f) => (f.rows[0]!.label = 'another'))));
  });

  it('fails on any difference the pixels show: a column, a scale, a colour, the grid, an event, the layout', () => {
    const changes: Array<[string, (f: FrameInput) => void]> = [
      ['one column', (f) => (f.rows[1]!.envelope.hi[200] = 1e-9 + f.rows[1]!.envelope.hi[200]!)],
      ['a column drawn', (f) => (f.rows[0]!.envelope.lo[2] = 0)],
      ['baseline', (f) => (f.rows[1]!.scale.baseline = 1.0000001)],
      ['sensitivity', (f) => (f.rows[0]!.scale.pixelsPerUnit = 0.25)],
      ['colour', (f) => (f.rows[0]!.colour = '#b8b8b8')],
      ['clipping', (f) => (f.rows[0]!.clipToRow = true)],
      ['a row more', (f) => f.rows.push(f.rows[0]!)],
      ['the grid', (f) => (f.startSeconds = 12.5)],
      ['an event', (f) => (f.events.events[0]!.x1 = 171)],
      ['the layout', (f) => (f.layout = traceLayout(421, 300, 2))],
    ];
    for (const [what, change] of changes) assert.equal(samePlotPixels(frame(), frame(change)), false, what);
  });
});
