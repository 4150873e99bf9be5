/**
 * Viewer benchmark (issues 6 and 15): a synthetic 64-channel, 1-hour, 256 Hz recording converted into a public
 * dataset; chromium opens /datasets/<id> in a fresh context and we read the time from navigation start
 * to the first complete frame (`performance.mark('nds-traces')`), plain and with 64 rows, filters and the
 * average reference. Baseline: fetching the same gateway URLs with plain parallel fetch from Node.
 * Then frame times while panning a 10 s window of 64 rows (the viewer's own `frameMs`: compute and draw on
 * the main thread), with HP 1 Hz + LP 40 Hz + 50 Hz notch + average reference, beside the same pans with
 * neither (the baseline), and how many pans had to wait for a chunk; the filtered pans also back and forth, where
 * no frame finds its plot painted ahead (decision 0039), the cost of a frame the viewer could not foresee. Then the same pans again with 100,000
 * annotations on the recording (issue 26: spans drawn from an interval index, a density past 1,500 in view),
 * and pans of a 10-minute window where ~17,000 of them are in view (drawn as their density). Beside `frameMs`,
 * the CPU time of the page's main thread per pan (from /proc, on Linux): it also counts what chromium does after
 * the frame's code has run — rasterizing the canvas, styles and layout of the panels — which `frameMs` does not,
 * and the work done while idle between pans (filtering the neighbouring spans, painting the next pan's plot ahead).
 * Run: node --import tsx bench/viewer.ts [--runs 5] [--pans 60] [--annotations 100000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../test/support/accounts.js';
import { startTestServer } from '../test/support/test-server.js';
import { launchChromium, publishDataset } from '../test/web/viewer-support.js';
import { findRecordingRow } from '../src/recordings/catalogue-queries.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';
import { recordFramesScript, rendererMainCpu } from './viewer-bench-support.js';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] ?? 5) || 5;
const pans = Number(args.includes('--pans') ? args[args.indexOf('--pans') + 1] : 60) || 60;
const processedView = '?rows=64&hp=1&lp=40&notch=50&ref=avg';
const annotationCount = Number(args.includes('--annotations') ? args[args.indexOf('--annotations') + 1] : 100_000) || 100_000;
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
  const panFrames = async (query: string, options: { annotations?: number; span?: number; pans?: number; backAndForth?: boolean } = {}) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(recordFramesScript('{ ms: v.frameMs, computeMs: v.computeMs, drawMs: v.drawMs, complete: v.tracesReady, level: v.level, processed: v.processed, prepared: v.plotPrepared, inView: v.annotationsInView, mode: v.annotationMode }'));
    const page = await context.newPage();
    await page.goto(`${server.url}/datasets/${id}${query}${query ? '&' : '?'}t=600&span=${options.span ?? 10}&rows=64`);
    await page.waitForFunction(() => (window as any).ndsViewer?.ready === true, undefined, { timeout: 30_000 });
    // With annotations, frames are measured once all of them are in the viewer's index.
    await page.waitForFunction((n) => (window as any).ndsViewer.annotationsTotal === n && (window as any).ndsViewer.renders > 0, options.annotations ?? 0, { timeout: 120_000 });
    await page.waitForTimeout(500);
    await page.evaluate(() => ((window as any).ndsFrames.length = 0));
    await page.locator('#nds-viewer').focus();
    const cpuBefore = rendererMainCpu();
    for (let i = 0; i < (options.pans ?? pans); i++) {
      const before = await page.evaluate(() => (window as any).ndsViewer.renders as number);
      // Back and forth, no pan repeats the last one: no frame finds its plot painted ahead (decision 0039).
      await page.keyboard.press(options.backAndForth && i % 2 === 1 ? 'ArrowLeft' : 'ArrowRight');
      await page.waitForFunction((n) => (window as any).ndsViewer.renders > n && (window as any).ndsViewer.ready === true, before, { timeout: 30_000 });
      // A reader's pace: the prefetch has time to land, as it would between two key presses.
      await page.waitForTimeout(100);
    }
    // The page's renderer is the one whose main thread worked during the pans (chromium keeps a spare one).
    const cpuAfter = rendererMainCpu();
    const cpuPerPan = Math.max(0, ...[...cpuAfter].map(([pid, ms]) => ms - (cpuBefore.get(pid) ?? ms))) / (options.pans ?? pans);
    const frames = (await page.evaluate(() => (window as any).ndsFrames)) as Array<{ ms: number; computeMs: number; drawMs: number; complete: boolean; level: number; processed: boolean; prepared?: boolean; inView: number; mode: string }>;
    if (process.env["BENCH_DEBUG"]) console.error(frames.map((f) => `${f.ms.toFixed(0)}/${f.computeMs.toFixed(0)}/${f.drawMs.toFixed(0)}`).join(" "));
    await context.close();
    return Object.assign(frames, { cpuPerPan });
  };
  const processedFrames = await panFrames(processedView);
  const processedBackAndForth = await panFrames(processedView, { backAndForth: true });
  const plainFrames = await panFrames('');
  const wideFrames = await panFrames('', { span: 600, pans: 20 });

  // 100,000 annotations over the hour, as an import would make them (10,000 a request): a third for all
  // channels, the rest on one to four channels; 0.2 to 2 s long.
  const recordingPath = zarr.replace(/\.zarr$/, '');
  const labels = (await findRecordingRow(server.deps.db, id, recordingPath))!.channel_labels;
  started = performance.now();
  let seed = 26;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let first = 0; first < annotationCount; first += 10_000) {
    const batch = Array.from({ length: Math.min(10_000, annotationCount - first) }, (_, k) => {
      const i = first + k;
      const channels = i % 3 === 0 ? null : Array.from({ length: 1 + Math.floor(random() * 4) }, () => labels[Math.floor(random() * labels.length)]!);
      return { path: recordingPath, onset: Number(((i / annotationCount) * 3590).toFixed(3)), duration: Number((0.2 + random() * 1.8).toFixed(3)), channels: channels && [...new Set(channels)], label: ['spike', 'artefact', 'sleep-N2', 'arousal', 'seizure'][i % 5]! };
    });
    const r = await owner.api(`/datasets/${id}/annotations`, { method: 'POST', body: JSON.stringify(batch) });
    if (r.status !== 201) throw new Error(`annotations: HTTP ${r.status} ${await r.text()}`);
  }
  process.stderr.write(`${annotationCount} annotations made in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const annotatedProcessed = await panFrames(processedView, { annotations: annotationCount });
  const annotatedPlain = await panFrames('', { annotations: annotationCount });
  const annotatedWide = await panFrames('', { annotations: annotationCount, span: 600, pans: 20 });
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
  console.log('| view | frames | median | p95 | max | frames drawn before their chunks arrived | main-thread CPU per pan |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [name, frames] of [
    ['HP 1 Hz + LP 40 Hz + notch 50 Hz + average reference', processedFrames],
    ['the same, back and forth (each pan undoes the last: nothing painted ahead)', processedBackAndForth],
    ['baseline: own reference, no filters', plainFrames],
  ] as const) {
    const ms = frames.filter((f) => f.complete).map((f) => f.ms);
    const waited = frames.filter((f) => !f.complete).length;
    const processed = frames.filter((f) => f.processed).length;
    const prepared = frames.filter((f) => f.prepared).length;
    const notes = [processed ? `${processed} filtered` : '', prepared ? `${prepared} painted ahead` : ''].filter(Boolean).join(', ');
    console.log(`| ${name} | ${ms.length}${notes ? ` (${notes})` : ''} | ${median(ms).toFixed(1)} ms | **${percentile(ms, 95).toFixed(1)} ms** | ${Math.max(...ms).toFixed(1)} ms | ${waited} | ${frames.cpuPerPan.toFixed(1)} ms |`);
  }
  console.log(`\nThe same pans with ${annotationCount.toLocaleString('en')} annotations on the recording, beside those without (measured above, in this run):\n`);
  console.log('| view | annotations in view (median) | frames | p50 | p95 | p50 without | p95 without | main-thread CPU per pan, with / without |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const complete = (frames: typeof plainFrames) => frames.filter((f) => f.complete).map((f) => f.ms);
  for (const [name, frames, without] of [
    ['64 rows × 10 s, HP 1 Hz + LP 40 Hz + notch 50 Hz + average reference', annotatedProcessed, processedFrames],
    ['64 rows × 10 s, own reference, no filters', annotatedPlain, plainFrames],
  ] as const) {
    const ms = complete(frames);
    const base = complete(without);
    console.log(`| ${name} | ${median(frames.map((f) => f.inView))} | ${ms.length} | ${median(ms).toFixed(1)} ms | **${percentile(ms, 95).toFixed(1)} ms** | ${median(base).toFixed(1)} ms | ${percentile(base, 95).toFixed(1)} ms | ${frames.cpuPerPan.toFixed(1)} / ${without.cpuPerPan.toFixed(1)} ms |`);
  }
  const wide = complete(annotatedWide);
  const wideBase = complete(wideFrames);
  console.log(`| 64 rows × 10 min (view levels), drawn as their density | ${median(annotatedWide.map((f) => f.inView))} | ${wide.length} | ${median(wide).toFixed(1)} ms | **${percentile(wide, 95).toFixed(1)} ms** | ${median(wideBase).toFixed(1)} ms | ${percentile(wideBase, 95).toFixed(1)} ms | ${annotatedWide.cpuPerPan.toFixed(1)} / ${wideFrames.cpuPerPan.toFixed(1)} ms |`);
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
