/**
 * Upload benchmark: a 1 GiB folder of 100 files uploaded with `nds datasets upload` to a local server on the
 * folder store, side by side with `cp -r` of the same files on the same disk, in alternating rounds. Prints MB/s of
 * both, their ratio, the CLI's peak RSS (from /usr/bin/time) and, on Linux, the server's CPU by thread (event
 * loop, hashing thread, V8's helpers, I/O threads; /proc). Goals: ≥ 50% of cp, < 200 MB peak RSS.
 * Files from 64 MiB on go up in parts (`--files 1 --mib 4096`: one 4 GiB file). With `--cuts n`, the CLI and the
 * presigned URLs go through a TCP proxy that cuts every connection at n evenly spaced points of the bytes sent,
 * and the bench prints the bytes sent against the bytes of the folder.
 * With `--s3 <store URL>` (the radosgw of scripts/ci/services/radosgw.sh, see scripts/ci/env.sh's TEST_S3_URL), the
 * server's store is that bucket, the CLI sends to presigned URLs of it, and the baseline is the AWS SDK's own
 * upload (`@aws-sdk/lib-storage`'s `Upload`: the same files, 8 at a time, parts of 8 MiB, 4 in flight, as the CLI)
 * into the same bucket instead of `cp`. Goal there: ≥ 0.9× lib-storage.
 * Run: node --import tsx bench/upload.ts [--files 100] [--mib 1024] [--dir /tmp] [--rounds 3] [--settle-ms 3000] [--concurrency n]
 *        [--cuts 10] [--database-url postgres://...] [--s3 s3://bucket?endpoint=...]
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { Upload } from '@aws-sdk/lib-storage';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { mintApiKey } from '../src/accounts/api-keys.js';
import { createUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/core/config.js';
import { createLogger } from '../src/core/log.js';
import { parseS3Url, S3ObjectStore } from '../src/objects/s3-object-store.js';
import { startServer } from '../src/server.js';
import { startCuttingProxy } from '../test/support/cutting-proxy.js';
import { option } from './bench-args.js';
import { sdkClientFor } from './sdk-client.js';

const files = Number(option('files', '100'));
const totalBytes = Number(option('mib', '1024')) * 2 ** 20;
const rounds = Number(option('rounds', '3'));
const settleMs = Number(option('settle-ms', '3000'));
/** PUTs at a time; the CLI's default unless given. */
const concurrency = option('concurrency', '');
/** The server's database: embedded PGlite by default, or an existing PostgreSQL database. */
const databaseUrl = option('database-url', 'pglite:memory');
/** Forced disconnects during each upload (0: none, the CLI talks to the server directly). */
const cuts = Number(option('cuts', '0'));
/** An S3 store for the server (and lib-storage as the baseline), instead of a folder and `cp`. */
const s3Url = option('s3', '');
const baselineName = s3Url ? 'lib-storage' : 'cp -r';
const work = await mkdtemp(join(option('dir', tmpdir()), 'nds-bench-upload-'));
const mb = (bytes: number, s: number) => bytes / 1e6 / s;
const clockTicks = process.platform === 'linux' ? Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) : 0;

/**
 * CPU seconds of each thread of this process (the server's event loop, its hashing thread, V8's helpers, the
 * I/O threads) by thread id, from /proc (Linux only; empty elsewhere): which thread bounds an upload.
 */
function threadCpu(): Map<string, { name: string; seconds: number }> {
  const threads = new Map<string, { name: string; seconds: number }>();
  if (!clockTicks) return threads;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The name is in parentheses and may hold spaces; utime and stime are the 12th and 13th fields after it.
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      threads.set(tid, { name: stat.slice(stat.indexOf('(') + 1, close), seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

/** CPU seconds by thread name between two `threadCpu()` readings (threads started in between count from 0). */
function cpuByThreadName(before: Map<string, { seconds: number }>, after: Map<string, { name: string; seconds: number }>): string {
  const byName = new Map<string, number>();
  for (const [tid, t] of after) byName.set(t.name, (byName.get(t.name) ?? 0) + t.seconds - (before.get(tid)?.seconds ?? 0));
  return [...byName].filter(([, s]) => s >= 0.01).sort((a, b) => b[1] - a[1]).map(([n, s]) => `${n} ${s.toFixed(2)} s`).join(', ');
}

async function writeFolder(dir: string): Promise<void> {
  const block = randomBytes(1 << 20);
  const per = Math.floor(totalBytes / files);
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `sub-${String(i % 10).padStart(2, '0')}`, 'eeg');
    await mkdir(sub, { recursive: true });
    const fh = await open(join(sub, `sub-${i}_task-rest_eeg.edf`), 'w');
    // Each file distinct (its index stamped in every block), so none is deduplicated.
    for (let written = 0; written < per; written += block.length) {
      block.writeUInt32LE(i, 0);
      block.writeUInt32LE(written, 4);
      await fh.write(block, 0, Math.min(block.length, per - written));
    }
    await fh.close();
  }
}

const src = join(work, 'src');
await writeFolder(src);
const bytes = Number(execFileSync('du', ['-sb', src], { encoding: 'utf8' }).split('\t')[0]);

// The server must know its own URL (presigned URLs point at it) before it listens.
const port = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const proxy = cuts > 0 ? await startCuttingProxy() : undefined;
const config = loadConfig({ PORT: String(port), DATA_DIR: join(work, 'data'), DATABASE_URL: databaseUrl, OBJECT_STORE_URL: s3Url || `file:${join(work, 'objects')}`, LOG_LEVEL: 'silent', IN_PROCESS_WORKER: 'false', ...(proxy ? { PUBLIC_URL: proxy.url } : {}) });
const server = await startServer({ config, hostname: '127.0.0.1', log: createLogger('silent') });
if (proxy) proxy.target = { host: '127.0.0.1', port };
const url = proxy?.url ?? config.publicUrl;
const sentWithCuts: Array<{ sent: number; cuts: number }> = [];
try {
  const user = await createUser(server.deps.db, { username: 'bench', email: 'bench@example.org', status: 'approved' }, server.deps.clock.now());
  await server.deps.db.updateTable('users').set({ sandbox_completed_at: new Date() }).where('id', '=', user.id).execute();
  const { apiKey } = await mintApiKey(server.deps.db, user.id, 'bench', 'admin');
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  // Before each contender: written data on disk, freed memory settled. On a VM whose host takes freed pages
  // back, a copy into reclaimed pages costs several times one into pages just freed (see bench/RESULTS.md),
  // so both start from the same state, and the rounds alternate.
  const settle = async () => {
    execFileSync('sync');
    await new Promise((r) => setTimeout(r, settleMs));
  };
  const cpRuns: number[] = [];
  const cpCpu: number[] = [];
  const cpWarmRuns: number[] = [];
  const uploadRuns: Array<{ seconds: number; beforeSync: number; cliCpu: number; serverCpu: number; serverThreads: string; peakMb: number }> = [];
  /** `cp -r` of the folder and `sync`: wall time and cp's CPU time; the copy is removed afterwards. */
  const copyOnce = async () => {
    const started = performance.now();
    const copied = spawnSync('/usr/bin/time', ['-f', '%U %S', 'cp', '-r', src, join(work, 'copy')], { encoding: 'utf8' });
    if (copied.status !== 0) throw new Error(`cp failed: ${copied.stderr}`);
    execFileSync('sync');
    const seconds = (performance.now() - started) / 1000;
    await rm(join(work, 'copy'), { recursive: true });
    return { seconds, cpu: copied.stderr.trim().split(' ').map(Number).reduce((a, b) => a + b, 0) };
  };
  /** The AWS SDK's own multipart upload of every file into the bucket, as many at a time as the CLI sends. */
  const libStorageOnce = async (round: number) => {
    const location = parseS3Url(s3Url);
    const client = sdkClientFor(s3Url);
    const paths = (await readdir(src, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    const prefix = `bench-lib-storage/${round}-${Date.now()}/`;
    const started = performance.now();
    const cpu = process.cpuUsage();
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < paths.length; i = next++) {
        const key = prefix + paths[i]!.slice(src.length + 1);
        await new Upload({ client, params: { Bucket: location.bucket, Key: key, Body: createReadStream(paths[i]!) }, queueSize: 4, partSize: 8 * 2 ** 20 }).done();
      }
    };
    await Promise.all(Array.from({ length: Number(concurrency || 8) }, worker));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    await new S3ObjectStore(location).deletePrefix(prefix);
    client.destroy();
    return { seconds, cpu: (used.user + used.system) / 1e6 };
  };
  // Warm the page cache for both contenders alike.
  execFileSync('sh', ['-c', `cat ${src}/*/eeg/* > /dev/null`]);
  for (let round = 1; round <= rounds; round++) {
    await settle();
    const first = s3Url ? await libStorageOnce(round) : await copyOnce();
    cpRuns.push(first.seconds);
    cpCpu.push(first.cpu);
    // cp again at once, into the page-cache pages the first copy just gave back (before the host takes them):
    // cp's best case on this VM, the stricter baseline.
    cpWarmRuns.push((s3Url ? await libStorageOnce(round) : await copyOnce()).seconds);

    // A new dataset each round: content already stored would be skipped, not sent.
    const created = await fetch(`${url}/datasets`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `bench ${round}` }) });
    const { id } = (await created.json()) as { id: string };
    await settle();
    proxy?.reset();
    proxy?.cutAt(Array.from({ length: cuts }, (_, i) => Math.round(((i + 1) / (cuts + 1)) * bytes)));
    const started = performance.now();
    const serverCpu = process.cpuUsage();
    const serverThreads = threadCpu();
    // Asynchronous: the server answering the CLI lives in this process's event loop.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('/usr/bin/time', ['-f', '%U %S %M', process.execPath, 'bin/nds.js', 'datasets', 'upload', id, src, '--json', '--force', ...(concurrency ? ['--concurrency', concurrency] : []), ...(cuts ? ['--retries', '10'] : [])], {
        env: { ...process.env, NDS_API_URL: url, NDS_API_KEY: apiKey, NDS_UPLOAD_HASH_CACHE: 'off' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    const beforeSync = (performance.now() - started) / 1000;
    if (proxy) sentWithCuts.push({ sent: proxy.sent, cuts: proxy.cuts });
    const server = process.cpuUsage(serverCpu);
    const threadsUsed = cpuByThreadName(serverThreads, threadCpu());
    execFileSync('sync');
    const seconds = (performance.now() - started) / 1000;
    if (run.status !== 0) throw new Error(`upload failed: ${run.stderr}`);
    const summary = JSON.parse(run.stdout) as { uploaded: number; uploaded_bytes: number };
    if (summary.uploaded !== files) throw new Error(`expected ${files} uploads, got ${summary.uploaded}`);
    // The last line of stderr is /usr/bin/time's (the lines before it are --json progress events).
    const [cliUser, cliSys, peakKb] = run.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    uploadRuns.push({ seconds, beforeSync, cliCpu: cliUser + cliSys, serverCpu: (server.user + server.system) / 1e6, serverThreads: threadsUsed, peakMb: peakKb / 1024 });
    if (s3Url) await S3ObjectStore.fromUrl(s3Url).deletePrefix(`${id}/`);
    else await rm(join(work, 'objects', id), { recursive: true, force: true });
  }

  console.log(`Upload: ${(bytes / 2 ** 30).toFixed(2)} GiB, ${files} files (${s3Url ? 'S3 store' : 'folder store'}, local server), ${rounds} alternating rounds`);
  const b = baselineName;
  console.log(`| round | ${b}${s3Url ? '' : ' + sync'} | ${b} again at once | nds datasets upload + sync | upload before sync | CPU: ${b} / CLI / server | CLI peak RSS | ratio to ${b} / to ${b} again |\n|---|---|---|---|---|---|---|---|`);
  uploadRuns.forEach((u, i) => {
    const c = cpRuns[i];
    const w = cpWarmRuns[i];
    console.log(`| ${i + 1} | ${c.toFixed(2)} s (${mb(bytes, c).toFixed(0)} MB/s) | ${w.toFixed(2)} s (${mb(bytes, w).toFixed(0)} MB/s) | ${u.seconds.toFixed(2)} s (${mb(bytes, u.seconds).toFixed(0)} MB/s) | ${u.beforeSync.toFixed(2)} s | ${cpCpu[i].toFixed(2)} s / ${u.cliCpu.toFixed(2)} s / ${u.serverCpu.toFixed(2)} s | ${u.peakMb.toFixed(0)} MB | ${((100 * c) / u.seconds).toFixed(0)}% / ${((100 * w) / u.seconds).toFixed(0)}% |`);
  });
  uploadRuns.forEach((u, i) => u.serverThreads && console.log(`Server CPU by thread, round ${i + 1}: ${u.serverThreads}`));
  const cpMedian = median(cpRuns);
  const uploadMedian = median(uploadRuns.map((u) => u.seconds));
  const peak = Math.max(...uploadRuns.map((u) => u.peakMb));
  console.log(`Medians: ${b} ${cpMedian.toFixed(2)} s (${mb(bytes, cpMedian).toFixed(0)} MB/s), upload ${uploadMedian.toFixed(2)} s (${mb(bytes, uploadMedian).toFixed(0)} MB/s)`);
  const cpWarmMedian = median(cpWarmRuns);
  console.log(`${b} again at once: ${cpWarmMedian.toFixed(2)} s (${mb(bytes, cpWarmMedian).toFixed(0)} MB/s)`);
  console.log(`CLI/${b} throughput ratio (medians): ${((100 * cpMedian) / uploadMedian).toFixed(0)}% (goal ≥ ${s3Url ? 90 : 50}%), to ${b} again at once ${((100 * cpWarmMedian) / uploadMedian).toFixed(0)}%; CLI peak RSS ${peak.toFixed(0)} MB (goal < 200 MB)`);
  for (const [i, c] of sentWithCuts.entries()) {
    console.log(`Round ${i + 1} with ${c.cuts} forced disconnects: sent ${(c.sent / 1e6).toFixed(1)} MB for ${(bytes / 1e6).toFixed(1)} MB of files (${((100 * (c.sent - bytes)) / bytes).toFixed(1)}% again)`);
  }
} finally {
  await proxy?.close();
  await server.close();
  await rm(work, { recursive: true, force: true });
}
