/**
 * First run with the real command on the embedded database: `nds serve` prints the home page and a one-time
 * setup link while there is no owner, and `nds admin bootstrap` works beside it (through the server's local
 * socket, since the embedded database is the server's alone); the key it prints is an owner's.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nds, startNds, type CliRun } from '../support/cli.js';
import { freePort } from '../support/test-server.js';

describe('nds serve on an empty data folder, and nds admin bootstrap beside it', () => {
  let work: string;
  let serve: CliRun;
  let env: Record<string, string>;
  let url: string;
  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-first-run-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = { DATA_DIR: path.join(work, 'data'), PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'warn', XDG_CONFIG_HOME: work };
    serve = startNds(['serve'], env);
    await serve.stderrMatch(/nds is listening/, 60_000);
  });
  after(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.done;
    await rm(work, { recursive: true, force: true });
  });

  it('prints the home page and a one-time setup link', async () => {
    await serve.stderrMatch(/home page: http:\/\/127\.0\.0\.1:\d+\/\n/);
    // The hints name the server and a command that runs (`nds` is not on PATH after `npm install`).
    await serve.stderrMatch(new RegExp(`the nds command: NDS_API_URL=${url} npx nds auth login`));
    await serve.stderrMatch(new RegExp(`or, in another terminal: NDS_API_URL=${url} npx nds admin bootstrap --username <name> --email <address>`));
    const [, link] = await serve.stderrMatch(/no owner yet.*\n\s+(http:\S+\/setup\?token=\S+)/);
    assert.equal((await fetch(link!)).status, 200);
    const socket = await stat(path.join(env.DATA_DIR!, 'admin', 'nds.sock'));
    assert.ok(socket.isSocket());
    assert.equal(socket.mode & 0o777, 0o600, 'only the same user may open the admin socket');
    assert.equal((await stat(path.join(env.DATA_DIR!, 'admin'))).mode & 0o777, 0o700);
  });

  it('bootstraps the owner while the server runs; the setup link then answers 410', async () => {
    const r = await nds(['admin', 'bootstrap', '--username', 'grace', '--email', 'grace@example.org'], env);
    assert.equal(r.code, 0, r.stderr);
    const key = r.stdout.trim();
    assert.match(key, /^nds_/);
    assert.match(r.stderr, /created owner grace; the key below is shown once\. Use it with the nds command:\n\s+export NDS_API_URL=.* NDS_API_KEY=<the key>/);
    const me = await (await fetch(`${url}/users/me`, { headers: { authorization: `Bearer ${key}` } })).json();
    assert.deepEqual([me.username, me.role], ['grace', 'owner']);
    const [, link] = await serve.stderrMatch(/(http:\S+\/setup\?token=\S+)/);
    assert.equal((await fetch(link!)).status, 410);

    // From a terminal that knows nothing of the server's port, the running server names its own address.
    const elsewhere = await nds(['admin', 'bootstrap', '--username', 'grace', '--email', 'grace@example.org'], { DATA_DIR: env.DATA_DIR!, XDG_CONFIG_HOME: work });
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.ok(elsewhere.stderr.includes(`export NDS_API_URL=${url} NDS_API_KEY=<the key>`), elsewhere.stderr);
    assert.ok(elsewhere.stderr.includes(`\`NDS_API_URL=${url} npx nds auth login\``), elsewhere.stderr);

    // A second bootstrap promotes (idempotent for the account) and mints another key.
    const again = await nds(['admin', 'bootstrap', '--username', 'grace', '--email', 'grace@example.org'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /promoted owner grace/);
  });

  it('names the port in use and how to choose another when the port is taken', async () => {
    const second = await nds(['serve'], { ...env, DATA_DIR: path.join(work, 'other') });
    assert.equal(second.code, 1);
    const port = new URL(url).port;
    assert.match(second.stderr, new RegExp(`^nds: port ${port} is in use by another program \\(another nds serve\\?\\)\\. Choose another port with PORT, for example:\n  PORT=${Number(port) + 1} npm start`, 'm'));
    assert.match(second.stderr, new RegExp(`NDS_API_URL=http://localhost:${Number(port) + 1} npx nds auth login`));
    assert.doesNotMatch(second.stderr, /EADDRINUSE|at .*\.js:\d+/);
  });
});

describe('nds serve in a terminal', { skip: !existsSync('/usr/bin/script') && 'needs script(1) for a terminal' }, () => {
  it('prints its start-up text for people, with no JSON log line among it', async () => {
    const work = await mkdtemp(path.join(os.tmpdir(), 'nds-tty-'));
    const port = await freePort();
    try {
      // script(1) gives the server a terminal for stdout and stderr, as `npm start` in a shell has.
      const command = `PORT=${port} DATA_DIR=${path.join(work, 'data')} NDS_NO_BROWSER=1 ${process.execPath} bin/nds.js serve`;
      const child = spawn('/usr/bin/script', ['-qefc', command, '/dev/null'], { env: { ...process.env, LOG_LEVEL: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      const deadline = Date.now() + 60_000;
      while (!/npx nds admin bootstrap/.test(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
      assert.match(text, new RegExp(`nds is listening on http://localhost:${port} \\(port ${port}\\)`));
      assert.match(text, /home page: /);
      assert.doesNotMatch(text, /^\s*\{"level"/m, text);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
