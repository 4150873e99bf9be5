/**
 * Upload benchmark: a 1 GiB folder of 100 files uploaded with `nds datasets upload` to a local server on the
 * folder store, side by side with `cp -r` of the same files on the same disk, in one run. Prints MB/s of
 * both, their ratio, and the CLI's peak RSS (from /usr/bin/time). Goals: ≥ 50% of cp, < 200 MB peak RSS.
 * Run: node --import tsx bench/upload.ts [--files 100] [--mib 1024] [--dir /tmp]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { mintApiKey } from '../src/accounts/api-keys.js';
import { createUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startServer } from '../src/server.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const files = Number(option('files', '100'));
const totalBytes = Number(option('mib', '1024')) * 2 ** 20;
const work = await mkdtemp(join(option('dir', tmpdir()), 'nds-bench-upload-'));
const mb = (bytes: number, s: number) => bytes / 1e6 / s;

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
const config = loadConfig({ PORT: String(port), DATA_DIR: join(work, 'data'), DATABASE_URL: 'pglite:memory', OBJECT_STORE_URL: `file:${join(work, 'objects')}`, LOG_LEVEL: 'silent', IN_PROCESS_WORKER: 'false' });
const server = await startServer({ config, hostname: '127.0.0.1', log: createLogger('silent') });
const url = config.publicUrl;
try {
  const user = await createUser(server.deps.db, { username: 'bench', email: 'bench@example.org', status: 'approved' });
  await server.deps.db.updateTable('users').set({ sandbox_completed_at: new Date() }).where('id', '=', user.id).execute();
  const { apiKey } = await mintApiKey(server.deps.db, user.id, 'bench', 'admin');
  const created = await fetch(`${url}/datasets`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) });
  const { id } = (await created.json()) as { id: string };

  // Warm the page cache for both contenders alike.
  execFileSync('sh', ['-c', `cat ${src}/*/eeg/* > /dev/null`]);
  let started = performance.now();
  execFileSync('cp', ['-r', src, join(work, 'copy')]);
  execFileSync('sync');
  const cpSeconds = (performance.now() - started) / 1000;

  started = performance.now();
  // Asynchronous: the server answering the CLI lives in this process's event loop.
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('/usr/bin/time', ['-f', '%M', process.execPath, 'bin/nds.js', 'datasets', 'upload', id, src, '--json'], {
      env: { ...process.env, NDS_API_URL: url, NDS_API_KEY: apiKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  execFileSync('sync');
  const cliSeconds = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`upload failed: ${run.stderr}`);
  const summary = JSON.parse(run.stdout) as { uploaded: number; uploaded_bytes: number };
  if (summary.uploaded !== files) throw new Error(`expected ${files} uploads, got ${summary.uploaded}`);
  const peakMb = Number(run.stderr.trim().split('\n').at(-1)) / 1024;

  const rows = [
    ['cp -r', `${cpSeconds.toFixed(2)} s`, `${mb(bytes, cpSeconds).toFixed(0)} MB/s`, '-'],
    ['nds datasets upload', `${cliSeconds.toFixed(2)} s`, `${mb(bytes, cliSeconds).toFixed(0)} MB/s`, `${peakMb.toFixed(0)} MB`],
  ];
  console.log(`Upload: ${(bytes / 2 ** 30).toFixed(2)} GiB, ${files} files (folder store, local server)`);
  console.log('| what | time | throughput | peak RSS |\n|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  const ratio = cpSeconds / cliSeconds;
  console.log(`CLI/cp throughput ratio: ${(ratio * 100).toFixed(0)}% (goal ≥ 50%); CLI peak RSS ${peakMb.toFixed(0)} MB (goal < 200 MB)`);
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
