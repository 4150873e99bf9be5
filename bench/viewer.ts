/**
 * Viewer benchmark (issue 6): a synthetic 64-channel, 1-hour, 256 Hz recording converted into a public
 * dataset; chromium opens /datasets/<id> in a fresh context and we read the time from navigation start
 * to the first complete frame (`performance.mark('nds-traces')`). Baseline: fetching the same gateway
 * URLs with plain parallel fetch from Node.
 * Run: node --import tsx bench/viewer.ts [--runs 5]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../test/support/accounts.js';
import { startTestServer } from '../test/support/test-server.js';
import { launchChromium, publishDataset } from '../test/web/viewer-support.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] ?? 5) || 5;
const id = 'nd000901';
const zarr = 'sub-01/eeg/sub-01_task-bench_eeg.zarr';
const work = await mkdtemp(join(tmpdir(), 'nds-bench-viewer-'));
const server = await startTestServer();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const file = join(work, 'bench.edf');
  await writeSyntheticRecording({ path: file, bdf: false, channels: 64, rate: 256, bytes: 256 * 65 + 64 * 256 * 2 * 3600 });
  const owner = await createAccount(server);
  let started = performance.now();
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'Viewer bench', recordings: [{ file, zarr }] });
  process.stderr.write(`converted 64 ch x 1 h in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  await (await fetch(`${server.url}/assets/viewer.js`)).text();

  const browser = await launchChromium();
  const times: number[] = [];
  let gatewayUrls: string[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const urls: string[] = [];
    page.on('request', (r) => void (r.url().startsWith(server.config.zarrCacheBaseUrl) && urls.push(r.url())));
    await page.goto(`${server.url}/datasets/${id}`);
    await page.waitForFunction(() => performance.getEntriesByName('nds-traces').length > 0, undefined, { timeout: 30_000 });
    times.push(await page.evaluate(() => performance.getEntriesByName('nds-traces')[0]!.startTime));
    gatewayUrls = urls;
    await context.close();
  }
  await browser.close();

  // Baseline: the same gateway objects (metadata and chunks the first frame needed), fetched at once.
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    started = performance.now();
    const sizes = await Promise.all(gatewayUrls.map(async (u) => (await (await fetch(u)).arrayBuffer()).byteLength));
    baseline.push(performance.now() - started);
    bytes = sizes.reduce((a, b) => a + b, 0);
  }
  console.log(`Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, chromium headless; ${runs} runs, fresh browser context each\n`);
  console.log('| recording | navigation → traces on screen (median, min–max) | baseline: same gateway objects with plain fetch (median) | objects / bytes |');
  console.log('|---|---:|---:|---:|');
  console.log(
    `| 64 ch × 1 h, 256 Hz, EDF (10 s window, level 0) | **${median(times).toFixed(0)} ms** (${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)}) | ` +
      `${median(baseline).toFixed(0)} ms | ${gatewayUrls.length} / ${(bytes / 1024).toFixed(0)} KiB |`,
  );
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
