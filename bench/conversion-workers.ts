/**
 * Conversion through workers (issue 24, items 3 and 4): one BIDS dataset of 40 EDF recordings (synthetic,
 * 64 channels at 1000 Hz, 8 MB each by default), hosted in git, converted by 1 and then by 2 real `nds worker`
 * processes sharing one PostgreSQL queue and one folder object store; the figure is the wall time from the
 * job queued to the job done (checkout, planning, every recording task, index, catalogue), the source MB/s,
 * and the MB/s per busy core. Needs a PostgreSQL server: BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test; a database is created and dropped for each run).
 * Run: node --import tsx bench/conversion-workers.ts [--recordings 40] [--mb 8]
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createUser } from '../src/accounts/users.js';
import { enqueueConversion } from '../src/conversion/job-queue.js';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { repositoryDir } from '../src/git/repository-dir.js';
import { HOSTED_SOURCE } from '../src/datasets/source-repo.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const RECORDINGS = Number(option('recordings', '40'));
const MB = Number(option('mb', '8'));
const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const git = (cwd: string, ...a: string[]) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.org', '-c', 'init.defaultBranch=main', ...a], { cwd });

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const work = await mkdtemp(path.join(tmpdir(), 'nds-bench-workers-'));
const source = path.join(work, 'source');
mkdirSync(source);
writeFileSync(path.join(source, 'dataset_description.json'), JSON.stringify({ Name: 'bench', BIDSVersion: '1.9.0' }));
let sourceBytes = 0;
for (let s = 1; s <= RECORDINGS; s++) {
  const dir = path.join(source, `sub-${String(s).padStart(3, '0')}`, 'eeg');
  mkdirSync(dir, { recursive: true });
  sourceBytes += await writeSyntheticRecording({ path: path.join(dir, `sub-${String(s).padStart(3, '0')}_task-rest_eeg.edf`), bdf: false, channels: 64, rate: 1000, bytes: MB * 1e6 });
}
git(source, 'init', '-q');
git(source, 'add', '-A');
git(source, 'commit', '-q', '-m', 'recordings');

/** One conversion of the dataset by `workers` processes; returns the seconds from queued to done. */
async function run(workers: number): Promise<{ seconds: number; tasksByWorker: number[] }> {
  const name = `nds_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const dataDir = path.join(work, `data-${workers}`);
  const id = 'nd000001';
  const repo = repositoryDir(path.join(dataDir, 'git'), id);
  mkdirSync(path.dirname(repo), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', source, repo]);
  const database = await connectDatabase(url.toString());
  const children: ReturnType<typeof spawn>[] = [];
  try {
    await migrateToLatest(database.db);
    const owner = await createUser(database.db, { username: 'bench', email: 'bench@example.org', status: 'approved', role: 'admin', kind: 'person' }, new Date());
    await database.db.insertInto('datasets').values({ id, name: 'Bench', owner_id: owner.id, visibility: 'public', source_repo: HOSTED_SOURCE, external_ids: [] }).execute();
    const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: url.toString(), LOG_LEVEL: 'warn' };
    for (let i = 0; i < workers; i++) children.push(spawn(process.execPath, ['bin/nds.js', 'worker'], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
    // Let the workers start (bundle, migrations check) before the clock starts.
    await new Promise((r) => setTimeout(r, 5000));
    const started = performance.now();
    const { job } = await enqueueConversion(database.db, { datasetId: id, ref: 'main', full: true, reason: 'bench' });
    for (;;) {
      const row = await database.db.selectFrom('conversion_jobs').select(['state', 'error']).where('id', '=', job.id).executeTakeFirstOrThrow();
      if (row.state === 'done') break;
      if (row.state === 'failed') throw new Error(`the job failed: ${row.error}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    const tasks = await database.db.selectFrom('conversion_tasks').select('worker_id').where('job_id', '=', job.id).execute();
    const counts = new Map<string, number>();
    for (const t of tasks) counts.set(t.worker_id ?? '?', (counts.get(t.worker_id ?? '?') ?? 0) + 1);
    return { seconds, tasksByWorker: [...counts.values()].sort((a, b) => b - a) };
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await database.close();
    await adminQuery(`drop database if exists ${name} with (force)`);
    await rm(dataDir, { recursive: true, force: true });
  }
}

try {
  const loadBefore = load();
  const one = await run(1);
  const two = await run(2);
  const mbs = (s: number) => sourceBytes / 1e6 / s;
  const cores = availableParallelism();
  console.log(`conversion through workers: ${RECORDINGS} EDF recordings, ${(sourceBytes / 1e6).toFixed(0)} MB of source, ${cores} cores, load ${loadBefore} → ${load()}`);
  console.log('| workers | wall | source converted | per busy core | tasks by worker |');
  console.log('|---:|---:|---:|---:|---|');
  console.log(`| 1 | ${one.seconds.toFixed(1)} s | ${mbs(one.seconds).toFixed(0)} MB/s | ${mbs(one.seconds).toFixed(0)} MB/s | ${one.tasksByWorker.join(', ')} |`);
  console.log(`| 2 | ${two.seconds.toFixed(1)} s | ${mbs(two.seconds).toFixed(0)} MB/s | ${(mbs(two.seconds) / Math.min(2, cores)).toFixed(0)} MB/s | ${two.tasksByWorker.join(', ')} |`);
  console.log(`speed-up of 2 workers over 1: ${(one.seconds / two.seconds).toFixed(2)}× (goal ≥ 1.6×)`);
} finally {
  await rm(work, { recursive: true, force: true });
}
