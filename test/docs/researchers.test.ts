/**
 * docs/researchers.md, followed as written: every command of its `sh` blocks, in order, through the real CLI
 * against a fresh service. The researcher's commands run in their own terminal (their own credentials file,
 * no NDS_API_URL once signed up); those starting `npx nds admin` run as an administrator. Where the page
 * sends the researcher to the browser (the sign-up page, approving the terminal's code), the test does what
 * the browser would, through the same routes; the mails the page promises are read from the outbox.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { fixtures } from '../conversion/support.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { spawn } from 'node:child_process';
import type { CliResult } from '../support/cli.js';
import { mailsTo, signInCodeFor } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { assignmentsAndWords, shellCommands } from './doc-blocks.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(repo, 'docs/researchers.md'), 'utf8');
const PLACEHOLDER_URL = 'https://nds.example.org';

describe('docs/researchers.md, command by command', () => {
  let server: TestServer;
  let owner: TestAccount;
  let work: string;
  let researcherEnv: Record<string, string>;
  let adminEnv: Record<string, string>;
  const results: Array<{ line: string; run: CliResult }> = [];
  const email = 'ada@example.org';

  before(async () => {
    server = await startTestServer({ env: { DEVICE_POLL_INTERVAL_S: '1' } });
    owner = await createAccount(server, { username: 'root', role: 'owner' });
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-researchers-'));
    cpSync(path.join(fixtures, 'bids/emg_CustomBipolar'), path.join(work, 'my-study'), { recursive: true });
    researcherEnv = { XDG_CONFIG_HOME: path.join(work, 'researcher'), NDS_UPLOAD_HASH_CACHE: 'off' };
    adminEnv = { XDG_CONFIG_HOME: path.join(work, 'admin'), NDS_API_URL: server.url, NDS_API_KEY: owner.key };
  });
  after(async () => {
    await server.close();
    await rm(work, { recursive: true, force: true });
  });

  /** `nds <args>` in the work folder (where ./my-study is), with `env` over a clean environment. */
  function start(args: string[], env: Record<string, string>) {
    const base = { ...process.env };
    delete base.NDS_API_KEY;
    delete base.NDS_API_URL;
    const child = spawn(process.execPath, [path.join(repo, 'bin/nds.js'), ...args], { cwd: work, env: { ...base, NDS_NO_BROWSER: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    const stderrMatch = async (pattern: RegExp) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const m = pattern.exec(stderr);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no ${pattern} in: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    return { done, stderrMatch };
  }

  /** What the sign-up page and the device page do in the browser: an account by mailed code, then Approve. */
  async function signUpInBrowser(userCode: string, username: string): Promise<void> {
    const headers = { 'content-type': 'application/json', origin: server.url };
    const asked = await fetch(`${server.url}/auth/code/request`, { method: 'POST', headers, body: JSON.stringify({ email, username }) });
    assert.equal(asked.status, 200, await asked.text());
    const code = await signInCodeFor(server.dataDir, email);
    const verified = await fetch(`${server.url}/auth/code/verify`, { method: 'POST', headers, body: JSON.stringify({ email, code }) });
    assert.equal(verified.status, 200, await verified.text());
    const cookie = verified.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const approved = await fetch(`${server.url}/auth/device/confirm`, { method: 'POST', headers: { ...headers, cookie }, body: JSON.stringify({ code: userCode }) });
    assert.equal(approved.status, 200, await approved.text());
  }

  it('runs every command of the page, in order, each succeeding', async () => {
    const lines = shellCommands(page);
    assert.ok(lines.length >= 14, `the page has ${lines.length} commands`);
    const username = /npx nds admin users approve (\S+)/.exec(page)![1]!;
    for (const line of lines) {
      const { env: assigned, argv } = assignmentsAndWords(line);
      assert.deepEqual(argv.slice(0, 2), ['npx', 'nds'], `the test does not know how to run "${line}"`);
      const args = argv.slice(2);
      // The page's placeholder address is this service's.
      for (const [k, v] of Object.entries(assigned)) assigned[k] = v.replace(PLACEHOLDER_URL, server.url);
      const env = args[0] === 'admin' ? adminEnv : { ...researcherEnv, ...assigned };
      const run = start(args, env);
      if (args.join(' ') === 'auth signup') {
        const [, userCode] = await run.stderrMatch(/Your code: (\S+)/);
        await signUpInBrowser(userCode!, username);
      }
      const result = await run.done;
      results.push({ line, run: result });
      assert.equal(result.code, 0, `"${line}" failed:\n${result.stdout}\n${result.stderr}`);
    }
  });

  it('gives the results and the mails the page promises', async () => {
    const out = (prefix: string) => results.find((r) => r.line.startsWith(prefix))!.run;
    const username = /npx nds admin users approve (\S+)/.exec(page)![1]!;
    assert.equal(out('NDS_API_URL=').stdout, `signed in as ${username}\n`);
    const status = out('npx nds auth status').stdout;
    assert.ok(status.includes(`server  ${server.url} (stored by \`nds auth login\``), status);
    assert.match(status, /^status {2}verified$/m);
    assert.match(status, /^tier {4}basic$/m);
    assert.match(out('npx nds sandbox status').stdout, /not_started|not started/);
    assert.equal(out('npx nds datasets create "Practice run"').stdout.trim(), 'sb000001');
    assert.match(out('npx nds datasets upload sb000001').stdout, /^converted {2}sub-01\/emg\/sub-01_task-holdWeight_emg\.edf/m);
    assert.match(out('npx nds auth request-access').stdout, new RegExp(`^upload access requested for ${username}`));
    assert.match(out('npx nds admin users list --requests').stdout, new RegExp(`open upload-access requests\\n[\\s\\S]*${username}`));
    assert.equal(out('npx nds datasets create "Grip force EMG"').stdout.trim(), 'nd000001');
    assert.match(out('npx nds datasets show nd000001').stdout, /zarr_status\s+ready/);
    assert.match(out('npx nds datasets publish request nd000001').stdout, /^request 1 for nd000001 v1\.0\.0: pending$/m);
    assert.match(out('npx nds admin publish approve 1').stdout, /request 1 for nd000001 v1\.0\.0: approved, DOI 10\.5072\//);
    const published = out('npx nds datasets publish status nd000001').stdout;
    assert.match(published, /^visibility {3}public$/m);
    assert.match(published, /^publication {2}published$/m);
    assert.match(published, /^DOI {10}10\.5072\//m);

    const mine = (await mailsTo(server.dataDir, email)).map((m) => m.subject);
    assert.ok(mine.includes('nds: your upload access is granted'), mine.join('\n'));
    assert.ok(mine.includes('nds: nd000001 v1.0.0 is published'), mine.join('\n'));
    const theirs = (await mailsTo(server.dataDir, owner.user.email)).map((m) => m.subject);
    assert.deepEqual(theirs, [`nds: ${username} asks for upload access`, `nds: ${username} asks to publish nd000001 v1.0.0`]);
  });
});
