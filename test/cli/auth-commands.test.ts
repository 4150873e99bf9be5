// test.sh: embedded pass only. What this file checks happens in the client (a command's output, its files, its
// retries); the routes it calls have their database work run on PostgreSQL by the HTTP tests.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { nds, startNds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('nds auth and nds admin users/keys (CLI as a child process)', () => {
  let server: TestServer;
  let configHome: string;
  let env: Record<string, string>;
  before(async () => {
    // A 1-second poll interval keeps the device-flow tests short.
    server = await startTestServer({ env: { DEVICE_POLL_INTERVAL_S: '1' } });
    configHome = await mkdtemp(path.join(os.tmpdir(), 'nds-cli-'));
    env = { NDS_API_URL: server.url, XDG_CONFIG_HOME: configHome };
  });
  after(async () => {
    await server.close();
    await rm(configHome, { recursive: true, force: true });
  });

  const credentialsFile = () => path.join(configHome, 'nds', 'credentials.json');

  /** Runs `nds auth login`, and approves (or denies) its code in a signed-in browser session. */
  async function loginThroughBrowser(account: TestAccount, decision: 'confirm' | 'deny' = 'confirm') {
    const run = startNds(['auth', 'login'], env);
    const [, code] = await run.stderrMatch(/Your code: ([A-Z0-9]{4}-[A-Z0-9]{4})/);
    const link = await run.stderrMatch(/(http:\/\/\S+\/device\?code=\S+)/);
    assert.equal(new URL(link[1]).searchParams.get('code'), code);
    const browser = await createBrowserSession(server, account.user);
    const res = await browser.fetch(`/auth/device/${decision}`, { method: 'POST', body: JSON.stringify({ code }) });
    assert.equal(res.status, 200);
    return run.done;
  }

  it('auth login: the code approved in the browser signs the terminal in and stores the key with mode 0600', async () => {
    const person = await createAccount(server);
    const r = await loginThroughBrowser(person);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `signed in as ${person.user.username}\n`);
    assert.equal((await stat(credentialsFile())).mode & 0o777, 0o600);
    const stored = JSON.parse(await readFile(credentialsFile(), 'utf8'));
    assert.equal(stored.api_url, server.url);
    assert.equal((await apiFetch(server, '/users/me', stored.api_key)).status, 200);

    const status = await nds(['auth', 'status'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`as ${person.user.username}\\n`));
  });

  it('a new terminal without NDS_API_URL talks to the server it signed in to, and auth status says which and why', async () => {
    const stored = JSON.parse(await readFile(credentialsFile(), 'utf8'));
    // A terminal opened later: no NDS_API_URL (the server is not on the default port).
    const later = { XDG_CONFIG_HOME: configHome };
    const status = await nds(['auth', 'status'], later);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`^signed in to ${server.url} as ${stored.username}\n`));
    assert.ok(status.stdout.includes(`server  ${server.url} (stored by \`nds auth login\` in ${credentialsFile()})\n`), status.stdout);
    assert.match(status.stdout, /^tier {4}(basic|uploader)$/m);
    // Where the account stands against its storage quotas (none taken yet; the sandbox's default 10 GiB).
    assert.match(status.stdout, /^storage 0 bytes \(no limit\) \(sandbox datasets: 0 bytes of 10 GiB\)$/m);
    const json = JSON.parse((await nds(['auth', 'status', '--json'], later)).stdout);
    assert.deepEqual([json.api_url, json.api_url_source, json.key_source], [server.url, 'credentials', credentialsFile()]);
    assert.deepEqual(json.storage, { used_bytes: 0, quota_bytes: null, sandbox: { used_bytes: 0, quota_bytes: 10 * 2 ** 30 } });
    const listed = await nds(['auth', 'keys', 'list', '--json'], later);
    assert.equal(listed.code, 0, listed.stderr);
    // NDS_API_URL still wins; the stored key is not sent to another server.
    const elsewhere = await nds(['auth', 'status'], { ...later, NDS_API_URL: 'http://127.0.0.1:9' });
    assert.equal(elsewhere.code, 1);
    assert.ok(elsewhere.stdout.includes('server  http://127.0.0.1:9 (from NDS_API_URL)'), elsewhere.stdout);
    assert.match(elsewhere.stderr, /^nds: not signed in to http:\/\/127\.0\.0\.1:9: run `npx nds auth login`\n$/);
  });

  it('auth keys list/create/revoke, with the key of auth login marked current', async () => {
    const listed = JSON.parse((await nds(['auth', 'keys', 'list', '--json'], env)).stdout);
    const current = listed.keys.find((k: { current: boolean }) => k.current);
    assert.match(current.name, /^device: /);
    const created = await nds(['auth', 'keys', 'create', 'lab server', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const { api_key: key, key: { id } } = JSON.parse(created.stdout);
    assert.match(key, /^nds_[A-Za-z0-9_-]{43}$/);
    const table = await nds(['auth', 'keys', 'list'], env);
    assert.match(table.stdout, /^ID\s+NAME\s+PREFIX/);
    assert.match(table.stdout, /lab server/);
    const revoked = await nds(['auth', 'keys', 'revoke', String(id)], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await apiFetch(server, '/users/me', key)).status, 401);
    const again = await nds(['auth', 'keys', 'revoke', String(id)], env);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, 'nds: Key not found or already revoked. (key_not_found)\n');
  });

  it('auth git-credential answers git with the stored key for the API host only', async () => {
    const host = new URL(server.url).host;
    const stored = JSON.parse(await readFile(credentialsFile(), 'utf8'));
    const mine = await nds(['auth', 'git-credential', 'get'], env, `protocol=http\nhost=${host}\npath=git/nd000001.git\n\n`);
    assert.equal(mine.code, 0, mine.stderr);
    assert.equal(mine.stdout, `username=nds\npassword=${stored.api_key}\n`);
    const other = await nds(['auth', 'git-credential', 'get'], env, 'protocol=https\nhost=github.com\n\n');
    assert.equal(other.stdout, '');
  });

  it('auth logout revokes the key on the server and forgets it', async () => {
    const stored = JSON.parse(await readFile(credentialsFile(), 'utf8'));
    const r = await nds(['auth', 'logout'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^signed out/);
    assert.equal((await apiFetch(server, '/users/me', stored.api_key)).status, 401);
    await assert.rejects(stat(credentialsFile()));
    const status = await nds(['auth', 'status'], env);
    assert.equal(status.code, 1);
    assert.match(status.stderr, /^nds: not signed in/);
  });

  it('a code denied in the browser ends auth login with the server\'s message and no stored key', async () => {
    const person = await createAccount(server);
    const r = await loginThroughBrowser(person, 'deny');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /nds: That sign-in was declined in the browser\. \(device_code_denied\)\n$/);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/, 'no stack trace');
    await assert.rejects(stat(credentialsFile()));
  });

  it('a service account approving is refused in the browser, and a refusal at collection stops the CLI', async () => {
    const person = await createAccount(server);
    const run = startNds(['auth', 'login', '--json'], env);
    const [, code] = await run.stderrMatch(/Your code: (\S+)/);
    const browser = await createBrowserSession(server, person.user);
    assert.equal((await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code }) })).status, 200);
    // Revoked between approval and collection: the collection re-checks the gates.
    await server.deps.db.updateTable('users').set({ status: 'revoked' }).where('id', '=', person.user.id).execute();
    const r = await run.done;
    assert.equal(r.code, 1);
    assert.match(r.stderr, /nds: This account's access has been revoked\. \(account_revoked\)/);
  });

  it('slow_down adds 5 seconds to the polling interval (RFC 8628 §3.5)', async () => {
    const polls: number[] = [];
    const fake: Server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/auth/device/start') {
        return res.end(JSON.stringify({ device_code: 'd', user_code: 'BCDF-GHJK', verification_uri: 'http://x/device', verification_uri_complete: 'http://x/device?code=BCDF-GHJK', expires_in: 600, interval: 1 }));
      }
      polls.push(Date.now());
      res.statusCode = polls.length === 1 ? 400 : 200;
      res.end(JSON.stringify(polls.length === 1 ? { error: 'slow_down', message: 'slow down' } : { api_key: 'nds_fake', key: { id: 1, name: 'x', prefix: 'nds_fake…' }, user: { username: 'fake-user', role: 'member', kind: 'person', status: 'verified' } }));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
    const home = await mkdtemp(path.join(os.tmpdir(), 'nds-cli-slow-'));
    try {
      const r = await nds(['auth', 'login'], { NDS_API_URL: url, XDG_CONFIG_HOME: home });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'signed in as fake-user\n');
      assert.equal(polls.length, 2);
      assert.ok(polls[1] - polls[0] >= 5900, `second poll came ${polls[1] - polls[0]} ms after the first`);
    } finally {
      fake.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  describe('admin', () => {
    let owner: TestAccount;
    let ownerEnv: Record<string, string>;
    before(async () => {
      owner = await createAccount(server, { role: 'owner' });
      ownerEnv = { ...env, NDS_API_KEY: owner.key };
    });

    it('admin users list/show/approve/revoke/kind', async () => {
      const verified = await createAccount(server, { status: 'verified' });
      const name = verified.user.username;
      const list = await nds(['admin', 'users', 'list', '--status', 'verified'], ownerEnv);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /^USERNAME\s+EMAIL\s+STATUS/);
      assert.match(list.stdout, new RegExp(`${name}\\s`));
      const shown = JSON.parse((await nds(['admin', 'users', 'show', name, '--json'], ownerEnv)).stdout);
      assert.equal(shown.status, 'verified');
      assert.match((await nds(['admin', 'users', 'approve', name], ownerEnv)).stdout, /approved .* tier uploader/);
      assert.match((await nds(['admin', 'users', 'kind', name, 'service', '--expected', 'person'], ownerEnv)).stdout, /now a service account/);
      const stale = await nds(['admin', 'users', 'kind', name, 'test', '--expected', 'person'], ownerEnv);
      assert.equal(stale.code, 1);
      assert.match(stale.stderr, /\(kind_changed\)/);
      assert.match((await nds(['admin', 'users', 'revoke', name], ownerEnv)).stdout, /revoked .* keys revoked/);
      assert.equal((await verified.api('/users/me')).status, 401);
    });

    it("admin users quota shows a user's storage and sets, lifts and resets their own limit; a limit it cannot read is refused before any call", async () => {
      const person = await createAccount(server);
      const name = person.user.username;
      const shown = await nds(['admin', 'users', 'quota', name], ownerEnv);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(shown.stdout, `${name}\nlimit    the settings'\nall      0 bytes (no limit)\nsandbox  0 bytes of 10 GiB\n`);
      assert.match((await nds(['admin', 'users', 'quota', name, '50GiB'], ownerEnv)).stdout, /^limit {4}50 GiB \(set for this account\)\nall {6}0 bytes of 50 GiB\nsandbox  0 bytes of 50 GiB$/m);
      assert.deepEqual(await (await person.api('/users/me/storage')).json(), { used_bytes: 0, quota_bytes: 50 * 2 ** 30, sandbox: { used_bytes: 0, quota_bytes: 50 * 2 ** 30 } });
      const lifted = JSON.parse((await nds(['admin', 'users', 'quota', name, 'none', '--json'], ownerEnv)).stdout);
      assert.deepEqual([lifted.account_quota_bytes, lifted.quota_bytes, lifted.sandbox.quota_bytes], [0, null, null]);
      const reset = JSON.parse((await nds(['admin', 'users', 'quota', name, 'default', '--json'], ownerEnv)).stdout);
      assert.deepEqual([reset.account_quota_bytes, reset.sandbox.quota_bytes], [null, 10 * 2 ** 30]);
      const bad = await nds(['admin', 'users', 'quota', name, '12 parsecs'], ownerEnv);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /12 parsecs is not a limit/);
      const audit = await server.deps.db.selectFrom('audit_log').select(['action', 'details']).where('target', '=', name).orderBy('id').execute();
      assert.deepEqual(audit.map((a) => [a.action, (a.details as { to: number | null }).to]), [['user.storage_quota', 50 * 2 ** 30], ['user.storage_quota', 0], ['user.storage_quota', null]]);
    });

    it('admin keys create/list/revoke for a service account; a person is refused with the server\'s message', async () => {
      const service = await createAccount(server, { kind: 'service' });
      const name = service.user.username;
      const created = await nds(['admin', 'keys', 'create', '--username', name, '--name', 'ci'], ownerEnv);
      assert.equal(created.code, 0, created.stderr);
      const key = created.stdout.trim();
      assert.equal((await apiFetch(server, '/users/me', key)).status, 200);
      const keys = JSON.parse((await nds(['admin', 'keys', 'list', '--username', name, '--json'], ownerEnv)).stdout).keys;
      const ci = keys.find((k: { name: string }) => k.name === 'ci');
      assert.ok(ci);
      assert.equal((await nds(['admin', 'keys', 'revoke', String(ci.id), '--username', name], ownerEnv)).code, 0);
      assert.equal((await apiFetch(server, '/users/me', key)).status, 401);

      const person = await createAccount(server);
      const refused = await nds(['admin', 'keys', 'create', '--username', person.user.username, '--name', 'x'], ownerEnv);
      assert.equal(refused.code, 1);
      assert.equal(refused.stderr, 'nds: A person mints their own keys; this route is for service and test accounts. (person_account)\n');
    });

    it('a member gets the server\'s refusal, not a stack trace', async () => {
      const member = await createAccount(server);
      const r = await nds(['admin', 'users', 'list'], { ...env, NDS_API_KEY: member.key });
      assert.equal(r.code, 1);
      assert.equal(r.stderr, 'nds: This needs an administrator. (admin_required)\n');
    });
  });
});
