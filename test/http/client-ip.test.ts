/**
 * Sign-in limits behind proxies. Behind a reverse proxy every client connects from the proxy's address: were
 * limits counted by the socket's peer, one client guessing codes would lock everyone out of sign-in; were they
 * kept in each process's memory, a client spread over `n` servers would get `n` times the limit. With
 * TRUSTED_PROXIES the client is the first untrusted hop of X-Forwarded-For, and the limits live in the database
 * every server shares.
 *
 * The first suite runs the in-process server with the test as its trusted proxy (both passes). The second is
 * the deployment itself: two real `nds serve` processes (bin/nds.js) on one fresh PostgreSQL database, each with
 * its own DATA_DIR and the same OBJECT_SIGNING_SECRET, behind Debian's nginx (started here with its own
 * configuration on a free port, round-robin over both); it runs in the PostgreSQL pass.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CODE_FAILURES_PER_IP } from '../../src/accounts/sign-in-limits.js';
import { startNds, type CliRun } from '../support/cli.js';
import { startNginx, stopChild } from '../support/nginx.js';
import { signInCodeFor, waitForMail } from '../support/outbox.js';
import { createPostgresTestDatabase, freePort, startTestServer, usingPostgres, type PostgresTestDatabase, type TestServer } from '../support/test-server.js';

const CLIENT_A = '198.51.100.7';
const CLIENT_B = '203.0.113.9';

/** A client of the service: every request carries the X-Forwarded-For of its hop in front of the proxy. */
function clientOf(baseUrl: string, forwardedFor: () => string) {
  const post = (p: string, body: Record<string, string>) =>
    fetch(`${baseUrl}${p}`, {
      method: 'POST',
      headers: { origin: baseUrl, 'content-type': 'application/json', 'x-forwarded-for': forwardedFor() },
      body: JSON.stringify(body),
      redirect: 'manual',
    });
  return { post };
}

/** A different address left of the real one each time: what a client adds to its own header to look like many. */
const spoofed = (real: string) => () => `${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}, ${real}`;

/** Sends wrong codes (each for a new address, so no address's own limit is met) until one is answered 429. */
async function wrongCodesUntilLimited(post: ReturnType<typeof clientOf>['post'], tag: string, max = 3 * CODE_FAILURES_PER_IP) {
  const upstreams: string[] = [];
  for (let i = 0; i < max; i++) {
    const res = await post('/auth/code/verify', { email: `${tag}-${i}@example.org`, code: '000000' });
    await res.body?.cancel();
    if (res.status === 429) return { wrong: i, upstreams, retryAfter: Number(res.headers.get('retry-after')) };
    assert.equal(res.status, 401, `wrong code ${i + 1}`);
    upstreams.push(res.headers.get('x-upstream') ?? '');
  }
  return { wrong: Infinity, upstreams, retryAfter: 0 };
}

describe('sign-in limits with the test as a trusted proxy', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { TRUSTED_PROXIES: '127.0.0.1, ::1' } });
  });
  after(() => server.close());

  it('holds the client X-Forwarded-For names to its limit, whatever it adds left of it, and lets another client sign in', async () => {
    const a = clientOf(server.url, spoofed(CLIENT_A));
    const { wrong, retryAfter } = await wrongCodesUntilLimited(a.post, 'a');
    assert.equal(wrong, CODE_FAILURES_PER_IP);
    assert.ok(retryAfter > 0);

    const b = clientOf(server.url, () => CLIENT_B);
    const email = `b-${process.pid}@example.org`;
    assert.equal((await b.post('/auth/code/request', { email, username: `b${process.pid}` })).status, 200);
    const code = await signInCodeFor(server.dataDir, email);
    const res = await b.post('/auth/code/verify', { email, code });
    assert.equal(res.status, 200, await res.text());
  });
});

/** One host of the /64 2001:db8:42:7::/64, a new interface identifier each time (what privacy addresses do anyway). */
const addressInOne64 = () => `2001:db8:42:7:${randomBytes(8).toString('hex').match(/.{4}/g)!.join(':')}`;

// An IPv6 host is given a /64 at least (a home line, a cloud VM) and may use any of its addresses, with no proxy.
describe('sign-in limits for a client on IPv6', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { TRUSTED_PROXIES: '127.0.0.1, ::1' } });
  });
  after(() => server.close());

  it(`holds one /64 to ${CODE_FAILURES_PER_IP} wrong codes over many of its addresses, as one IPv4 address is`, async () => {
    const { wrong } = await wrongCodesUntilLimited(clientOf(server.url, addressInOne64).post, 'v6');
    assert.equal(wrong, CODE_FAILURES_PER_IP);
  });

  it('still lets a client of another /64 sign in', async () => {
    const other = clientOf(server.url, () => '2001:db8:42:8::1');
    const email = `v6-other-${process.pid}@example.org`;
    assert.equal((await other.post('/auth/code/request', { email, username: `v6o${process.pid}` })).status, 200);
    const res = await other.post('/auth/code/verify', { email, code: await signInCodeFor(server.dataDir, email) });
    assert.equal(res.status, 200, await res.text());
  });
});

describe('sign-in limits with no trusted proxy (the default)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('ignores X-Forwarded-For: a client naming a new address each time is still held to its limit', async () => {
    const random = () => `${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const { wrong } = await wrongCodesUntilLimited(clientOf(server.url, random).post, 'rotating');
    assert.equal(wrong, CODE_FAILURES_PER_IP);
  });
});

describe('two nds serve behind nginx on one PostgreSQL', { timeout: 180_000, ...(usingPostgres ? {} : { skip: 'needs the PostgreSQL server: runs in the PostgreSQL pass (NDS_TEST_DB=postgres TEST_DATABASE_URL=...)' }) }, () => {
  let work: string;
  let database: PostgresTestDatabase;
  let nginx: ChildProcess | undefined;
  const servers: CliRun[] = [];
  const dataDirs: string[] = [];
  const ports: number[] = [];
  let url: string;

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'nds-behind-nginx-'));
    database = await createPostgresTestDatabase();
    while (ports.length < 3) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    url = `http://127.0.0.1:${ports[2]}`;
    // Secrets every node must share: the object-signing secret (presigned URLs, read grants). Sessions, keys
    // and codes are in the database.
    const objectSigningSecret = randomBytes(32).toString('base64url');
    for (const port of ports.slice(0, 2)) {
      const dataDir = path.join(work, `node-${port}`);
      dataDirs.push(dataDir);
      servers.push(
        startNds(['serve'], {
          PORT: String(port),
          DATA_DIR: dataDir,
          DATABASE_URL: database.url,
          PUBLIC_URL: url,
          OBJECT_SIGNING_SECRET: objectSigningSecret,
          TRUSTED_PROXIES: '127.0.0.1/32, ::1/128',
          LOG_LEVEL: 'warn',
        }),
      );
    }
    await Promise.all(servers.map((s) => s.stderrMatch(/nds is listening/, 90_000)));
    nginx = await startNginx(path.join(work, 'nginx'), ports[2], ports.slice(0, 2));
  });

  after(async () => {
    await stopChild(nginx, 'SIGQUIT');
    await Promise.all(servers.map((s) => stopChild(s.child, 'SIGTERM')));
    await database?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('sends requests to both servers in turn', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/healthz`);
      assert.equal(res.status, 200);
      seen.add(res.headers.get('x-upstream') ?? '');
    }
    assert.deepEqual([...seen].sort(), ports.slice(0, 2).map((p) => `127.0.0.1:${p}`).sort());
  });

  it(`holds client A to ${CODE_FAILURES_PER_IP} wrong codes in all across both servers, and client B still signs in`, async () => {
    const a = clientOf(url, spoofed(CLIENT_A));
    const { wrong, upstreams } = await wrongCodesUntilLimited(a.post, 'a');
    assert.equal(wrong, CODE_FAILURES_PER_IP, `client A got ${wrong} wrong codes before a 429 (the limit is ${CODE_FAILURES_PER_IP} in all)`);
    assert.equal(new Set(upstreams).size, 2, 'both servers counted wrong codes of A');
    // A is refused by both servers now.
    const refusedBy = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const res = await a.post('/auth/code/verify', { email: `a-more-${i}@example.org`, code: '000000' });
      assert.equal(res.status, 429);
      refusedBy.add(res.headers.get('x-upstream') ?? '');
    }
    assert.equal(refusedBy.size, 2);

    const b = clientOf(url, () => CLIENT_B);
    const email = `b-${process.pid}@example.org`;
    assert.equal((await b.post('/auth/code/request', { email, username: `b${process.pid}` })).status, 200);
    // The mail went out from whichever server answered: its outbox.
    const [outbox] = await waitForMail(dataDirs, email);
    const res = await b.post('/auth/code/verify', { email, code: await signInCodeFor(outbox, email) });
    assert.equal(res.status, 200, await res.text());
    assert.match(res.headers.get('set-cookie') ?? '', /nds_session=/);
  });
});
