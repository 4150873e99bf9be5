import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** A log destination that keeps every JSON line. */
function logLines(): { stream: Writable; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { stream, lines };
}

/** The access line of a request, once the answer is closed (it is written then). */
async function accessLine(lines: Array<Record<string, unknown>>, requestId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const line = lines.find((l) => l.msg === 'request' && l.requestId === requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access line for ${requestId}`);
}

describe('what an operator sees of nds serve: request ids, access lines, /metrics', () => {
  let server: TestServer;
  const log = logLines();
  before(async () => {
    server = await startTestServer({ env: { LOG_LEVEL: 'info', METRICS_PORT: '0' }, logDestination: log.stream });
  });
  after(() => server.close());

  it('answers every request with an X-Request-Id, and adopts a well-formed incoming one', async () => {
    const fresh = await fetch(`${server.url}/healthz`);
    assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    // One id follows a request through a proxy and across nodes.
    const adopted = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'edge-4f2a9c.17' } });
    assert.equal(adopted.headers.get('x-request-id'), 'edge-4f2a9c.17');
    // A header that could forge log content, or grow without bound, is not adopted.
    for (const hostile of ['a b"c\\n{}', 'x'.repeat(300), 'short']) {
      const replaced = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': hostile } });
      assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    }
  });

  it('writes one info access line a request: method, route pattern (never the path), status, ms, bytes, with host, pid, kind and version', async () => {
    const id = 'probe-unknown-dataset-1';
    const res = await fetch(`${server.url}/datasets/nd424242`, { headers: { 'x-request-id': id, accept: 'application/json' } });
    const body = await res.text();
    assert.equal(res.status, 404);
    const line = await accessLine(log.lines, id);
    assert.equal(line.level, 30);
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/datasets/:id');
    assert.equal(line.status, 404);
    assert.equal(typeof line.ms, 'number');
    assert.ok((line.bytes as number) >= body.length, `bytes ${line.bytes} cover the body (${body.length})`);
    assert.ok(!JSON.stringify(line).includes('nd424242'), 'the dataset id is in no access line');
    assert.equal(line.pid, process.pid);
    assert.equal(typeof line.hostname, 'string');
    assert.equal(line.kind, 'serve');
    assert.equal(line.version, '0.1.0');
  });

  it('serves /metrics on METRICS_PORT to this machine: requests by route pattern and status, the database pool, the queue', async () => {
    await fetch(`${server.url}/datasets/nd424243`, { headers: { accept: 'application/json' } });
    assert.ok(server.metricsUrl);
    const res = await fetch(`${server.metricsUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, /nds_http_request_duration_seconds_count\{method="GET",route="\/datasets\/:id",status="404"\} [1-9]/);
    assert.match(text, /^nds_db_pool_connections_in_use \d+$/m);
    assert.match(text, /^nds_db_pool_waiting 0$/m);
    assert.match(text, /^nds_conversion_queue_depth 0$/m);
    assert.match(text, /^nds_conversion_queue_oldest_age_seconds 0$/m);
    assert.match(text, /^process_resident_memory_bytes \d+/m);
    assert.match(text, /^nds_circuit_open\{part="rate_limits_database"\} 0$/m);
    assert.match(text, /^nds_gateway_cache_bytes \d+$/m);
    // No label carries a dataset id (or any path): only route patterns.
    assert.ok(!/nd42424\d/.test(text), 'no dataset id in the metrics');
  });

  // A page whose own name its author points at 127.0.0.1 (DNS rebinding) makes the visitor's browser ask from
  // loopback, same-origin for the page, but under the page's name.
  it("refuses /metrics on METRICS_PORT to a request from this machine that names another host (a DNS-rebinding page's fetch)", async () => {
    const port = new URL(server.metricsUrl!).port;
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${server.metricsUrl}/metrics`, { headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    assert.equal(await status(`attacker.example:${port}`), 403);
    assert.equal(await status('attacker.example'), 403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) assert.equal(await status(host), 200, host);
  });

  it('refuses /metrics on METRICS_PORT to a request that came through a proxy', async () => {
    const res = await fetch(`${server.metricsUrl}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as { error: string }).error, 'forbidden');
  });

  // nginx's plain `proxy_pass http://127.0.0.1:<port>;` passes every stranger's request on from loopback, with
  // no X-Forwarded-For and `Host: 127.0.0.1:<port>`: the service's port cannot tell them from a local scrape.
  it("refuses /metrics without the token on the service's port, even from this machine by a loopback name", async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${server.url}/metrics`, { headers: { host } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(answer.status, 403, host);
      assert.match((JSON.parse(answer.body) as { message: string }).message, /METRICS_PORT/);
    }
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  let server: TestServer;
  const token = 'metrics-token-0123456789';
  before(async () => {
    server = await startTestServer({ env: { METRICS_TOKEN: token, METRICS_PORT: '0' } });
  });
  after(() => server.close());

  it('wants the bearer token, from anywhere, on METRICS_PORT too', async () => {
    assert.equal((await fetch(`${server.url}/metrics`)).status, 403);
    assert.equal((await fetch(`${server.metricsUrl}/metrics`)).status, 403);
    assert.equal((await fetch(`${server.metricsUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.equal((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 403);
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /nds_http_request_duration_seconds/);
  });
});
