/**
 * ML benchmark (issue 14): a synthetic 64-channel, 1-hour, 256 Hz EDF (with 720 events in its
 * `_events.tsv`) and a ~1 GiB BDF, converted into a public dataset on an in-process server. The Python half
 * (`bench/ml_bench.py`, python3-mne, python3-torch) measures each figure beside its baseline in the same run:
 * a random 4 s window of 8 channels (route vs downloading the file and reading it with MNE), a full pass in
 * 2 s windows (the loader vs MNE preload=True and slicing), 720 event-locked windows through the loader with
 * 2 workers, and 8 concurrent readers of float32 (route vs the same readers downloading the file).
 * The data is converted in this process; then `nds serve` runs alone in a child process on the same database
 * and object folder, so its RSS is the server's own.
 * Run: node --import tsx bench/ml.ts [--quick] [--bdf-bytes N] [--keep]
 * (--keep leaves the work folder, its path printed: the converted dataset, the database and the Python config)
 */
import { execFile, spawn } from 'node:child_process';
import { createReadStream, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAccount } from '../test/support/accounts.js';
import { anonymousRssBytes, cpuSeconds, rssBytes, servingPid } from '../test/support/processes.js';
import { freePort, startTestServer } from '../test/support/test-server.js';
import { publishDataset } from '../test/web/viewer-support.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const bdfBytes = Number(args[args.indexOf('--bdf-bytes') + 1]) || (quick ? 64 << 20 : 1 << 30);
const seconds = quick ? 300 : 3600;
const id = 'nd000914';
const work = await mkdtemp(join(process.env.NDS_BENCH_DIR ?? tmpdir(), 'nds-bench-ml-'));
const storage = { DATABASE_URL: `pglite:${join(work, 'db')}`, OBJECT_STORE_URL: `file:${join(work, 'objects')}` };
const server = await startTestServer({ env: storage });
let child: ReturnType<typeof spawn> | undefined;
const files = createServer((req, res) => {
  const file = join(work, decodeURIComponent(req.url ?? '/'));
  res.writeHead(200, { 'content-length': String(statSync(file).size), 'content-type': 'application/octet-stream' });
  createReadStream(file).pipe(res);
});
await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
const filesUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}`;
let rssPeak = 0;
/** The serving process of the child `nds serve` (under its launcher), once it is up. */
let serverPid = 0;
const childRss = () => (serverPid ? rssBytes(serverPid) : 0);
const childCpu = () => (serverPid ? cpuSeconds(serverPid) : 0);
const rssSamples: Array<[number, number, number]> = [];
const sampler = setInterval(() => {
  const rss = childRss();
  rssPeak = Math.max(rssPeak, rss);
  rssSamples.push([Date.now() / 1000, rss, childCpu()]);
}, 100);
/** The child server's share of one core between two wall-clock times (seconds). */
const cpuShareBetween = ([from, to]: [number, number]) => {
  const inside = rssSamples.filter(([t]) => t >= from && t <= to);
  return inside.length < 2 ? 0 : (inside.at(-1)![2] - inside[0]![2]) / (inside.at(-1)![0] - inside[0]![0]);
};
/** The child server's peak RSS between two wall-clock times (seconds), from the samples. */
const rssPeakBetween = ([from, to]: [number, number]) => Math.max(0, ...rssSamples.filter(([t]) => t >= from && t <= to).map(([, rss]) => rss));

try {
  const bids = join(work, 'bids');
  const edfPath = 'sub-01/eeg/sub-01_task-bench_eeg.edf';
  const bdfPath = 'sub-02/eeg/sub-02_task-bench_eeg.bdf';
  mkdirSync(join(bids, 'sub-01/eeg'), { recursive: true });
  mkdirSync(join(bids, 'sub-02/eeg'), { recursive: true });
  await writeSyntheticRecording({ path: join(bids, edfPath), bdf: false, channels: 64, rate: 256, bytes: 256 * 65 + 64 * 256 * 2 * seconds });
  await writeSyntheticRecording({ path: join(bids, bdfPath), bdf: true, channels: 64, rate: 2048, bytes: bdfBytes });
  const nEvents = seconds / 5;
  const rows = Array.from({ length: nEvents }, (_, i) => `${(i * 5 + 2).toFixed(3)}\t0\t${i % 2 ? 'right' : 'left'}`);
  writeFileSync(join(bids, 'sub-01/eeg/sub-01_task-bench_events.tsv'), `onset\tduration\ttrial_type\n${rows.join('\n')}\n`);
  writeFileSync(join(bids, 'dataset_description.json'), '{"Name":"ml bench","BIDSVersion":"1.9.0"}');

  const owner = await createAccount(server);
  const started = performance.now();
  await publishDataset(server, {
    id,
    ownerId: owner.user.id,
    name: 'ML bench',
    recordings: [edfPath, bdfPath].map((path) => ({ file: join(bids, path), bidsRoot: bids, path, zarr: path.replace(/\.\w+$/, '.zarr') })),
  });
  process.stderr.write(`converted the EDF and the BDF in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  await server.close();

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [...(process.env.NDS_BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.NDS_BENCH_PROFILE] : []), 'bin/nds.js', 'serve'], {
    env: { ...process.env, ...storage, DATA_DIR: join(work, 'serve'), PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      if (i > 600) throw new Error('nds serve did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  serverPid = servingPid(child.pid!);
  const launcher = serverPid === child.pid ? undefined : { rss: rssBytes(child.pid!), anonymous: anonymousRssBytes(child.pid!) };

  const post = async (body: unknown) => ((await (await fetch(`${url}/windows`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { windows: unknown[] });
  const windows2s = (await post({ recordings: { dataset: id, rate: 256 }, fixed: { length_s: 2 } })).windows;
  const windowsEvents = (await post({ recordings: { dataset: id, rate: 256 }, events: { mapping: { left: 'L', right: 'R' }, length_s: 1 } })).windows;
  const recordings = ((await (await fetch(`${url}/recordings?dataset=${id}`)).json()) as { recordings: Array<{ path: string; groups: Array<{ rate: number; n_samples: number; channels: Array<{ label: string }> }> }> }).recordings;
  const config = {
    url,
    dataset: id,
    tmp: work,
    concurrent_seconds: quick ? 5 : 10,
    recordings: [edfPath, bdfPath].map((path) => {
      const r = recordings.find((x) => x.path === path)!;
      const g = r.groups[0]!;
      return { name: path.endsWith('.edf') ? 'edf' : 'bdf', path, file: join(bids, path), file_url: `${filesUrl}/bids/${path}`, rate: g.rate, n_samples: g.n_samples, n_channels: g.channels.length, labels: g.channels.map((c) => c.label) };
    }),
    // A static file the size of one reader's answer (4 s × 64 ch float32): what one request costs this client
    // and this machine when the server only sends bytes.
    window_file_url: `${filesUrl}/window.f32`,
    windows_2s: windows2s,
    windows_events: windowsEvents,
  };
  writeFileSync(join(work, 'window.f32'), new Uint8Array(4 * 256 * 64 * 4));
  const rssIdle = childRss();
  rssPeak = rssIdle;
  const load = loadavg()[0]!.toFixed(1);
  const configFile = join(work, 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const { stdout, stderr } = await promisify(execFile)('/usr/bin/python3', [join(import.meta.dirname, 'ml_bench.py'), configFile], { maxBuffer: 1 << 26 });
  if (stderr.trim()) process.stderr.write(stderr);
  const f = JSON.parse(stdout) as Record<string, Record<string, number | string>> & { phases: Record<string, [number, number]> };
  const mb = (b: number) => (b / 2 ** 20).toFixed(b < 2 ** 20 ? 3 : 1);
  const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;
  console.log(`Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; load average ${load} at the start; nds serve in a child process (PGlite, folder store)\n`);
  console.log('| figure | nds | baseline (same run) | ratio | goal |');
  console.log('|---|---:|---:|---:|---|');
  for (const name of ['edf', 'bdf']) {
    const w = f[`window_${name}`]! as Record<string, number>;
    const size = name === 'edf' ? `64 ch × ${seconds / 3600} h 256 Hz EDF, ${mb(w.baseline_bytes!)} MiB` : `64 ch 2048 Hz BDF, ${mb(w.baseline_bytes!)} MiB`;
    console.log(`| random 4 s × 8 ch window, ${size}: bytes | ${(w.route_bytes! / 1024).toFixed(0)} KiB | ${mb(w.baseline_bytes!)} MiB (download whole file) | ${(w.baseline_bytes! / w.route_bytes!).toFixed(0)}× fewer | ≥ 100× |`);
    console.log(`| same: time (median) | ${ms(w.route_s_median!)} | ${ms(w.baseline_s_median!)} (download + MNE read_raw + get_data) | ${(w.baseline_s_median! / w.route_s_median!).toFixed(0)}× less | ≥ 20× |`);
  }
  const p = f.full_pass! as Record<string, number>;
  console.log(`| full pass, ${p.windows} × 2 s windows of 64 ch (${f.full_pass!.how}) | ${p.loader_s!.toFixed(1)} s | ${p.mne_preload_s!.toFixed(1)} s (MNE preload=True on the local file, sliced) | ${(p.mne_preload_s! / p.loader_s!).toFixed(2)} | ≥ 1.0 |`);
  console.log(`| same pass, WindowDataset in the Python process (no workers), prefetch 8 | ${p.loader_inprocess_s!.toFixed(1)} s | ${p.mne_preload_s!.toFixed(1)} s | ${(p.mne_preload_s! / p.loader_inprocess_s!).toFixed(2)} | ≥ 1.0 |`);
  if (p.loader_spawned_s) console.log(`| same pass, first epoch of a DataLoader whose 2 workers are started by "spawn" (each imports torch first) | ${(p.loader_spawned_s as number).toFixed(1)} s | ${p.mne_preload_s!.toFixed(1)} s | ${(p.mne_preload_s! / (p.loader_spawned_s as number)).toFixed(2)} | |`);
  if (p.loader_epoch2_s) console.log(`| same pass, second epoch of the same DataLoader (persistent workers: none started) | ${(p.loader_epoch2_s as number).toFixed(1)} s | ${p.mne_preload_s!.toFixed(1)} s | ${(p.mne_preload_s! / (p.loader_epoch2_s as number)).toFixed(2)} | ≥ 1.0 |`);
  console.log(`| server RSS peak during the full pass | ${mb(rssPeakBetween(f.phases.full_pass!))} MiB | ${mb(rssIdle)} MiB (the same server idle, before the Python runs) | | < 300 MB |`);
  if (launcher) console.log(`| the launcher process of nds serve (bin/serve-launcher.js), beside the server | ${mb(launcher.rss)} MiB RSS, ${mb(launcher.anonymous)} MiB of it its own (the rest is the node executable, shared with the server) | | | |`);
  console.log(`| server RSS peak during the 8 concurrent readers; during all the Python runs | ${mb(rssPeakBetween(f.phases.concurrent!))} MiB; ${mb(rssPeak)} MiB | | | |`);
  const e = f.events! as Record<string, number>;
  console.log(`| ${e.windows} event-locked 1 s windows, loader with 2 workers | ${(e.windows! / e.seconds!).toFixed(0)} windows/s, ${mb(e.bytes!)} MiB moved | file ${mb(e.file_bytes!)} MiB | ${(e.file_bytes! / e.bytes!).toFixed(1)}× fewer bytes | |`);
  const c = f.concurrent! as Record<string, number>;
  console.log(`| 8 concurrent readers, float32 of random 4 s × 64 ch windows | ${mb(c.route_bytes_per_s!)} MB/s | ${mb(c.file_download_bytes_per_s!)} MB/s (same 8 readers downloading the EDF) | ${(c.route_bytes_per_s! / c.file_download_bytes_per_s!).toFixed(2)} | ≥ 200 MB/s |`);
  const share = cpuShareBetween(f.phases.concurrent!);
  console.log(`| same: server CPU while serving them | ${(share * 100).toFixed(0)} % of one core; ${((share * 1000 * 4 * 256 * 64 * 4) / c.route_bytes_per_s!).toFixed(2)} ms a window | | | |`);
  if (c.window_file_bytes_per_s) console.log(`| same, against the same 8 readers fetching a static file of one answer's size (${mb(4 * 256 * 64 * 4)} MiB) | ${mb(c.route_bytes_per_s!)} MB/s | ${mb(c.window_file_bytes_per_s)} MB/s | ${(c.route_bytes_per_s! / c.window_file_bytes_per_s).toFixed(2)} | |`);
} finally {
  clearInterval(sampler);
  files.close();
  // The server writes its database as it stops: remove the folder only once it has exited.
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  }
  await server.close().catch(() => undefined);
  if (args.includes('--keep')) process.stderr.write(`work folder kept: ${work}\n`);
  else await rm(work, { recursive: true, force: true });
}
