/**
 * The viewer's annotation mode in chromium (issue 26, item 3), against the API: an annotator drags a span and
 * the annotation the API then holds has the onset and duration of the pixels dragged (the viewer's own pixel →
 * time mapping, within a sample or a pixel); the label and the span are changed in place and the annotation is
 * deleted from the events panel; another user's changes appear within 5 s; an edit of an annotation someone
 * else changed meanwhile is refused and shown, not saved over theirs; a reader sees the spans and no mode.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { createSession, SESSION_COOKIE } from '../../src/accounts/sessions.js';
import type { User } from '../../src/db/accounts-tables.js';
import type { ViewerAnnotation } from '../../src/web/viewer/annotation-index.js';
import type { ViewerState } from '../../src/web/viewer/signal-viewer.js';
import { annotationColour } from '../../src/web/viewer/annotation-marks.js';
import { rowHeight, rowsShown } from '../../src/web/viewer/annotation-list.js';
import { bandAlpha } from '../../src/web/viewer/span-bitmap.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { publishDataset } from './viewer-support.js';

const ID = 'nd000826';
const ZARR = 'sub-01/eeg/sub-01_task-ann_eeg.zarr';
const RECORDING = 'sub-01/eeg/sub-01_task-ann_eeg';
const rate = 256;
const seconds = 60;
const labels = ['Fp1', 'Fp2', 'F3', 'F4', 'C3', 'C4', 'O1', 'O2'];

async function writeTree(root: string): Promise<string> {
  const dir = path.join(root, 'sub-01', 'eeg');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'sub-01_task-ann_eeg.edf');
  const step = 6400 / 65535;
  await writeFile(
    file,
    writeEdf({
      recordDuration: 1,
      records: seconds,
      signals: labels.map((label, k) => ({
        label,
        samplesPerRecord: rate,
        samples: Int16Array.from({ length: rate * seconds }, (_, i) => Math.round((30 * Math.sin(2 * Math.PI * (4 + k) * (i / rate)) + 3200) / step - 32768)),
      })),
    }),
  );
  await writeFile(path.join(dir, 'sub-01_task-ann_channels.tsv'), ['name\ttype\tunits', ...labels.map((l) => `${l}\tEEG\tuV`)].join('\n') + '\n');
  await writeFile(path.join(dir, 'sub-01_task-ann_events.tsv'), 'onset\tduration\ttrial_type\n5\t0\tblink\n40\t0\tblink\n');
  await writeFile(path.join(root, 'dataset_description.json'), JSON.stringify({ Name: 'annotations', BIDSVersion: '1.8.0' }));
  return file;
}

/** The viewer's last frame, without the rows' values (not needed here, and large). */
async function state(page: Page): Promise<ViewerState> {
  return page.evaluate(() => ({ ...window.ndsViewer!, rows: [] }) as unknown as ViewerState);
}

/** The CSS-pixel point of the page at time `t` (seconds) and the middle of page row `row` (deviceScaleFactor 1). */
async function pointAt(page: Page, s: ViewerState, t: number, row: number): Promise<{ x: number; y: number; column: number }> {
  const box = (await page.locator('#nds-viewer canvas.viewer-traces').boundingBox())!;
  const column = Math.round(s.plot.left + ((t * s.rate - s.start) * s.plot.width) / (s.end - s.start));
  return { x: box.x + column, y: box.y + s.plot.top + (row + 0.5) * s.plot.rowHeight, column };
}

/** The time the viewer gives pixel column `column`: its own mapping, rounded to a sample. */
function secondsOfColumn(s: ViewerState, column: number): number {
  return Math.round(s.start + ((column - s.plot.left) * (s.end - s.start)) / s.plot.width) / s.rate;
}

async function drag(page: Page, from: { x: number; y: number }, to: { x: number; y: number }): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 4 });
  await page.mouse.move(to.x, to.y, { steps: 4 });
  await page.mouse.up();
}

/** The share of the pixels of column `x` inside page row `row` (its borders left out) within 6 of `rgb`. */
async function shareOf(page: Page, s: ViewerState, x: number, row: number, rgb: readonly number[]): Promise<number> {
  return page.evaluate(
    ({ x, top, height, rgb }) => {
      const data = document.querySelector<HTMLCanvasElement>('#nds-viewer canvas.viewer-traces')!.getContext('2d')!.getImageData(x, top, 1, height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if ([0, 1, 2].every((k) => Math.abs(data[i + k]! - rgb[k]!) <= 6)) n++;
      return n / (data.length / 4);
    },
    { x, top: Math.ceil(s.plot.top + row * s.plot.rowHeight) + 1, height: Math.floor(s.plot.rowHeight) - 2, rgb },
  );
}

/** `#rrggbb` at `alpha` over `under` (white unless given). */
function over(hex: string, alpha: number, under: readonly number[] = [255, 255, 255]): number[] {
  return [1, 3, 5].map((i, k) => parseInt(hex.slice(i, i + 2), 16) * alpha + under[k]! * (1 - alpha));
}

/** Calls `read` until `done` holds of its answer (10 s at most): the API is read, not the page. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the annotation mode of the viewer in chromium', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let work: string;
  let owner: TestAccount;
  let annotator: TestAccount;
  let reader: TestAccount;

  const listAnnotations = async (account: TestAccount) => {
    const r = await account.api(`/datasets/${ID}/annotations?path=${encodeURIComponent(RECORDING)}`);
    assert.equal(r.status, 200, await r.clone().text());
    return (await r.json()) as { annotations: ViewerAnnotation[]; revision: number };
  };

  async function open(user: User): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, deviceScaleFactor: 1 });
    const { token } = await createSession(server.deps.db, user.id, server.clock.now());
    await context.addCookies([{ name: SESSION_COOKIE, value: token, url: server.url }]);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(ZARR)}&t=10&span=10`);
    await page.waitForFunction(() => window.ndsViewer?.ready === true && window.ndsViewer.annotationsLoaded, undefined, { timeout: 30_000 });
    assert.deepEqual(errors, []);
    return { context, page };
  }

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-annotations-'));
    const file = await writeTree(work);
    server = await startTestServer();
    owner = await createAccount(server);
    annotator = await createAccount(server);
    reader = await createAccount(server);
    await publishDataset(server, { id: ID, ownerId: owner.user.id, name: 'Annotated', visibility: 'private', recordings: [{ file, zarr: ZARR, bidsRoot: work, path: RECORDING }] });
    for (const [who, role] of [[annotator, 'annotator'], [reader, 'reader']] as const) {
      const r = await owner.api(`/datasets/${ID}/members/${who.user.username}`, { method: 'PUT', body: JSON.stringify({ role }) });
      assert.ok(r.ok, await r.text());
    }
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('an annotator drags a span, edits its label and its end in place, and deletes it from the events panel', async () => {
    const { context, page } = await open(annotator.user);
    try {
      const toggle = page.locator('#nds-viewer button[data-annotate]');
      await toggle.click();
      assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
      const s = await state(page);
      assert.equal(s.annotationsTotal, 0);
      // Rows 1 to 3 dragged across, from 12 s to 14.5 s.
      const from = await pointAt(page, s, 12, 1);
      const to = await pointAt(page, s, 14.5, 3);
      const windowBefore = s.start;
      await drag(page, from, to);
      const form = page.locator('#nds-viewer form.viewer-annotation-form');
      await form.waitFor({ state: 'visible' });
      // The dataset's event types are offered as labels.
      assert.deepEqual(await page.locator('#nds-annotation-labels option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)), ['blink']);
      await form.locator('input[name=annotation-label]').fill('spike-wave');
      await form.locator('select[name=annotation-rows]').selectOption('dragged');
      await form.locator('input[name=annotation-note]').fill('first pass');
      await form.locator('button[data-action=save]').click();
      await form.waitFor({ state: 'hidden' });
      assert.equal((await state(page)).start, windowBefore, 'a drag in the annotation mode does not scrub');

      const { annotations, revision } = await listAnnotations(annotator);
      assert.equal(annotations.length, 1);
      const made = annotations[0]!;
      const onset = secondsOfColumn(s, from.column);
      const end = secondsOfColumn(s, to.column);
      const secondsPerPixel = (s.end - s.start) / s.plot.width / s.rate;
      // Within a pixel (the page may place the canvas at a fractional CSS pixel) of the viewer's own mapping,
      // and on a sample.
      const pixel = secondsPerPixel + 1e-9;
      assert.ok(Math.abs(made.onset - onset) <= pixel, `onset ${made.onset} vs ${onset}`);
      assert.ok(Math.abs(made.onset - 12) <= pixel, `onset ${made.onset} within a pixel of 12 s`);
      assert.ok(Math.abs(made.onset * s.rate - Math.round(made.onset * s.rate)) < 1e-6, 'on a sample');
      assert.ok(Math.abs(made.duration - (end - onset)) <= 2 * pixel, `duration ${made.duration} vs ${end - onset}`);
      assert.ok(Math.abs(made.duration - 2.5) <= 2 * pixel);
      assert.deepEqual(made.channels, s.rowChannels.slice(1, 4));
      assert.deepEqual(made.channels, ['Fp2', 'F3', 'F4']);
      assert.equal(made.label, 'spike-wave');
      assert.equal(made.note, 'first pass');
      assert.equal(made.author, annotator.user.username);

      // Drawn where the mapping puts it, on its three rows.
      await page.waitForFunction((id) => window.ndsViewer!.annotationsDrawn.some((a) => a.id === id && !a.draft), made.id);
      const drawn = (await state(page)).annotationsDrawn.find((a) => a.id === made.id)!;
      const columnOf = (t: number) => s.plot.left + ((t * s.rate - s.start) * s.plot.width) / (s.end - s.start);
      assert.ok(Math.abs(drawn.x0 - columnOf(made.onset)) <= 1 && Math.abs(drawn.x1 - columnOf(made.onset + made.duration)) <= 1, JSON.stringify(drawn));
      assert.deepEqual(drawn.rows, [1, 2, 3]);
      assert.equal(drawn.author, annotator.user.username);

      // Click inside it: the form opens on it; a new label is saved.
      const middle = await pointAt(page, s, made.onset + made.duration / 2, 2);
      await page.mouse.click(middle.x, middle.y);
      await form.waitFor({ state: 'visible' });
      assert.equal(await form.getAttribute('data-annotation'), made.id);
      assert.equal(await form.locator('input[name=annotation-label]').inputValue(), 'spike-wave');
      await form.locator('input[name=annotation-label]').fill('sharp-wave');
      await form.locator('button[data-action=save]').click();
      let now = await until(() => listAnnotations(annotator), (a) => a.revision > revision);
      assert.equal(await form.locator('.viewer-annotation-message').textContent(), '');
      assert.equal(now.annotations[0]!.label, 'sharp-wave');
      assert.equal(now.annotations[0]!.onset, made.onset);
      assert.equal(now.revision, revision + 1);
      await form.locator('button[data-action=cancel]').click();

      // Drag its end from 14.5 s to 16 s: saved on release.
      const endPoint = await pointAt(page, s, made.onset + made.duration, 2);
      const later = await pointAt(page, s, 16, 2);
      await drag(page, { x: endPoint.x, y: endPoint.y }, later);
      const labelled = now.revision;
      now = await until(() => listAnnotations(annotator), (a) => a.revision > labelled);
      const moved = now.annotations[0]!;
      assert.equal(moved.onset, made.onset);
      assert.ok(Math.abs(moved.onset + moved.duration - secondsOfColumn(s, later.column)) <= pixel, `end ${moved.onset + moved.duration}`);
      assert.ok(Math.abs(moved.onset + moved.duration - 16) <= pixel);

      // The events panel lists it with its author; Delete there removes it.
      await page.locator('#nds-viewer button[data-panel=events]').click();
      const row = page.locator(`#nds-viewer .viewer-annotations tr[data-annotation="${made.id}"]`);
      await row.waitFor();
      assert.match((await row.textContent())!, new RegExp(`sharp-wave.*${annotator.user.username}`));
      await row.locator('button[data-action=delete]').click();
      await page.waitForFunction((id) => !window.ndsViewer!.annotationsDrawn.some((a) => a.id === id), made.id);
      assert.deepEqual((await listAnnotations(annotator)).annotations, []);
      assert.equal(await row.count(), 0);
    } finally {
      await context.close();
    }
  });

  it("another user's new, changed and deleted annotations appear within 5 s", async () => {
    const { context, page } = await open(annotator.user);
    try {
      const made = await owner.api(`/datasets/${ID}/annotations`, { method: 'POST', body: JSON.stringify({ path: RECORDING, onset: 16, duration: 1.5, label: 'artefact' }) });
      assert.equal(made.status, 201);
      const id = ((await made.json()) as { annotations: ViewerAnnotation[] }).annotations[0]!.id;
      let started = Date.now();
      await page.waitForFunction((id) => window.ndsViewer!.annotationsDrawn.some((a) => a.id === id), id, { timeout: 5000, polling: 50 });
      const seenAfter = Date.now() - started;
      const s = await state(page);
      const drawn = s.annotationsDrawn.find((a) => a.id === id)!;
      // For all channels: every row of the page.
      assert.deepEqual(drawn.rows, s.rowChannels.map((_, i) => i));
      assert.equal(drawn.author, owner.user.username);
      assert.ok(seenAfter < 5000, `seen after ${seenAfter} ms`);

      const changed = await owner.api(`/datasets/${ID}/annotations/${id}`, { method: 'PATCH', body: JSON.stringify({ label: 'muscle' }) });
      assert.equal(changed.status, 200);
      started = Date.now();
      await page.waitForFunction((id) => window.ndsViewer!.annotationsDrawn.some((a) => a.id === id && a.label === 'muscle'), id, { timeout: 5000, polling: 50 });
      assert.ok(Date.now() - started < 5000);

      const gone = await owner.api(`/datasets/${ID}/annotations/${id}`, { method: 'DELETE' });
      assert.equal(gone.status, 200);
      await page.waitForFunction((id) => !window.ndsViewer!.annotationsDrawn.some((a) => a.id === id), id, { timeout: 5000, polling: 50 });
    } finally {
      await context.close();
    }
  });

  it('an edit of an annotation someone changed meanwhile is refused, shown and reloaded, not saved over theirs', async () => {
    const made = await annotator.api(`/datasets/${ID}/annotations`, { method: 'POST', body: JSON.stringify({ path: RECORDING, onset: 13, duration: 2, label: 'spindle' }) });
    const id = ((await made.json()) as { annotations: ViewerAnnotation[] }).annotations[0]!.id;
    const { context, page } = await open(annotator.user);
    try {
      await page.locator('#nds-viewer button[data-panel=events]').click();
      await page.locator(`#nds-viewer .viewer-annotations tr[data-annotation="${id}"] button[data-action=edit]`).click();
      const form = page.locator('#nds-viewer form.viewer-annotation-form');
      await form.waitFor({ state: 'visible' });
      // Meanwhile, on another device, the same annotation gets another label.
      const elsewhere = await annotator.api(`/datasets/${ID}/annotations/${id}`, { method: 'PATCH', body: JSON.stringify({ label: 'k-complex' }) });
      assert.equal(elsewhere.status, 200);
      await form.locator('input[name=annotation-label]').fill('mine');
      await form.locator('button[data-action=save]').click();
      const message = form.locator('.viewer-annotation-message');
      await page.waitForFunction(() => /changed this annotation meanwhile/.test(document.querySelector('.viewer-annotation-message')?.textContent ?? ''));
      assert.match((await message.textContent())!, /label "mine"/);
      // Reloaded: the form shows the version that won, and the server kept it.
      assert.equal(await form.locator('input[name=annotation-label]').inputValue(), 'k-complex');
      const now = await listAnnotations(annotator);
      assert.equal(now.annotations.find((a) => a.id === id)?.label, 'k-complex');
    } finally {
      await context.close();
    }
  });

  it('a reader sees the spans and the list but has no annotation mode', async () => {
    const { context, page } = await open(reader.user);
    try {
      const { annotations } = await listAnnotations(reader);
      assert.ok(annotations.length > 0);
      const s = await state(page);
      assert.deepEqual(
        s.annotationsDrawn.map((a) => a.id).sort(),
        annotations.filter((a) => a.onset < s.end / s.rate && a.onset + a.duration >= s.start / s.rate).map((a) => a.id).sort(),
      );
      assert.equal(await page.locator('#nds-viewer button[data-annotate]').count(), 0);
      await page.locator('#nds-viewer button[data-panel=events]').click();
      await page.locator('#nds-viewer .viewer-annotations tr[data-annotation]').first().waitFor();
      assert.equal(await page.locator('#nds-viewer .viewer-annotations button[data-action]').count(), 0);
      // A drag scrubs, as without annotations.
      const from = await pointAt(page, s, 14, 1);
      await drag(page, from, { x: from.x - 200, y: from.y });
      await page.waitForFunction((start) => window.ndsViewer!.start > start, s.start);
      assert.equal((await listAnnotations(reader)).annotations.length, annotations.length);
    } finally {
      await context.close();
    }
  });

  it("draws each span as a band in its label's colour over its rows, over every row for all channels, the later over the earlier", async () => {
    const [first, second] = ['spike', 'arousal'];
    assert.notEqual(annotationColour(first), annotationColour(second));
    const made = await annotator.api(`/datasets/${ID}/annotations`, {
      method: 'POST',
      body: JSON.stringify([
        { path: RECORDING, onset: 53, duration: 2, label: first },
        { path: RECORDING, onset: 54, duration: 2.5, channels: ['O1'], label: second },
      ]),
    });
    assert.equal(made.status, 201, await made.clone().text());
    const { context, page } = await open(reader.user);
    try {
      await page.goto(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(ZARR)}&t=50&span=10`);
      await page.waitForFunction(() => window.ndsViewer?.ready === true && window.ndsViewer.annotationsLoaded && window.ndsViewer.start === 50 * 256);
      const s = await state(page);
      assert.equal(s.annotationMode, 'spans');
      const column = (t: number) => Math.round(s.plot.left + ((t * s.rate - s.start) * s.plot.width) / (s.end - s.start));
      const [fp1, o1] = [s.rowChannels.indexOf('Fp1'), s.rowChannels.indexOf('O1')];
      const firstTint = over(annotationColour(first), bandAlpha);
      const both = over(annotationColour(second), bandAlpha, firstTint);
      const secondTint = over(annotationColour(second), bandAlpha);
      // Most of a row's column is the band's colour (the trace drawn under it is the rest); times off the grid's lines.
      assert.ok((await shareOf(page, s, column(53.3), fp1, firstTint)) > 0.3, 'the band for all channels on Fp1');
      assert.ok((await shareOf(page, s, column(53.3), o1, firstTint)) > 0.3, 'the band for all channels on O1');
      assert.ok((await shareOf(page, s, column(54.6), o1, both)) > 0.3, 'the O1 band over the band for all channels');
      assert.ok((await shareOf(page, s, column(55.6), o1, secondTint)) > 0.3, 'the O1 band alone');
      assert.equal(await shareOf(page, s, column(55.6), fp1, secondTint), 0, 'no O1 band on Fp1');
      assert.equal(await shareOf(page, s, column(56.8), o1, secondTint), 0, 'nothing after its end');
    } finally {
      await context.close();
    }
  });

  it('zoomed out past 1,500 in view, draws their density on the rows of their channels, and takes others\' changes into it', async () => {
    // 2,000 short annotations on O1 between 20 and 40 s: a minute's window holds them all.
    const many = Array.from({ length: 2000 }, (_, i) => ({ path: RECORDING, onset: 20 + i * 0.01, duration: 0.005, channels: ['O1'], label: 'spike' }));
    const made = await annotator.api(`/datasets/${ID}/annotations`, { method: 'POST', body: JSON.stringify(many) });
    assert.equal(made.status, 201, await made.clone().text());
    const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, deviceScaleFactor: 1 });
    try {
      const { token } = await createSession(server.deps.db, reader.user.id, server.clock.now());
      await context.addCookies([{ name: SESSION_COOKIE, value: token, url: server.url }]);
      const page = await context.newPage();
      await page.goto(`${server.url}/datasets/${ID}?recording=${encodeURIComponent(ZARR)}&t=0&span=60`);
      await page.waitForFunction(() => window.ndsViewer?.ready === true && window.ndsViewer.annotationsLoaded && window.ndsViewer.annotationMode === 'density', undefined, { timeout: 30_000 });
      const { annotations } = await listAnnotations(reader);
      const inWindow = (s: ViewerState) => annotations.filter((a) => a.onset < s.end / s.rate && a.onset + a.duration >= s.start / s.rate).length;
      let s = await state(page);
      assert.equal(s.annotationsTotal, annotations.length);
      assert.equal(s.annotationsInView, inWindow(s));
      assert.ok(s.annotationsInView >= 2000);
      assert.deepEqual(s.annotationsDrawn, []);
      assert.match((await page.locator('#nds-viewer .viewer-status').textContent())!, /as their density/);

      // The share of a row's pixels in a column with the density's tint (#6a1b9a at 22 % over white): on O1 within 20–40 s only.
      const tinted = async (t: number, row: number) =>
        page.evaluate(
          ({ x, top, height }) => {
            const data = document.querySelector<HTMLCanvasElement>('#nds-viewer canvas.viewer-traces')!.getContext('2d')!.getImageData(x, top, 1, height).data;
            let n = 0;
            for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - 222) < 8 && Math.abs(data[i + 1]! - 205) < 8 && Math.abs(data[i + 2]! - 233) < 8) n++;
            return n / (data.length / 4);
          },
          { x: Math.round(s.plot.left + ((t * s.rate - s.start) * s.plot.width) / (s.end - s.start)), top: Math.ceil(s.plot.top + row * s.plot.rowHeight) + 1, height: Math.floor(s.plot.rowHeight) - 2 },
        );
      const o1 = s.rowChannels.indexOf('O1');
      const fp1 = s.rowChannels.indexOf('Fp1');
      // Times off the grid's lines (a tint over a grid line is another colour).
      const covered = await tinted(31.3, o1);
      // Most of the column (the trace drawn under the tint is the rest).
      assert.ok(covered > 0.3, `O1 at 31.3 s is covered: ${covered}`);
      assert.equal(await tinted(45.3, o1), 0, 'O1 at 45.3 s is not');
      assert.equal(await tinted(8.3, o1), 0, 'O1 at 8.3 s is not');
      assert.equal(await tinted(31.3, fp1), 0, 'Fp1 at 31.3 s is not');

      // Someone adds an annotation for all channels at 50 s: within 5 s it is counted and drawn over every row.
      const added = await annotator.api(`/datasets/${ID}/annotations`, { method: 'POST', body: JSON.stringify({ path: RECORDING, onset: 50, duration: 2, label: 'arousal' }) });
      assert.equal(added.status, 201);
      await page.waitForFunction((n) => window.ndsViewer!.annotationsTotal === n, annotations.length + 1, { timeout: 5000, polling: 50 });
      s = await state(page);
      assert.equal(s.annotationsInView, inWindow(s) + 1);
      const all = await tinted(51.3, fp1);
      assert.ok(all > 0.3, `Fp1 at 51.3 s is covered by the annotation for all channels: ${all}`);

      // The events panel lists every one in view, but only the rows scrolled into its box are in the page.
      await page.locator('#nds-viewer button[data-panel=events]').click();
      const list = page.locator('#nds-viewer .viewer-annotations');
      await list.locator('tr[data-annotation]').first().waitFor();
      const inView = annotations.filter((a) => a.onset < s.end / s.rate && a.onset + a.duration >= s.start / s.rate).length + 1;
      assert.equal(await list.locator('p.muted').textContent(), `${inView} in view.`);
      const listed = () =>
        list.evaluate((el) => [...el.querySelectorAll<HTMLTableRowElement>('tr[data-annotation]')].map((r) => ({ id: r.dataset['annotation']!, height: r.getBoundingClientRect().height, top: r.getBoundingClientRect().top })));
      const byOnset = [...annotations, { id: '', onset: 50, duration: 2 }].filter((a) => a.onset < s.end / s.rate && a.onset + a.duration >= s.start / s.rate).sort((a, b) => a.onset - b.onset);
      let rows = await listed();
      assert.ok(rows.length >= rowsShown && rows.length <= 3 * rowsShown, `${rows.length} rows in the page`);
      assert.ok(rows.every((r) => Math.abs(r.height - rowHeight) < 0.5), `rows of ${rowHeight} px: ${rows.map((r) => r.height)}`);
      assert.deepEqual(rows.map((r) => r.id), byOnset.slice(0, rows.length).map((a) => a.id));
      // A frame that changes nothing listed (the viewer redrawn) keeps the same row elements.
      await list.evaluate((el) => el.querySelectorAll('tr[data-annotation]').forEach((r) => ((r as HTMLElement).dataset['kept'] = 'yes')));
      const renders = (await state(page)).renders;
      await page.evaluate(() => window.dispatchEvent(new Event('resize')));
      await page.waitForFunction((n) => window.ndsViewer!.renders > n, renders);
      assert.equal(await list.locator('tr[data-annotation]:not([data-kept])').count(), 0);
      // Scrolled to the 1,000th: that one is at the top of the box, and still only a few rows are in the page.
      await list.locator('.viewer-annotation-scroll').evaluate((el, top) => el.scrollTo(0, top), 1000 * rowHeight);
      await page.waitForFunction((id) => document.querySelector(`#nds-viewer .viewer-annotations tr[data-annotation="${id}"]`) !== null, byOnset[1000]!.id);
      rows = await listed();
      // Under the heading row, which stays at the top of the box.
      const box = await list.locator('.viewer-annotation-scroll').evaluate((el) => el.getBoundingClientRect().top + el.querySelector('thead')!.getBoundingClientRect().height);
      const atTop = rows.find((r) => Math.abs(r.top - box) < 1);
      assert.equal(atTop?.id, byOnset[1000]!.id, `the 1,000th in view at the top: ${JSON.stringify(rows.slice(0, 12))} (box ${box})`);
      assert.ok(rows.length <= 3 * rowsShown, `${rows.length} rows in the page`);
    } finally {
      await context.close();
    }
  });
});
