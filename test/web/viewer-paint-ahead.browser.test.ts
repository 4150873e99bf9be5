/**
 * Pixels painted ahead (issue 26): after a pan, the viewer paints the plot of the window one more step on while
 * idle, and the next pan puts those pixels on the canvas. In a real chromium: they are the very pixels a page
 * opened at that window paints, and a pan after a filter change shows the newly filtered traces, not the ones
 * painted ahead with the old filter.
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
import type { ViewerState } from '../../src/web/viewer/signal-viewer.js';
import { createAccount } from '../support/accounts.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { publishDataset } from './viewer-support.js';

const ID = 'nd000731';
const ZARR = 'sub-01/eeg/sub-01_task-ahead_eeg.zarr';
const rate = 256;
const filtered = 'rows=16&hp=1&lp=40&notch=50&ref=avg&span=10';

describe('viewer: the plot painted ahead of a pan', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let work: string;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-ahead-'));
    const file = path.join(work, 'ahead.edf');
    // 16 channels, 256 Hz, 120 s.
    await writeSyntheticRecording({ path: file, bdf: false, channels: 16, rate, bytes: 256 * 17 + 16 * rate * 2 * 120 });
    server = await startTestServer();
    const owner = await createAccount(server);
    await publishDataset(server, { id: ID, ownerId: owner.user.id, name: 'Viewer paint ahead', recordings: [{ file, zarr: ZARR }] });
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  const state = (page: Page) => page.evaluate(() => window.ndsViewer as ViewerState);

  async function open(query: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`${server.url}/datasets/${ID}?${query}`);
    await page.waitForFunction(() => window.ndsViewer?.ready === true, undefined, { timeout: 30_000 });
    return page;
  }

  /**
   * The plot's pixels, as RGBA bytes. Sent as base64: as an array of numbers, four million of them cost the
   * protocol's JSON most of a minute on a busy machine.
   */
  async function plotPixels(page: Page): Promise<Buffer> {
    const base64 = await page.evaluate(() => {
      const { plot } = window.ndsViewer!;
      const canvas = document.querySelector<HTMLCanvasElement>('canvas.viewer-traces')!;
      const data = canvas.getContext('2d')!.getImageData(plot.left, plot.top, plot.width, plot.height).data;
      let binary = '';
      for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
      return btoa(binary);
    });
    return Buffer.from(base64, 'base64');
  }

  /** Waits for the frame at `seconds` to be drawn complete. */
  async function frameAt(page: Page, seconds: number, hp: number | undefined): Promise<ViewerState> {
    await page.waitForFunction(([start, hp]) => window.ndsViewer?.start === start && window.ndsViewer.tracesReady && window.ndsViewer.filter.hp === (hp ?? undefined), [seconds * rate, hp ?? null] as const, { timeout: 30_000 });
    return state(page);
  }

  const differing = (a: Uint8Array, b: Uint8Array) => {
    let n = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
    return n;
  };

  /**
   * A filtered page opened at `t` s and panned one second on, once the window a second further is painted
   * ahead (the viewer does that while idle after a pan).
   */
  async function pannedOnceFrom(t: number): Promise<Page> {
    const page = await open(`${filtered}&t=${t}`);
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('ArrowRight');
    await frameAt(page, t + 1, 1);
    await page.waitForFunction((start) => document.getElementById('nds-viewer')!.dataset['paintedAhead'] === String(start), (t + 2) * rate, { timeout: 30_000 });
    return page;
  }

  it('puts on the canvas, after a second pan, the pixels a page opened at that window paints', async () => {
    const page = await pannedOnceFrom(20);
    await page.keyboard.press('ArrowRight');
    const panned = await frameAt(page, 22, 1);
    assert.equal(panned.plotPrepared, true, 'the pan found its plot painted ahead');
    const fresh = await open(`${filtered}&t=22`);
    assert.equal((await state(fresh)).plotPrepared, false);
    const [a, b] = [await plotPixels(page), await plotPixels(fresh)];
    assert.ok(a.length > 0 && a.length === b.length);
    assert.equal(differing(a, b), 0, 'the same pixels as painting the frame there');
    await page.close();
    await fresh.close();
  });

  it('paints, for a pan right after a filter change, the newly filtered traces, not the ones painted ahead', async () => {
    const page = await pannedOnceFrom(40);
    // The high-pass off and the pan in one task: one frame, at the window painted ahead, with other filters.
    await page.evaluate(() => {
      const root = document.getElementById('nds-viewer')!;
      const hp = root.querySelector<HTMLSelectElement>('select[name=hp]')!;
      hp.value = '';
      hp.dispatchEvent(new Event('change'));
      root.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
    });
    const panned = await frameAt(page, 42, undefined);
    assert.equal(panned.plotPrepared, false, 'the pixels painted ahead were for the old filters');
    const fresh = await open(`${filtered.replace('hp=1&', '')}&t=42`);
    const before = await open(`${filtered}&t=42`);
    const [a, b, old] = [await plotPixels(page), await plotPixels(fresh), await plotPixels(before)];
    assert.equal(differing(a, b), 0, 'the pixels of the new filters at that window');
    assert.ok(differing(a, old) > 1000, 'which differ from those of the old filters');
    for (const p of [page, fresh, before]) await p.close();
  });
});
