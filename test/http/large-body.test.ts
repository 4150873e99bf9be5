/**
 * A 200 MB body sent to a JSON route is refused (413) as soon as it passes the route's limit, whether its
 * length is declared or it streams without one, and the server's memory (this process: the test server runs
 * in it) grows by less than 50 MB meanwhile. The body is generated as it is sent, so the client holds none of it.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const BODY_BYTES = 200 * 1024 * 1024;
const MAX_RSS_GROWTH = 50 * 1024 * 1024;

interface Sent {
  status: number;
  body: string;
  connection: string | undefined;
  /** Bytes the client got to write before the server closed the connection. */
  written: number;
  /** Most the resident set grew over the baseline while the body was being sent. */
  rssGrowth: number;
}

/** Streams `BODY_BYTES` of a JSON string to `path` in 64 KiB pieces (with backpressure), sampling RSS. */
function sendHuge(server: TestServer, path: string, headers: Record<string, string>, declareLength: boolean, bodyBytes = BODY_BYTES): Promise<Sent> {
  const base = new URL(server.url);
  const piece = Buffer.alloc(64 * 1024, 0x61);
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = request({
      host: base.hostname,
      port: base.port,
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', ...headers, ...(declareLength ? { 'content-length': String(bodyBytes) } : {}) },
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', async () => {
        // The connection closes after the answer; give the last writes a moment to fail.
        await new Promise((r) => setTimeout(r, 200));
        clearInterval(sampler);
        peak = Math.max(peak, process.memoryUsage().rss);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), connection: res.headers.connection, written, rssGrowth: peak - baseline });
      });
    });
    // Once the server has answered and closed, the rest of the body cannot be written: expected. (The socket's
    // own listener: Node's client stops reporting a socket's errors on the request once the answer is read.)
    req.on('socket', (socket) => socket.on('error', () => {}));
    req.on('error', (err) => {
      req.destroy();
      if (!answered) {
        clearInterval(sampler);
        reject(err);
      }
    });
    // Writing goes on after the answer: only the server closing the connection stops it.
    const pump = () => {
      while (!req.destroyed && written < bodyBytes) {
        const first = written === 0;
        const chunk = first ? Buffer.concat([Buffer.from('{"name":"'), piece.subarray(9)]) : piece;
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end('"}');
    };
    pump();
  });
}

describe('a 200 MB body', () => {
  let server: TestServer;
  let member: TestAccount;

  before(async () => {
    server = await startTestServer();
    member = await createAccount(server);
    // Warm the routes and their refusal up, so that the first request's allocations (the heap growing to its
    // working size, the error path's code compiled) are not counted as the body's: a body of 1 MiB is refused
    // the same way, on each route, both ways.
    await member.api('/datasets', { method: 'POST', body: '{}' });
    await fetch(`${server.url}/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    for (const declare of [true, false]) {
      await sendHuge(server, '/datasets', { authorization: `Bearer ${member.key}` }, declare, 1024 * 1024);
      await sendHuge(server, '/auth/device/token', {}, declare, 1024 * 1024);
    }
  });
  after(() => server.close());

  const cases = [
    { what: 'POST /datasets with a key, length declared', path: '/datasets', auth: true, declare: true },
    { what: 'POST /datasets with a key, streamed without a length', path: '/datasets', auth: true, declare: false },
    { what: 'POST /auth/device/token anonymously, length declared', path: '/auth/device/token', auth: false, declare: true },
    { what: 'POST /auth/device/token anonymously, streamed without a length', path: '/auth/device/token', auth: false, declare: false },
  ];

  for (const c of cases) {
    it(`is refused with 413 while RSS grows < 50 MB: ${c.what}`, async () => {
      global.gc?.();
      const sent = await sendHuge(server, c.path, c.auth ? { authorization: `Bearer ${member.key}` } : {}, c.declare);
      console.log(`# ${c.what}: ${sent.status} after ${(sent.written / 1024 / 1024).toFixed(1)} MiB written, RSS +${(sent.rssGrowth / 1024 / 1024).toFixed(1)} MiB`);
      assert.equal(sent.status, 413, sent.body);
      const body = JSON.parse(sent.body);
      assert.equal(body.error, 'payload_too_large');
      assert.equal(body.limit_bytes, 64 * 1024);
      assert.equal(sent.connection, 'close');
      assert.ok(sent.written < BODY_BYTES / 10, `the server took ${sent.written} bytes before it closed the connection`);
      assert.ok(sent.rssGrowth < MAX_RSS_GROWTH, `RSS grew by ${(sent.rssGrowth / 1024 / 1024).toFixed(1)} MiB`);
    });
  }

  it('leaves the server answering', async () => {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await member.api('/users/me')).status, 200);
  });
});
