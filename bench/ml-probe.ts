/**
 * A short probe of the signal route's cost (issue 14), for before/after comparisons of one change: a
 * synthetic 64-channel 256 Hz EDF (5 minutes unless NDS_PROBE_SECONDS) converted into a public dataset on an
 * in-process server, then
 *   - the look-up (`planWindow`) and the answer (`windowStream` drained) of random 4 s × 64 ch windows, timed
 *     apart, sequentially;
 *   - 8 concurrent HTTP readers of the same windows as f32 for NDS_PROBE_READ_S seconds (client and server
 *     share this process and its thread: a relative figure, not the served rate of `nds serve`);
 *   - reading and decoding one level-0 chunk, timed apart;
 *   - `process.memoryUsage()` after each.
 * Run: node --import tsx bench/ml-probe.ts   (full figures: npm run bench -- ml)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeChunk } from '../src/recordings/chunk-decoder.js';
import { planWindow, windowStream } from '../src/recordings/signal-window.js';
import { createAccount } from '../test/support/accounts.js';
import { startTestServer } from '../test/support/test-server.js';
import { publishDataset } from '../test/web/viewer-support.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';

const seconds = Number(process.env.NDS_PROBE_SECONDS ?? 300);
const readSeconds = Number(process.env.NDS_PROBE_READ_S ?? 5);
const id = 'nd000915';
const work = await mkdtemp(join(tmpdir(), 'nds-bench-mlprobe-'));
const server = await startTestServer({ env: { DATABASE_URL: `pglite:${join(work, 'db')}`, OBJECT_STORE_URL: `file:${join(work, 'objects')}` } });
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const memory = () => {
  const m = process.memoryUsage();
  return `rss ${mib(m.rss)}, heapUsed ${mib(m.heapUsed)}, heapTotal ${mib(m.heapTotal)}, external ${mib(m.external)}, arrayBuffers ${mib(m.arrayBuffers)}`;
};
try {
  const bids = join(work, 'bids');
  const path = 'sub-01/eeg/sub-01_task-probe_eeg.edf';
  mkdirSync(join(bids, 'sub-01/eeg'), { recursive: true });
  await writeSyntheticRecording({ path: join(bids, path), bdf: false, channels: 64, rate: 256, bytes: 256 * 65 + 64 * 256 * 2 * seconds });
  writeFileSync(join(bids, 'dataset_description.json'), '{"Name":"ml probe","BIDSVersion":"1.9.0"}');
  const owner = await createAccount(server);
  const zarr = path.replace(/\.\w+$/, '.zarr');
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'ML probe', recordings: [{ file: join(bids, path), bidsRoot: bids, path, zarr }] });
  global.gc?.();
  console.log(`load average ${loadavg()[0]!.toFixed(1)}; ${seconds} s × 64 ch at 256 Hz; after conversion: ${memory()}`);

  {
    const keys: string[] = [];
    for await (const o of server.deps.objects.list(`${id}/zarr/${zarr}/eeg_256hz/0/c/0/`)) keys.push(o.key);
    let read = 0;
    let decode = 0;
    let size = 0;
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      const frame = (await server.deps.objects.readAll(keys[Math.floor(Math.random() * keys.length)]!))!;
      const t1 = performance.now();
      await decodeChunk(frame, 64 * 1024 * 2);
      decode += performance.now() - t1;
      read += t1 - t0;
      size += frame.byteLength;
    }
    console.log(`200 random chunks of ${keys.length}: read ${(read / 200).toFixed(3)} ms, decode ${(decode / 200).toFixed(3)} ms a chunk; ${(size / 200 / 1024).toFixed(0)} KiB compressed`);
  }
  const starts = Array.from({ length: 200 }, () => Math.floor(Math.random() * (seconds - 4)));
  const req = (start: number) => ({ dataset_id: id, path, start, duration: 4 });
  let plan = 0;
  let answer = 0;
  let bytes = 0;
  for (const start of starts) {
    const t0 = performance.now();
    const p = await planWindow(server.deps, undefined, req(start), { format: 'f32', dtype: 'float32' });
    const t1 = performance.now();
    const reader = windowStream(server.deps, p, 'f32', 'float32').getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
    answer += performance.now() - t1;
    plan += t1 - t0;
  }
  console.log(`sequential, ${starts.length} windows of 4 s × 64 ch: look-up ${(plan / starts.length).toFixed(2)} ms, answer ${(answer / starts.length).toFixed(2)} ms a window (${mib(bytes)})`);

  let served = 0;
  const lat: Array<[number, number]> = [];
  const until = performance.now() + readSeconds * 1000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        const start = Math.floor(Math.random() * (seconds - 4));
        const t0 = performance.now();
        const res = await fetch(`${server.url}/datasets/${id}/signal?path=${encodeURIComponent(path)}&start=${start}&duration=4&format=f32`);
        const t1 = performance.now();
        // Not `served += await ...`: that reads `served` before the await and loses the other readers' bytes.
        const got = (await res.arrayBuffer()).byteLength;
        served += got;
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        lat.push([t1 - t0, performance.now() - t1]);
      }
    }),
  );
  const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!.toFixed(1);
  console.log(`n ${lat.length}; headers p50 ${q(lat.map((l) => l[0]), 0.5)} p90 ${q(lat.map((l) => l[0]), 0.9)} max ${q(lat.map((l) => l[0]), 1)}; body p50 ${q(lat.map((l) => l[1]), 0.5)} p90 ${q(lat.map((l) => l[1]), 0.9)} max ${q(lat.map((l) => l[1]), 1)}`);
  console.log(`8 concurrent HTTP readers (in-process), ${readSeconds} s: ${(served / 2 ** 20 / readSeconds).toFixed(1)} MB/s; ${memory()}`);
} finally {
  await server.close().catch(() => undefined);
  await rm(work, { recursive: true, force: true });
}
