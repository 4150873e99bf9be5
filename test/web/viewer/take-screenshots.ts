/**
 * Takes the viewer screenshots in docs/viewer.md from a synthetic EEG recording (`realistic-eeg.ts`) in
 * headless chromium. Not a test: run `node --import tsx test/web/viewer/take-screenshots.ts`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { longitudinalChain } from '../../../src/signals/montage.js';
import { createAccount } from '../../support/accounts.js';
import { startTestServer } from '../../support/test-server.js';
import { launchChromium, publishDataset } from '../viewer-support.js';
import { writeRealisticEeg } from './realistic-eeg.js';
import { writeEdf } from '../../formats/support/edf-writer.js';

/** Surface EMG at 2048 Hz: three muscles, bursts of broadband activity over slow movement artefact and 50 Hz. */
async function writeEmg(root: string): Promise<string> {
  const rate = 2048;
  const seconds = 20;
  const dir = path.join(root, 'sub-02', 'emg');
  await mkdir(dir, { recursive: true });
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const labels = ['EMG-biceps', 'EMG-triceps', 'EMG-deltoid'];
  const step = 6400 / 65535;
  const signals = labels.map((label, k) => ({
    label,
    samplesPerRecord: rate,
    samples: Int16Array.from({ length: rate * seconds }, (_, i) => {
      const t = i / rate;
      const burst = Math.max(0, Math.sin(2 * Math.PI * (0.25 + 0.05 * k) * t - k)) ** 4;
      const v = (40 + 600 * burst) * noise() + 300 * Math.sin(2 * Math.PI * 0.7 * t + k) + 60 * Math.sin(2 * Math.PI * 50 * t);
      return Math.round((Math.max(-3199, Math.min(3199, v)) + 3200) / step - 32768);
    }),
  }));
  const file = path.join(dir, 'sub-02_task-grip_emg.edf');
  await writeFile(file, writeEdf({ recordDuration: 1, records: seconds, signals }));
  await writeFile(path.join(dir, 'sub-02_task-grip_channels.tsv'), ['name\ttype\tunits', ...labels.map((l) => `${l}\tEMG\tuV`)].join('\n') + '\n');
  return file;
}

const id = 'nd000721';
const zarr = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const out = path.resolve('docs/images');
const work = await mkdtemp(path.join(os.tmpdir(), 'nds-viewer-shots-'));
const server = await startTestServer();
try {
  const { root, file } = await writeRealisticEeg(work);
  const owner = await createAccount(server);
  const emgFile = await writeEmg(root);
  const emgZarr = 'sub-02/emg/sub-02_task-grip_emg.zarr';
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'Viewer example', recordings: [{ file, zarr, bidsRoot: root }, { file: emgFile, zarr: emgZarr, bidsRoot: root }] });
  const browser = await launchChromium();
  const shot = async (name: string, query: string, act?: (page: Page) => Promise<void>, recording = zarr) => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
    page.on('pageerror', (err) => console.error(name, err));
    await page.goto(`${server.url}/datasets/${id}?recording=${encodeURIComponent(recording)}${query}`);
    await page.waitForFunction(() => window.ndsViewer?.ready === true, undefined, { timeout: 30_000 });
    if (act) await act(page);
    await page.waitForTimeout(500);
    await page.locator('#nds-viewer').screenshot({ path: path.join(out, `viewer-${name}.png`) });
    console.log(`viewer-${name}.png`, page.url());
    await page.close();
  };
  if (process.argv.includes('--issue26')) {
    await shot('bipolar', `&t=20&ref=bipolar:${encodeURIComponent(longitudinalChain.join(','))}&hp=1&lp=40&notch=50&scale=eeg:70`);
    await shot('emg', '&t=2&span=4&hp=30&lp=500&notch=50', undefined, emgZarr);
    await browser.close();
    process.exit(0);
  }
  await shot('default', '&t=20');
  await shot('overview', '&t=0&span=120');
  await shot('bipolar', `&t=20&ref=bipolar:${encodeURIComponent(longitudinalChain.join(','))}&hp=1&lp=40&notch=50&scale=eeg:70`);
  await shot('emg', '&t=2&span=4&hp=30&lp=500&notch=50', undefined, emgZarr);
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
