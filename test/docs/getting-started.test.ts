/**
 * docs/getting-started.md, followed as written: every command of its `sh` blocks, in order, on a fresh data
 * folder, against the real `nds serve` started as the page says. Where the page sends the reader to the
 * browser (approving the terminal's sign-in), the test does what the browser would, through the same routes.
 * A command added to the page is run here too; one the test does not know how to run fails the test.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { fixtures } from '../conversion/support.js';
import { signInCodeFor } from '../support/outbox.js';
import { freePort } from '../support/test-server.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(repo, 'docs/getting-started.md'), 'utf8');

/** The lines of the page's `sh` blocks, in order. */
export function shellLines(markdown: string): string[] {
  const lines: string[] = [];
  for (const m of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const line of m[1]!.split('\n')) if (line.trim() && !line.trim().startsWith('#')) lines.push(line.trim());
  }
  return lines;
}

/** Words of a command line: spaces separate, double quotes group. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('docs/getting-started.md, command by command', () => {
  let work: string;
  let env: Record<string, string>;
  let url: string;
  let serve: ChildProcess | undefined;
  let serveErr = '';
  const results: Array<{ line: string; run: Run }> = [];

  const start = (args: string[]) => {
    const child = spawn(process.execPath, [path.join(repo, 'bin/nds.js'), ...args], { cwd: work, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { child, done, stderr: () => stderr };
  };
  const until = async (read: () => string, pattern: RegExp, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(read());
      if (m) return m;
      if (Date.now() > deadline) throw new Error(`no ${pattern} in: ${read()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** What the browser does at the device page: sign in with the mailed code, approve the terminal's code. */
  const approveInBrowser = async (userCode: string, email: string) => {
    const headers = { 'content-type': 'application/json', origin: url };
    const asked = await fetch(`${url}/auth/code/request`, { method: 'POST', headers, body: JSON.stringify({ email }) });
    assert.equal(asked.status, 200, await asked.text());
    const code = await signInCodeFor(env.DATA_DIR!, email);
    const verified = await fetch(`${url}/auth/code/verify`, { method: 'POST', headers, body: JSON.stringify({ email, code }) });
    assert.equal(verified.status, 200, await verified.text());
    const cookie = verified.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const approved = await fetch(`${url}/auth/device/confirm`, { method: 'POST', headers: { ...headers, cookie }, body: JSON.stringify({ code: userCode }) });
    assert.equal(approved.status, 200, await approved.text());
  };

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-getting-started-'));
    // `./my-study` of the page: a real BIDS dataset.
    cpSync(path.join(fixtures, 'bids/emg_CustomBipolar'), path.join(work, 'my-study'), { recursive: true });
    const port = await freePort();
    url = `http://localhost:${port}`;
    env = { DATA_DIR: path.join(work, 'data'), PORT: String(port), PUBLIC_URL: url, NDS_API_URL: url, LOG_LEVEL: 'warn', XDG_CONFIG_HOME: path.join(work, 'config'), NDS_NO_BROWSER: '1', NDS_UPLOAD_HASH_CACHE: 'off' };
    delete process.env.NDS_API_KEY;
  });
  after(async () => {
    if (serve) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    await rm(work, { recursive: true, force: true });
  });

  it('runs every command of the page, in order, each succeeding', async () => {
    const lines = shellLines(page);
    assert.ok(lines.length >= 12, `the page has ${lines.length} commands`);
    let ownerEmail = '';
    for (const line of lines) {
      const argv = words(line);
      if (line === 'npm install') continue; // the test runs inside an installed checkout
      if (line === 'npm start') {
        const s = start(['serve']);
        serve = s.child;
        await until(s.stderr, /home page: http:\S+\/\n/);
        await until(s.stderr, /no owner yet.*\n\s+http:\S+\/setup\?token=\S+/);
        serveErr = s.stderr();
        continue;
      }
      assert.deepEqual(argv.slice(0, 2), ['npx', 'nds'], `the test does not know how to run "${line}"`);
      const args = argv.slice(2);
      if (args[0] === 'admin' && args[1] === 'bootstrap') ownerEmail = args[args.indexOf('--email') + 1]!;
      const run = start(args);
      if (args.join(' ') === 'auth login') {
        const [, userCode] = await until(run.stderr, /Your code: (\S+)/);
        await approveInBrowser(userCode!, ownerEmail);
      }
      const result = await run.done;
      results.push({ line, run: result });
      assert.equal(result.code, 0, `"${line}" failed:\n${result.stderr}`);
    }
    assert.match(serveErr, /nds is listening on http:/);
  });

  it('gives the results the page promises', () => {
    const out = (prefix: string) => results.find((r) => r.line.startsWith(prefix))!.run;
    assert.match(out('npx nds admin bootstrap').stdout, /^nds_\S+\n$/);
    assert.match(out('npx nds auth login').stdout + out('npx nds auth login').stderr, /ada/);
    assert.equal(out('npx nds datasets create').stdout.trim(), 'nd000001');
    assert.match(out('npx nds datasets upload nd000001 ./my-study --dry-run').stdout, /^added {4}dataset_description\.json$/m);
    const uploaded = out('npx nds datasets upload nd000001 ./my-study --wait');
    assert.match(uploaded.stdout, /^converted {2}sub-01\/emg\/sub-01_task-holdWeight_emg\.edf: 1 group, 1 channel, 1\.0 s$/m);
    assert.match(uploaded.stderr, /version 1\.0\.0 created/);
    assert.match(out('npx nds datasets show nd000001').stdout, /zarr_status\s+ready/);
    assert.match(out('npx nds datasets publish request nd000001').stdout, /^request 1 for nd000001 v1\.0\.0: pending$/m);
    assert.match(out('npx nds admin publish approve 1').stdout, /request 1 for nd000001 v1\.0\.0: approved, DOI 10\.5072\//);
  });
});
