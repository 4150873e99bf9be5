/**
 * A screenshot of the annotation density (the viewer zoomed out past 1,500 annotations in view), to look at:
 * a 10-minute synthetic EEG (`viewer/realistic-eeg.ts`) with 6,000 annotations — spikes scattered on single
 * channels, a burst of sharp waves on T7, C3 and P7 from 200 to 260 s, arousals for all channels every 30 s —
 * shown whole. Not a test: `node --import tsx test/web/viewer-annotations-density-screenshot.ts [out.png]`
 * (default /tmp/viewer-annotations-density.png). Prints the viewer's state beside the path.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../support/accounts.js';
import { startTestServer } from '../support/test-server.js';
import { launchChromium, publishDataset } from './viewer-support.js';
import { tenTwenty, writeRealisticEeg } from './viewer/realistic-eeg.js';

const id = 'nd000728';
const zarr = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const recording = 'sub-01/eeg/sub-01_task-rest_eeg';
const out = path.resolve(process.argv[2] ?? '/tmp/viewer-annotations-density.png');
const work = await mkdtemp(path.join(os.tmpdir(), 'nds-density-shots-'));
const server = await startTestServer();
try {
  const seconds = 600;
  const { root, file } = await writeRealisticEeg(work, { seconds });
  const owner = await createAccount(server, { username: 'ada' });
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'Density example', visibility: 'public', recordings: [{ file, zarr, bidsRoot: root, path: recording }] });
  let seed = 5;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const items: Array<{ path: string; onset: number; duration: number; channels?: string[]; label: string }> = [];
  for (let i = 0; i < 4500; i++) items.push({ path: recording, onset: random() * (seconds - 1), duration: 0.05 + random() * 0.2, channels: [tenTwenty[Math.floor(random() * tenTwenty.length)]!], label: 'spike' });
  for (let i = 0; i < 1480; i++) items.push({ path: recording, onset: 200 + (i / 1480) * 60, duration: 0.02, channels: ['T7', 'C3', 'P7'], label: 'sharp-wave' });
  for (let t = 15; t < seconds - 5; t += 30) items.push({ path: recording, onset: t, duration: 3, label: 'arousal' });
  for (let i = 0; i < items.length; i += 10_000) {
    const r = await owner.api(`/datasets/${id}/annotations`, { method: 'POST', body: JSON.stringify(items.slice(i, i + 10_000)) });
    if (r.status !== 201) throw new Error(await r.text());
  }
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error(err));
  await page.goto(`${server.url}/datasets/${id}?recording=${encodeURIComponent(zarr)}&t=0&span=${seconds}`);
  await page.waitForFunction((n) => window.ndsViewer?.ready === true && window.ndsViewer.annotationsTotal === n, items.length, { timeout: 60_000 });
  await page.waitForTimeout(300);
  await page.locator('#nds-viewer').screenshot({ path: out });
  const s = await page.evaluate(() => ({ mode: window.ndsViewer!.annotationMode, inView: window.ndsViewer!.annotationsInView, total: window.ndsViewer!.annotationsTotal, frameMs: window.ndsViewer!.frameMs, rows: window.ndsViewer!.rowChannels }));
  console.log(out, JSON.stringify(s));
  await browser.close();
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
