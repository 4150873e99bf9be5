/**
 * Takes docs/images/viewer-annotations.png: the annotation mode on a synthetic EEG recording
 * (`viewer/realistic-eeg.ts`) shared with an annotator, with annotations by two people, the events panel listing
 * them and a new span being labelled. Not a test: run `node --import tsx test/web/viewer-annotations-screenshot.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSession, SESSION_COOKIE } from '../../src/accounts/sessions.js';
import { createAccount } from '../support/accounts.js';
import { startTestServer } from '../support/test-server.js';
import { launchChromium, publishDataset } from './viewer-support.js';
import { writeRealisticEeg } from './viewer/realistic-eeg.js';

const id = 'nd000727';
const zarr = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const recording = 'sub-01/eeg/sub-01_task-rest_eeg';
const out = path.resolve('docs/images/viewer-annotations.png');
const work = await mkdtemp(path.join(os.tmpdir(), 'nds-annotation-shots-'));
const server = await startTestServer();
try {
  const { root, file } = await writeRealisticEeg(work);
  const owner = await createAccount(server, { username: 'ada' });
  const annotator = await createAccount(server, { username: 'grace' });
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'Viewer example', visibility: 'private', recordings: [{ file, zarr, bidsRoot: root, path: recording }] });
  const added = await owner.api(`/datasets/${id}/members/grace`, { method: 'PUT', body: JSON.stringify({ role: 'annotator' }) });
  if (!added.ok) throw new Error(await added.text());
  const annotate = async (who: typeof owner, items: Array<{ onset: number; duration: number; channels?: string[]; label: string; note?: string }>) => {
    const r = await who.api(`/datasets/${id}/annotations`, { method: 'POST', body: JSON.stringify(items.map((a) => ({ path: recording, ...a }))) });
    if (r.status !== 201) throw new Error(await r.text());
  };
  await annotate(owner, [
    { onset: 21.2, duration: 2.4, channels: ['Fp1', 'Fp2', 'F7', 'F3'], label: 'artefact/eye-movement' },
    { onset: 27.5, duration: 1.1, label: 'arousal', note: 'whole montage' },
  ]);
  await annotate(annotator, [
    { onset: 24.1, duration: 1.6, channels: ['T7', 'C3', 'P7', 'P3'], label: 'sharp-wave', note: 'left temporal' },
    { onset: 25.9, duration: 0.9, channels: ['O1', 'O2'], label: 'alpha-burst' },
  ]);

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
  const { token } = await createSession(server.deps.db, annotator.user.id, server.clock.now());
  await context.addCookies([{ name: SESSION_COOKIE, value: token, url: server.url }]);
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error(err));
  await page.goto(`${server.url}/datasets/${id}?recording=${encodeURIComponent(zarr)}&t=20&span=10&hp=0.5&lp=40&notch=50`);
  await page.waitForFunction(() => window.ndsViewer?.ready === true && window.ndsViewer.annotationsTotal === 4, undefined, { timeout: 30_000 });
  await page.locator('#nds-viewer button[data-panel=events]').click();
  await page.locator('#nds-viewer button[data-annotate]').click();
  await page.waitForTimeout(300);
  // A new span dragged over the central rows, its label being typed.
  const s = await page.evaluate(() => ({ ...window.ndsViewer!, rows: [] }));
  const box = (await page.locator('#nds-viewer canvas.viewer-traces').boundingBox())!;
  const x = (t: number) => box.x + s.plot.left + ((t * s.rate - s.start) * s.plot.width) / (s.end - s.start);
  const y = (row: number) => box.y + s.plot.top + (row + 0.5) * s.plot.rowHeight;
  await page.mouse.move(x(28.9), y(8));
  await page.mouse.down();
  await page.mouse.move(x(29.6), y(10), { steps: 5 });
  await page.mouse.up();
  const form = page.locator('#nds-viewer form.viewer-annotation-form');
  await form.locator('input[name=annotation-label]').fill('spike');
  await form.locator('select[name=annotation-rows]').selectOption('dragged');
  await page.mouse.move(x(29.2), y(9));
  // The panel scrolls to the events on screen; the annotations are at its top.
  await page.locator('#nds-viewer .viewer-panel').evaluate((panel) => panel.scrollTo(0, 0));
  await page.waitForTimeout(500);
  await page.locator('#nds-viewer').screenshot({ path: out });
  console.log(out);
  await browser.close();
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
