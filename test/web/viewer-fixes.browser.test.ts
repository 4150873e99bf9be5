/**
 * The viewer's rough edges of issue 26, each in a real chromium against values computed here: bipolar montages
 * keep the EOG/ECG rows; zoomed out, a montage's rows are its own (bounds from the channels' envelopes); the
 * filter menus follow the channel types and the rate (an EMG at 2 kHz); A1/A2 are offered as ears only in a
 * 10-20 recording, not on a BioSemi cap; channels in ARU, µS and °C on their own scale in their own unit; the
 * spectrum's legend; the events panel, the last time label and the recordings table inside their boxes.
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

const ID = 'nd000726';
const EEG_ZARR = 'sub-01/eeg/sub-01_task-fixes_eeg.zarr';
const CAP_ZARR = 'sub-02/eeg/sub-02_task-fixes_eeg.zarr';
const sin = (hz: number, t: number, phase = 0) => Math.sin(2 * Math.PI * hz * t + phase);

/** A 10-20 recording at 256 Hz with ear electrodes A1/A2, EOG and ECG; 60 s. */
const eegRate = 256;
const eegSeconds = 60;
const scalp = ['Fp1', 'F7', 'T7', 'P7', 'O1', 'Fp2', 'F8', 'T8', 'P8', 'O2', 'F3', 'C3', 'P3', 'F4', 'C4', 'P4', 'Fz', 'Cz', 'Pz'];
const eegLabels = [...scalp, 'A1', 'A2', 'EOG', 'ECG'];
function eegSignal(label: string, t: number): number {
  if (label === 'EOG') return 150 * sin(0.5, t);
  if (label === 'ECG') return 800 * sin(1.2, t);
  const k = eegLabels.indexOf(label);
  return (10 + 2 * k) * sin(3 + 0.9 * k, t, k) + 40 * sin(0.3, t, k / 3);
}

/** A BioSemi-style cap at 2048 Hz (A1…A4, B1, B2 on the scalp), an EMG, and channels in µS, °C and ARU; 20 s. */
const capRate = 2048;
const capSeconds = 20;
const cap: Array<{ label: string; type: string; unit: string; value: (t: number) => number; min: number; max: number }> = [
  ...['A1', 'A2', 'A3', 'A4', 'B1', 'B2'].map((label, k) => ({ label, type: 'EEG', unit: 'uV', value: (t: number) => 30 * sin(8 + k, t), min: -3200, max: 3200 })),
  // 3 Hz movement under 150 Hz muscle activity: a 30 Hz high-pass leaves the 150 Hz.
  { label: 'EMG', type: 'EMG', unit: 'uV', value: (t) => 400 * sin(3, t) + 50 * sin(150, t), min: -3200, max: 3200 },
  { label: 'GSR', type: 'GSR', unit: 'uS', value: (t) => 5 + 0.5 * sin(0.1, t), min: 0, max: 20 },
  { label: 'Temp', type: 'TEMP', unit: 'degC', value: (t) => 33 + 0.2 * sin(0.05, t), min: 20, max: 45 },
  // A pulse sensor in arbitrary units, typed EEG as some exports do: still not a voltage.
  { label: 'Pleth', type: 'EEG', unit: 'ARU', value: (t) => 2000 + 800 * sin(1.1, t), min: 0, max: 4000 },
];

async function writeTree(root: string): Promise<{ eegFile: string; capFile: string }> {
  const step = 6400 / 65535;
  const write = async (sub: string, spec: Parameters<typeof writeEdf>[0], channels: string, events: string) => {
    const dir = path.join(root, sub, 'eeg');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `${sub}_task-fixes_eeg.edf`);
    await writeFile(file, writeEdf(spec));
    await writeFile(path.join(dir, `${sub}_task-fixes_channels.tsv`), channels);
    await writeFile(path.join(dir, `${sub}_task-fixes_events.tsv`), events);
    return file;
  };
  const eegFile = await write(
    'sub-01',
    {
      recordDuration: 1,
      records: eegSeconds,
      signals: eegLabels.map((label) => ({
        label,
        samplesPerRecord: eegRate,
        samples: Int16Array.from({ length: eegRate * eegSeconds }, (_, i) => Math.round((eegSignal(label, i / eegRate) + 3200) / step - 32768)),
      })),
    },
    ['name\ttype\tunits\tstatus', ...eegLabels.map((l) => `${l}\t${l === 'EOG' ? 'EOG' : l === 'ECG' ? 'ECG' : 'EEG'}\tuV\tgood`)].join('\n') + '\n',
    // Long types and values (HED-like strings), as an events panel meets them.
    ['onset\tduration\ttrial_type\tvalue', ...Array.from({ length: 8 }, (_, i) => `${i * 7 + 1}\t${(1.25 + i).toFixed(2)}\tartefact/electrode-pop-with-a-long-description-${i}\tSensory-event, Visual-presentation, (Item, Label/${i})`)].join('\n') + '\n',
  );
  const capFile = await write(
    'sub-02',
    {
      recordDuration: 1,
      records: capSeconds,
      signals: cap.map((c) => ({
        label: c.label,
        unit: c.unit,
        physicalMin: c.min,
        physicalMax: c.max,
        samplesPerRecord: capRate,
        samples: Int16Array.from({ length: capRate * capSeconds }, (_, i) => Math.round(((c.value(i / capRate) - c.min) / (c.max - c.min)) * 65535 - 32768)),
      })),
    },
    ['name\ttype\tunits\tstatus', ...cap.map((c) => `${c.label}\t${c.type}\t${c.unit}\tgood`)].join('\n') + '\n',
    'onset\tduration\ttrial_type\n1\t0\tstart\n',
  );
  await writeFile(path.join(root, 'dataset_description.json'), JSON.stringify({ Name: 'fixes', BIDSVersion: '1.8.0' }));
  return { eegFile, capFile };
}

type State = ViewerState & { spectrum?: SpectrumState };
async function state(page: Page): Promise<State> {
  return page.evaluate(() => {
    const s = window.ndsViewer!;
    return { ...s, rows: s.rows.map((r) => ({ ...r, values: Array.from(r.values) })) } as unknown as State;
  });
}

async function waitReady(page: Page, afterRenders = 0): Promise<void> {
  await page.waitForFunction((n) => window.ndsViewer?.ready === true && window.ndsViewer.renders > n, afterRenders, { timeout: 30_000 });
}

describe('viewer fixes in chromium (issue 26)', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let work: string;
  const source = new Map<string, number[]>();

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-fixes-'));
    const { eegFile, capFile } = await writeTree(work);
    for (const file of [eegFile, capFile]) {
      const reader = await openRecording(file);
      const digital = await readAll(reader);
      reader.channels.forEach((c, i) => source.set(`${file === capFile ? 'cap:' : ''}${c.label}`, digital[i]!.map((d) => d * c.scale + c.offset)));
      await reader.close();
    }
    server = await startTestServer();
    const owner = await createAccount(server);
    await publishDataset(server, {
      id: ID,
      ownerId: owner.user.id,
      name: 'Viewer fixes',
      recordings: [
        { file: eegFile, zarr: EEG_ZARR, bidsRoot: work },
        { file: capFile, zarr: CAP_ZARR, bidsRoot: work },
      ],
    });
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function open(zarr: string, query: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
    page.on('pageerror', (err) => console.error('page error:', err));
    if (process.env['VIEWER_DEBUG']) page.on('console', (m) => console.error('console:', m.text()));
    await page.goto(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(zarr)}${query}`);
    if (process.env['VIEWER_DEBUG']) console.error('loaded', zarr, query);
    await waitReady(page);
    return page;
  }

  it('keeps the EOG and ECG rows, on their own reference, in the bipolar longitudinal montage', { timeout: 120_000 }, async () => {
    const page = await open(EEG_ZARR, '&t=5&span=10&rows=32');
    const first = await state(page);
    await page.locator('#nds-viewer select[name=ref]').selectOption({ label: 'bipolar longitudinal' });
    await waitReady(page, first.renders);
    const s = await state(page);
    assert.equal(s.rows.length, 20, 'the 18 pairs of the chain and the EOG and ECG rows');
    assert.deepEqual(s.rows.slice(0, 2).map((r) => r.label), ['Fp1-F7', 'F7-T7']);
    assert.deepEqual(s.rows.slice(18).map((r) => [r.label, r.type]), [['EOG', 'EOG'], ['ECG', 'ECG']]);
    for (const row of s.rows) {
      const [a, b] = row.label.split('-') as [string, string | undefined];
      for (let i = 0; i < row.values.length; i += 5) {
        const expected = source.get(a)![s.valuesStart + i]! - (b ? source.get(b)![s.valuesStart + i]! : 0);
        assert.ok(Math.abs(row.values[i]! - expected) < 1e-6, `${row.label}[${i}]: ${row.values[i]} vs ${expected}`);
      }
    }
    await page.close();
  });

  it("draws a montage's rows when zoomed out: its labels once each, bounds of each derivation per column", { timeout: 120_000 }, async () => {
    const page = await open(EEG_ZARR, '&t=0&span=60&ref=bipolar:Fp1-F7,Fp1-F3,F7-T7');
    let s = await state(page);
    assert.ok(s.level >= 1, `60 s on ${s.plot.width} px is a view level (${s.level})`);
    assert.deepEqual(s.rows.map((r) => r.label), ['Fp1-F7', 'Fp1-F3', 'F7-T7', 'EOG', 'ECG'], 'no raw label twice');
    assert.match(s.note, /montage's rows/);
    const factor = 4 ** s.level;
    const columnRange = (label: string, c: number): [number, number] => {
      const x = source.get(label)!.slice(c * factor, (c + 1) * factor);
      return [Math.min(...x), Math.max(...x)];
    };
    for (const row of s.rows) {
      const [a, b] = row.label.split('-') as [string, string | undefined];
      let checked = 0;
      for (let k = 0; k < row.values.length / 2; k += 3) {
        const c = s.valuesStart + k;
        const pa = columnRange(a, c);
        const expected = b ? [pa[0] - columnRange(b, c)[1], pa[1] - columnRange(b, c)[0]] : pa;
        // The stored envelopes are the digital extremes; the reader's physical values are the same samples.
        assert.ok(Math.abs(row.values[2 * k]! - expected[0]!) < 1e-6 && Math.abs(row.values[2 * k + 1]! - expected[1]!) < 1e-6, `${row.label} column ${c}: [${row.values[2 * k]}, ${row.values[2 * k + 1]}] vs ${expected}`);
        // The bound holds the derivation's true extremes over the column.
        if (b) {
          const d = source.get(a)!.slice(c * factor, (c + 1) * factor).map((v, i) => v - source.get(b)![c * factor + i]!);
          assert.ok(row.values[2 * k]! <= Math.min(...d) + 1e-9 && row.values[2 * k + 1]! >= Math.max(...d) - 1e-9, `${row.label} column ${c} holds the derivation`);
        }
        checked++;
      }
      assert.ok(checked > 50, `${checked} columns checked`);
    }
    await page.close();

    const avg = await open(EEG_ZARR, '&t=0&span=60&ref=avg&rows=32');
    s = await state(avg);
    assert.ok(s.level >= 1, `a view level (${s.level})`);
    const labels = s.rows.map((r) => r.label);
    assert.equal(new Set(labels).size, labels.length);
    assert.deepEqual(labels.slice(0, 2), ['Fp1-avg', 'F7-avg']);
    assert.deepEqual(labels.slice(-2), ['EOG', 'ECG']);
    await avg.close();
  });

  it('offers filter corners per channel type, bounded by the rate: an EMG at 2 kHz high-passes at 30 Hz', { timeout: 120_000 }, async () => {
    const eeg = await open(EEG_ZARR, '&t=0&span=10');
    const values = (page: Page, name: string) => page.locator(`#nds-viewer select[name=${name}] option`).evaluateAll((os) => os.map((o) => Number((o as HTMLOptionElement).value)).filter((v) => v > 0));
    const eegLp = await values(eeg, 'lp');
    assert.ok(Math.max(...eegLp) <= 100 && Math.max(...eegLp) < 0.45 * eegRate, `EEG at 256 Hz: low-pass up to 100 Hz (${eegLp})`);
    assert.ok(Math.max(...(await values(eeg, 'hp'))) <= 5);
    await eeg.close();

    const page = await open(CAP_ZARR, '&t=2&span=4&ch=EMG');
    const hp = await values(page, 'hp');
    const lp = await values(page, 'lp');
    assert.ok(hp.some((f) => f >= 30), `EMG high-pass reaches 30 Hz (${hp})`);
    assert.ok(lp.some((f) => f >= 500), `EMG low-pass reaches 500 Hz at 2048 Hz (${lp})`);
    assert.ok(lp.every((f) => f < capRate / 2), 'no corner at or past Nyquist');
    const before = await state(page);
    await page.locator('#nds-viewer select[name=hp]').selectOption('30');
    await waitReady(page, before.renders);
    const s = await state(page);
    assert.equal(s.filter.hp, 30);
    // The 400 µV 3 Hz movement is gone (|H(3 Hz)| of a 30 Hz Butterworth run twice is 1e-4); the 150 Hz remains.
    let worst = 0;
    for (let i = 0; i < s.rows[0]!.values.length; i++) worst = Math.max(worst, Math.abs(s.rows[0]!.values[i]! - 50 * sin(150, (s.valuesStart + i) / capRate)));
    assert.ok(worst < 5, `EMG after a 30 Hz high-pass is its 150 Hz component within 5 µV (worst ${worst.toFixed(2)})`);
    await page.close();
  });

  it('offers A1+A2 as linked ears in a 10-20 recording, not on a BioSemi cap whose A1/A2 are scalp electrodes', { timeout: 120_000 }, async () => {
    const eeg = await open(EEG_ZARR, '&t=0&span=10');
    const options = (page: Page) => page.locator('#nds-viewer select[name=ref] option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.ok((await options(eeg)).includes('A1+A2'), 'linked ears offered in a 10-20 recording');
    await eeg.close();
    const biosemi = await open(CAP_ZARR, '&t=0&span=4');
    assert.ok(!(await options(biosemi)).includes('A1+A2'), 'no linked ears on a cap named A1…A4, B1, B2');
    await biosemi.close();
  });

  it('draws channels in µS, °C and ARU on their own scale, in their own unit', { timeout: 120_000 }, async () => {
    const page = await open(CAP_ZARR, '&t=0&span=4&ch=A1,GSR,Temp,Pleth');
    const s = await state(page);
    assert.deepEqual(s.rows.map((r) => [r.label, r.unit, r.scale]), [['A1', 'µV', 100], ['GSR', 'µS', 'auto'], ['Temp', '°C', 'auto'], ['Pleth', 'ARU', 'auto']]);
    for (const [i, row] of s.rows.entries()) {
      if (row.scale !== 'auto') continue;
      // Its own range fills 80 % of its row (autoRowScale): the pixels a unit spans follow from the range alone.
      const [lo, hi] = s.ranges[i]!;
      assert.ok(Math.abs(row.pixelsPerUnit - (0.8 * s.plot.rowHeight) / (hi - lo)) < 1e-6 * row.pixelsPerUnit, `${row.label}: ${row.pixelsPerUnit} px/${row.unit}`);
    }
    const scales = (await page.locator('#nds-viewer .viewer-scales').textContent())!;
    assert.match(scales, /EEG 100 µV/);
    assert.doesNotMatch(scales, /GSR|TEMP/, 'no sensitivity in µV offered for µS or °C');
    // The cursor readout speaks the row's unit.
    const box = (await page.locator('#nds-viewer canvas.viewer-traces').boundingBox())!;
    await page.mouse.move(box.x + s.plot.left + 200, box.y + s.plot.top + 2.5 * s.plot.rowHeight);
    assert.match((await page.locator("#nds-viewer .viewer-readout").textContent())!, /Temp [\d.]+( … [\d.]+)? °C$/);
    await page.close();
  });

  it('puts a legend on the spectrum: one entry per line, in its colour', { timeout: 120_000 }, async () => {
    const page = await open(EEG_ZARR, '&t=0&span=10&ch=Fp1,F7,T7,Cz');
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('s');
    await page.waitForFunction(() => window.ndsViewer?.spectrum !== undefined, undefined, { timeout: 10_000 });
    const spectrum = (await state(page)).spectrum!;
    const legend = page.locator('#nds-viewer .viewer-spectrum-legend li');
    assert.deepEqual(await legend.allTextContents(), ['Fp1', 'F7', 'T7', 'Cz']);
    assert.deepEqual(await legend.evaluateAll((ls) => ls.map((l) => (l as HTMLElement).dataset['colour'])), spectrum.rows.map((r) => r.colour));
    assert.equal(new Set(spectrum.rows.map((r) => r.colour)).size, 4, 'four rows of one type, four colours');
    assert.ok(await legend.first().isVisible(), 'the legend is shown');
    await page.close();
  });

  it('keeps the last time label, the events panel duration column and the recordings table inside their boxes', { timeout: 120_000 }, async () => {
    const page = await open(EEG_ZARR, '&t=0&span=10&time=clock');
    const s = await state(page);
    assert.ok(s.axis.length >= 5, `${s.axis.length} time labels`);
    const last = s.axis.at(-1)!;
    assert.ok(last.right <= s.canvas.width && s.axis.every((a) => a.left >= 0), `the last label ${last.text} ends at ${last.right.toFixed(1)} of ${s.canvas.width} px`);

    await page.locator('#nds-viewer button[data-panel=events]').click();
    const panel = page.locator('#nds-viewer .viewer-panel');
    await page.waitForFunction(() => document.querySelectorAll('#nds-viewer .viewer-panel tbody tr').length === 8);
    const fits = await panel.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const cells = [...el.querySelectorAll('tbody tr td:last-child')].map((td) => td.getBoundingClientRect().right);
      return { scroll: el.scrollWidth, client: el.clientWidth, right: box.right, cells };
    });
    assert.ok(fits.scroll <= fits.client, `the panel does not scroll sideways (${fits.scroll} > ${fits.client})`);
    assert.ok(fits.cells.every((r) => r <= fits.right), 'every duration cell ends inside the panel');
    assert.deepEqual(await panel.locator('tbody tr').first().locator('td').last().textContent(), '1.250 s');
    await page.close();

    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    await phone.goto(`${server.url}/datasets/${ID}`);
    const table = await phone.locator('table.recordings').evaluate((el) => ({ right: el.getBoundingClientRect().right, page: document.documentElement.scrollWidth }));
    assert.ok(table.right <= 390, `the recordings table ends at ${table.right} px on a 390 px screen`);
    assert.ok(table.page <= 390, `the page does not scroll sideways (${table.page} px)`);
    await phone.close();
  });
});
