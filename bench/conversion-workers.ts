/**
 * Conversion through workers (issue 24, items 3 and 4): one BIDS dataset of 40 EDF recordings (synthetic,
 * 64 channels at 1000 Hz, 8 MB each by default, each file its own signal), hosted in git as `nds datasets
 * upload` leaves it (git-lfs pointers, the data in the dataset's content objects; `--in-git` commits the data
 * as git blobs instead), converted in one run by:
 *   1. the converter alone (no store), pinned to one core: the ceiling;
 *   2. `nds convert <tree> <out>`, pinned to one core;
 *   3. one `nds worker` pinned to one core (the holder of the repository and PostgreSQL on the other);
 *   4. one and then two `nds worker` processes, unpinned: the speed-up of a second worker on one dataset.
 * A worker's figure is the wall time from the job queued to the job done (checkout, plan, every recording
 * task, index, catalogue), and the sum of its tasks' times (a task: the recording's files fetched, converted,
 * written to the store). The workers fetch the repository over HTTP from a holder node in this process, as
 * in a cluster (decision 0026), and share one PostgreSQL queue and one folder object store; each has its own
 * DATA_DIR (nothing of a mirror is shared). Needs PostgreSQL: BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test; a database is created and dropped for each run).
 * Run: node --import tsx bench/conversion-workers.ts [--recordings 40] [--mb 8] [--format edf|bdf] [--in-git] [--prof <dir>]
 *   [--runs alone,convert,pinned,one,two]   (`two,one` runs the two workers first) [--rounds n]
 * `--core-each` pins each worker of the one-and-two pairs to a core of its own (worker i to core i): one
 * worker on one core against two on two, each worker given the same share of the machine as it would have on
 * a node of its own. Unpinned, one worker already keeps more than one core busy (its writer threads), so on two
 * cores the pair's ratio says as much about that as about the job's split.
 * `--rounds n` (3 by default) runs the pair of one and two workers n times, alternating their order, and
 * prints each round's speed-up with their median and geometric mean. Beside them, two baselines: the converter
 * alone in one process against two processes at once (the machine's own speed-up for the computation), and
 * files created by one process against two.
 * `--prof <dir>` writes a CPU profile of each pinned worker and `nds convert` there (`node --cpu-prof`).
 * `--runs` picks the runs (all by default): `alone,convert,pinned` gives the per-core figures in seconds.
 * Besides wall time, each pinned run reports its CPU time (user + system, every thread of the process), the
 * figure that stays comparable when other work shares the machine, and of it the system time; every run its
 * workers' CPU, system time and minor page faults a recording, and each worker's mean task time (two workers
 * whose tasks take unequal times share the recordings unequally).
 * Every run's store stays until the end (as in bench/conversion.ts), and is deleted then through
 * bench/settled-deletions.ts, whose minute the next bench waits out: on this VM's ext4 without a journal,
 * creating files right after deleting thousands costs the kernel a scan past each recently deleted inode.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createUser } from '../src/accounts/users.js';
import { enqueueConversion } from '../src/conversion/job-queue.js';
import { loadConfig } from '../src/core/config.js';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { repositoryDir } from '../src/git/repository-dir.js';
import { HOSTED_SOURCE } from '../src/datasets/source-repo.js';
import { openObjectStore } from '../src/objects/open-object-store.js';
import { startRepositoryNode } from '../test/conversion/support.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';
import { args, option } from './bench-args.js';
import { removeSettled, waitForSettledDeletions } from './settled-deletions.js';

const RECORDINGS = Number(option('recordings', '40'));
const MB = Number(option('mb', '8'));
const IN_GIT = args.includes('--in-git');
const BDF = option('format', 'edf') === 'bdf';
const EXT = BDF ? 'bdf' : 'edf';
const PROF = args.includes('--prof') ? path.resolve(option('prof', 'prof')) : undefined;
const RUN_ORDER = option('runs', 'alone,convert,pinned,one,two').split(',');
const RUNS = new Set(RUN_ORDER);
/** The unpinned runs in the order given: `two,one` runs two workers first, so that neither run always comes after the other. */
const TWO_FIRST = RUNS.has('one') && RUNS.has('two') && RUN_ORDER.indexOf('two') < RUN_ORDER.indexOf('one');
/**
 * Rounds of the one-worker and two-worker runs, their order alternating (one, two; two, one; ...): on this VM
 * the second run of a pair can pay for the first's pages, so a ratio of one pair leans on its order.
 */
const ROUNDS = Math.max(1, Number(option('rounds', '3')));
const CORE_EACH = args.includes('--core-each');
const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'bench-signing-secret';
const ID = 'nd000001';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const cores = availableParallelism();
const pinned = (command: string[]) => (hasTaskset ? ['taskset', '-c', '0', ...command] : command);
const unpinned = (command: string[]) => (hasTaskset ? ['taskset', '-c', `0-${cores - 1}`, ...command] : command);
const onCore = (core: number, command: string[]) => (hasTaskset ? ['taskset', '-c', String(core % cores), ...command] : command);
// This process (the repository's holder, the clock) keeps off core 0, which the pinned runs have to themselves.
if (hasTaskset && cores > 1) execFileSync('taskset', ['-a', '-p', '-c', `1-${cores - 1}`, String(process.pid)], { stdio: 'ignore' });
const clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
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

const CREATION_FILES = 3000;

/**
 * Seconds from the start of `commands`, all at once and on any core, until every one has exited, after the
 * disk is settled. Unpinned: a child inherits the core this process keeps to (above) unless told otherwise.
 */
async function secondsUntilAllExit(commands: string[][]): Promise<number> {
  settleDisk();
  const started = performance.now();
  await Promise.all(
    commands.map((command) => {
      const run = unpinned(command);
      const child = spawn(run[0]!, run.slice(1), { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
      let said = '';
      child.stderr!.on('data', (d: Buffer) => (said += d.toString()));
      // A command that failed timed nothing worth printing.
      return new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command.join(' ')} exited (${code}): ${said.slice(-2000)}`)))));
    }),
  );
  return (performance.now() - started) / 1000;
}

/**
 * Seconds to create CREATION_FILES files of 64 KiB in a folder under `dir` by one process, and by two processes
 * at once (the time until both are done): whether the file system lets two writers create files side by side.
 */
async function fileCreationBaseline(dir: string): Promise<{ one: number; two: number }> {
  const script =
    "const fs=require('node:fs');const d=process.argv[1];fs.mkdirSync(d);const b=Buffer.alloc(65536,7);" +
    `for(let i=0;i<${CREATION_FILES};i++)fs.writeFileSync(d+'/f'+i,b);`;
  const creators = (count: number) => Array.from({ length: count }, (_, i) => [process.execPath, '-e', script, path.join(dir, `creation-${count}-${i}`)]);
  return { one: await secondsUntilAllExit(creators(1)), two: await secondsUntilAllExit(creators(2)) };
}

/**
 * Seconds for the converter alone (no store) to convert every data file in one process, and in two processes
 * at once, each half of the files (the time until both are done, start-up included in both): how much faster
 * the machine's two cores do the conversion's own computation than one, the ceiling of the workers' speed-up.
 */
async function converterScaling(files: string[]): Promise<{ one: number; two: number }> {
  const converter = (list: string[]) => [process.execPath, '--import', 'tsx', 'bench/conversion-run.ts', list[0]!, '--no-store', ...list.slice(1)];
  const half = Math.ceil(files.length / 2);
  return { one: await secondsUntilAllExit([converter(files)]), two: await secondsUntilAllExit([converter(files.slice(0, half)), converter(files.slice(half))]) };
}

/**
 * Writes back the dirty pages of what ran before (the earlier runs' stores, this run's source objects), so each
 * run starts from the same state: a run that began under the last one's writeback paid for it in its own file
 * writes (one pinned worker: 1.15 s of system time after `nds convert`, 0.38 s run alone; 2026-11-28).
 */
function settleDisk(): void {
  execFileSync('sync');
}

/** CPU seconds (user + system) a live process has used so far. */
function cpuSeconds(pid: number): number {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/** The fields of /proc/<pid>/stat after the command's name (`state` is the first). */
function procStat(pid: number | 'self'): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/** User and system CPU seconds a live process has used so far. */
function cpuSplit(pid: number): { user: number; system: number } {
  const fields = procStat(pid);
  return { user: Number(fields[11]) / clockTicks, system: Number(fields[12]) / clockTicks };
}

/** Minor page faults of a live process so far. */
function minorFaults(pid: number): number {
  return Number(procStat(pid)[7]);
}

/**
 * The whole machine's CPU seconds so far, from /proc/stat: busy (every core's user, system, interrupt time),
 * waiting for the disk, and stolen by the hypervisor. Beside the workers' own CPU, it shows what else a run
 * kept busy (the holder, PostgreSQL, the kernel's writeback): what a second worker has to share two cores with.
 */
function machineCpu(): { busy: number; iowait: number; steal: number } {
  const [user, nice, system, , iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number) as number[];
  return { busy: (user! + nice! + system! + irq! + softirq!) / clockTicks, iowait: iowait! / clockTicks, steal: (steal ?? 0) / clockTicks };
}

/** User and system CPU seconds of this process's children that have ended and been waited for. */
function childrenCpu(): { user: number; system: number } {
  const fields = procStat('self');
  return { user: Number(fields[13]) / clockTicks, system: Number(fields[14]) / clockTicks };
}

const work = await mkdtemp(path.join(tmpdir(), 'nds-bench-workers-'));
const source = path.join(work, 'source');
const plain = path.join(work, 'plain');
mkdirSync(source);
const description = JSON.stringify({ Name: 'bench', BIDSVersion: '1.9.0' });
writeFileSync(path.join(source, 'dataset_description.json'), description);
mkdirSync(plain);
writeFileSync(path.join(plain, 'dataset_description.json'), description);
// A sidecar every recording inherits from the top of the tree, as BIDS datasets have.
writeFileSync(path.join(source, 'task-rest_eeg.json'), JSON.stringify({ TaskName: 'rest', PowerLineFrequency: 50 }));
writeFileSync(path.join(plain, 'task-rest_eeg.json'), JSON.stringify({ TaskName: 'rest', PowerLineFrequency: 50 }));
let sourceBytes = 0;
/** The data files as content objects (git-lfs pointers in the repository): sha256 → local file. */
const contents = new Map<string, string>();
const dataFiles: string[] = [];
for (let s = 1; s <= RECORDINGS; s++) {
  const rel = `sub-${String(s).padStart(3, '0')}/eeg/sub-${String(s).padStart(3, '0')}_task-rest_eeg.${EXT}`;
  const file = path.join(plain, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  mkdirSync(path.dirname(path.join(source, rel)), { recursive: true });
  sourceBytes += await writeSyntheticRecording({ path: file, bdf: BDF, channels: 64, rate: 1000, bytes: MB * 1e6, seed: s });
  dataFiles.push(file);
  const bytes = readFileSync(file);
  if (IN_GIT) {
    writeFileSync(path.join(source, rel), bytes);
  } else {
    const sha = createHash('sha256').update(bytes).digest('hex');
    contents.set(sha, file);
    writeFileSync(path.join(source, rel), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha}\nsize ${bytes.length}\n`);
  }
}
if (!IN_GIT) writeFileSync(path.join(source, '.gitattributes'), `*.${EXT} filter=lfs diff=lfs merge=lfs -text\n`);
git(source, 'init', '-q');
git(source, 'add', '-A');
git(source, 'commit', '-q', '-m', 'recordings');
const sourceMb = sourceBytes / 1e6;

interface WorkerRun {
  seconds: number;
  tasksByWorker: number[];
  /** Seconds from the job claimed to each worker's first task started, in the order of `tasksByWorker`. */
  firstTaskByWorker: number[];
  /** Each worker's mean task time in seconds, in the order of `tasksByWorker`. */
  taskTimeByWorker: number[];
  /** Sum of the tasks' times (claimed to finished), seconds. */
  taskSeconds: number;
  /** CPU seconds of the worker processes (not of the git they start). */
  workerCpu: number;
  /** Of which system time. */
  workerSystem: number;
  /** Minor page faults of the worker processes (each a page of memory touched for the first time). */
  workerFaults: number;
  /** The machine's CPU seconds during the run: busy (workers included), waiting for the disk, stolen. */
  machine: { busy: number; iowait: number; steal: number };
  /** Seconds from queued to the job claimed, to the first task started (checkout, plan), to the last task done, to the job done (index, catalogue). */
  phases: [number, number, number, number];
}

/** One conversion of the dataset by `workers` processes (each pinned to core 0 when `pin`; worker i to core i when `pin` is 'each'). */
async function runWorkers(workers: number, pin: boolean | 'each', label: string): Promise<WorkerRun> {
  const name = `nds_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const base = path.join(work, `run-${label}`);
  const gitDir = path.join(base, 'holder-git');
  const objectsDir = path.join(base, 'objects');
  const repo = repositoryDir(gitDir, ID);
  mkdirSync(path.dirname(repo), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', source, repo]);
  // A pushed repository of a real dataset is a pack (git unpacks pushes of fewer than 100 objects).
  execFileSync('git', ['-C', repo, 'repack', '-adq']);
  const node = await startRepositoryNode(gitDir, { dataDir: base, objectSigningSecret: SECRET });
  const common = { DATABASE_URL: url.toString(), NODE_URL: node.url, OBJECT_SIGNING_SECRET: SECRET, OBJECT_STORE_URL: `file:${objectsDir}`, LOG_LEVEL: 'warn' };
  const objects = await openObjectStore(loadConfig({ ...common, DATA_DIR: path.join(base, 'holder') }).objectStoreUrl);
  // With their size and hash, as an upload stores them: written past the page cache (decision 0006), so the
  // workers read them from the disk, as they read content uploaded a while before.
  for (const [sha, file] of contents) {
    const bytes = readFileSync(file);
    await objects.put(`${ID}/objects/${sha}`, bytes, { contentLength: bytes.length, sha256: sha });
  }
  const database = await connectDatabase(url.toString());
  const children: ReturnType<typeof spawn>[] = [];
  try {
    await migrateToLatest(database.db);
    const owner = await createUser(database.db, { username: 'bench', email: 'bench@example.org', status: 'approved', role: 'admin', kind: 'person' }, new Date());
    await database.db.insertInto('datasets').values({ id: ID, name: 'Bench', owner_id: owner.id, visibility: 'public', source_repo: HOSTED_SOURCE, external_ids: [] }).execute();
    for (let i = 0; i < workers; i++) {
      const env = { ...process.env, ...common, DATA_DIR: path.join(base, `worker-${i}`) };
      const prof = PROF && pin === true ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`, `--cpu-prof-name=worker-${label}-${i}.cpuprofile`] : [];
      const command = [process.execPath, ...prof, 'bin/nds.js', 'worker'];
      const run = pin === 'each' ? onCore(i, command) : pin ? pinned(command) : unpinned(command);
      children.push(spawn(run[0]!, run.slice(1), { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] }));
    }
    // The clock starts once every worker is up and listening for work (bundle loaded, database checked).
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve, reject) => {
            let said = '';
            c.stderr!.on('data', (d: Buffer) => {
              said += d.toString();
              if (said.includes('taking conversion jobs')) resolve();
            });
            c.once('exit', (code) => reject(new Error(`a worker exited (${code}): ${said.slice(-2000)}`)));
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 500));
    settleDisk();
    const cpuBefore = children.map((c) => cpuSeconds(c.pid!));
    const systemBefore = children.map((c) => cpuSplit(c.pid!).system);
    const faultsBefore = children.map((c) => minorFaults(c.pid!));
    const machineBefore = machineCpu();
    const started = performance.now();
    const { job } = await enqueueConversion(database.db, { datasetId: ID, ref: 'main', full: true, reason: 'bench' });
    for (;;) {
      const row = await database.db.selectFrom('conversion_jobs').select(['state', 'error']).where('id', '=', job.id).executeTakeFirstOrThrow();
      if (row.state === 'done') break;
      if (row.state === 'failed') throw new Error(`the job failed: ${row.error}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const machineAfter = machineCpu();
    const machine = { busy: machineAfter.busy - machineBefore.busy, iowait: machineAfter.iowait - machineBefore.iowait, steal: machineAfter.steal - machineBefore.steal };
    const jobRow = await database.db.selectFrom('conversion_jobs').select(['requested_at', 'started_at', 'finished_at']).where('id', '=', job.id).executeTakeFirstOrThrow();
    const workerCpu = children.reduce((sum, c, i) => sum + cpuSeconds(c.pid!) - cpuBefore[i]!, 0);
    const workerSystem = children.reduce((sum, c, i) => sum + cpuSplit(c.pid!).system - systemBefore[i]!, 0);
    const workerFaults = children.reduce((sum, c, i) => sum + minorFaults(c.pid!) - faultsBefore[i]!, 0);
    const tasks = await database.db.selectFrom('conversion_tasks').select(['worker_id', 'started_at', 'finished_at', 'failure']).where('job_id', '=', job.id).execute();
    const failed = tasks.filter((t) => t.failure);
    if (failed.length > 0) throw new Error(`${failed.length} recordings failed: ${JSON.stringify(failed[0]!.failure)}`);
    const taskSeconds = tasks.reduce((sum, t) => sum + (t.finished_at!.getTime() - t.started_at!.getTime()) / 1000, 0);
    const at = (d: Date | null) => (d ? d.getTime() / 1000 : NaN);
    const firstTask = Math.min(...tasks.map((t) => at(t.started_at)));
    const lastTask = Math.max(...tasks.map((t) => at(t.finished_at)));
    const phases: WorkerRun['phases'] = [at(jobRow.started_at) - at(jobRow.requested_at), firstTask - at(jobRow.started_at), lastTask - firstTask, at(jobRow.finished_at) - lastTask];
    // Each worker's task count, first task's start and time in tasks, the busiest worker first.
    const byWorker = new Map<string, { tasks: number; first: number; seconds: number }>();
    for (const t of tasks) {
      const w = byWorker.get(t.worker_id ?? '?') ?? { tasks: 0, first: Infinity, seconds: 0 };
      byWorker.set(t.worker_id ?? '?', { tasks: w.tasks + 1, first: Math.min(w.first, at(t.started_at)), seconds: w.seconds + at(t.finished_at) - at(t.started_at) });
    }
    const workersByTasks = [...byWorker.values()].sort((a, b) => b.tasks - a.tasks);
    return {
      seconds,
      tasksByWorker: workersByTasks.map((w) => w.tasks),
      firstTaskByWorker: workersByTasks.map((w) => w.first - at(jobRow.started_at)),
      taskTimeByWorker: workersByTasks.map((w) => w.seconds / w.tasks),
      taskSeconds,
      workerCpu,
      workerSystem,
      workerFaults,
      machine,
      phases,
    };
  } finally {
    // SIGINT: a profiled worker writes its profile on a normal exit.
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await database.close();
    await node.close();
    await objects.close();
    await adminQuery(`drop database if exists ${name} with (force)`);
    // `base` stays until the end of the run (see `work`'s removal).
  }
}

/** Seconds and CPU seconds of one command pinned to core 0 (and its own report of seconds, when it prints JSON). */
function timed(command: string[]): { seconds: number; cpu: number; system: number; output: string } {
  settleDisk();
  const before = childrenCpu();
  const started = performance.now();
  const output = execFileSync(command[0]!, command.slice(1), { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'ignore'] });
  const after = childrenCpu();
  const system = after.system - before.system;
  return { seconds: (performance.now() - started) / 1000, cpu: after.user - before.user + system, system, output };
}

await waitForSettledDeletions();
try {
  const loadBefore = load();
  const uptimeBefore = execFileSync('uptime').toString().trim();
  // 1. The converter alone, every data file in one process, chunks dropped.
  const aloneProf = PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`, '--cpu-prof-name=converter-alone.cpuprofile'] : [];
  const alone = RUNS.has('alone') ? timed(pinned([process.execPath, ...aloneProf, '--import', 'tsx', 'bench/conversion-run.ts', dataFiles[0]!, '--no-store', ...dataFiles.slice(1)])) : undefined;
  const aloneSeconds = alone ? (JSON.parse(alone.output.trim().split('\n').at(-1)!) as { seconds: number }).seconds : NaN;
  // 2. `nds convert` of the tree (data in the files themselves), into a folder.
  const out = path.join(work, 'convert-out');
  const prof = PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`, '--cpu-prof-name=nds-convert.cpuprofile'] : [];
  const convert = RUNS.has('convert') ? timed(pinned([process.execPath, ...prof, 'bin/nds.js', 'convert', plain, out, '--json'])) : undefined;
  const convertSeconds = convert ? (JSON.parse(convert.output) as { seconds: number }).seconds : NaN;
  // 3. One worker on one core; 4. one and two workers, unpinned.
  // After the unpinned runs when named after them (`one,two,pinned`): the first run of a bench takes the memory its
  // data's generation freed, which costs the kernel less than pages it has to take anew.
  const pinnedLast = RUN_ORDER.indexOf('pinned') > Math.max(RUN_ORDER.indexOf('one'), RUN_ORDER.indexOf('two'));
  let onePinned = RUNS.has('pinned') && !pinnedLast ? await runWorkers(1, true, 'pinned') : undefined;
  const pairs: Array<{ one: WorkerRun; two: WorkerRun; twoFirst: boolean }> = [];
  if (RUNS.has('one') && RUNS.has('two')) {
    for (let k = 0; k < ROUNDS; k++) {
      const twoFirst = TWO_FIRST !== (k % 2 === 1);
      const pin = CORE_EACH ? 'each' : false;
      const first = await runWorkers(twoFirst ? 2 : 1, pin, `${twoFirst ? 'two' : 'one'}-${k}`);
      const second = await runWorkers(twoFirst ? 1 : 2, pin, `${twoFirst ? 'one' : 'two'}-${k}`);
      pairs.push(twoFirst ? { one: second, two: first, twoFirst } : { one: first, two: second, twoFirst });
    }
  }
  const one = pairs[0]?.one ?? (RUNS.has('one') ? await runWorkers(1, false, 'one') : undefined);
  const two = pairs[0]?.two ?? (RUNS.has('two') ? await runWorkers(2, false, 'two') : undefined);
  if (RUNS.has('pinned') && pinnedLast) onePinned = await runWorkers(1, true, 'pinned');
  const creation = one && two ? await fileCreationBaseline(work) : undefined;
  const scaling = one && two ? await converterScaling(dataFiles) : undefined;
  const mbs = (s: number) => (sourceMb / s).toFixed(0);
  console.log(`${uptimeBefore}`);
  console.log(
    `conversion through workers: ${RECORDINGS} ${EXT.toUpperCase()} recordings (${IN_GIT ? 'data in git blobs' : 'git-lfs pointers, data in the object store'}), ` +
      `${sourceMb.toFixed(0)} MB of source, ${cores} cores, load ${loadBefore} → ${load()}, pinned with taskset: ${hasTaskset}`,
  );
  console.log('\n| one core | wall | source MB/s |');
  console.log('|---|---:|---:|');
  if (alone) {
    console.log(`| converter alone (no store, one process) | ${aloneSeconds.toFixed(2)} s | ${mbs(aloneSeconds)} |`);
    console.log(`| converter alone, the process's CPU time (start-up included; of which system ${alone.system.toFixed(2)} s) | ${alone.cpu.toFixed(2)} s | ${mbs(alone.cpu)} |`);
  }
  if (convert) {
    console.log(`| \`nds convert\` into a folder (its own figure; process ${convert.seconds.toFixed(2)} s) | ${convertSeconds.toFixed(2)} s | ${mbs(convertSeconds)} |`);
    console.log(`| \`nds convert\`, the process's CPU time (start-up included; of which system ${convert.system.toFixed(2)} s) | ${convert.cpu.toFixed(2)} s | ${mbs(convert.cpu)} |`);
  }
  if (onePinned) {
    console.log(`| one \`nds worker\`, job queued → done | ${onePinned.seconds.toFixed(2)} s | ${mbs(onePinned.seconds)} |`);
    console.log(`| one \`nds worker\`, its tasks only (sum) | ${onePinned.taskSeconds.toFixed(2)} s | ${mbs(onePinned.taskSeconds)} |`);
    console.log(`| one \`nds worker\`, its CPU time (user + sys; of which system ${onePinned.workerSystem.toFixed(2)} s; ${Math.round(onePinned.workerFaults / RECORDINGS)} page faults a recording) | ${onePinned.workerCpu.toFixed(2)} s | ${mbs(onePinned.workerCpu)} |`);
  }
  const phases = (r: WorkerRun) => r.phases.map((p) => `${p.toFixed(2)}`).join(' / ');
  const row = (label: string, r: WorkerRun) =>
    console.log(`| ${label} | ${r.seconds.toFixed(2)} s | ${mbs(r.seconds)} MB/s | ${r.workerCpu.toFixed(1)} s (system ${r.workerSystem.toFixed(1)} s, ${Math.round(r.workerFaults / RECORDINGS)} page faults a recording) | ${phases(r)} | ${r.tasksByWorker.map((n, i) => `${n} (${Math.round(r.taskTimeByWorker[i]! * 1000)} ms each)`).join(', ')}, first at ${r.firstTaskByWorker.map((f) => f.toFixed(2)).join(', ')} s |`);
  if (onePinned || one || two) {
    console.log('\n| workers | wall | source converted | worker CPU | queued → claimed / → first task (checkout, plan) / → last task done / → job done (index, catalogue), s | tasks by worker (each one\'s mean task time; their first tasks, from the claim) |');
    console.log('|---|---:|---:|---:|---|---|');
    const roundLabel = (k: number) => `${CORE_EACH ? ', a core each' : ''}${pairs.length > 1 ? ` (round ${k + 1}, ${pairs[k]!.twoFirst ? 'two first' : 'one first'})` : ''}`;
    /** Every run to print, labelled, in the order of the tables. */
    const labelled: Array<[string, WorkerRun]> = [
      ...(onePinned ? [['1, on one core', onePinned] as [string, WorkerRun]] : []),
      ...(pairs.length > 0
        ? pairs.flatMap((p, k): Array<[string, WorkerRun]> => [[`1${roundLabel(k)}`, p.one], [`2${roundLabel(k)}`, p.two]])
        : [...(one ? [['1', one] as [string, WorkerRun]] : []), ...(two ? [['2', two] as [string, WorkerRun]] : [])]),
    ];
    for (const [label, r] of labelled) row(label, r);
    console.log('\n| workers | machine busy, core-seconds (of the wall × cores) | of it the workers | the rest (holder, PostgreSQL, kernel threads) | waiting for the disk | stolen by the host |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const [label, r] of labelled) {
      console.log(`| ${label} | ${r.machine.busy.toFixed(2)} of ${(r.seconds * cores).toFixed(2)} | ${r.workerCpu.toFixed(2)} | ${(r.machine.busy - r.workerCpu).toFixed(2)} | ${r.machine.iowait.toFixed(2)} | ${r.machine.steal.toFixed(2)} |`);
    }
  }
  if (pairs.length > 0) {
    const ratios = pairs.map((p) => p.one.seconds / p.two.seconds);
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
    const geometric = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
    console.log(`\nspeed-up of 2 workers over 1${CORE_EACH ? ' (each worker on a core of its own)' : ''}, by round: ${ratios.map((r) => `${r.toFixed(2)}×`).join(', ')}; median ${median.toFixed(2)}×, geometric mean ${geometric.toFixed(2)}× (goal ≥ 1.6×)`);
  }
  if (scaling) {
    console.log(
      `baseline, the converter alone (no store, start-up included): every file in one process ${scaling.one.toFixed(2)} s; half each in two processes at once ` +
        `${scaling.two.toFixed(2)} s: ${(scaling.one / scaling.two).toFixed(2)}× (the most two workers could gain over one, were a worker only its conversion)`,
    );
  }
  if (creation) {
    console.log(
      `baseline, the store's file system (${work}): ${CREATION_FILES} files of 64 KiB created by one process in ${creation.one.toFixed(2)} s; ` +
        `by two at once, ${creation.two.toFixed(2)} s for both: ${(creation.one * 2 / creation.two).toFixed(2)}× the files per second of one ` +
        '(a conversion writes about 120 objects a recording; where this is near 1×, two workers on one folder store cannot be faster than one)',
    );
  }
} finally {
  await removeSettled(work);
}
