/**
 * Viewer benchmark (issues 6 and 15): a synthetic 64-channel, 1-hour, 256 Hz recording converted into a public
 * dataset; chromium opens /datasets/<id> in a fresh context and we read the time from navigation start
 * to the first complete frame (`performance.mark('nds-traces')`), plain and with 64 rows, filters and the
 * average reference. Baseline: fetching the same gateway URLs with plain parallel fetch from Node.
 * Then frame times while panning a 10 s window of 64 rows (the viewer's own `frameMs`: compute and draw on
 * the main thread), with HP 1 Hz + LP 40 Hz + 50 Hz notch + average reference, beside the same pans with
 * neither (the baseline), and how many pans had to wait for a chunk.
 * Run: node --import tsx bench/viewer.ts [--runs 5] [--pans 60]
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
const pans = Number(args.includes('--pans') ? args[args.indexOf('--pans') + 1] : 60) || 60;
const processedView = '?rows=64&hp=1&lp=40&notch=50&ref=avg';
const id = 'nd000901';
const zarr = 'sub-01/eeg/sub-01_task-bench_eeg.zarr';
const work = await mkdtemp(join(tmpdir(), 'nds-bench-viewer-'));
const server = await startTestServer();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
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
  const processedTimes: number[] = [];
  let gatewayUrls: string[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    for (const query of ['', processedView]) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const urls: string[] = [];
      page.on('request', (r) => void (r.url().startsWith(server.config.zarrCacheBaseUrl) && urls.push(r.url())));
      await page.goto(`${server.url}/datasets/${id}${query}`);
      await page.waitForFunction(() => performance.getEntriesByName('nds-traces').length > 0, undefined, { timeout: 30_000 });
      (query ? processedTimes : times).push(await page.evaluate(() => performance.getEntriesByName('nds-traces')[0]!.startTime));
      if (!query) gatewayUrls = urls;
      await context.close();
    }
  }

  // Frame times while panning: every frame the viewer draws is recorded through a setter on window.ndsViewer.
  const panFrames = async (query: string) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // A string, not a function: the TypeScript loader would wrap a function's inner functions in helpers the page lacks.
    await context.addInitScript(`
      const frames = [];
      let last;
      Object.defineProperty(window, 'ndsFrames', { value: frames });
      Object.defineProperty(window, 'ndsViewer', {
        configurable: true,
        get() { return last; },
        set(v) {
          if (!last || last.renders !== v.renders) frames.push({ ms: v.frameMs, computeMs: v.computeMs, drawMs: v.drawMs, complete: v.tracesReady, level: v.level, processed: v.processed });
          last = v;
        },
      });
    `);
    const page = await context.newPage();
    await page.goto(`${server.url}/datasets/${id}${query}${query ? '&' : '?'}t=600&span=10&rows=64`);
    await page.waitForFunction(() => (window as any).ndsViewer?.ready === true, undefined, { timeout: 30_000 });
    await page.waitForTimeout(500);
    await page.evaluate(() => ((window as any).ndsFrames.length = 0));
    await page.locator('#nds-viewer').focus();
    for (let i = 0; i < pans; i++) {
      const before = await page.evaluate(() => (window as any).ndsViewer.renders as number);
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((n) => (window as any).ndsViewer.renders > n && (window as any).ndsViewer.ready === true, before, { timeout: 30_000 });
      // A reader's pace: the prefetch has time to land, as it would between two key presses.
      await page.waitForTimeout(100);
    }
    const frames = (await page.evaluate(() => (window as any).ndsFrames)) as Array<{ ms: number; computeMs: number; drawMs: number; complete: boolean; level: number; processed: boolean }>;
    if (process.env["BENCH_DEBUG"]) console.error(frames.map((f) => `${f.ms.toFixed(0)}/${f.computeMs.toFixed(0)}/${f.drawMs.toFixed(0)}`).join(" "));
    await context.close();
    return frames;
  };
  const processedFrames = await panFrames(processedView);
  const plainFrames = await panFrames('');
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
    `| 64 ch × 1 h, 256 Hz, EDF (10 s window, level 0, 24 rows) | **${median(times).toFixed(0)} ms** (${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)}) | ` +
      `${median(baseline).toFixed(0)} ms | ${gatewayUrls.length} / ${(bytes / 1024).toFixed(0)} KiB |`,
  );
  console.log(`| same, \`${processedView}\` (64 rows, filters, average reference) | **${median(processedTimes).toFixed(0)} ms** (${Math.min(...processedTimes).toFixed(0)}–${Math.max(...processedTimes).toFixed(0)}) | | |`);
  console.log(`\nFrames while panning a 10 s window of 64 rows by 1 s, ${pans} pans (frameMs: compute + draw on the main thread):\n`);
  console.log('| view | frames | median | p95 | max | frames drawn before their chunks arrived |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name, frames] of [['HP 1 Hz + LP 40 Hz + notch 50 Hz + average reference', processedFrames], ['baseline: own reference, no filters', plainFrames]] as const) {
    const ms = frames.filter((f) => f.complete).map((f) => f.ms);
    const waited = frames.filter((f) => !f.complete).length;
    const processed = frames.filter((f) => f.processed).length;
    console.log(`| ${name} | ${ms.length}${processed ? ` (${processed} filtered)` : ''} | ${median(ms).toFixed(1)} ms | **${percentile(ms, 95).toFixed(1)} ms** | ${Math.max(...ms).toFixed(1)} ms | ${waited} |`);
  }
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
