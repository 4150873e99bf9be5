/**
 * The viewer in a real chromium, reading through the real gateway: it draws the traces the source file
 * holds (pixels checked against values computed here from the reader), scrubs and zooms across view
 * levels, and fetches only the chunks covering the window plus one chunk of prefetch each side.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { writeSyntheticRecording } from '../../bench/conversion-synthetic.js';
import { openRecording } from '../../src/formats/readers/open-recording.js';
import type { ViewerState } from '../../src/web/viewer/signal-viewer.js';
import { createAccount } from '../support/accounts.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { readAll } from '../formats/support/read-all.js';
import { fixturesDir } from '../formats/support/fixtures.js';
import { parseChunkPath, publishDataset } from './viewer-support.js';

const ID = 'nd000701';
const FIXTURE = 'sub-01/eeg/sub-01_task-fixture_eeg.zarr';
const SYNTHETIC = 'sub-02/eeg/sub-02_task-synthetic_eeg.zarr';
const UNEVEN = 'sub-03/eeg/sub-03_task-uneven_eeg.zarr';
const fixtureFile = path.join(fixturesDir, 'mne-python/brainvision/test.vhdr');
const unevenFile = path.join(fixturesDir, 'mne-python/edf/test_uneven_samp.edf');

describe('dataset viewer in chromium', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let work: string;
  let zarrBase: string;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-'));
    const synthetic = path.join(work, 'synthetic.edf');
    // 20 channels, 256 Hz, 600 s: 150 level-0 chunks of 1024 samples and five view levels.
    await writeSyntheticRecording({ path: synthetic, bdf: false, channels: 20, rate: 256, bytes: 256 * 21 + 20 * 256 * 2 * 600 });
    server = await startTestServer();
    const owner = await createAccount(server);
    await publishDataset(server, { id: ID, ownerId: owner.user.id, name: 'Viewer test', recordings: [{ file: fixtureFile, zarr: FIXTURE }, { file: synthetic, zarr: SYNTHETIC }, { file: unevenFile, zarr: UNEVEN }] });
    zarrBase = `${server.config.zarrCacheBaseUrl}/${ID}/zarr/`;
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function openViewer(recording: string): Promise<{ page: Page; requests: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (err) => console.error('page error:', err));
    // Autoscaled rows, 16 a page: the layout these pixel checks compute.
    await page.goto(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(recording)}&scale=auto&rows=16`);
    await waitReady(page);
    return { page, requests };
  }

  it('draws the fixture recording where its physical values map, at a view level and at level 0', async () => {
    const reader = await openRecording(fixtureFile);
    const digital = await readAll(reader);
    const values = digital.map((samples, c) => samples.map((d) => d * reader.channels[c]!.scale + reader.channels[c]!.offset));
    await reader.close();
    const { page } = await openViewer(FIXTURE);

    let state = await viewerState(page);
    assert.equal(state.nSamples, values[0]!.length);
    assert.ok(state.level >= 1, `the whole 7.9 s fits the screen through a view level (got ${state.level})`);
    await checkTraces(page, state, values);

    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('+');
    await waitReady(page, state.renders);
    state = await viewerState(page);
    assert.equal(state.level, 0, 'half the recording on ~1100 px shows the samples themselves');
    await checkTraces(page, state, values);
    await page.close();
  });

  it("lists a recording's own markers (no _events.tsv) by time, type and duration, without a value column", async () => {
    const { page } = await openViewer(FIXTURE);
    await page.locator('#nds-viewer button[data-panel=events]').click();
    const rows = page.locator('#nds-viewer .viewer-panel tbody tr');
    await rows.first().waitFor();
    assert.deepEqual(await page.locator('#nds-viewer .viewer-panel thead td').allTextContents(), ['time', 'type', 'duration']);
    const cells = await rows.first().locator('td').allTextContents();
    assert.equal(cells.length, 3);
    assert.match(cells[0]!, /s$/, `a time: ${cells[0]}`);
    assert.ok(cells[1]!.length > 0, 'a type');
    await page.close();
  });

  it('scrubs with the mouse and keys and zooms with the wheel down to single samples, changing the level', async () => {
    const { page } = await openViewer(SYNTHETIC);
    const first = await viewerState(page);
    assert.equal(first.level, 0);
    assert.equal(first.start, 0);
    assert.equal(first.end, 2560, 'the initial window is 10 s');

    const canvas = page.locator('#nds-viewer canvas.viewer-traces');
    const box = (await canvas.boundingBox())!;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.8, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.8 - 300, y, { steps: 5 });
    await page.mouse.up();
    await waitReady(page, first.renders);
    const dragged = await viewerState(page);
    const expected = (300 * (first.end - first.start)) / first.plot.width;
    assert.ok(Math.abs(dragged.start - expected) < 1e-6, `dragging 300 px left moves the window right by 300 px worth of samples (${dragged.start} vs ${expected})`);

    await page.keyboard.press('End');
    await waitReady(page, dragged.renders);
    const atEnd = await viewerState(page);
    assert.equal(atEnd.end, atEnd.nSamples);

    let state = atEnd;
    for (let i = 0; i < 20; i++) {
      await page.mouse.move(box.x + box.width * 0.5, y);
      await page.mouse.wheel(0, 100);
      await waitReady(page, state.renders);
      state = await viewerState(page);
    }
    assert.equal(state.end - state.start, state.nSamples, 'zooming out stops at the whole recording');
    assert.equal(state.level, expectedLevel(state.nSamples, state.plot.width, 5));
    assert.ok(state.level >= 2);

    for (let i = 0; i < 50; i++) {
      await page.mouse.wheel(0, -100);
      await waitReady(page, state.renders);
      state = await viewerState(page);
    }
    assert.equal(state.level, 0);
    assert.ok(state.end - state.start <= 10, `down to a few samples across the screen (${state.end - state.start})`);
    await page.close();
  });

  it('switches between channel groups of different rates with the group picker, keeping the time on screen', async () => {
    const reader = await openRecording(unevenFile);
    const digital = await readAll(reader);
    const channels = reader.channels.map((c, i) => ({ ...c, values: digital[i]!.map((d) => d * c.scale + c.offset) }));
    await reader.close();
    const rates = [...new Set(channels.map((c) => c.rate))].sort((a, b) => b - a);
    assert.equal(rates.length, 2, 'the fixture has two rates');
    const { page, requests } = await openViewer(UNEVEN);
    const picker = page.locator('#nds-viewer select[name=group]');
    assert.ok(await picker.isVisible(), 'the group picker shows when there is a choice');
    const options = await picker.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.equal(options.length, 2);

    for (const [i, rate] of rates.entries()) {
      let state = await viewerState(page);
      if (i > 0) {
        const before = state;
        await picker.selectOption(options[i]!);
        await page.waitForFunction((g) => window.ndsViewer?.group === g && window.ndsViewer.ready === true, options[i]!, { timeout: 15_000 });
        state = await viewerState(page);
        assert.ok(Math.abs(state.start / state.rate - before.start / before.rate) < 1 / rates[1]! + 1e-9, 'the window starts at the same time');
        assert.match(page.url(), new RegExp(`group=${options[i]}`));
      }
      assert.equal(state.group, options[i]);
      assert.equal(state.rate, rate);
      const values = channels.filter((c) => c.rate === rate).map((c) => c.values);
      assert.equal(state.nSamples, values[0]!.length);
      await checkTraces(page, state, values);
    }
    // Back to the first group: its chunks come from the cache.
    const firstGroupChunks = () => requests.filter((u) => u.includes(`/${options[0]}/`) && u.includes('/c/')).length;
    const fetched = firstGroupChunks();
    assert.ok(fetched > 0);
    await picker.selectOption(options[0]!);
    await page.waitForFunction((g) => window.ndsViewer?.group === g && window.ndsViewer.ready === true, options[0]!, { timeout: 15_000 });
    assert.equal(firstGroupChunks(), fetched, 'no chunk of the first group is fetched again');
    await page.close();

    // Without JavaScript the picker is a form field: ?group= picks the group the page opens with.
    const html = await (await fetch(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(UNEVEN)}&group=${options[1]}`, { headers: { accept: 'text/html' } })).text();
    const config = JSON.parse(/id="nds-viewer-config">(.*?)<\/script>/.exec(html)![1]!);
    assert.equal(config.group, options[1]);
    assert.ok(config.metadata[`${options[1]}/0/zarr.json`], 'the chosen group\'s metadata is embedded');
  });

  it('requests only the chunks covering each window it showed, plus one chunk each side, each once', async () => {
    const { page, requests } = await openViewer(SYNTHETIC);
    const states: ViewerState[] = [await settled(page)];
    const act = async (key: string) => {
      const before = states.at(-1)!;
      await page.keyboard.press(key);
      await waitReady(page, before.renders);
      states.push(await settled(page));
    };
    await page.locator('#nds-viewer').focus();
    for (const key of ['ArrowRight', 'ArrowRight', 'PageDown', 'End', '-', '-', '-', '-', '-', '-', 'Home', '+', '+']) await act(key);

    const levels = new Set(states.map((s) => s.level));
    assert.ok(levels.size >= 3, `the walk crossed several levels (${[...levels]})`);
    const allowed = new Set<string>();
    const needed = new Set<string>();
    for (const s of states) {
      assert.equal(s.level, expectedLevel(s.end - s.start, s.plot.width, 5), 'the level is the one that fits the screen');
      const chunkColumns = s.level === 0 ? 1024 : 1024;
      const factor = 4 ** s.level;
      const columns = Math.ceil(s.nSamples / factor);
      const nChunks = Math.ceil(columns / chunkColumns);
      const first = Math.floor(Math.floor(s.start / factor) / chunkColumns);
      const last = Math.min(nChunks - 1, Math.floor((Math.ceil(s.end / factor) - 1) / chunkColumns));
      for (let tc = first; tc <= last; tc++) needed.add(`${s.level}/${tc}`);
      for (let tc = Math.max(0, first - 1); tc <= Math.min(nChunks - 1, last + 1); tc++) allowed.add(`${s.level}/${tc}`);
    }
    const chunkRequests: string[] = [];
    for (const url of requests) {
      if (!url.startsWith(zarrBase)) {
        assert.match(new URL(url).pathname, /^\/(datasets\/nd000701(\/annotations(\/history)?)?|assets\/((nds|viewer)\.css|viewer(-[A-Za-z0-9]+)?\.js))$/, `only the page, its assets, the recording's annotations and the gateway are fetched: ${url}`);
        continue;
      }
      const key = url.slice(zarrBase.length);
      assert.ok(key.startsWith(`${SYNTHETIC}/`), `only the shown recording is read: ${key}`);
      const inStore = key.slice(SYNTHETIC.length + 1);
      if (inStore.endsWith('zarr.json') || inStore.startsWith('events/')) continue;
      const chunk = parseChunkPath(inStore);
      assert.ok(chunk, `a chunk of a signal array: ${inStore}`);
      assert.equal(chunk.channelChunk, 0);
      chunkRequests.push(`${chunk.level}/${chunk.timeChunk}`);
    }
    assert.equal(new Set(chunkRequests).size, chunkRequests.length, `no chunk is fetched twice: ${chunkRequests}`);
    for (const c of chunkRequests) assert.ok(allowed.has(c), `chunk ${c} covers a shown window or is its prefetch (allowed: ${[...allowed]})`);
    for (const c of needed) assert.ok(chunkRequests.includes(c), `chunk ${c} on screen was fetched`);
    const last = states.at(-1)!;
    assert.equal(last.channelFirst, 16, 'PageDown showed the second page of channels');
    assert.equal(last.channelCount, 4);
    await page.close();
  });
});

function expectedLevel(span: number, width: number, levels: number): number {
  if (span <= 2 * width) return 0;
  return Math.max(0, Math.min(levels, Math.floor(Math.log(span / width) / Math.log(4) + 1e-9)));
}

async function viewerState(page: Page): Promise<ViewerState> {
  return page.evaluate(() => window.ndsViewer as ViewerState);
}

/** Waits until the viewer drew a complete frame newer than `afterRenders`. */
async function waitReady(page: Page, afterRenders = 0): Promise<void> {
  await page.waitForFunction((n) => window.ndsViewer?.ready === true && window.ndsViewer.renders > n && document.getElementById('nds-viewer')?.dataset['ready'] === 'true', afterRenders, { timeout: 15_000 });
}

/** The state once the prefetch has landed too (no request in flight for 150 ms). */
async function settled(page: Page): Promise<ViewerState> {
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page.waitForTimeout(150);
  return viewerState(page);
}

/**
 * The canvas pixels of each row against the expected column ranges: for every pixel column, the
 * samples it overlaps (at 4^level granularity) give a physical min/max, widened to meet the left
 * neighbour's, mapped with the row's autoscale (its on-screen min/max fills 80 % of the row).
 */
async function checkTraces(page: Page, s: ViewerState, values: number[][]): Promise<void> {
  const measured = await page.evaluate(({ left, top, width, height }) => {
    const canvas = document.querySelector<HTMLCanvasElement>('#nds-viewer canvas.viewer-traces')!;
    const data = canvas.getContext('2d')!.getImageData(left, top, width, height).data;
    // Inline on purpose: no named helper may cross into the page (the test transpiler would wrap it).
    const columns: number[][] = [];
    for (let x = 0; x < width; x++) {
      const ys: number[] = [];
      for (let y = 0; y < height; y++) {
        const i = (y * width + x) * 4;
        if (data[i] === 0x1f && data[i + 1] === 0x4e && data[i + 2] === 0x9c) ys.push(y + top);
      }
      columns.push(ys);
    }
    return columns;
  }, { left: s.plot.left, top: Math.floor(s.plot.top), width: s.plot.width, height: Math.ceil(s.plot.height) });

  const factor = 4 ** s.level;
  const spp = (s.end - s.start) / s.plot.width;
  let checked = 0;
  for (let row = 0; row < s.channelCount; row++) {
    const v = values[s.channelFirst + row]!;
    const lo = new Float64Array(s.plot.width).fill(NaN);
    const hi = new Float64Array(s.plot.width).fill(NaN);
    for (let x = 0; x < s.plot.width; x++) {
      const t0 = s.start + x * spp;
      const c0 = Math.floor(t0 / factor);
      const c1 = Math.max(c0, Math.ceil((t0 + spp) / factor) - 1);
      const a = c0 * factor;
      const b = Math.min(v.length, (c1 + 1) * factor);
      if (a >= v.length) continue;
      let min = Infinity;
      let max = -Infinity;
      for (let i = a; i < b; i++) {
        min = Math.min(min, v[i]!);
        max = Math.max(max, v[i]!);
      }
      lo[x] = min;
      hi[x] = max;
    }
    const wLo = Float64Array.from(lo);
    const wHi = Float64Array.from(hi);
    for (let x = 1; x < s.plot.width; x++) {
      if (Number.isNaN(lo[x]!) || Number.isNaN(lo[x - 1]!)) continue;
      wLo[x] = Math.min(lo[x]!, hi[x - 1]!);
      wHi[x] = Math.max(hi[x]!, lo[x - 1]!);
    }
    const rangeMin = Math.min(...[...lo].filter((x) => !Number.isNaN(x)));
    const rangeMax = Math.max(...[...hi].filter((x) => !Number.isNaN(x)));
    assert.ok(Math.abs(s.ranges[row]![0] - rangeMin) < 1e-9 && Math.abs(s.ranges[row]![1] - rangeMax) < 1e-9, `row ${row} autoscale [${s.ranges[row]}] = [${rangeMin}, ${rangeMax}]`);
    const rowTop = s.plot.top + row * s.plot.rowHeight;
    const mid = (rangeMin + rangeMax) / 2;
    const half = (rangeMax - rangeMin) / 2 || 1;
    const yOf = (value: number) => rowTop + s.plot.rowHeight / 2 - ((value - mid) / half) * (s.plot.rowHeight * 0.4);
    let good = 0;
    let drawn = 0;
    for (let x = 0; x < s.plot.width; x++) {
      if (Number.isNaN(wLo[x]!)) continue;
      drawn++;
      const expectTop = Math.round(yOf(wHi[x]!));
      const expectBottom = Math.round(yOf(wLo[x]!));
      const ys = measured[x]!.filter((y) => y >= Math.floor(rowTop) && y < rowTop + s.plot.rowHeight);
      if (ys.length === 0) continue;
      if (Math.abs(ys[0]! - expectTop) <= 1 && Math.abs(ys.at(-1)! - expectBottom) <= 1) good++;
    }
    assert.ok(drawn > s.plot.width * 0.9, `row ${row} covers the plot`);
    assert.ok(good >= drawn * 0.98, `row ${row}: ${good} of ${drawn} columns have their trace pixels where the values map`);
    checked++;
  }
  assert.equal(checked, Math.min(16, values.length));
}
