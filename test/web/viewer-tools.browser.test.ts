/**
 * The viewer's reading tools in a real chromium, against values computed here from the source file: fixed
 * sensitivity per channel type (row heights in pixels), display filters (notch, high-pass) on the exposed
 * samples, montages (average, bipolar) as arithmetic on the source samples, events at coarse zoom off the
 * traces, the event list, the spectrum, and a shared address restoring the same view.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { openRecording } from '../../src/formats/readers/open-recording.js';
import type { ViewerState } from '../../src/web/viewer/signal-viewer.js';
import type { SpectrumState } from '../../src/web/viewer/spectrum-panel.js';
import { createAccount } from '../support/accounts.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { readAll } from '../formats/support/read-all.js';
import { publishDataset } from './viewer-support.js';

const ID = 'nd000711';
const ZARR = 'sub-01/eeg/sub-01_task-tools_eeg.zarr';
const rate = 256;
const seconds = 60;
const eeg = ['Fp1', 'F7', 'T7', 'P7', 'O1', 'Fp2', 'F8', 'T8', 'P8', 'O2', 'F3', 'C3', 'P3', 'F4', 'C4', 'P4', 'Fz', 'Cz', 'Pz'];
const labels = [...eeg, 'EOG', 'ECG'];
const sin = (hz: number, t: number, phase = 0) => Math.sin(2 * Math.PI * hz * t + phase);
/** Physical µV of each channel at time t. */
function signal(label: string, t: number): number {
  switch (label) {
    case 'Fp1':
      return 50 * sin(10, t);
    case 'F7':
      return 20 * sin(10, t) + 30 * sin(50, t);
    case 'T7':
      return 20 * sin(6, t) + 200 * sin(0.2, t);
    case 'EOG':
      return 150 * sin(0.5, t);
    case 'ECG':
      return 800 * sin(1.2, t);
    default: {
      const k = eeg.indexOf(label);
      return (10 + k) * sin(2 + 0.7 * k, t, k);
    }
  }
}

/** Writes a small BIDS tree: the EDF, channels.tsv (types, C4 bad), events.tsv (600 stimuli, 6 spans). */
async function writeTree(root: string): Promise<string> {
  const dir = path.join(root, 'sub-01', 'eeg');
  await mkdir(dir, { recursive: true });
  const step = 6400 / 65535;
  const edf = writeEdf({
    recordDuration: 1,
    records: seconds,
    startDate: '02.03.21',
    startTime: '10.11.12',
    signals: labels.map((label) => ({
      label,
      samplesPerRecord: rate,
      samples: Int16Array.from({ length: rate * seconds }, (_, i) => Math.round((signal(label, i / rate) + 3200) / step - 32768)),
    })),
  });
  const file = path.join(dir, 'sub-01_task-tools_eeg.edf');
  await writeFile(file, edf);
  const type = (l: string) => (l === 'EOG' ? 'EOG' : l === 'ECG' ? 'ECG' : 'EEG');
  await writeFile(path.join(dir, 'sub-01_task-tools_channels.tsv'), ['name\ttype\tunits\tstatus', ...labels.map((l) => `${l}\t${type(l)}\tuV\t${l === 'C4' ? 'bad' : 'good'}`)].join('\n') + '\n');
  // `value`: the stimulus' code (its number), and n/a for the sleep spans.
  const events = Array.from({ length: 600 }, (_, i) => `${(0.05 + i * 0.1).toFixed(2)}\t0\tstim/${i % 2 ? 'B' : 'A'}\t${100 + i}`);
  for (let i = 0; i < 6; i++) events.push(`${i * 10 + 2}\t5\tsleep/N${(i % 3) + 1}\tn/a`);
  events.sort((a, b) => Number(a.split('\t')[0]) - Number(b.split('\t')[0]));
  await writeFile(path.join(dir, 'sub-01_task-tools_events.tsv'), ['onset\tduration\ttrial_type\tvalue', ...events].join('\n') + '\n');
  await writeFile(path.join(dir, 'sub-01_task-tools_eeg.json'), JSON.stringify({ PowerLineFrequency: 50, SamplingFrequency: rate }));
  await writeFile(path.join(root, 'dataset_description.json'), JSON.stringify({ Name: 'tools', BIDSVersion: '1.8.0' }));
  return file;
}

type State = ViewerState & { spectrum?: SpectrumState };
/** The exposed frame with typed arrays turned into plain arrays. */
async function state(page: Page): Promise<State> {
  return page.evaluate(() => {
    const s = window.ndsViewer!;
    return { ...s, rows: s.rows.map((r) => ({ ...r, values: Array.from(r.values) })) } as unknown as State;
  });
}

async function waitReady(page: Page, afterRenders = 0): Promise<void> {
  await page.waitForFunction((n) => window.ndsViewer?.ready === true && window.ndsViewer.renders > n, afterRenders, { timeout: 20_000 });
}

/** The pixel rows [first, last] in each plot column painted with `rgb`, within [yFrom, yTo). */
async function paintedRows(page: Page, s: ViewerState, rgb: [number, number, number], yFrom: number, yTo: number): Promise<Array<[number, number] | undefined>> {
  return page.evaluate(({ left, width, yFrom, yTo, rgb }) => {
    const canvas = document.querySelector<HTMLCanvasElement>('#nds-viewer canvas.viewer-traces')!;
    const data = canvas.getContext('2d')!.getImageData(left, yFrom, width, yTo - yFrom).data;
    const out: Array<[number, number] | undefined> = [];
    for (let x = 0; x < width; x++) {
      let first = -1;
      let last = -1;
      for (let y = 0; y < yTo - yFrom; y++) {
        const i = (y * width + x) * 4;
        if (data[i] === rgb[0] && data[i + 1] === rgb[1] && data[i + 2] === rgb[2]) {
          if (first < 0) first = y + yFrom;
          last = y + yFrom;
        }
      }
      out.push(first < 0 ? undefined : [first, last]);
    }
    return out;
  }, { left: s.plot.left, width: s.plot.width, yFrom: Math.floor(yFrom), yTo: Math.ceil(yTo), rgb });
}

const eegBlue: [number, number, number] = [0x1f, 0x4e, 0x9c];

describe('viewer reading tools in chromium', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let work: string;
  /** Physical source values by label, from the reader. */
  const source = new Map<string, number[]>();

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-tools-'));
    const file = await writeTree(work);
    const reader = await openRecording(file);
    const digital = await readAll(reader);
    reader.channels.forEach((c, i) => source.set(c.label, digital[i]!.map((d) => d * c.scale + c.offset)));
    await reader.close();
    server = await startTestServer();
    const owner = await createAccount(server);
    await publishDataset(server, { id: ID, ownerId: owner.user.id, name: 'Viewer tools', recordings: [{ file, zarr: ZARR, bidsRoot: work }] });
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function open(query: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(ZARR)}${query}`);
    await waitReady(page);
    return page;
  }

  it('draws each type at its fixed sensitivity: a known amplitude spans its height in µV/division', async () => {
    const page = await open('&t=10&span=10&ch=EOG,Fp1,ECG&rows=8');
    let s = await state(page);
    assert.equal(s.level, 0);
    assert.deepEqual(s.rows.map((r) => [r.label, r.type, r.unit, r.scale]), [['EOG', 'EOG', 'µV', 300], ['Fp1', 'EEG', 'µV', 100], ['ECG', 'ECG', 'µV', 2000]]);
    assert.ok(Math.abs(s.rows[1]!.pixelsPerUnit - s.plot.rowHeight / 100) < 1e-9, 'EEG: one row height per 100 µV');
    // Fp1 is 50 µV × sin: 100 µV peak to peak is one division.
    const measure = async (st: ViewerState) => {
      const columns = (await paintedRows(page, st, eegBlue, st.plot.top, st.plot.top + st.plot.height)).filter((c) => c !== undefined);
      return Math.max(...columns.map((c) => c[1])) - Math.min(...columns.map((c) => c[0]));
    };
    let height = await measure(s);
    assert.ok(Math.abs(height - s.plot.rowHeight) <= 2, `100 µV p-p at 100 µV/div spans one row: ${height} px vs ${s.plot.rowHeight}`);
    const status = await page.locator('#nds-viewer .viewer-scales').textContent();
    assert.match(status!, /EEG 100 µV/);
    assert.match(status!, /ECG 2 mV/);

    // Cursor readout: the time and the drawn value of the row under the pointer.
    const box = (await page.locator('#nds-viewer canvas.viewer-traces').boundingBox())!;
    const x = s.plot.left + 333;
    const y = s.plot.top + 1.5 * s.plot.rowHeight;
    await page.mouse.move(box.x + x, box.y + y);
    const sample = Math.floor(s.start + ((x - s.plot.left) * (s.end - s.start)) / s.plot.width);
    const readout = (await page.locator('#nds-viewer .viewer-readout').textContent())!;
    const [, time, label, value] = /^([\d.]+) s · (\S+) (-?[\d.]+) µV$/.exec(readout) ?? [];
    assert.equal(label, 'Fp1', readout);
    assert.ok(Math.abs(Number(time) - sample / rate) < 0.002, `${readout}: time of sample ${sample}`);
    assert.ok(Math.abs(Number(value) - s.rows[1]!.values[sample - s.valuesStart]!) <= 0.05, `${readout}: value ${s.rows[1]!.values[sample - s.valuesStart]}`);
    // Ruler: Shift+drag 128 px right and one row height up on the Fp1 row: 128 px of a 10 s window, 100 µV.
    await page.keyboard.down('Shift');
    await page.mouse.down();
    await page.mouse.move(box.x + x + 128, box.y + y - s.plot.rowHeight, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const measured = (await page.locator('#nds-viewer canvas.viewer-overlay').getAttribute('data-measure'))!;
    const [, dt, dv] = /^Δt ([\d.]+) ms .* · Δ ([\d.]+) µV$/.exec(measured) ?? [];
    assert.ok(Math.abs(Number(dt) - (128 * 10_000) / s.plot.width) <= 1, `${measured}: 128 px of 10 s on ${s.plot.width} px`);
    assert.ok(Math.abs(Number(dv) - 100) <= 100 / s.plot.rowHeight + 0.1, `${measured}: one division is 100 µV (within a pixel)`);
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('[');
    await waitReady(page, s.renders);
    s = await state(page);
    assert.equal(s.rows[1]!.scale, 50, '[ makes every type more sensitive (100 → 50 µV/div)');
    assert.equal(s.rows[0]!.scale, 200);
    height = await measure(s);
    assert.ok(Math.abs(height - 2 * s.plot.rowHeight) <= 2, `at 50 µV/div the same sine spans two rows: ${height} px`);
    await page.waitForFunction(() => new URL(location.href).searchParams.get('scale')?.split(',').includes('eeg:50'));
    await page.close();
  });

  it('filters the samples on screen: a 50 Hz notch and a 1 Hz high-pass, zero phase; not at view levels', async () => {
    const page = await open('&t=20&span=10&ch=F7,T7&notch=50&hp=1');
    let s = await state(page);
    assert.equal(s.level, 0);
    assert.equal(s.processed, true);
    assert.deepEqual(s.filter, { hp: 1, lp: undefined, notch: 50 });
    const n = s.end - s.start;
    assert.equal(s.rows[0]!.values.length, n, 'one value per sample at level 0');
    let worstF7 = 0;
    let worstT7 = 0;
    for (let i = 0; i < n; i++) {
      const t = (s.valuesStart + i) / rate;
      worstF7 = Math.max(worstF7, Math.abs(s.rows[0]!.values[i]! - 20 * sin(10, t)));
      worstT7 = Math.max(worstT7, Math.abs(s.rows[1]!.values[i]! - 20 * sin(6, t)));
    }
    // References: the notch leaves the 10 Hz sine (|H(10 Hz)| > 0.999), the high-pass the 6 Hz one; quantisation 0.05 µV.
    assert.ok(worstF7 < 0.5, `F7 after the notch is its 10 Hz sine within 0.5 µV (worst ${worstF7.toFixed(3)})`);
    assert.ok(worstT7 < 1.5, `T7 after the high-pass is its 6 Hz sine within 1.5 µV of a 200 µV drift (worst ${worstT7.toFixed(3)})`);

    await page.locator('#nds-viewer').focus();
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('-');
      await waitReady(page, s.renders);
      s = await state(page);
    }
    assert.ok(s.level >= 1, `zoomed out to ${(s.end - s.start) / rate} s draws a view level (${s.level})`);
    assert.equal(s.processed, false);
    assert.match(s.note, /filters apply when zoomed in/);
    assert.match((await page.locator('#nds-viewer .viewer-note').textContent())!, /filters apply/);
    await page.close();
  });

  it('computes the average reference and bipolar pairs from the source samples', async () => {
    let page = await open('&t=5&span=10&ref=avg');
    let s = await state(page);
    const good = eeg.filter((l) => l !== 'C4');
    const first = s.valuesStart;
    const n = s.end - s.start;
    const average = Array.from({ length: n }, (_, i) => good.reduce((sum, l) => sum + source.get(l)![first + i]!, 0) / good.length);
    assert.equal(s.totalRows, labels.length);
    for (const row of s.rows) {
      const label = row.label.replace(/-avg$/, '');
      const expected = row.type === 'EEG' ? (i: number) => source.get(label)![first + i]! - average[i]! : (i: number) => source.get(label)![first + i]!;
      assert.equal(row.label.endsWith('-avg'), row.type === 'EEG', `${row.label}: only EEG rows are re-referenced`);
      for (let i = 0; i < n; i += 7) assert.ok(Math.abs(row.values[i]! - expected(i)) < 1e-6, `${row.label}[${i}]`);
    }
    assert.equal(s.rows.find((r) => r.label === 'C4-avg')!.bad, true, 'a bad channel is drawn, marked bad');
    await page.close();

    page = await open('&t=5&span=10&ref=bipolar:Fp1-F7,F7-T7,C4-P4');
    s = await state(page);
    // The pairs, then the EOG and ECG rows on their own reference (docs/viewer.md).
    assert.deepEqual(s.rows.map((r) => [r.label, r.bad]), [['Fp1-F7', false], ['F7-T7', false], ['C4-P4', true], ['EOG', false], ['ECG', false]]);
    for (const row of s.rows) {
      const [a, b] = row.label.split('-') as [string, string | undefined];
      const expected = (i: number) => source.get(a)![s.valuesStart + i]! - (b ? source.get(b)![s.valuesStart + i]! : 0);
      for (let i = 0; i < n; i++) assert.ok(Math.abs(row.values[i]! - expected(i)) < 1e-6, `${row.label}[${i}]`);
    }
    // Hiding bad channels drops the pair that uses C4.
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('b');
    await waitReady(page, s.renders);
    assert.deepEqual((await state(page)).rows.map((r) => r.label), ['Fp1-F7', 'F7-T7', 'EOG', 'ECG']);
    // The toolbar offers the longitudinal chain this montage's labels allow.
    const options = await page.locator('#nds-viewer select[name=ref] option').allTextContents();
    assert.ok(options.includes('bipolar longitudinal') && options.includes('bipolar transverse') && options.includes('common average'));
    await page.close();
  });

  it('picks channels by type and one by one, pages rows, and forces a level from the address', async () => {
    const page = await open('&t=0&span=10&rows=8');
    let s = await state(page);
    assert.equal(s.channelCount, 8);
    assert.equal(s.totalRows, labels.length);
    await page.locator('#nds-viewer button[data-panel=channels]').click();
    const panel = page.locator('#nds-viewer .viewer-panel');
    await panel.locator('label', { hasText: 'all EEG (19)' }).locator('input').uncheck();
    await waitReady(page, s.renders);
    s = await state(page);
    assert.deepEqual(s.rows.map((r) => r.label), ['EOG', 'ECG']);
    await panel.locator('label', { hasText: /^ Fp1 · EEG$/ }).locator('input').check();
    await waitReady(page, s.renders);
    s = await state(page);
    assert.deepEqual(s.rows.map((r) => r.label), ['EOG', 'ECG', 'Fp1'], 'a channel picked joins at the end');
    await page.waitForFunction(() => new URL(location.href).searchParams.get('ch') === 'EOG,ECG,Fp1');
    await page.close();

    const forced = await open('&t=0&span=10&level=2');
    assert.equal((await state(forced)).level, 2, 'level=2 is drawn even where the zoom would pick the samples');
    await forced.close();
  });

  it('keeps events off the traces at coarse zoom, lists them, and steps through them', async () => {
    const page = await open('&t=0&span=60');
    let s = await state(page);
    assert.equal(s.events.mode, 'strip');
    assert.equal(s.events.events.length, 606);
    const colours = [...new Set(s.events.events.map((e) => e.colour))].map((c) => [parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16), parseInt(c.slice(5, 7), 16)]);
    const covered = await page.evaluate(({ left, top, width, height, colours }) => {
      const canvas = document.querySelector<HTMLCanvasElement>('#nds-viewer canvas.viewer-traces')!;
      const data = canvas.getContext('2d')!.getImageData(left, top, width, height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (colours.some((c) => Math.abs(data[i]! - c[0]!) < 24 && Math.abs(data[i + 1]! - c[1]!) < 24 && Math.abs(data[i + 2]! - c[2]!) < 24)) n++;
      return n / (width * height);
    }, { left: s.plot.left, top: Math.ceil(s.plot.top), width: s.plot.width, height: Math.floor(s.plot.height), colours });
    assert.ok(covered <= 0.1, `events cover ${(covered * 100).toFixed(2)} % of the plot's pixels (≤ 10 %)`);

    await page.locator('#nds-viewer button[data-panel=events]').click();
    const rows = page.locator('#nds-viewer .viewer-panel tbody tr');
    assert.equal(await rows.count(), 606);
    const sleep = rows.filter({ hasText: 'sleep/N1' }).first();
    assert.deepEqual(await page.locator('#nds-viewer .viewer-panel thead td').allTextContents(), ['time', 'type', 'value', 'duration']);
    assert.deepEqual(await sleep.locator('td').allTextContents(), ['2.000 s', 'sleep/N1', '', '5.000 s'], 'a value of n/a is shown empty');
    // The 13th stimulus (onset 1.25 s, stim/A) carries value 112, from events/table.json.
    assert.deepEqual(await rows.filter({ hasText: '1.250 s' }).first().locator('td').allTextContents(), ['1.250 s', 'stim/A', '112', '']);
    // Filter: hide the stimuli; the list and the plot keep the sleep spans.
    await page.locator('#nds-viewer .viewer-panel label', { hasText: 'stim/A' }).locator('input').uncheck();
    await page.locator('#nds-viewer .viewer-panel label', { hasText: 'stim/B' }).locator('input').uncheck();
    await waitReady(page, s.renders);
    s = await state(page);
    assert.equal(await rows.count(), 6);
    assert.deepEqual([...new Set(s.events.events.map((e) => e.label))].sort(), ['sleep/N1', 'sleep/N2', 'sleep/N3']);
    assert.equal(s.events.mode, 'lines', 'six events on screen are drawn as lines');
    // Zoom in to 15 s, click an event in the list: the window jumps to it; n steps to the next one.
    await page.locator('#nds-viewer').focus();
    for (let i = 0; i < 2; i++) {
      await page.keyboard.press('+');
      await waitReady(page, s.renders);
      s = await state(page);
    }
    await rows.nth(3).click();
    await waitReady(page, s.renders);
    s = await state(page);
    const span = s.end - s.start;
    assert.ok(Math.abs(s.start - (32 * rate - span / 10)) < 1e-6, `the event at 32 s is a tenth into the screen (start ${s.start / rate} s)`);
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('n');
    await waitReady(page, s.renders);
    s = await state(page);
    assert.ok(Math.abs(s.start - (42 * rate - span / 10)) < 1e-6, 'n: the next event (42 s)');
    await page.close();
  });

  it('shows the Welch spectrum of the rows on screen: a 10 Hz sine peaks at 10 Hz', async () => {
    const page = await open('&t=0&span=20&ch=Fp1,F7&notch=50');
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('s');
    await page.waitForFunction(() => window.ndsViewer?.spectrum !== undefined, undefined, { timeout: 10_000 });
    const s = await state(page);
    const spectrum = s.spectrum!;
    assert.deepEqual(spectrum.rows.map((r) => [r.label, r.peakHz]), [['Fp1', 10], ['F7', 10]]);
    const bin = spectrum.freqs.indexOf(50);
    assert.ok(spectrum.rows[1]!.power[bin]! < spectrum.rows[1]!.power[spectrum.freqs.indexOf(10)]! / 1e4, 'the notch shows in the spectrum: 50 Hz is gone');
    assert.equal(spectrum.spectrogram!.label, 'Fp1');
    assert.ok(await page.locator('#nds-viewer .viewer-spectrum canvas.viewer-spectrogram').isVisible());
    await page.close();
  });

  it('restores the same view from a shared address; embeds alone; shows its keys on ?', async () => {
    const page = await open('');
    const first = await state(page);
    await page.locator('#nds-viewer select[name=ref]').selectOption({ label: 'bipolar longitudinal' });
    await waitReady(page, first.renders);
    await page.locator('#nds-viewer select[name=lp]').selectOption('40');
    await page.locator('#nds-viewer select[name=rows]').selectOption('8');
    await page.locator('#nds-viewer select[name=time]').selectOption('clock');
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('PageDown');
    await page.keyboard.press(']');
    await page.waitForTimeout(400);
    await waitReady(page);
    const before = await state(page);
    await page.waitForFunction(() => new URL(location.href).searchParams.get('rows') === '8' && new URL(location.href).searchParams.has('lp'));
    const shared = page.url();
    assert.match(shared, /ref=bipolar%3AFp1-F7%2CF7-T7/);
    assert.match(shared, /lp=40/);
    assert.match(shared, /time=clock/);
    assert.match((await page.locator('#nds-viewer .viewer-status').textContent())!, /10:11:1\d/, 'clock time from the recording start 10:11:12');

    const again = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    await again.goto(shared);
    await waitReady(again);
    const after = await state(again);
    assert.equal(after.start, before.start);
    assert.equal(after.end, before.end);
    assert.equal(after.reference, before.reference);
    assert.deepEqual(after.filter, before.filter);
    // The row page is not part of the address; the rows, scales and filters are.
    const view = (x: State) => x.rows.map((r) => [r.label, r.scale]);
    await again.locator('#nds-viewer').focus();
    await again.keyboard.press('PageDown');
    await waitReady(again, after.renders);
    assert.deepEqual(view(await state(again)), view(before));
    assert.equal((await again.locator('#nds-viewer select[name=time]').inputValue()), 'clock');
    // Jump to a clock time: 10:11:42 is 30 s after the recording's start (10:11:12); it lands a tenth into the screen.
    const beforeJump = await state(again);
    await again.locator('#nds-viewer input[name=goto]').fill('10:11:42');
    await again.locator('#nds-viewer input[name=goto]').press('Enter');
    await waitReady(again, beforeJump.renders);
    const jumped = await state(again);
    assert.equal(jumped.start, 30 * rate - (jumped.end - jumped.start) / 10);
    assert.match(again.url(), /recording=/, 'the form did not submit: the page stayed');
    await again.close();

    await page.keyboard.press('?');
    assert.ok(await page.locator('#nds-viewer .viewer-help').isVisible());
    await page.keyboard.press('Escape');
    assert.ok(!(await page.locator('#nds-viewer .viewer-help').isVisible()));
    await page.locator('#nds-viewer button[data-key=f]').click();
    await page.waitForFunction(() => document.fullscreenElement?.id === 'nds-viewer', undefined, { timeout: 5_000 });
    await page.close();

    const embedded = await (await fetch(`${server.url}/datasets/${ID}?embed=1`, { headers: { accept: 'text/html' } })).text();
    assert.match(embedded, /id="nds-viewer"/);
    assert.doesNotMatch(embedded, /<header/);
    assert.doesNotMatch(embedded, /<h2>Recordings/);
  });
});
