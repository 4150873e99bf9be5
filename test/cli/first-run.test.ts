/**
 * First run with the real command on the embedded database: `nds serve` prints the home page and a one-time
 * setup link while there is no owner, and `nds admin bootstrap` works beside it (through the server's local
 * socket, since the embedded database is the server's alone); the key it prints is an owner's.
 */
import assert from 'node:assert/strict';
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

    // A second bootstrap promotes (idempotent for the account) and mints another key.
    const again = await nds(['admin', 'bootstrap', '--username', 'grace', '--email', 'grace@example.org'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /promoted owner grace/);
  });
});
