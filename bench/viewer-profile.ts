/**
 * Where a pan's frame time goes (issue 26): the viewer bench's processed view (64 rows × 10 s, HP 1 Hz +
 * LP 40 Hz + notch 50 Hz + average reference) on a shorter synthetic recording, panned with the arrow key while
 * chromium's sampling profiler runs. The page gets an unminified build of the viewer (same sources, function
 * names kept) so the profile names functions. Prints the viewer's own frame times (compute / draw) and the
 * profile's self time per function, heaviest first.
 * Run: node --import tsx bench/viewer-profile.ts [--pans 40] [--query '?rows=64&hp=1&lp=40&notch=50&ref=avg'] [--minified] [--screenshot file.png] [--no-profile]
 *   [--entry path/to/viewer/main.ts] (another checkout's viewer, for a before/after in one run)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { createAccount } from '../test/support/accounts.js';
import { startTestServer } from '../test/support/test-server.js';
import { launchChromium, publishDataset } from '../test/web/viewer-support.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';
import { recordFramesScript, rendererMainCpu } from './viewer-bench-support.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const pans = Number(option('--pans', '40'));
const query = option('--query', '?rows=64&hp=1&lp=40&notch=50&ref=avg');
const id = 'nd000902';
const zarr = 'sub-01/eeg/sub-01_task-profile_eeg.zarr';
const work = await mkdtemp(join(tmpdir(), 'nds-viewer-profile-'));
const server = await startTestServer();


interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

try {
  const file = join(work, 'profile.edf');
  await writeSyntheticRecording({ path: file, bdf: false, channels: 64, rate: 256, bytes: 256 * 65 + 64 * 256 * 2 * 900 });
  const owner = await createAccount(server);
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'Viewer profile', recordings: [{ file, zarr }] });

  const outdir = '/nds-profile-out';
  const bundle = await build({
    entryPoints: { viewer: option('--entry', 'src/web/viewer/main.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: args.includes('--minified'),
    write: false,
    outdir,
    chunkNames: 'viewer-[hash]',
    logLevel: 'silent',
  });
  const assets = new Map(bundle.outputFiles.map((f) => [`/assets${f.path.slice(outdir.length)}`, f.text]));

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route(/\/assets\/viewer(-[A-Za-z0-9]+)?\.js$/, (route) => {
    const code = assets.get(new URL(route.request().url()).pathname);
    return code === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ body: code, contentType: 'text/javascript' });
  });
  await context.addInitScript(recordFramesScript('{ ms: v.frameMs, computeMs: v.computeMs, drawMs: v.drawMs, complete: v.tracesReady, prepared: v.plotPrepared }'));
  const page = await context.newPage();
  await page.goto(`${server.url}/datasets/${id}${query}${query ? '&' : '?'}t=200&span=10&rows=64`);
  await page.waitForFunction(() => (window as any).ndsViewer?.ready === true, undefined, { timeout: 30_000 });
  await page.waitForTimeout(500);
  await page.locator('#nds-viewer').focus();
  // Warm-up pans (compilation), not measured.
  for (let i = 0; i < 5; i++) {
    const before = await page.evaluate(() => (window as any).ndsViewer.renders as number);
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((n) => (window as any).ndsViewer.renders > n && (window as any).ndsViewer.ready === true, before);
    await page.waitForTimeout(100);
  }
  await page.evaluate(() => ((window as any).ndsFrames.length = 0));
  const cdp = await context.newCDPSession(page);
  const profiling = !args.includes('--no-profile');
  if (profiling) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  }
  const cpuBefore = rendererMainCpu();
  for (let i = 0; i < pans; i++) {
    const before = await page.evaluate(() => (window as any).ndsViewer.renders as number);
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((n) => (window as any).ndsViewer.renders > n && (window as any).ndsViewer.ready === true, before);
    await page.waitForTimeout(100);
  }
  const cpuPerPan = Math.max(0, ...[...rendererMainCpu()].map(([pid, ms]) => ms - (cpuBefore.get(pid) ?? ms))) / pans;
  const { profile } = profiling ? ((await cdp.send('Profiler.stop')) as { profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] } }) : { profile: { nodes: [], samples: [], timeDeltas: [] } };
  const frames = (await page.evaluate(() => (window as any).ndsFrames)) as Array<{ ms: number; computeMs: number; drawMs: number; complete: boolean; prepared?: boolean }>;
  if (args.includes('--screenshot')) await page.locator('canvas.viewer-traces').screenshot({ path: option('--screenshot', 'viewer-profile.png') });
  await browser.close();

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const p = (xs: number[], q: number) => sorted(xs)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)]!;
  const ms = frames.filter((f) => f.complete).map((f) => f.ms);
  console.log(`frames ${ms.length} (${frames.filter((f) => f.prepared).length} with the plot painted ahead): p50 ${p(ms, 0.5).toFixed(1)} ms, p95 ${p(ms, 0.95).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`);
  console.log(`main-thread CPU per pan ${cpuPerPan.toFixed(1)} ms; frames (frame/compute/draw ms):`);
  console.log(frames.map((f) => `${f.ms.toFixed(1)}/${f.computeMs.toFixed(1)}/${f.drawMs.toFixed(1)}`).join(' '));
  if (profiling) {

    // Self time per function (sample deltas are attributed to the node sampled).
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<string, number>();
    let total = 0;
    profile.samples.forEach((nodeId, i) => {
      const n = byId.get(nodeId)!;
      const f = n.callFrame;
      if (f.functionName === '(idle)') return;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}`;
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      self.set(key, (self.get(key) ?? 0) + dt);
      total += dt;
    });
    console.log(`\nbusy ${total.toFixed(0)} ms over ${pans} pans (${(total / pans).toFixed(1)} ms a pan); self time per pan:`);
    for (const [key, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(t / pans).toFixed(2).padStart(7)} ms  ${key}`);
    // Inclusive time: a sample counts for every function on its stack (once each).
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const inclusive = new Map<string, number>();
    profile.samples.forEach((nodeId, i) => {
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      const seen = new Set<string>();
      for (let id: number | undefined = nodeId; id !== undefined; id = parent.get(id)) {
        const f = byId.get(id)!.callFrame;
        if (f.functionName === '(idle)' || f.functionName === '(root)') continue;
        const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}`;
        if (seen.has(key)) continue;
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
      }
    });
    // The tree under the frame: each function's inclusive time below #frame, two levels deep beyond it.
    const under = new Map<string, number>();
    profile.samples.forEach((nodeId, i) => {
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      const stack: string[] = [];
      for (let id: number | undefined = nodeId; id !== undefined; id = parent.get(id)) stack.unshift(byId.get(id)!.callFrame.functionName || '(anonymous)');
      const at = stack.indexOf('#frame');
      if (at < 0) return;
      for (let depth = 1; depth <= 4 && at + depth < stack.length; depth++) {
        const key = stack.slice(at, at + depth + 1).join(' > ');
        under.set(key, (under.get(key) ?? 0) + dt);
      }
    });
    console.log('\nunder #frame, per pan:');
    for (const [key, t] of [...under].sort((a, b) => (a[0] < b[0] ? -1 : 1))) if (t / pans >= 0.05) console.log(`${(t / pans).toFixed(2).padStart(7)} ms  ${key}`);
    console.log('\ninclusive time per pan:');
    for (const [key, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log(`${(t / pans).toFixed(2).padStart(7)} ms  ${key}`);
  }
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
