/**
 * Forwarding a request to the node that holds a repository (`src/git/forward-to-node.ts`, decision 0026): the
 * body streams through, the caller's credentials go along, and a holder that is gone or silent is a 503 with
 * the reason, never a 500 or a request left hanging.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { NdsError } from '../../src/core/errors.js';
import { FORWARDED_HEADER, forwardToNode } from '../../src/git/forward-to-node.js';

describe('forwarding to the holder', () => {
  let holder: Server;
  let url: string;
  const seen: Array<{ method: string; path: string; headers: Record<string, unknown>; body: string }> = [];

  before(async () => {
    holder = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result', 'cache-control': 'no-cache', connection: 'keep-alive' }).end(`answer to ${body}`);
      });
    });
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(holder.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it("streams the request's body to the holder with its credentials, its path and query, marked as forwarded", async () => {
    const request = new Request('http://api-b.internal/git/nd000001.git/git-upload-pack?x=1', {
      method: 'POST',
      headers: { authorization: 'Basic bmRzOmtleQ==', 'content-type': 'application/x-git-upload-pack-request', 'git-protocol': 'version=2', 'x-not-kept': '1' },
      body: new Blob(['want abc']).stream(),
      duplex: 'half',
    } as RequestInit);
    const answer = await forwardToNode(request, url, { from: 'http://api-b.internal' });
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), 'answer to want abc');
    assert.equal(answer.headers.get('content-type'), 'application/x-git-upload-pack-result');
    assert.equal(answer.headers.get('connection'), null);
    const got = seen.at(-1)!;
    assert.deepEqual([got.method, got.path, got.body], ['POST', '/git/nd000001.git/git-upload-pack?x=1', 'want abc']);
    assert.equal(got.headers.authorization, 'Basic bmRzOmtleQ==');
    assert.equal(got.headers['git-protocol'], 'version=2');
    assert.equal(got.headers[FORWARDED_HEADER], 'http://api-b.internal');
    assert.equal(got.headers['x-not-kept'], undefined);
  });

  it('a holder that refuses connections is a 503 repository_unavailable with Retry-After', async () => {
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(forwardToNode(new Request('http://b/git/nd000001.git/info/refs'), `http://127.0.0.1:${port}`, { from: 'http://b' }), (err) => {
      return err instanceof NdsError && err.code === 'repository_unavailable' && err.status === 503 && err.headers['Retry-After'] === '30';
    });
  });

  it('a holder that takes the connection and never answers a read is given up on: 503, not a hanging request', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = performance.now();
      await assert.rejects(
        forwardToNode(new Request('http://b/git/nd000001.git/info/refs?service=git-upload-pack'), `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, { from: 'http://b', headersTimeoutMs: 300 }),
        (err) => err instanceof NdsError && err.code === 'repository_unavailable',
      );
      assert.ok(performance.now() - started < 10_000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
