/**
 * docs/ml-quickstart.md, run as written against `nds serve --demo` on a fresh data folder: every command of
 * its `sh` blocks in order, then its `python` blocks as one script (the real client of clients/python, with
 * Debian's numpy, torch and mne), then its `ts` block (through `nds/client`, as an installed package imports
 * it). The clients find the service by NDS_API_URL, as the page says. The DataLoader must yield batches, the
 * empty list must be refused with the demo's event types, and nds's µV must equal MNE's volts × 1e6.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { transform } from 'esbuild';
import { freePort } from '../support/test-server.js';
import { assignmentsAndWords, codeBlocks, shellCommands } from './doc-blocks.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(repo, 'docs/ml-quickstart.md'), 'utf8');
const python = '/usr/bin/python3';
const skip = !existsSync(python)
  ? `${python} is not installed`
  : (() => {
      try {
        execFileSync(python, ['-c', 'import numpy, torch, mne'], { stdio: 'ignore' });
        return undefined;
      } catch {
        return 'python3-numpy, python3-torch or python3-mne is not installed (scripts/ci/setup.sh)';
      }
    })();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): { child: ChildProcess; done: Promise<Run>; stderr: () => string } {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return { child, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))), stderr: () => stderr };
}

describe('docs/ml-quickstart.md, block by block, against nds serve --demo', { skip: skip ?? false }, () => {
  let work: string;
  let env: Record<string, string>;
  let serve: ChildProcess | undefined;
  const shell: Array<{ line: string; result: Run }> = [];

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-ml-quickstart-'));
    const port = await freePort();
    const url = `http://localhost:${port}`;
    // No credentials file and no key: the demo is public, and the clients find it by NDS_API_URL.
    env = { DATA_DIR: path.join(work, 'data'), PORT: String(port), NDS_API_URL: url, LOG_LEVEL: 'warn', XDG_CONFIG_HOME: path.join(work, 'config'), NDS_NO_BROWSER: '1', PYTHONPATH: path.join(repo, 'clients/python'), NDS_API_KEY: '' };
  });
  after(async () => {
    if (serve) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('runs every command of its sh blocks, in order, each succeeding', async () => {
    const lines = shellCommands(page);
    assert.ok(lines.length >= 7, `${lines.length} commands`);
    for (const line of lines) {
      const { env: assigned, argv } = assignmentsAndWords(line);
      if (line === 'npm start -- --demo') {
        const s = run(process.execPath, [path.join(repo, 'bin/nds.js'), 'serve', '--demo'], { cwd: work, env: { ...env, ...assigned } });
        serve = s.child;
        const deadline = Date.now() + 180_000;
        while (!/demo dataset nd000001 converted in/.test(s.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        assert.match(s.stderr(), /demo dataset nd000001 converted in/);
        continue;
      }
      let result: Run;
      if (argv[0] === 'npx' && argv[1] === 'nds') result = await run(process.execPath, [path.join(repo, 'bin/nds.js'), ...argv.slice(2)], { cwd: work, env: { ...env, ...assigned } }).done;
      else if (argv[0] === 'python3') result = await run(python, argv.slice(1), { cwd: work, env: { ...env, ...assigned } }).done;
      else throw new Error(`the test does not know how to run "${line}"`);
      shell.push({ line, result });
      assert.equal(result.code, 0, `"${line}" failed:\n${result.stderr}`);
    }
    const out = (prefix: string) => shell.find((s) => s.line.startsWith(prefix))!.result;
    assert.match(out('npx nds recordings list --dataset').stdout, /sub-01\/eeg\/sub-01_task-rest_eeg\.edf\s+rest\s+256Hz\s+64\s+600\.0/);
    assert.match(out('npx nds recordings list --dataset').stdout, /sub-01\/emg\/sub-01_task-grip_emg\.edf\s+grip\s+2000Hz\s+4\s+60\.0/);
    const csv = readFileSync(path.join(work, 'windows.csv'), 'utf8').trim().split('\n');
    assert.equal(csv.length, 21, 'a header and 20 windows: 10 blocks of each kind');
    assert.deepEqual([...new Set(csv.slice(1).map((l) => l.split(',')[6]))].sort(), ['0', '1']);
    assert.equal(out('python3').stdout.trim(), '(2, 1024)');
  });

  it('runs its python blocks as one script: the DataLoader yields batches, an empty list says why, µV = MNE volts × 1e6', async () => {
    const script = path.join(work, 'quickstart.py');
    writeFileSync(script, codeBlocks(page, 'python').join('\n'));
    const result = await run(python, [script], { cwd: work, env }).done;
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    assert.match(out, /^20 windows; hash [0-9a-f]{64}$/m);
    const [, batches] = /^(\d+) batches in 3 epochs$/m.exec(out) ?? [];
    assert.ok(Number(batches) > 0, out);
    assert.match(out, /No event matches the mapping \("left", "right" by trial_type\)\. The recording has these trial_type values: "blink" \(\d+\), "eyes_closed" \(10\), "eyes_open" \(10\)\./);
    assert.match(out, /^Split "valid" is empty: 1 subject cannot fill every split/m);
    assert.match(out, /^\(2, 512\) float64$/m);
    const [, difference] = /^([\d.e+-]+)$/m.exec(out.split('float64')[1] ?? '') ?? [];
    assert.ok(Number(difference) < 1e-9, `nds − MNE × 1e6 = ${difference}`);
  });

  it('runs its ts block through nds/client', async () => {
    const [block] = codeBlocks(page, 'ts');
    const { code } = await transform(block!, { loader: 'ts', format: 'esm' });
    // From the repository folder, `nds/client` resolves as the installed package's export.
    const result = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: repo, env: { ...env, NODE_OPTIONS: '' } }).done;
    assert.equal(result.code, 0, result.stderr);
    const [, windows, batches] = /^(\d+) windows in (\d+) batches$/m.exec(result.stdout) ?? [];
    assert.equal(windows, '20');
    assert.ok(Number(batches) > 0, result.stdout);
    assert.match(result.stdout, /\[ 1, 1024 \] 256/);
  });
});
