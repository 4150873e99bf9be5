/**
 * The S3 store's read-back of an assembled upload (decision 0050): the hash of exactly the body a plain 200
 * carries, over http and https, whatever pieces it arrives in; anything but a plain answer is handed back to
 * the SDK's read, and a body cut short, a stalled server or an endless head is an error, never a hash.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashHttpBody, PlainReadUnavailable } from '../../src/objects/hash-http-body.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const IDLE_MS = 2_000;

/** A server that answers every connection with `answer(socket)`, once the request's head has arrived. */
async function rawServer(answer: (socket: Socket) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createTcpServer((socket) => {
    let seen = '';
    socket.on('error', () => {});
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (seen.includes('\r\n\r\n') && !socket.destroyed) {
        seen = '';
        answer(socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/bucket/key?X-Amz-Signature=abc`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Writes `bytes` in pieces of random sizes, a pause now and then, as a store's socket may. */
async function writeInPieces(socket: Socket, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const n = Math.min(bytes.length - at, 1 + Math.floor(Math.random() * 3 * 1024 * 1024));
    if (!socket.write(bytes.subarray(at, at + n))) await new Promise((resolve) => socket.once('drain', resolve));
    at += n;
    if (Math.random() < 0.2) await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the read-back of an assembled object over one GET', () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  after(() => Promise.all(servers.map((s) => s.close())));
  const serve = async (answer: (socket: Socket) => void) => {
    const s = await rawServer(answer);
    servers.push(s);
    return s.url;
  };

  it('hashes exactly the body of a 200, arriving in pieces of any size, the head split too', async () => {
    const body = randomBytes(20 * 1024 * 1024 + 123);
    const url = await serve(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Le');
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.write(`ngth: ${body.length}\r\nETag: "x"\r\n\r\n`);
      await writeInPieces(socket, body);
      // Bytes past the promised length are not the object's.
      socket.end('trailing garbage');
    });
    assert.deepEqual(await hashHttpBody(url, { idleMs: IDLE_MS }), { size: body.length, sha256: sha(body) });
  });

  it('hands each piece of the body on in order, and fails the read when the taker throws', async () => {
    const body = randomBytes(9 * 1024 * 1024 + 11);
    const url = await serve(async (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      await writeInPieces(socket, body);
      socket.end('not the body');
    });
    const pieces: Buffer[] = [];
    // Copied: a piece is valid only during the call.
    const hashed = await hashHttpBody(url, { idleMs: IDLE_MS, onBytes: (bytes) => pieces.push(Buffer.from(bytes)) });
    assert.ok(Buffer.concat(pieces).equals(body), 'the pieces are the body, whole and in order');
    assert.deepEqual(hashed, { size: body.length, sha256: sha(body) });
    const full = () => {
      throw new Error('disk full');
    };
    await assert.rejects(hashHttpBody(url, { idleMs: IDLE_MS, onBytes: full }), /disk full/);
  });

  it('hashes an empty object, and a body that came with its head in one read', async () => {
    const empty = await serve((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    assert.deepEqual(await hashHttpBody(empty, { idleMs: IDLE_MS }), { size: 0, sha256: sha(Buffer.alloc(0)) });
    const small = Buffer.from('seven b');
    const together = await serve((socket) => socket.end(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n'), small])));
    assert.deepEqual(await hashHttpBody(together, { idleMs: IDLE_MS }), { size: 7, sha256: sha(small) });
  });

  it('hands any answer but a plain 200 with its length back to the caller, unread', async () => {
    const answers = [
      'HTTP/1.1 403 Forbidden\r\nContent-Length: 5\r\n\r\nnope.',
      'HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\nabcde',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\nabcde',
      'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabcde',
    ];
    for (const answer of answers) {
      const url = await serve((socket) => socket.end(answer));
      await assert.rejects(hashHttpBody(url, { idleMs: IDLE_MS }), PlainReadUnavailable, answer.split('\r\n')[1]);
    }
    await assert.rejects(hashHttpBody('ftp://127.0.0.1/x', { idleMs: IDLE_MS }), PlainReadUnavailable);
  });

  it('never answers a hash of part of a body: cut short, stalled, garbled or with an endless head, it fails', async () => {
    const body = randomBytes(4 * 1024 * 1024);
    const cut = await serve(async (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      await writeInPieces(socket, body.subarray(0, body.length - 1));
      socket.end();
    });
    await assert.rejects(hashHttpBody(cut, { idleMs: IDLE_MS }), (err: Error) => !(err instanceof PlainReadUnavailable) && /ended at 4194303 of 4194304 bytes/.test(err.message));

    const stalled = await serve((socket) => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc`));
    const started = Date.now();
    await assert.rejects(hashHttpBody(stalled, { idleMs: 300 }), /no byte of .* for 300 ms/);
    assert.ok(Date.now() - started < IDLE_MS, 'the wait is bounded by idleMs');

    const endless = await serve((socket) => {
      socket.write('HTTP/1.1 200 OK\r\n');
      const line = `X-Filler: ${'a'.repeat(1000)}\r\n`;
      const pump = () => {
        while (!socket.destroyed && socket.write(line));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
    });
    await assert.rejects(hashHttpBody(endless, { idleMs: IDLE_MS }), /head passed 65536 bytes/);

    for (const head of ['SSH-2.0-OpenSSH\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef']) {
      const url = await serve((socket) => socket.end(head));
      await assert.rejects(hashHttpBody(url, { idleMs: IDLE_MS }), (err: Error) => !(err instanceof PlainReadUnavailable), head);
    }

    const closed = await serve((socket) => socket.destroy());
    await assert.rejects(hashHttpBody(closed, { idleMs: IDLE_MS }), /closed before the answer/);
  });

  describe('over https', () => {
    let dir: string;
    let server: HttpsServer;
    let url: string;
    let cert: Buffer;
    const body = randomBytes(6 * 1024 * 1024 + 7);

    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'nds-hash-http-'));
      const [key, crt] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
      cert = await readFile(crt);
      server = createHttpsServer({ key: await readFile(key), cert }, (req, res) => {
        res.writeHead(200, { 'content-length': body.length });
        res.end(body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `https://localhost:${(server.address() as { port: number }).port}/bucket/key`;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    });

    it('hashes the body from a server whose certificate is trusted', async () => {
      assert.deepEqual(await hashHttpBody(url, { idleMs: IDLE_MS, ca: cert }), { size: body.length, sha256: sha(body) });
    });

    it('refuses a server whose certificate is not', async () => {
      await assert.rejects(hashHttpBody(url, { idleMs: IDLE_MS }), (err: Error) => !(err instanceof PlainReadUnavailable) && /self.signed|certificate/i.test(err.message));
    });
  });
});
