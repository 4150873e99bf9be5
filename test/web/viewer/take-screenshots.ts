/**
 * Takes the viewer screenshots in docs/viewer.md from a synthetic EEG recording (`realistic-eeg.ts`) in
 * headless chromium. Not a test: run `node --import tsx test/web/viewer/take-screenshots.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { longitudinalChain } from '../../../src/signals/montage.js';
import { createAccount } from '../../support/accounts.js';
import { startTestServer } from '../../support/test-server.js';
import { launchChromium, publishDataset } from '../viewer-support.js';
import { writeRealisticEeg } from './realistic-eeg.js';

const id = 'nd000721';
const zarr = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const out = path.resolve('docs/images');
const work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-shots-'));
const server = await startTestServer();
try {
  const { root, file } = await writeRealisticEeg(work);
  const owner = await createAccount(server);
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'Viewer example', recordings: [{ file, zarr, bidsRoot: root }] });
  const browser = await launchChromium();
  const shot = async (name: string, query: string, act?: (page: Page) => Promise<void>) => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
    page.on('pageerror', (err) => console.error(name, err));
    await page.goto(`${server.url}/datasets/${id}?recording=${encodeURIComponent(zarr)}${query}`);
    await page.waitForFunction(() => window.ndsViewer?.ready === true, undefined, { timeout: 30_000 });
    if (act) await act(page);
    await page.waitForTimeout(500);
    await page.locator('#nds-viewer').screenshot({ path: path.join(out, `viewer-${name}.png`) });
    console.log(`viewer-${name}.png`, page.url());
    await page.close();
  };
  await shot('default', '&t=20');
  await shot('overview', '&t=0&span=120');
  await shot('bipolar', `&t=20&ref=bipolar:${encodeURIComponent(longitudinalChain.join(','))}&hp=1&lp=40&notch=50&scale=eeg:70`);
  await shot('events', '&t=0&span=30', async (page) => {
    await page.locator('#nds-viewer button[data-panel=events]').click();
    await page.locator('#nds-viewer .viewer-panel tbody tr').nth(12).click();
  });
  await shot('spectrum', '&t=30&span=20&ref=avg&hp=0.5&notch=50&rows=16', async (page) => {
    await page.locator('#nds-viewer').focus();
    await page.keyboard.press('s');
    await page.waitForFunction(() => window.ndsViewer?.spectrum !== undefined);
    await page.locator('#nds-viewer select[name=spectrogram]').selectOption('Pz-avg');
    await page.waitForFunction(() => window.ndsViewer?.spectrum?.spectrogram?.label === 'Pz-avg');
  });
  await browser.close();
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
