/**
 * First run: `nds serve --demo` on an empty data folder, from the command to traces in the viewer of the demo
 * dataset it prints (chromium waits for `window.ndsViewer.tracesReady`). The baseline, measured in the same
 * run, is plain `nds serve` on an empty data folder up to "listening": the part of the time that is not the
 * demo's (generating, storing, converting, drawing).
 *
 * `npm run bench -- first-run` (ROUNDS=n for more rounds).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/test-server.js';
import { launchChromium } from '../test/web/viewer-support.js';

interface ServeRun {
  /** Milliseconds from the spawn to the first match of each pattern in stderr. */
  marks: Map<string, number>;
  match: RegExpExecArray;
  stop(): Promise<void>;
}

async function serve(args: string[], until: RegExp, timeoutMs = 180_000): Promise<ServeRun> {
  const data = await mkdtemp(join(tmpdir(), 'nds-first-run-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['bin/nds.js', 'serve', ...args], {
    env: { ...process.env, DATA_DIR: join(data, 'data'), PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const marks = new Map<string, number>();
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${until} within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stderr.on('data', (d) => {
      stderr += d;
      if (!marks.has('listening') && /is listening/.test(stderr)) marks.set('listening', performance.now() - started);
      const m = until.exec(stderr);
      if (m) {
        clearTimeout(timer);
        marks.set('printed', performance.now() - started);
        resolve(m);
      }
    });
    child.once('exit', (code) => reject(new Error(`nds serve exited (${code}): ${stderr}`)));
  });
  marks.set('spawned', started);
  return {
    marks,
    match,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await rm(data, { recursive: true, force: true });
    },
  };
}

const rounds = Number(process.env.ROUNDS ?? 2);
const browser = await launchChromium();
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start`);
console.log('| round | plain nds serve → listening (baseline) | --demo → listening | --demo → viewer link printed | --demo → traces on screen |');
console.log('|---|---|---|---|---|');
try {
  for (let round = 1; round <= rounds; round++) {
    const plain = await serve([], /is listening/);
    const baseline = plain.marks.get('listening')!;
    await plain.stop();

    const demo = await serve(['--demo'], /its viewer:\n\s+(\S+)/);
    const spawned = demo.marks.get('spawned')!;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(demo.match[1]!);
    await page.waitForFunction(() => (window as unknown as { ndsViewer?: { tracesReady?: boolean } }).ndsViewer?.tracesReady === true, undefined, { timeout: 60_000 });
    const traces = performance.now() - spawned;
    await page.close();
    await demo.stop();
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`| ${round} | ${s(baseline)} | ${s(demo.marks.get('listening')!)} | ${s(demo.marks.get('printed')!)} | **${s(traces)}** |`);
  }
} finally {
  await browser.close();
}
console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at end`);
